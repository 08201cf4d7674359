"""Stop (a real SIGINT to a real Jupyter kernel) while an MCP call runs: the request is cancelled
on the wire (the server sees notifications/cancelled), the store is left as Stop during a local
tool leaves it, and resume tells the model; shutting the kernel down ends the server process, and
so does a restart (the kernel killed mid-call), before the call's side effect."""

from __future__ import annotations

import json
import time

import pytest

from tests.conversation.chat_server import ChatServer, call_answer, text_answer
from tests.notebook.test_kernel import Kernel

from .conftest import DEMO, gone_within, wait_for

pytestmark = pytest.mark.timeout(180)


def _setup(tmp_path, notes, server, cid: str) -> str:
    """The kernel's first cell: the demo MCP server's tools in a Conversation ``cid`` on a store."""
    return f"""
import sys, providerkit_nb as pk
tools = pk.mcp_tools([sys.executable, {DEMO!r}], env={{"DEMO_NOTES_DIR": {str(notes)!r}}})
store = pk.NotebookStore({str(tmp_path / f"{cid}.providerkit.sqlite")!r})
provider = pk.openai(model="test-model", base_url={server.base_url!r}, api_key="test-key")
convo = pk.Conversation(store, {cid!r}, provider, pk.ToolRegistry(tools), display=False)
"""


def test_stop_mid_mcp_call_in_a_real_kernel(tmp_path, notes):
    answers = [
        call_answer("call_w", "write_note", json.dumps({"name": "n", "text": "t", "delay": 60})),
        text_answer(["I ", "will ", "check ", "the ", "note."]),
    ]
    with ChatServer(answers) as server:
        k = Kernel(tmp_path)
        try:
            assert k.run(_setup(tmp_path, notes, server, "k"))["status"] == "ok"
            mid = k.start("convo.send('Write note n.')")
            pid = int(wait_for(notes / "started-write_note", 60))
            k.km.interrupt_kernel()
            r = k.reply(mid)
            assert r["status"] == "error" and r["ename"] == "KeyboardInterrupt"
            assert int(wait_for(notes / "cancelled-write_note", 20)) == pid  # notifications/cancelled arrived
            assert not (notes / "n.txt").exists()
            assert k.value("[m.role for m in store.load('k')]") == ["user", "assistant"]
            assert k.value("[c.name for c in convo.reload().interrupted]") == ["write_note"]
            r = k.run("turn = convo.resume()")
            assert r["status"] == "ok", r
            assert k.value("turn.message.content") == "I will check the note."
        finally:
            k.close()  # a kernel shutdown: the server process must not outlive it
    assert gone_within(pid), "the MCP server outlived the kernel"
    sent = server.requests[1]["messages"]
    # Stop landed in the call: the model is told the user stopped it (what ran is done, the rest not)
    assert [m["content"] for m in sent if m["role"] == "tool"] == [
        "The user stopped this call while it was running, before it returned. What it did up to "
        "that moment is done and the rest did not run, so check its effect before calling it again."
    ]


def test_a_kernel_restart_mid_call_ends_the_server_before_the_side_effect(tmp_path, notes):
    """Restart (the kernel process is killed, no cell runs, no atexit) while a blocking MCP tool
    sleeps: the server must die with the kernel, not finish the call 30 s later."""
    delay = 30
    answers = [call_answer("call_b", "write_note_blocking", json.dumps({"name": "r", "text": "late", "delay": delay}))]
    with ChatServer(answers) as server:
        k = Kernel(tmp_path)
        try:
            assert k.run(_setup(tmp_path, notes, server, "r"))["status"] == "ok"
            k.start("convo.send('Write note r.')")
            pid = int(wait_for(notes / "started-write_note_blocking", 60))
            restarted = time.monotonic()
            k.km.restart_kernel(now=True)  # what the Restart button does to a busy kernel
            assert gone_within(pid, 5.0), "the MCP server outlived the kernel restart"
            assert time.monotonic() - restarted < delay
            assert not (notes / "r.txt").exists()  # the side effect never happened
        finally:
            k.close()
