"""In a real Jupyter kernel: interrupt ``send`` with a real SIGINT mid-stream and mid-tool, then
resume. The kernel talks to a real HTTP server on 127.0.0.1 through the OpenAI Chat adapter and
saves into a real SQLite file, so every layer is the one a notebook user runs."""

from __future__ import annotations

import json
import os
import time

import pytest

from .chat_server import ChatServer, call_answer, text_answer

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
    time.sleep(60)
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
            assert k.value("[m.role for m in store.load('k')]") == ["user", "assistant"]
            assert k.value("[c.name for c in convo.reload().interrupted]") == ["slow_write"]

            # 3. Resume: the model is told the call was interrupted, and answers
            r = k.run("turn = convo.resume()")
            assert r["status"] == "ok", r
            assert k.value("turn.message.content") == "I will check out.txt first."
            assert k.value("[m.role for m in store.load('k')]") == ["user", "assistant", "assistant"]
            assert k.value("pk.validate_history(convo.repair().messages) == []") is True
        finally:
            k.close()
    sent = server.requests[2]["messages"]
    tool_msgs = [m for m in sent if m["role"] == "tool"]
    assert tool_msgs == [
        {
            "role": "tool",
            "tool_call_id": "call_slow_1",
            "content": "This call was interrupted before it returned. It may have partly run, so check its effect before calling it again.",
        }
    ]
