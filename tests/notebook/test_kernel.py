"""In a real Jupyter kernel: interrupt ``send`` with a real SIGINT mid-stream and mid-tool, then
resume. The kernel talks to a real HTTP server on 127.0.0.1 through the OpenAI Chat adapter and
saves into a real SQLite file, so every layer is the one a notebook user runs."""

from __future__ import annotations

import json
import os
import time

import pytest

from tests.conversation.chat_server import ChatServer, call_answer, text_answer

pytestmark = pytest.mark.timeout(180)


class Kernel:
    def __init__(self, tmp_path) -> None:
        from jupyter_client.manager import start_new_kernel

        env = dict(os.environ)
        env["IPYTHONDIR"] = str(tmp_path / "ipython")  # no replay startup file in this kernel
        env.pop("OPENAI_API_KEY", None)
        self.km, self.kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(tmp_path))

    def run(self, code: str, timeout: float = 60.0) -> dict:
        return self.reply(self.start(code), timeout)

    def start(self, code: str) -> str:
        # stop_on_error=False: an interrupted cell must not make the kernel abort the next
        # request that arrives right behind it (ipykernel does by default).
        return self.kc.execute(code, stop_on_error=False)

    def reply(self, msg_id: str, timeout: float = 60.0) -> dict:
        while True:
            msg = self.kc.get_shell_msg(timeout=timeout)
            if msg["parent_header"].get("msg_id") == msg_id:
                return msg["content"]

    def value(self, expr: str):
        r = self.run(f"import json as _j; print(_j.dumps({expr}))")
        assert r["status"] == "ok", r
        while True:
            m = self.kc.get_iopub_msg(timeout=10)
            if m["msg_type"] == "stream" and m["content"]["name"] == "stdout":
                return json.loads(m["content"]["text"])

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def test_sigint_mid_stream_and_mid_tool_then_resume(tmp_path):
    marker = tmp_path / "tool-started"
    written = tmp_path / "written-after-the-sleep"
    answers = [
        text_answer([f"word{i} " for i in range(200)], gap=0.05),  # slow: interrupted mid-stream
        call_answer("call_slow_1", "slow_write", json.dumps({"path": "out.txt"})),  # its tool is interrupted
        text_answer(["I ", "will ", "check ", "out.txt ", "first."]),  # the resumed turn
    ]
    with ChatServer(answers) as server:
        k = Kernel(tmp_path)
        try:
            setup = f"""
import time, pathlib, providerkit_nb as pk
def slow_write(args):
    pathlib.Path({str(marker)!r}).write_text("started")
    time.sleep(3)
    pathlib.Path({str(written)!r}).write_text("the e-mail")  # the side effect Stop must prevent
    return "written"
tools = pk.ToolRegistry([pk.define_tool("slow_write", "Write slowly.",
    {{"type": "object", "properties": {{"path": {{"type": "string"}}}}, "required": ["path"]}}, slow_write)])
store = pk.NotebookStore({str(tmp_path / "k.providerkit.sqlite")!r})
provider = pk.openai(model="test-model", base_url={server.base_url!r}, api_key="test-key")
convo = pk.Conversation(store, "k", provider, tools, display=False)
"""
            assert k.run(setup)["status"] == "ok"

            # 1. Stop while the answer streams
            mid = k.start("convo.send('Write out.txt')")
            assert server.wait(lambda: server.frames_sent and server.frames_sent[0] >= 5)
            k.km.interrupt_kernel()
            r = k.reply(mid)
            assert r["status"] == "error" and r["ename"] == "KeyboardInterrupt"
            # a short traceback, raised from the library's frame (not from inside the HTTP client)
            assert r["evalue"] == "stopped while the answer streamed: what was shown is not saved"
            assert not any("httpcore" in line or "httpx" in line for line in r["traceback"]), r["traceback"]
            assert server.wait(lambda: server.hung_up[0]), "the HTTP response was not closed"
            assert server.frames_sent[0] < 100
            assert k.value("[m.role for m in store.load('k')]") == ["user"]
            assert k.value("len(store.lost_turns('k'))") == 1

            # 2. Stop while the tool runs
            mid = k.start("convo.resume()")
            assert server.wait(marker.exists)
            time.sleep(0.2)
            k.km.interrupt_kernel()
            r = k.reply(mid)
            assert r["status"] == "error" and r["ename"] == "KeyboardInterrupt"
            # Stop landed inside the tool: the frame it ran in is in the traceback
            assert any("slow_write" in line for line in r["traceback"]), r["traceback"]
            time.sleep(4)  # past the moment the tool would have written its file
            assert not written.exists(), "the tool went on running after Stop"
            assert k.value("[m.role for m in store.load('k')]") == ["user", "assistant"]
            # right after Stop, without a reload, the conversation says what happened
            assert k.value("[c.name for c in convo.interrupted]") == ["slow_write"]
            assert k.value("store.call_marks('k')['call_slow_1'].state") == "stopped"
            assert k.value("[c.name for c in convo.reload().interrupted]") == ["slow_write"]

            # 3. Resume: the model is told the call was interrupted, and answers
            r = k.run("turn = convo.resume()")
            assert r["status"] == "ok", r
            assert k.value("turn.message.content") == "I will check out.txt first."
            # what the model was told for the stopped call is saved as its result, so the stored
            # history itself is whole and nothing calls the call open any more
            assert k.value("[m.role for m in store.load('k')]") == ["user", "assistant", "tool", "assistant"]
            assert k.value("pk.validate_history(store.load('k')) == []") is True
            assert k.value("convo.interrupted") == []
        finally:
            k.close()
    sent = server.requests[2]["messages"]
    tool_msgs = [m for m in sent if m["role"] == "tool"]
    assert tool_msgs == [
        {
            "role": "tool",
            "tool_call_id": "call_slow_1",
            "content": "The user stopped this call while it was running, before it returned. What it did up "
            "to that moment is done and the rest did not run, so check its effect before calling it again.",
        }
    ]
    assert not written.exists()


def _iopub_until(k: Kernel, predicate, timeout: float = 30.0) -> list[dict]:
    """Read the kernel's broadcast messages until one satisfies ``predicate``."""
    seen = []
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            msg = k.kc.get_iopub_msg(timeout=max(0.1, end - time.monotonic()))
        except Exception:  # queue.Empty: keep waiting until the deadline
            continue
        seen.append(msg)
        if predicate(msg):
            return seen
    raise AssertionError(f"no such message within {timeout} s; saw {[m['msg_type'] for m in seen]}")


def test_a_kernel_killed_while_waiting_for_approval_asks_again_after_the_restart(tmp_path):
    """approve="ask" in a real kernel shows the widget and blocks (jupyter-ui-poll); the kernel is
    killed with SIGKILL while it waits; a new kernel sees the call as waiting for approval (not
    "may have partly run") and resume() asks again, then runs it."""
    import signal

    import providerkit_nb as pk

    ran = tmp_path / "tool-ran"
    db = tmp_path / "a.providerkit.sqlite"
    answers = [
        call_answer("call_w_1", "write_note", json.dumps({"path": "note.txt"})),
        text_answer(["Written."]),
    ]
    setup = f"""
import pathlib, providerkit_nb as pk
def write_note(args):
    pathlib.Path({str(ran)!r}).write_text(args["path"])
    return "wrote " + args["path"]
tools = pk.ToolRegistry([pk.define_tool("write_note", "Write a note.",
    {{"type": "object", "properties": {{"path": {{"type": "string"}}}}, "required": ["path"]}}, write_note)])
store = pk.NotebookStore({str(db)!r})
provider = pk.openai(model="test-model", base_url=BASE, api_key="test-key")
"""
    with ChatServer(answers) as server:
        k = Kernel(tmp_path)
        try:
            code = setup.replace("BASE", repr(server.base_url))
            assert k.run(code + "convo = pk.Conversation(store, 'k', provider, tools, display=False, approve='ask')")["status"] == "ok"
            shown = lambda m: (m["msg_type"] == "display_data"  # noqa: E731 - the widget's view
                               and "application/vnd.jupyter.widget-view+json" in m["content"]["data"])
            # 1. the question is on screen under the running cell; Stop ends the wait cleanly
            mid = k.start("convo.send('Write the note')")
            _iopub_until(k, shown)
            time.sleep(0.3)
            k.km.interrupt_kernel()
            r = k.reply(mid)
            assert r["status"] == "error" and r["ename"] == "KeyboardInterrupt"
            assert not ran.exists()
            # 2. resume asks again; this time the kernel dies while the question is open
            k.start("convo.resume()")
            _iopub_until(k, shown)
            with pk.NotebookStore(db) as watcher:
                assert watcher.call_marks("k")["call_w_1"].state == "asking"
            time.sleep(0.3)  # still waiting, not running the tool
            assert not ran.exists()
            k.km.signal_kernel(signal.SIGKILL)
            assert server.wait(lambda: not k.km.is_alive(), timeout=20)
        finally:
            k.close()

        with pk.NotebookStore(db) as after:
            assert [m.role for m in after.load("k")] == ["user", "assistant"]
            assert after.call_marks("k")["call_w_1"].state == "asking"
        assert not ran.exists()

        k = Kernel(tmp_path)
        try:
            code = setup.replace("BASE", repr(server.base_url))
            code += "asked = []\nconvo = pk.Conversation(store, 'k', provider, tools, display=False, approve=lambda call: asked.append(call.id) or True)"
            assert k.run(code)["status"] == "ok"
            assert k.value("[p.id for p in convo.repaired.pending]") == ["call_w_1"]
            assert k.value("convo.repaired.interrupted") == []
            r = k.run("turn = convo.resume()")
            assert r["status"] == "ok", r
            assert k.value("asked") == ["call_w_1"]
            assert k.value("turn.message.content") == "Written."
            assert k.value("store.call_marks('k')['call_w_1'].state") == "finished"
        finally:
            k.close()
    assert ran.read_text() == "note.txt"
    tool_msgs = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in tool_msgs] == [("call_w_1", "wrote note.txt")]


def test_a_timeout_stops_the_tool_one_display_per_send_and_usage_survives_a_restart(tmp_path):
    """In a real kernel: a tool's timeout interrupts its sleep (the file it would write after
    never appears); a cell ending in ``convo.send(...)`` draws one display (the live one, which
    shows the tool's result) and no second copy of the answer; after a kernel restart the
    frames still count every turn."""
    written = tmp_path / "written-after-the-sleep"
    db = tmp_path / "u.providerkit.sqlite"
    answers = [
        call_answer("call_t_1", "slow_write", json.dumps({"path": "x"})),
        text_answer(["It ", "timed ", "out."]),
    ]
    setup = f"""
import time, pathlib, providerkit_nb as pk
def slow_write(args):
    time.sleep(5)
    pathlib.Path({str(written)!r}).write_text("late")
    return "written"
tools = pk.ToolRegistry([pk.define_tool("slow_write", "Write slowly.",
    {{"type": "object", "properties": {{"path": {{"type": "string"}}}}, "required": ["path"]}}, slow_write, timeout=1)])
store = pk.NotebookStore({str(db)!r})
provider = pk.openai(model="test-model", base_url=BASE, api_key="test-key")
convo = pk.Conversation(store, "u", provider, tools)
"""
    with ChatServer(answers) as server:
        k = Kernel(tmp_path)
        try:
            code = setup.replace("BASE", repr(server.base_url))
            assert k.run(code)["status"] == "ok"
            while True:  # drain what setup printed
                try:
                    k.kc.get_iopub_msg(timeout=0.5)
                except Exception:
                    break
            mid = k.start("convo.send('Write x')")
            seen = _iopub_until(k, lambda m: m["msg_type"] == "status" and m["content"]["execution_state"] == "idle"
                                and m["parent_header"].get("msg_id") == mid, timeout=60)
            assert k.reply(mid)["status"] == "ok"
            kinds = [m["msg_type"] for m in seen if m["parent_header"].get("msg_id") == mid]
            assert kinds.count("display_data") == 1, kinds  # one display per send ...
            assert "execute_result" not in kinds, kinds  # ... and the returned turn adds none
            last = [m for m in seen if m["msg_type"] in ("display_data", "update_display_data")][-1]
            html = last["content"]["data"]["text/html"]
            assert 'data-status="timeout"' in html and "did not finish within 1 s" in html
            assert "It timed out." in html
            time.sleep(5)
            assert not written.exists(), "the tool went on running after its timeout"
            assert k.value("store.call_marks('u')['call_t_1'].detail['kind']") == "timeout"

            k.km.restart_kernel(now=True)
            k.kc.wait_for_ready(timeout=60)
            assert k.run(code)["status"] == "ok"
            assert k.value("list(pk.turns_frame(convo)['output_tokens'])") == [5, 3]
            assert k.value("int(pk.usage_frame(convo)['calls'][0])") == 2
        finally:
            k.close()


def test_the_approval_box_sits_where_its_call_is_in_the_live_display(tmp_path):
    """approve="ask" with the live display on, in a real kernel: the question is displayed right
    after the display that shows the turn making the call, and the call's status line and the
    next answer are drawn in a display after the question, never back into the one above it.
    The Approve click is the widget protocol's own message (what JupyterLab sends)."""
    db = tmp_path / "o.providerkit.sqlite"
    answers = [
        call_answer("call_o_1", "write_note", json.dumps({"path": "n.txt"})),
        text_answer(["Note ", "written."]),
    ]
    code = f"""
import providerkit_nb as pk
tools = pk.ToolRegistry([pk.define_tool("write_note", "Write a note.",
    {{"type": "object", "properties": {{"path": {{"type": "string"}}}}, "required": ["path"]}},
    lambda args: "wrote " + args["path"])])
store = pk.NotebookStore({str(db)!r})
provider = pk.openai(model="test-model", base_url=BASE, api_key="test-key")
convo = pk.Conversation(store, "o", provider, tools, approve="ask")
"""
    with ChatServer(answers) as server:
        k = Kernel(tmp_path)
        try:
            assert k.run(code.replace("BASE", repr(server.base_url)))["status"] == "ok"
            mid = k.start("convo.send('Write the note'); None")
            is_widget = lambda m: (m["msg_type"] == "display_data"  # noqa: E731
                                   and "application/vnd.jupyter.widget-view+json" in m["content"]["data"])
            seen = _iopub_until(k, is_widget)
            approve = next(
                m["content"]["comm_id"] for m in seen
                if m["msg_type"] == "comm_open"
                and m["content"]["data"].get("state", {}).get("description") == "Approve"
            )
            msg = k.kc.session.msg("comm_msg", {"comm_id": approve, "data": {"method": "custom", "content": {"event": "click"}}})
            k.kc.shell_channel.send(msg)
            seen += _iopub_until(k, lambda m: m["msg_type"] == "status" and m["content"]["execution_state"] == "idle"
                                 and m["parent_header"].get("msg_id") == mid, timeout=60)
            assert k.reply(mid)["status"] == "ok"
        finally:
            k.close()
    mine = [m for m in seen if m["parent_header"].get("msg_id") == mid
            and m["msg_type"] in ("display_data", "update_display_data")]

    def display_id(m):
        return m["content"].get("transient", {}).get("display_id")

    order = []  # (what, display id) in the order the notebook shows them
    for m in mine:
        if m["msg_type"] == "display_data":
            order.append(("box" if "application/vnd.jupyter.widget-view+json" in m["content"]["data"] else "live",
                          display_id(m)))
    assert [what for what, _ in order] == ["live", "box", "live"], order
    above, below = order[0][1], order[2][1]
    box_at = next(i for i, m in enumerate(mine) if "application/vnd.jupyter.widget-view+json" in m["content"]["data"])
    after_box = [m for m in mine[box_at + 1:] if "text/html" in m["content"]["data"]]
    assert all(display_id(m) == below for m in after_box), "drawn back above the question"
    assert not any(display_id(m) == above for m in after_box)
    last_above = [m for m in mine[:box_at] if display_id(m) == above][-1]["content"]["data"]["text/html"]
    assert "write_note" in last_above  # the turn that made the call, above the question
    last_below = after_box[-1]["content"]["data"]["text/html"]
    assert 'data-status="done"' in last_below and "wrote n.txt" in last_below and "Note written." in last_below


def test_every_widget_message_answered_while_the_box_waits_gets_its_idle_so_a_fixed_edit_arrives(tmp_path):
    """The protocol JupyterLab's widget manager follows: it sends a widget's next state update
    only once the kernel has said "idle" for the last one. While the approval box waits, each
    widget message must get that idle (and the cell be announced busy again), or the editor's
    second change never leaves the browser: a fixed edit is never seen and the box stops
    answering. The messages here are the ones JupyterLab sends (clicks and editor updates)."""
    db = tmp_path / "e.providerkit.sqlite"
    code = f"""
import providerkit_nb as pk
from providerkit_nb import simulate
tools = pk.ToolRegistry([pk.define_tool("write_note", "Write a note.",
    {{"type": "object", "properties": {{"path": {{"type": "string"}}}}, "required": ["path"]}},
    lambda args: "wrote " + args["path"])])
store = pk.NotebookStore({str(db)!r})
provider = simulate.ScriptedProvider([simulate.call_turn([("write_note", {{"path": "a.txt"}})]),
                                      simulate.text_turn("done")])
convo = pk.Conversation(store, "e", provider, tools, display=False, approve="ask")
"""
    k = Kernel(tmp_path)
    try:
        assert k.run(code)["status"] == "ok"
        cell = k.start("turn = convo.send('Write the note')")
        is_box = lambda m: (m["msg_type"] == "display_data"  # noqa: E731
                            and "application/vnd.jupyter.widget-view+json" in m["content"]["data"])
        seen = _iopub_until(k, is_box)
        opened = {m["content"]["comm_id"]: m["content"]["data"].get("state", {}) for m in seen if m["msg_type"] == "comm_open"}
        comm = {st.get("description") or st.get("_model_name"): cid for cid, st in opened.items()}

        def widget_msg(name: str, data: dict) -> list[dict]:
            msg = k.kc.session.msg("comm_msg", {"comm_id": comm[name], "data": data})
            k.kc.shell_channel.send(msg)
            sent = msg["header"]["msg_id"]
            got = _iopub_until(k, lambda m: m["msg_type"] == "status" and m["content"]["execution_state"] == "idle"
                               and m["parent_header"].get("msg_id") == sent, timeout=10)
            # and the cell is announced busy again: the kernel's indicator does not say idle meanwhile
            got += _iopub_until(k, lambda m: m["msg_type"] == "status" and m["content"]["execution_state"] == "busy"
                                and m["parent_header"].get("msg_id") == cell, timeout=10)
            return got

        click = {"method": "custom", "content": {"event": "click"}}
        widget_msg("Edit arguments", click)
        widget_msg("TextareaModel", {"method": "update", "state": {"value": '{"path": 5'}, "buffer_paths": []})
        widget_msg("Run with these arguments", click)  # refused: not JSON
        widget_msg("TextareaModel", {"method": "update", "state": {"value": '{"path": "b.txt"}'}, "buffer_paths": []})
        k.kc.shell_channel.send(k.kc.session.msg(
            "comm_msg", {"comm_id": comm["Run with these arguments"], "data": click}))
        assert k.reply(cell, timeout=30)["status"] == "ok"
        assert k.value("[m.content for m in store.load('e') if m.role == 'tool']")[0].endswith("wrote b.txt")
    finally:
        k.close()
