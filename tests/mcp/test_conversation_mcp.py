"""MCP tools inside a Conversation: a model (a real SSE server on 127.0.0.1 speaking OpenAI Chat)
calling an MCP tool and a local tool in one turn, approval showing hints, and a real SIGKILL of
the process running the conversation mid-call, repaired by what read_only= says."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import providerkit_nb as pk
from providerkit_nb.mcp import mcp_tools
from tests.conversation.chat_server import ChatServer, _frame, call_answer, text_answer

from .conftest import demo_command, gone_within, wait_for
from .test_mcp_tools import MAY_HAVE_RUN, READ_ONLY

pytestmark = pytest.mark.timeout(150)


def calls_answer(calls: list[tuple[str, str, dict]]):
    """One assistant turn with several tool calls."""
    out = [(0.0, _frame({"role": "assistant", "tool_calls": [
        {"index": i, "id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for i, (cid, name, args) in enumerate(calls)
    ]}))]
    out += [(0.0, _frame(finish="tool_calls")), (0.0, _frame(usage={"prompt_tokens": 10, "completion_tokens": 5})),
            (0.0, b"data: [DONE]\n\n")]
    return out


def provider(server):
    return pk.openai(model="test-model", base_url=server.base_url, api_key="test-key")


def test_model_calls_an_mcp_tool_and_a_local_tool_in_one_turn(tmp_path, notes):
    answers = [
        calls_answer([("call_w", "write_note", {"name": "plan", "text": "ship it"}), ("call_l", "weather", {"city": "Oslo"})]),
        text_answer(["Done."]),
    ]

    @pk.tool(read_only=True)
    def weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    with ChatServer(answers) as server, mcp_tools(demo_command(), env={"DEMO_NOTES_DIR": str(notes)}) as remote:
        convo = pk.Conversation(pk.NotebookStore(tmp_path / "c.sqlite"), "mixed", provider(server),
                                pk.ToolRegistry([weather, *remote]), display=False)
        turn = convo.send("Write the plan and check the weather.")
        assert turn.message.content == "Done."
        assert (notes / "plan.txt").read_text() == "ship it"
        sent = server.requests[1]["messages"]
        results = {m["tool_call_id"]: m["content"] for m in sent if m["role"] == "tool"}
        assert results == {"call_w": "wrote 7 characters to plan", "call_l": "sunny in Oslo"}
        assert {t["function"]["name"] for t in server.requests[0]["tools"]} >= {"weather", "write_note", "read_note"}


def test_ask_skips_read_only_tools_and_shows_hints(tmp_path, notes, monkeypatch, capsys):
    answers = [
        calls_answer([("call_r", "read_note", {"name": "x"}), ("call_w", "write_note", {"name": "x", "text": "y"})]),
        text_answer(["ok"]),
    ]
    with ChatServer(answers) as server, mcp_tools(
        demo_command(), env={"DEMO_NOTES_DIR": str(notes)}, read_only="annotations"
    ) as remote:
        from providerkit_nb.conversation import Conversation  # the terminal facade: asks on stdin

        monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
        convo = Conversation(pk.NotebookStore(tmp_path / "a.sqlite"), "ask", provider(server),
                             pk.ToolRegistry(remote), display=False, approve="ask")
        convo.send("go")
    out = capsys.readouterr().out
    assert "The model wants to call write_note" in out
    assert "The model wants to call read_note" not in out  # read-only: never asked
    assert "MCP tool (mcp:demo-notes): DESTRUCTIVE [readOnlyHint=false, destructiveHint=true, idempotentHint=false]" in out
    assert (notes / "x.txt").read_text() == "y"


@pytest.mark.parametrize("read_only, text", [(None, MAY_HAVE_RUN), ("annotations", READ_ONLY)])
def test_sigkill_of_the_conversation_process_mid_call(tmp_path, notes, read_only, text):
    answers = [call_answer("call_k", "read_note", json.dumps({"name": "k", "delay": 60})), text_answer(["Resumed."])]
    store = tmp_path / "crash.sqlite"
    with ChatServer(answers) as server:
        child = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("convo_child.py")), str(store), server.base_url, str(notes)],
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
        try:
            server_pid = int(wait_for(notes / "started-read_note", 60))
            child.send_signal(signal.SIGKILL)
            assert child.wait(10) == -signal.SIGKILL
        finally:
            child.kill()
        assert gone_within(server_pid), "the MCP server outlived the process that started it"
        with mcp_tools(demo_command(), env={"DEMO_NOTES_DIR": str(notes)}, read_only=read_only) as tools:
            convo = pk.Conversation(pk.NotebookStore(store), "crash", provider(server), pk.ToolRegistry(tools), display=False)
            [row] = convo.interrupted
            assert (row.name, row.original_id, row.note) == ("read_note", "call_k", text)
            frame = pk.interrupted_frame(convo.repaired, convo.tools)
            assert frame.loc[0, "source"] == "mcp:demo-notes"
            found = pk.inspect([m.to_dict() for m in convo.messages], tools=convo.tools)
            assert "  interrupted: read_note (mcp:demo-notes) call_k" in repr(found)
            assert found.to_json()["interrupted"][0]["source"] == "mcp:demo-notes"
            assert convo.resume().message.content == "Resumed."
        sent = server.requests[1]["messages"]
        assert [m["content"] for m in sent if m["role"] == "tool"] == [text]


def test_sigkill_of_the_process_group_mid_blocking_call_ends_the_server(tmp_path, notes):
    """The process running the conversation has a session of its own and its whole group is
    SIGKILLed while a blocking MCP tool sleeps. The server was started in a group of its own
    (the SDK does that), so the kill does not reach it, and closing its stdin does not stop a
    tool running in a worker thread: it used to finish the call (and write the note) 30 s
    after the crash. Now it dies with the process that started it, before the side effect."""
    delay = 30
    answers = [call_answer("call_b", "write_note_blocking", json.dumps({"name": "k", "text": "late", "delay": delay}))]
    with ChatServer(answers) as server:
        child = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("convo_child.py")), str(tmp_path / "g.sqlite"),
             server.base_url, str(notes)],
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, start_new_session=True,
        )
        try:
            server_pid = int(wait_for(notes / "started-write_note_blocking", 60))
            os.killpg(child.pid, signal.SIGKILL)
            killed = time.monotonic()
            assert child.wait(10) == -signal.SIGKILL
        finally:
            child.kill()
        assert gone_within(server_pid, 5.0), "the MCP server outlived the killed process group"
        assert time.monotonic() - killed < delay
        assert not (notes / "k.txt").exists()  # the side effect never happened
