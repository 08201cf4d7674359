"""The session of a new user, replayed in a real JupyterLab in Debian's Chromium: an agent with
a read-only tool and an e-mail tool behind ``approve="ask"``, against a local OpenAI-compatible
server (``tests/conversation/chat_server.py``) on 127.0.0.1.

1. Send; approve the e-mail in the widget; press Stop while the tool runs. The tool is stopped
   where it runs: the e-mail file is never written, the approval box and the live display end in
   "stopped", and ``convo.interrupted`` names the call at once.
2. Send again; restart the kernel while the approval waits. Rebuild the conversation, open
   ``convo.view()`` and click Resume: the question appears inside the view, Approve runs the
   call, the model answers, and the next cell runs (the kernel was never blocked).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.conversation.chat_server import ChatServer, call_answer, text_answer

from .test_jupyterlab import _RUN_CELL, OUTPUT, _open_notebook, lab  # noqa: F401 - the fixture

SETUP = """import pathlib, time, providerkit_nb as pk
import providerkit_nb.notebook.widgets
def lookup(who: str) -> str:
    \"\"\"Find a person's address.\"\"\"
    return who + "@example.org"
def send_email(to: str, text: str) -> str:
    \"\"\"Send an e-mail.\"\"\"
    pathlib.Path("sending-" + to).write_text(text)
    time.sleep(3)
    pathlib.Path("sent-" + to).write_text(text)
    return "sent to " + to
tools = pk.ToolRegistry([pk.tool(lookup, read_only=True), pk.tool(send_email)])
store = pk.NotebookStore("agent.providerkit.sqlite")
provider = pk.openai(model="test-model", base_url=BASE, api_key="test-key")
convo = pk.Conversation(store, "s", provider, tools, approve="ask")
print("READY", {c: m.state for c, m in store.call_marks("s").items()})"""

CELLS = [
    SETUP,
    "convo.send('E-mail Bob that the build is green')",
    "print('CALLS-INTERRUPTED', [c.name for c in convo.interrupted], store.call_marks('s')['call_bob'].state)",
    "convo.send('Now e-mail Alice')",
    "view = convo.view()\nview",
    "print('NEXT-CELL', [m.role for m in store.load('s')][-3:])",
    "convo.send('Tell me a long story')",
    "print('AFTER-STREAM', [m.role for m in store.load('s')][-2:], len(store.lost_turns('s')))",
]


def _notebook(path: Path, base: str) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c.replace("BASE", repr(base))) for c in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))


def _wait_file(path: Path, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < end, f"{path.name} never appeared"
        time.sleep(0.05)


_IDLE = "window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'idle'"


def test_stop_inside_a_tool_and_resume_with_an_approval_pending(lab, tmp_path):  # noqa: F811
    from playwright.sync_api import sync_playwright

    root = tmp_path / "nb"
    answers = [
        call_answer("call_bob", "send_email", json.dumps({"to": "bob", "text": "The build is green."})),
        call_answer("call_alice", "send_email", json.dumps({"to": "alice", "text": "Hello Alice."})),
        text_answer(["Sent ", "to ", "Alice."]),
        text_answer([f"word{i} " for i in range(300)], gap=0.05),  # stopped while it streams
    ]
    OUTPUT.mkdir(exist_ok=True)
    shots = {name: OUTPUT / f"stop-{name}.png" for name in ("stopped", "view-asks", "view-done", "stream")}
    with ChatServer(answers) as server:
        _notebook(root / "agent.ipynb", server.base_url)
        with sync_playwright() as p:
            ctx, page = _open_notebook(p, tmp_path, lab, "agent.ipynb")
            try:
                page.evaluate(_RUN_CELL, 0)
                page.locator(".jp-OutputArea-output", has_text="READY").wait_for(timeout=120_000)

                # 1. approve, then Stop while the e-mail tool runs
                page.evaluate(_RUN_CELL, 1)
                approve = page.locator(".pk-approval .widget-button", has_text="Approve").first
                approve.wait_for(timeout=60_000)
                approve.click()
                _wait_file(root / "sending-bob")
                page.evaluate("window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.interrupt()")
                page.wait_for_function(_IDLE, timeout=30_000)
                stopped_line = page.locator(".pk-tool[data-status='stopped']").first
                stopped_line.wait_for(timeout=30_000)
                box_status = page.locator(".pk-approval .pk-approval-status").first.inner_text()
                traceback = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").first.inner_text()
                stopped_line.scroll_into_view_if_needed()
                page.screenshot(path=str(shots["stopped"]), full_page=False)
                time.sleep(4)  # past the moment the tool would have sent the e-mail
                bob_sent = (root / "sent-bob").exists()

                page.evaluate(_RUN_CELL, 2)
                said = page.locator(".jp-OutputArea-output", has_text="CALLS-INTERRUPTED").inner_text()

                # 2. the next question is open when the kernel restarts
                page.evaluate(_RUN_CELL, 3)
                page.locator(".pk-approval .widget-button", has_text="Approve").nth(1).wait_for(timeout=60_000)
                page.evaluate("window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart()")
                page.wait_for_function(_IDLE, timeout=60_000)
                page.evaluate(_RUN_CELL, 0)
                page.locator(".jp-OutputArea-output", has_text="'call_alice': 'asking'").wait_for(timeout=120_000)
                page.wait_for_function(_IDLE, timeout=60_000)
                page.evaluate(_RUN_CELL, 4)
                resume = page.locator(".widget-button", has_text="Resume")
                resume.wait_for(timeout=60_000)
                resume.click()
                in_view = page.locator(".pk-view .pk-approval .widget-button", has_text="Approve")
                in_view.wait_for(timeout=30_000)
                page.wait_for_function(_IDLE, timeout=30_000)  # the click returned: nothing waits
                in_view.scroll_into_view_if_needed()
                page.screenshot(path=str(shots["view-asks"]), full_page=False)
                in_view.click()
                page.locator(".pk-view .pk-turn", has_text="Sent to Alice.").wait_for(timeout=60_000)
                page.wait_for_function(_IDLE, timeout=30_000)
                view_box = page.locator(".pk-view .pk-approval .pk-approval-status").first.inner_text()
                page.locator(".pk-view >> visible=true").first.scroll_into_view_if_needed()
                page.screenshot(path=str(shots["view-done"]), full_page=False)

                page.evaluate(_RUN_CELL, 5)
                nxt = page.locator(".jp-OutputArea-output", has_text="NEXT-CELL").inner_text()

                # 3. Stop while the answer streams
                page.evaluate(_RUN_CELL, 6)
                page.locator(".pk-turn", has_text="word10").wait_for(timeout=60_000)
                page.evaluate("window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.interrupt()")
                stopped_stream = page.locator(".pk-stopped")
                stopped_stream.wait_for(timeout=30_000)
                page.wait_for_function(_IDLE, timeout=30_000)
                stream_said = stopped_stream.inner_text()
                stream_tb = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").last.inner_text()
                stopped_stream.scroll_into_view_if_needed()
                page.screenshot(path=str(shots["stream"]), full_page=False)
                page.evaluate(_RUN_CELL, 7)
                after_stream = page.locator(".jp-OutputArea-output", has_text="AFTER-STREAM").inner_text()
            finally:
                ctx.close()

    assert not bob_sent, "the e-mail was sent after Stop"
    assert (root / "sending-bob").exists()  # what it did before Stop is done
    assert box_status == "approved: stopped"
    assert "KeyboardInterrupt" in traceback and "send_email" in traceback
    assert "CALLS-INTERRUPTED ['send_email'] stopped" in said
    assert view_box == "approved: done"
    assert (root / "sent-alice").read_text() == "Hello Alice."
    assert "NEXT-CELL ['assistant', 'tool', 'assistant']" in nxt
    assert "stopped: not saved" in stream_said and "word10" in stream_said
    assert "streaming" not in stream_said
    assert "stopped while the answer streamed" in stream_tb and "httpcore" not in stream_tb
    assert "AFTER-STREAM ['assistant', 'user'] 1" in after_stream  # nothing of it was saved
    for shot in shots.values():
        assert shot.stat().st_size > 10_000
