"""mcp_tools against real MCP servers: the SDK-built demo server as a stdio child and over
streamable HTTP on 127.0.0.1, and a hand-written broken server for the bad-input cases."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import providerkit_nb as pk
from providerkit_nb.mcp import MCPServerError, mcp_tools

from .conftest import BAD, alive, demo_command, gone_within, wait_for

pytestmark = pytest.mark.timeout(120)

MAY_HAVE_RUN = (
    "This call was interrupted before it returned. It may have partly run, so check its effect "
    "before calling it again."
)
READ_ONLY = "This call was interrupted before it returned. It changed nothing, so it is safe to call again."


def call(reg, name, args, cid="c1"):
    return reg.invoke({"id": cid, "name": name, "arguments": json.dumps(args)})


@pytest.fixture
def demo(notes):
    tools = mcp_tools(demo_command(), read_only="annotations", env={"DEMO_NOTES_DIR": str(notes)})
    yield tools
    tools.close()


def test_tools_keep_their_hints_and_the_read_only_decision(notes):
    env = {"DEMO_NOTES_DIR": str(notes)}
    with mcp_tools(demo_command(), env=env) as untrusted:
        by = {t.name: t for t in untrusted}
        assert sorted(by) == ["add", "big", "broken", "document", "picture", "read_note", "stats", "write_note",
                              "write_note_blocking"]
        assert not any(t.read_only for t in untrusted)  # default: nothing counts as read-only
        assert by["read_note"].hints == {"readOnlyHint": True, "openWorldHint": False}
        assert by["write_note"].hints == {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False}
        assert by["add"].hints == {}
        assert by["read_note"].source == "mcp:demo-notes"
        assert "read_only=None" in by["read_note"].read_only_reason
    with mcp_tools(demo_command(), env=env, read_only="annotations", name_prefix="notes_") as trusted:
        by = {t.name: t for t in trusted}
        assert by["notes_read_note"].read_only and not by["notes_write_note"].read_only
        assert not by["notes_add"].read_only
        assert by["notes_add"].read_only_reason == "readOnlyHint absent (spec default: false)"
        local = pk.tool(lambda city: "sunny", name="weather", read_only=True)
        frame = pk.tools_frame(pk.ToolRegistry([local, *trusted]))
        assert frame.loc["weather", "source"] == "local" and frame.loc["weather", "readOnlyHint"] == "-"
        assert bool(frame.loc["weather", "read_only"]) is True
        row = frame.loc["notes_read_note"]
        assert row["readOnlyHint"] is True or row["readOnlyHint"] == True  # noqa: E712
        assert row["destructiveHint"] == "absent (default true)"
        assert row["openWorldHint"] == False  # noqa: E712
        assert frame.loc["notes_add", "idempotentHint"] == "absent (default false)"
        assert bool(frame.loc["notes_write_note", "read_only"]) is False
        assert "trusted" in frame.loc["notes_read_note", "why"]
    with mcp_tools(demo_command(), env=env, read_only={"add"}) as vouched:
        by = {t.name: t for t in vouched}
        assert by["add"].read_only and not by["read_note"].read_only
    with pytest.raises(ValueError, match="demo-notes.*has no tool named 'nope'"):
        mcp_tools(demo_command(), env=env, read_only={"nope"})
    with pytest.raises(ValueError, match="read_only="):
        mcp_tools(demo_command(), env=env, read_only="all")


def test_results_become_tool_messages(demo, notes):
    reg = pk.ToolRegistry(demo)
    r = call(reg, "picture", {})
    assert r.kind == "ok" and r.message.content == "one red pixel"
    assert r.message.images[0].mime_type == "image/png" and r.message.images[0].data.startswith("iVBORw0KGgo")
    r = call(reg, "document", {})
    assert r.message.content == "[resource note://readme]\nembedded text"
    r = call(reg, "stats", {})
    assert json.loads(r.message.content) == {"notes": 0, "answer": 42}
    r = call(reg, "add", {"a": 2, "b": 40})
    assert (r.kind, r.message.content) == ("ok", "42")
    r = call(reg, "broken", {})  # isError: a result that says it failed, not an exception
    assert r.kind == "failed" and r.message.content.startswith("Error: broken (MCP server 'demo-notes'")
    r = call(reg, "write_note", {"name": "a", "text": "hello"})
    assert r.kind == "ok" and (notes / "a.txt").read_text() == "hello"
    r = call(reg, "big", {"n": 250_000})  # capped, and it says so
    assert r.message.content.startswith("x" * 1000)
    assert len(r.message.content) < 100_300
    assert "[cut: the result was 250000 characters; only the first 100000 are shown." in r.message.content


def test_mixed_with_local_tools_and_over_http(http_server):
    with mcp_tools(http_server, read_only="annotations") as remote:
        assert remote.server.url == http_server
        local = pk.define_tool("double", "Double.", {"type": "object", "properties": {"x": {"type": "integer"}}}, lambda a: a["x"] * 2)
        reg = pk.ToolRegistry([local, *remote])
        assert reg.names()[:2] == ["double", "read_note"]
        assert call(reg, "add", {"a": 1, "b": 2}).message.content == "3"
        assert call(reg, "double", {"x": 4}).message.content == "8"
        assert call(reg, "picture", {}).message.images[0].mime_type == "image/png"


@pytest.mark.parametrize("tool, text", [("write_note", MAY_HAVE_RUN), ("read_note", READ_ONLY)])
def test_server_killed_mid_call_is_an_interrupted_result_then_restarts(demo, notes, tool, text):
    reg = pk.ToolRegistry(demo)
    box = {}
    args = {"name": "k", "text": "t", "delay": 60} if tool == "write_note" else {"name": "k", "delay": 60}
    worker = threading.Thread(target=lambda: box.setdefault("r", call(reg, tool, args)))
    worker.start()
    pid = int(wait_for(notes / f"started-{tool}"))
    os.kill(pid, signal.SIGKILL)
    worker.join(30)
    r = box["r"]
    assert r.kind == "interrupted"
    assert r.message.content.startswith("Error: MCP server 'demo-notes' (python demo_server.py) exited")
    assert f"while running {tool}; it will be started again on the next call." in r.message.content
    assert r.message.content.endswith(text)
    assert not demo.server.alive
    (notes / f"started-{tool}").unlink()
    r = call(reg, "add", {"a": 5, "b": 5})  # the next call starts the server again
    assert (r.kind, r.message.content) == ("ok", "10")
    assert demo.server.starts == 2


def test_stop_cancels_the_request_on_the_wire(demo, notes):
    reg = pk.ToolRegistry(demo)

    def interrupt() -> None:
        wait_for(notes / "started-read_note")
        os.kill(os.getpid(), signal.SIGINT)  # a real SIGINT, as the kernel's Stop sends

    threading.Thread(target=interrupt, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        call(reg, "read_note", {"name": "x", "delay": 60})
    pid = int(wait_for(notes / "cancelled-read_note", 20))  # the server saw notifications/cancelled
    assert alive(pid)  # the server itself keeps running
    assert call(reg, "add", {"a": 1, "b": 1}).message.content == "2"
    assert demo.server.starts == 1


def test_close_and_with_end_the_server(notes):
    tools = mcp_tools(demo_command(), env={"DEMO_NOTES_DIR": str(notes)})
    reg = pk.ToolRegistry(tools)
    call(reg, "read_note", {"name": "x", "delay": 0.01})
    pid = int(wait_for(notes / "started-read_note"))
    assert alive(pid)
    tools.close()
    assert gone_within(pid)
    tools.close()  # idempotent
    with mcp_tools(demo_command(), env={"DEMO_NOTES_DIR": str(notes)}) as tools:
        (notes / "started-read_note").unlink()
        call(pk.ToolRegistry(tools), "read_note", {"name": "x", "delay": 0.01})
        pid = int(wait_for(notes / "started-read_note"))
    assert gone_within(pid)


def test_a_server_that_never_answers_the_handshake():
    started = time.monotonic()
    with pytest.raises(MCPServerError) as err:
        mcp_tools([sys.executable, BAD, "silent"], timeout=2)
    assert time.monotonic() - started < 2 + 15  # the timeout, plus the bounded shutdown
    assert "MCP server (python bad_server.py silent) did not answer the handshake within 2 s" in str(err.value)
    assert "raise timeout=" in str(err.value)


def test_a_command_that_does_not_exist():
    with pytest.raises(MCPServerError, match="could not be started.*Check the command"):
        mcp_tools(["no-such-mcp-server-here"], timeout=5)


def test_malformed_json_rpc_mid_call_is_an_interrupted_result():
    with mcp_tools([sys.executable, BAD, "garbage"], timeout=60) as tools:
        started = time.monotonic()
        r = call(pk.ToolRegistry(tools), "echo", {"text": "hi"})
        assert time.monotonic() - started < 30  # found at once, not by waiting out the timeout
        assert r.kind == "interrupted"
        assert r.message.content.startswith("Error: MCP server 'bad-garbage'")
        assert "sent a message that is not valid JSON-RPC" in r.message.content
        assert r.message.content.endswith(MAY_HAVE_RUN)


def test_a_broken_input_schema_leaves_that_tool_out():
    with pytest.warns(UserWarning, match="tool 'broken_schema' left out: its input schema is not a valid JSON Schema"):
        tools = mcp_tools([sys.executable, BAD, "badschema"], timeout=10)
    with tools:
        assert [t.name for t in tools] == ["echo"]
        assert tools.skipped[0][0] == "broken_schema"
        assert call(pk.ToolRegistry(tools), "echo", {"text": "still works"}).message.content == "still works"


def test_a_server_that_exits_mid_call_names_itself_and_its_last_words():
    with mcp_tools([sys.executable, BAD, "exit"], timeout=10) as tools:
        r = call(pk.ToolRegistry(tools), "echo", {"text": "hi"})
        assert r.kind == "interrupted"
        assert "MCP server 'bad-exit'" in r.message.content and "bad-exit: giving up" in r.message.content


def test_a_call_past_its_timeout_is_cancelled_and_says_so(notes):
    with mcp_tools(demo_command(), env={"DEMO_NOTES_DIR": str(notes)}, timeout=20) as tools:
        started = time.monotonic()
        r = call(pk.ToolRegistry(tools), "write_note", {"name": "t", "text": "x", "delay": 60})
        assert time.monotonic() - started < 20 + 10
        assert r.kind == "timeout"
        assert r.message.content.startswith("Error: MCP server 'demo-notes' (python demo_server.py) did not answer write_note")
        assert "It may still be running or have partly run" in r.message.content
        wait_for(notes / "cancelled-write_note", 20)  # the SDK cancelled the request on the wire


def test_interpreter_exit_ends_the_server(notes):
    code = (
        "import sys, json, providerkit_nb as pk\n"
        f"tools = pk.mcp_tools({demo_command()!r}, env={{'DEMO_NOTES_DIR': {str(notes)!r}}})\n"
        "pk.ToolRegistry(tools).run({'id': 'c', 'name': 'read_note', 'arguments': json.dumps({'name': 'x', 'delay': 0.01})})\n"
    )  # no close(): atexit must end the server
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, timeout=90)
    assert done.returncode == 0
    assert gone_within(int(wait_for(notes / "started-read_note")))


def test_a_server_that_fails_as_it_starts_shows_its_last_lines_not_a_traceback(notes, capfd):
    with pytest.raises(MCPServerError) as err:
        mcp_tools(demo_command(), env={"DEMO_NOTES_DIR": str(notes), "DEMO_START": "crash"}, timeout=30)
    text = str(err.value)
    assert text.startswith("MCP server (python demo_server.py) exited or closed the connection during the handshake")
    # the server's own last lines, one per line, the cause last
    lines = text.split("Its last lines on stderr:\n", 1)[1].splitlines()
    assert lines[0] == "    | Traceback (most recent call last):"
    assert lines[-1] == f"    | RuntimeError: DEMO_NOTES_DIR {str(notes)!r} is not a folder of notes"
    assert capfd.readouterr().err == ""  # nothing raw on this process's stderr


def test_a_server_that_prints_to_stdout_is_refused_at_once_with_its_words(capfd):
    started = time.monotonic()
    with pytest.raises(MCPServerError) as err:
        mcp_tools([sys.executable, BAD, "chatty"], timeout=60)
    assert time.monotonic() - started < 30  # found at once, not by waiting out the handshake
    text = str(err.value)
    assert text.startswith(
        "MCP server (python bad_server.py chatty): it sent a message that is not valid JSON-RPC "
        "(it wrote 'Starting the notes server on stdio...' to stdout) during the handshake."
    )
    assert "must write only JSON-RPC to stdout" in text
    assert text.endswith("Its last lines on stderr:\n    | chatty: config loaded from ./notes.toml")
    err_out = capfd.readouterr().err
    assert "Traceback" not in err_out and "Failed to parse" not in err_out  # the SDK's log stays quiet
