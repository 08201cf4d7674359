"""The library against a real model: llama-cpp-python's OpenAI-compatible server with
SmolLM2-135M-Instruct, started once per session by ``providerkit_nb.local``.

Assertions are on structure (a call was made, the history is valid, what streamed is what was
saved), never on the model's words: a 135M model says whatever it says.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import providerkit_nb as pk
from providerkit_nb import local
from providerkit_nb.errors import StepLimitReached
from providerkit_nb.stream import TextDelta, ToolCallDelta
from providerkit_nb.wrappers import create_gate
from tests.mcp.conftest import alive, gone_within

pytestmark = pytest.mark.local_model

REPO = Path(__file__).resolve().parents[2]


@pk.tool
def write_file(path: str, content: str) -> str:
    """Write a text file.

    Args:
        path: the file's path
        content: the whole text
    """
    return f"wrote {len(content)} characters to {path}"


def _wait_for(predicate: Any, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"not within {seconds} s: {what}")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


# --------------------------------------------------------------------------- streams


def test_streamed_text_is_what_gets_saved(local_server: local.LocalServer, tmp_path: Path) -> None:
    provider = local_server.provider(max_tokens=48)
    deltas: list[str] = []
    stream = provider.create_stream([pk.UserMessage("Say hello in one sentence.")])
    turn = pk.collect_turn(c for c in stream if not isinstance(c, TextDelta) or not deltas.append(c.text))
    assert len(deltas) > 1, "the answer came in one piece, not streamed"
    assert turn.message.content == "".join(deltas) and turn.message.content.strip()
    assert turn.finish_reason in ("stop", "length") and not turn.message.tool_calls

    store = pk.NotebookStore(tmp_path / "s.sqlite")
    convo = pk.Conversation(store, "text", provider, display=False)
    sent = convo.send("Say hello in one sentence.")
    saved = store.load("text")
    assert [m.role for m in saved] == ["user", "assistant"]
    assert saved[-1].content == sent.message.content and saved[-1].content.strip()
    assert pk.validate_history(saved, wire="openai_chat") == []


def test_a_forced_tool_call_streams_in_pieces_and_runs(local_server: local.LocalServer, tmp_path: Path) -> None:
    provider = local_server.provider(max_tokens=128)
    tools = pk.ToolRegistry([write_file])
    pieces: list[ToolCallDelta] = []
    stream = provider.create_stream(
        [pk.UserMessage("Write a greeting to hello.txt")], tools.definitions(), tool_choice={"name": "write_file"}
    )
    turn = pk.collect_turn(c for c in stream if not isinstance(c, ToolCallDelta) or not pieces.append(c))
    assert len(pieces) > 2, "the call's arguments did not stream"
    assert turn.finish_reason == "tool_calls"
    (call,) = turn.message.tool_calls or []
    assert call.name == "write_file" and call.id
    assert set(json.loads(call.arguments)) >= {"path", "content"}  # the server's grammar follows the schema

    # the same through the conversation: the call is saved before it runs, its result after
    store = pk.NotebookStore(tmp_path / "s.sqlite")
    convo = pk.Conversation(store, "tool", provider, tools, display=False, max_steps=1,
                            options={"tool_choice": {"name": "write_file"}})
    with pytest.raises(StepLimitReached):  # forced every time: it would never stop calling
        convo.send("Write a greeting to hello.txt")
    saved = store.load("tool")
    assert [m.role for m in saved] == ["user", "assistant", "tool"]
    assert saved[2].tool_call_id == saved[1].tool_calls[0].id
    assert saved[2].content.startswith("wrote ")
    assert pk.validate_history(saved, wire="openai_chat") == []


FACTS = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "count": {"type": "integer"}},
    "required": ["name", "count"],
    "additionalProperties": False,
}


def test_json_mode_returns_a_parsed_value(local_server: local.LocalServer, tmp_path: Path) -> None:
    """``send(json=schema)`` on this server must come back parsed. The server constrains its
    output only when the schema travels in ``response_format`` (json_object with schema); it
    refuses json_schema with a 500. The library has to find the form it takes."""
    provider = local_server.provider(max_tokens=200)
    convo = pk.Conversation(pk.NotebookStore(tmp_path / "s.sqlite"), "json", provider, display=False)
    reply = convo.send("Name one fruit and how many seeds it has, as JSON.", json=FACTS)
    assert reply.error is None, reply.error
    assert isinstance(reply.value, dict) and set(reply.value) == {"name", "count"}
    assert isinstance(reply.value["name"], str) and isinstance(reply.value["count"], int)


class _StopAfter:
    """A provider that presses Stop (a real SIGINT to this process, as the notebook's Stop
    button sends the kernel) after ``n`` pieces of text have arrived."""

    def __init__(self, inner: Any, n: int) -> None:
        self.inner, self.n = inner, n
        self.model = inner.model

    def create_stream(self, *args: Any, **kwargs: Any) -> Any:
        seen = 0
        with self.inner.create_stream(*args, **kwargs) as stream:
            for chunk in stream:
                yield chunk
                if isinstance(chunk, TextDelta):
                    seen += 1
                    if seen == self.n:
                        os.kill(os.getpid(), signal.SIGINT)
                        time.sleep(5)  # the KeyboardInterrupt lands here

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_stop_mid_stream_stops_the_server_generating(local_server: local.LocalServer, tmp_path: Path) -> None:
    provider = _StopAfter(local_server.provider(max_tokens=3000), 5)
    store = pk.NotebookStore(tmp_path / "s.sqlite")
    convo = pk.Conversation(store, "stop", provider, display=False)
    before = len([line for line in local_server.log(400) if "Disconnected from client" in line])
    with pytest.raises(KeyboardInterrupt):
        convo.send("Tell me a very long story about a lighthouse keeper, in many chapters.")
    # the server saw the connection close and left its generation loop ...
    _wait_for(lambda: len([ln for ln in local_server.log(400) if "Disconnected from client" in ln]) > before,
              10, "the server logs the client's disconnect")
    # ... and spends no more CPU on it: 3,000 tokens would keep a core busy for 20 s or more
    first = _cpu_seconds(local_server.pid)
    time.sleep(1.0)
    assert _cpu_seconds(local_server.pid) - first < 0.3, "the server is still generating after Stop"
    saved = store.load("stop")
    assert [m.role for m in saved] == ["user"]  # a cut stream saves nothing half-written
    assert pk.validate_history(convo.repaired.messages, wire="openai_chat") == []


# --------------------------------------------------------------------------- crashes


def test_sigkill_mid_tool_then_resume_in_the_parent(local_server: local.LocalServer, tmp_path: Path) -> None:
    """The demo's story on the real model: a child process runs the conversation, the model's
    (forced) write_file call starts, the child gets SIGKILL, this process loads, repairs and
    resumes on the same server."""
    from io import StringIO

    from providerkit_nb.cli import demo

    out = StringIO()
    assert demo._run_story(out, tmp_path, local_server.base_url) == 0, out.getvalue()
    text = out.getvalue()
    assert "child killed (exit -9) inside write_file" in text
    db = sqlite3.connect(tmp_path / "demo.providerkit.sqlite")
    stored = pk.NotebookStore(tmp_path / "demo.providerkit.sqlite").load(demo.STORY_ID)
    db.close()
    # the resume saves what the model is told for the killed call (the library settles it), then the answer
    assert [m.role for m in stored] == ["system", "user", "assistant", "tool", "assistant"]
    (call,) = stored[2].tool_calls or []
    assert call.name == "write_file"
    marks = pk.NotebookStore(tmp_path / "demo.providerkit.sqlite").call_marks(demo.STORY_ID)
    assert stored[3].tool_call_id == call.id and marks[call.id].detail.get("by") == "library"
    assert not stored[4].tool_calls and stored[4].content.strip()
    convo = pk.Conversation(pk.NotebookStore(tmp_path / "demo.providerkit.sqlite"), demo.STORY_ID,
                            local_server.provider(), demo._story_tools(slow_write=False), display=False)
    repaired = convo.repaired.messages
    assert repaired[3].role == "tool" and repaired[3].tool_call_id == call.id
    assert pk.validate_history(repaired, wire="openai_chat") == []
    report = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "resumed" not in report.split("<title>")[1].split("</title>")[0]


def test_demo_local_from_the_command_line(tmp_path: Path) -> None:
    """``python -m providerkit_nb demo --local`` in a folder of its own: it starts its own
    server, runs the story and the walkthrough, and leaves no server behind."""
    proc = subprocess.run([sys.executable, "-m", "providerkit_nb", "demo", "--local"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    first = proc.stdout.splitlines()[0]
    assert first.startswith("llama-cpp-python's server, pid ")
    pid = int(first.split("pid ")[1].split(",")[0])
    assert not alive(pid)
    assert "child killed (exit -9) inside write_file" in proc.stdout
    assert "== every change repair made" in proc.stdout
    # the tables fit 100 columns (the model's own words, streamed live in section 5, are its own)
    story, walkthrough = proc.stdout.split("== 5. resume")[0], proc.stdout.split("== 6. ")[1]
    wide = [line for line in (story + walkthrough).splitlines() if len(line) > 100 and not line.endswith(".html")]
    assert not wide, wide
    assert "== 5. resume (SmolLM2-135M-Instruct, local)" in proc.stdout
    assert (tmp_path / "demo-output" / "report.html").is_file()


# --------------------------------------------------------------------------- the server's life


_CHILD = """
import sys, time
from providerkit_nb import local
server = local.start()
print(server.pid, flush=True)
if sys.argv[1] == "sleep":
    time.sleep(60)
"""


def test_the_server_dies_when_its_parent_is_killed() -> None:
    child = subprocess.Popen([sys.executable, "-c", _CHILD, "sleep"], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    pid = int(child.stdout.readline())
    assert alive(pid)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert gone_within(pid, 5), f"the server {pid} did not die with its SIGKILLed parent"


def test_the_server_stops_at_interpreter_exit() -> None:
    proc = subprocess.run([sys.executable, "-c", _CHILD, "exit"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    pid = int(proc.stdout.split()[0])
    assert gone_within(pid, 5), f"the server {pid} did not stop when its interpreter exited"


def test_started_from_a_thread_that_ends_it_lives_until_closed() -> None:
    """A server started from a worker thread must not die when that thread ends (as it would
    with PR_SET_PDEATHSIG, which is per thread), only with the process (or on close)."""
    got: list[local.LocalServer] = []
    worker = threading.Thread(target=lambda: got.append(local.start()))
    worker.start()
    worker.join()
    (server,) = got
    time.sleep(0.5)
    assert server.running and alive(server.pid)
    with server:
        turn = pk.collect_turn(server.provider(max_tokens=8).create_stream([pk.UserMessage("Hi")]))
        assert turn.message.content
    assert not server.running


def test_a_server_that_fails_says_why(tmp_path: Path) -> None:
    broken = tmp_path / "not-a-model.gguf"
    broken.write_bytes(b"this is not a GGUF file")
    with pytest.raises(local.LocalModelError) as err:
        local.start(broken, timeout=60)
    message = str(err.value)
    assert "exited with status" in message and "last lines" in message
    assert str(broken) in message or "gguf" in message.lower()  # the server's own words about the file
    with pytest.raises(local.LocalModelError, match="no model file"):
        local.start(tmp_path / "absent.gguf")


# --------------------------------------------------------------------------- a real kernel


_KERNEL_SETUP = """
import os
os.environ["PK_NOTEBOOK_PROVIDER"] = "local"
import providerkit_nb as pk
from providerkit_nb import local
provider = local.offline_provider("unused.yaml", say=None)
store = pk.NotebookStore({store!r})
convo = pk.Conversation(store, "k", provider, display=False)
loaded = [m.role for m in convo.messages]
"""


def test_a_kernel_restart_with_the_real_model(tmp_path: Path) -> None:
    """A real kernel (jupyter_client) talks to the model, is restarted (its process killed):
    the server it started dies with it, and the new kernel finds the conversation whole,
    under the same session id, and carries on with a new server."""
    from tests.notebook.test_kernel import Kernel

    setup = _KERNEL_SETUP.format(store=str(tmp_path / "nb.providerkit.sqlite"))
    k = Kernel(tmp_path)
    try:
        assert k.run(setup)["status"] == "ok"
        assert k.run("convo.send('Say hello.')")["status"] == "ok"
        first = k.value('{"pid": local.shared_server().pid, "session": convo.session_id, '
                        '"roles": [m.role for m in store.load("k")]}')
        assert first["roles"] == ["user", "assistant"]
        k.km.restart_kernel(now=True)  # the kernel process is killed and a new one started
        k.kc.wait_for_ready(timeout=60)
        assert gone_within(first["pid"], 10), "the old kernel's server did not die with it"
        assert k.run(setup)["status"] == "ok"
        assert k.value("loaded") == ["user", "assistant"]
        assert k.run("convo.send('And goodbye.')")["status"] == "ok"
        second = k.value('{"pid": local.shared_server().pid, "session": convo.session_id, '
                         '"roles": [m.role for m in store.load("k")], '
                         '"valid": pk.validate_history(store.load("k"), wire="openai_chat") == []}')
        assert second["session"] == first["session"] and second["valid"]
        assert second["roles"] == ["user", "assistant", "user", "assistant"]
        assert second["pid"] != first["pid"] and alive(second["pid"])
    finally:
        k.close()


# --------------------------------------------------------------------------- the gate


def test_the_gate_with_many_threads_on_one_server(local_server: local.LocalServer, tmp_path: Path) -> None:
    gate = create_gate(2)
    provider = pk.with_gate(local_server.provider(max_tokens=24), gate)
    store = pk.NotebookStore(tmp_path / "s.sqlite")
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], gate.in_use)
            time.sleep(0.002)

    requests_before = sum("POST /v1/chat/completions" in ln for ln in local_server.log(2000))
    sampler = threading.Thread(target=sample)
    sampler.start()
    errors: list[BaseException] = []

    def one(i: int) -> None:
        try:
            pk.Conversation(store, f"t{i}", provider, display=False).send(f"Count to {i + 2}.")
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    done.set()
    sampler.join()
    assert not errors, errors
    assert 1 <= peak[0] <= 2
    for i in range(6):
        saved = store.load(f"t{i}")
        assert [m.role for m in saved] == ["user", "assistant"]
        assert pk.validate_history(saved, wire="openai_chat") == []
    assert gate.in_use == 0 and gate.queued == 0
    _wait_for(lambda: sum("POST /v1/chat/completions" in ln for ln in local_server.log(2000)) >= requests_before + 6,
              5, "the server logged the six requests")


# --------------------------------------------------------------------------- the notebooks


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", ["01-quickstart", "03-inspect-a-broken-transcript", "04-many-conversations"])
def test_a_notebook_runs_on_the_real_model_without_a_key(name: str, tmp_path: Path) -> None:
    """``env -u OPENAI_API_KEY jupyter nbconvert --execute``: with the extra installed, the
    notebooks that talk to a model choose the real one themselves, and say so."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "IPYTHONDIR", "PK_NOTEBOOK_PROVIDER")}
    proc = subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
         "--ExecutePreprocessor.timeout=240", "--output-dir", str(tmp_path), f"{name}.ipynb"],
        cwd=REPO / "notebooks", env=env, capture_output=True, text=True, timeout=280,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    nb = json.loads((tmp_path / f"{name}.ipynb").read_text(encoding="utf-8"))
    said = "".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []))
    assert f"Model: the real {local.MODEL_NAME} on this machine" in said
    assert not [o for c in nb["cells"] for o in c.get("outputs", []) if o["output_type"] == "error"]
