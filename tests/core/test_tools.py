"""Tools: schemas from type hints, and a registry whose run() always answers with a message."""

from __future__ import annotations

import enum
import os
import signal
import threading
import time
from typing import Annotated, Literal

import pytest

import providerkit_nb as pk
from providerkit_nb.core.tool_schema import check_value
from providerkit_nb.stream import ToolDefinition


class Mode(enum.Enum):
    FAST = "fast"
    DEEP = "deep"


@pk.tool(read_only=True)
def search(
    query: str,
    limit: int = 10,
    kind: Literal["code", "docs"] = "code",
    tags: list[str] | None = None,
    weights: dict[str, float] | None = None,
    mode: Mode = Mode.FAST,
    note: Annotated[str, "free text for the log"] = "",
) -> str:
    """Search the project.

    Args:
        query: what to look for;
            may span lines.
        limit: at most this many hits
    """
    return f"{query}|{limit}|{kind}|{tags}|{weights}|{mode.name}|{note}"


@pk.tool
def write_file(path: str, text: str) -> dict:
    """Write a file.

    :param path: where
    :param text: what
    """
    return {"path": path, "bytes": len(text.encode()), "ok": True}


def test_decorator_builds_the_schema_from_hints_and_docstring() -> None:
    assert search.name == "search"
    assert search.description == "Search the project."
    assert search.read_only is True
    assert search.input_schema == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "what to look for; may span lines."},
            "limit": {"type": "integer", "description": "at most this many hits", "default": 10},
            "kind": {"type": "string", "enum": ["code", "docs"], "default": "code"},
            "tags": {"type": ["array", "null"], "items": {"type": "string"}, "default": None},
            "weights": {"type": ["object", "null"], "additionalProperties": {"type": "number"}, "default": None},
            "mode": {"type": "string", "enum": ["fast", "deep"], "default": "fast"},
            "note": {"type": "string", "description": "free text for the log", "default": ""},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    assert write_file.read_only is False  # read-only only when the tool says so
    assert write_file.input_schema["required"] == ["path", "text"]
    assert write_file.input_schema["properties"]["path"] == {"type": "string", "description": "where"}


def test_decorated_tool_is_still_the_function() -> None:
    assert search("x", limit=2) == "x|2|code|None|None|FAST|"


def test_define_tool_defaults_and_checks() -> None:
    t = pk.define_tool("echo", "Echo.", {"type": "object", "properties": {}}, run=lambda args: "hi")
    assert t.read_only is False and t.timeout == 60.0
    assert t.definition == ToolDefinition("echo", "Echo.", {"type": "object", "properties": {}})
    with pytest.raises(ValueError, match="letters, digits"):
        pk.define_tool("bad name", "", {"type": "object"}, run=print)
    with pytest.raises(ValueError, match="JSON object schema"):
        pk.define_tool("x", "", {"type": "string"}, run=print)
    with pytest.raises(ValueError, match="finite"):
        pk.define_tool("x", "", {"type": "object"}, run=print, timeout=float("inf"))


def test_unsupported_signatures_are_refused() -> None:
    with pytest.raises(TypeError, match=r"\*args"):

        @pk.tool
        def f(*items: str) -> None:  # pragma: no cover - never called
            pass

    with pytest.raises(TypeError, match="cannot build a JSON schema"):

        @pk.tool
        def g(x: complex) -> None:  # pragma: no cover - never called
            pass


def registry() -> pk.ToolRegistry:
    return pk.ToolRegistry([search, write_file])


def call(name: str, arguments: str, cid: str = "c1") -> pk.ToolCall:
    return pk.ToolCall(cid, name, arguments)


def test_registry_lookup_order_and_read_only() -> None:
    reg = registry()
    assert reg.names() == ["search", "write_file"]
    assert [d.name for d in reg.definitions()] == ["search", "write_file"]  # registration order
    assert [d.name for d in reg.definitions(allow=["write_file"])] == ["write_file"]
    assert reg.get("search") is search
    with pytest.raises(KeyError, match="no tool named 'grep'; registered tools: search, write_file"):
        reg.get("grep")
    assert reg.is_read_only("search") and not reg.is_read_only("write_file") and not reg.is_read_only("grep")
    with pytest.raises(ValueError, match="already registered"):
        pk.ToolRegistry([search, search])


def test_plain_function_is_registered_as_a_tool() -> None:
    def ping(host: str) -> str:
        """Ping a host."""
        return "pong " + host

    reg = pk.ToolRegistry([ping])
    assert reg.definitions()[0].description == "Ping a host."
    assert reg.run(call("ping", '{"host": "h"}')).content == "pong h"


def test_results_are_turned_into_text() -> None:
    reg = registry()
    m = reg.run(call("write_file", '{"path": "a.txt", "text": "héllo"}', cid="w1"))
    assert m == pk.ToolMessage("w1", "write_file", '{"bytes":6,"ok":true,"path":"a.txt"}')
    m = reg.run(call("search", '{"query": "q", "tags": ["x"], "mode": "deep", "weights": {"a": 1}}'))
    assert m.content == "q|10|code|['x']|{'a': 1}|DEEP|"
    for value, text in [(None, "(no output)"), (3, "3"), ([1, "é"], '[1,"é"]'), (b"raw", "raw"), (Mode.FAST, "Mode.FAST")]:
        t = pk.define_tool("v", "", {"type": "object"}, run=lambda args, v=value: v)
        assert pk.ToolRegistry([t]).run(call("v", "")).content == text


@pytest.mark.parametrize(
    ("name", "arguments", "kind", "needles"),
    [
        ("grep", "{}", "unknown_tool", ["no tool named 'grep'", "Available tools: search, write_file"]),
        ("search", '{"query": "x"', "invalid_json", ["not valid JSON", "did not run", "Call it again"]),
        ("search", '["x"]', "invalid_json", ["must be a JSON object, not list", "did not run"]),
        # a model's arguments nested beyond reading are bad JSON too, never a RecursionError
        ("search", '{"query": ' + "[" * 5000 + "]" * 5000 + "}", "invalid_json", ["nested too deeply", "did not run"]),
        ("search", "{}", "invalid_input", ["$: missing required property 'query'", "Fix the arguments"]),
        ("search", '{"query": 3}', "invalid_input", ["$.query: expected string, got integer"]),
        ("search", '{"query": "x", "limit": true}', "invalid_input", ["$.limit: expected integer, got boolean"]),
        ("search", '{"query": "x", "kind": "blog"}', "invalid_input", ["$.kind: 'blog' is not one of ['code', 'docs']"]),
        ("search", '{"query": "x", "tags": ["a", 1]}', "invalid_input", ["$.tags[1]: expected string, got integer"]),
        ("search", '{"query": "x", "weights": {"a": "heavy"}}', "invalid_input", ["$.weights.a: expected number, got string"]),
        ("search", '{"query": "x", "color": "red"}', "invalid_input", ["unexpected property 'color'"]),
    ],
)
def test_every_bad_call_becomes_a_tool_message(name: str, arguments: str, kind: str, needles: list[str]) -> None:
    result = registry().invoke(call(name, arguments, cid="id9"))
    assert result.kind == kind
    assert result.message.tool_call_id == "id9" and result.message.name == name
    assert result.message.content.startswith("Error: ")
    for n in needles:
        assert n in result.message.content


def test_an_exception_inside_the_tool_becomes_a_message() -> None:
    def boom(args: dict) -> str:
        raise PermissionError("read-only file system: /etc/x")

    reg = pk.ToolRegistry(
        [pk.define_tool("rm", "", {"type": "object"}, run=boom), pk.define_tool("cat", "", {"type": "object"}, run=boom, read_only=True)]
    )
    r = reg.invoke(call("rm", "{}"))
    assert r.kind == "failed"
    assert r.message.content == (
        "Error: rm failed with PermissionError: read-only file system: /etc/x. "
        "It may have partly run, so check its effect before calling it again."
    )
    assert reg.run(call("cat", "{}")).content.endswith("Check the arguments, or try another way.")


def test_a_timeout_stops_the_tool_where_it_runs() -> None:
    release, finished = threading.Event(), threading.Event()

    def slow(args: dict) -> str:
        while not release.is_set():  # Python code: the timeout lands at its next instruction
            time.sleep(0.01)
        finished.set()
        return "too late"

    reg = pk.ToolRegistry([pk.define_tool("slow", "", {"type": "object"}, run=slow, timeout=0.1)])
    started = time.monotonic()
    r = reg.invoke(call("slow", "{}"))
    waited = time.monotonic() - started
    assert r.kind == "timeout"
    assert waited < 10  # the tool would have run until released
    assert r.message.content == (
        "Error: slow did not finish within 0.1 s, so it was stopped where it was running. "
        "It may have partly run, so check its effect before calling it again."
    )
    release.set()
    time.sleep(0.2)
    assert not finished.is_set()  # stopped, not left running in the background
    assert threading.active_count() == 1 or all(
        not t.name.startswith("tool") for t in threading.enumerate()
    )
    # a per-call timeout overrides the tool's own
    assert reg.invoke(call("slow", "{}"), timeout=10).message.content == "too late"


def test_a_tool_blocked_in_c_is_reported_still_running_then_stopped_at_its_next_step() -> None:
    """Off the main thread the timeout is an asynchronous exception, which cannot reach a tool
    sleeping inside C code: the tool is reported as still running (once, with what to do); the
    exception lands at its next Python instruction, so what came after the sleep never ran."""
    heard: list[str] = []
    after: list[str] = []

    def stuck(args: dict) -> str:
        time.sleep(3)  # one C call: nothing lands in it
        after.append("wrote it")
        return "wrote it"

    reg = pk.ToolRegistry([pk.define_tool("stuck", "", {"type": "object"}, run=stuck, timeout=0.2)])
    box: dict = {}
    worker = threading.Thread(target=lambda: box.setdefault("r", reg.invoke(call("stuck", "{}"), notify=heard.append)))
    worker.start()
    worker.join(20)
    r = box["r"]
    assert r.kind == "timeout"
    assert after == []
    assert len(heard) == 1
    assert heard[0].startswith("stuck is still running after 2 s (its timeout is 0.2 s)")
    assert "restart the kernel" in heard[0]


def test_a_tool_that_swallows_its_timeout_and_returns_is_late() -> None:
    from providerkit_nb.core.tool_run import ToolTimeout

    def stubborn(args: dict) -> str:
        try:
            while True:
                time.sleep(0.01)
        except ToolTimeout:
            return "cleaned up"

    reg = pk.ToolRegistry([pk.define_tool("stubborn", "", {"type": "object"}, run=stubborn, timeout=0.1)])
    r = reg.invoke(call("stubborn", "{}"))
    assert r.kind == "late"
    assert r.message.content.endswith("Its result:]\ncleaned up")


def test_on_the_main_thread_the_timeout_interrupts_a_sleeping_tool(tmp_path) -> None:
    """In a process of its own (pytest-timeout owns SIGALRM here), like a notebook cell: the
    timer interrupts ``time.sleep`` as Ctrl-C would, and the file the tool would write after
    its sleep is never written."""
    import subprocess
    import sys

    out = tmp_path / "written.txt"
    code = f"""
import pathlib, time, providerkit_nb as pk
def write_later(args):
    time.sleep(30)
    pathlib.Path({str(out)!r}).write_text("done")
    return "done"
reg = pk.ToolRegistry([pk.define_tool("write_later", "", {{"type": "object"}}, run=write_later, timeout=0.5)])
t0 = time.monotonic()
r = reg.invoke({{"id": "c1", "name": "write_later", "arguments": "{{}}"}})
print(r.kind, round(time.monotonic() - t0))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["timeout", "0"] or done.stdout.split() == ["timeout", "1"]
    assert not out.exists()


def test_keyboard_interrupt_raised_by_the_tool_propagates() -> None:
    def stop(args: dict) -> str:
        raise KeyboardInterrupt

    reg = pk.ToolRegistry([pk.define_tool("stop", "", {"type": "object"}, run=stop)])
    with pytest.raises(KeyboardInterrupt):
        reg.run(call("stop", "{}"))


def test_keyboard_interrupt_while_waiting_for_the_tool_propagates() -> None:
    if threading.current_thread() is not threading.main_thread():  # pragma: no cover
        pytest.fail("signals are delivered to the main thread only; run this test there")
    release = threading.Event()

    def wait(args: dict) -> str:
        release.wait(30)
        return "done"

    reg = pk.ToolRegistry([pk.define_tool("wait", "", {"type": "object"}, run=wait, timeout=30)])
    timer = threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT))  # a real Ctrl-C
    timer.start()
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            reg.run(call("wait", "{}"))
    finally:
        release.set()
        timer.cancel()
    assert time.monotonic() - started < 20  # interrupted, not waited out


def test_schema_checker_subset() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "x": {"type": "number"},
            "v": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
            "c": {"const": "fixed"},
        },
        "required": ["n"],
    }
    assert check_value({"n": 2.0, "x": 1, "v": ["a"], "c": "fixed", "extra": 1}, schema) == []
    assert check_value({"n": 1.5}, schema) == ["$.n: expected integer, got number"]
    errors = check_value({"n": 1, "v": [1], "c": "other"}, schema)
    assert errors[0] == "$.v: matches none of the 2 allowed shapes"
    assert "$.c: must be 'fixed'" in errors
    assert check_value("nope", schema) == ["$: expected object, got string"]
