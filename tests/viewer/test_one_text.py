"""One text, one count, everywhere: what the model will read for a call with no result, and
whether its tool only reads, is decided once, and every view shows that decision in the same
words: the text and repr, the HTML report, the widget (HistoryView), the mimebundle JupyterLab
shows, the static HTML a saved notebook keeps, the command line's ``inspect``, and what repair
writes (the session handed back to the agent, or the request a Conversation sends).

Two real cases: a call the Stop button lands in (a real SIGINT to this process while the tool
runs, as Jupyter's Stop sends it) in a live Conversation, and a Claude Code session (the real
``tool_heavy.jsonl``) whose WebSearch result line is cut out, as a kill mid-search leaves it.
The texts are pinned here, not imported from the code under test.
"""

from __future__ import annotations

import html
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import providerkit_nb as pk
from providerkit_nb.testing import simulate

REPO = Path(__file__).resolve().parents[2]

READ_ONLY_TOLD = "This call was interrupted before it returned. It changed nothing, so it is safe to call again."
READ_ONLY_SAID = "read-only: it changed nothing, safe to call again"
STOPPED_TOLD = (
    "The user stopped this call while it was running, before it returned. What it did up to that moment is "
    "done and the rest did not run, so check its effect before calling it again."
)
STOPPED_SAID = "stopped by the user while it ran: it may have partly run"
GENERIC = "This call was interrupted before it returned."


def visible(page: str) -> str:
    """What a person reads of an HTML view: no style, script or tags; entities decoded."""
    page = re.sub(r"<(style|script)\b.*?</\1>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def _cli(*args: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "providerkit_nb", *map(str, args)], capture_output=True, text=True,
                          cwd=REPO, timeout=120)


def _views(ins: Any) -> dict[str, str]:
    """Every view of an inspection, as the text a person reads."""
    from providerkit_nb.viewer import text_summary

    bundle = ins._repr_mimebundle_()
    view = ins.view
    return {
        "repr": repr(ins),
        "text": text_summary(ins.page()),
        "report": visible(ins.report_html()),
        "mimebundle html": visible(bundle["text/html"]),
        "mimebundle text": bundle["text/plain"],
        "saved notebook": visible(ins._repr_html_()),
        "widget": visible(view.findings.value + view.cards.value) + "\n" + view.status.value,
    }


# --------------------------------------------------------------------------- a stopped call


def _stopped_conversation(store: Any) -> tuple[Any, Any]:
    """A Conversation whose tool the Stop button (a real SIGINT) lands in while it runs."""
    running = threading.Event()

    def slow_write(args: dict[str, Any]) -> str:
        running.set()
        time.sleep(30)
        return "written"

    tool = pk.define_tool("slow_write", "writes slowly", {"type": "object", "properties": {"path": {"type": "string"}}},
                          run=slow_write)
    provider = simulate.ScriptedProvider([simulate.call_turn([("slow_write", {"path": "a.txt"})]),
                                          simulate.text_turn("I will check a.txt first.")])
    convo = pk.Conversation(store, "c", provider, [tool], display=False)

    def stop() -> None:
        running.wait(30)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=stop, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        convo.send("write it")
    return convo, provider


def test_a_stopped_call_has_one_text_and_one_count_in_every_view() -> None:
    store = pk.MemoryStore()
    convo, provider = _stopped_conversation(store)
    ins = pk.inspect(convo)
    assert ins.interrupted[0].note == STOPPED_TOLD
    views = _views(ins)
    own = convo.view()
    own_bundle = own._repr_mimebundle_()
    views["convo.view()"] = visible(own.findings.value + own.cards.value) + "\n" + own.status.value
    views["convo.view() mimebundle"] = visible(own_bundle["text/html"]) + "\n" + own_bundle["text/plain"]
    views["convo.view() settle box"] = visible("".join(r.label.value for r in own.settle_rows.values()))
    for name, text in views.items():
        assert STOPPED_SAID in text, name
        assert GENERIC not in text, name  # the generic text is what the model does NOT read
        assert "never returned" not in text and "lost:" not in text, name  # a stopped call is called stopped
        assert not re.search(r"\b[a-z]\d+-f-\d+\b", text), name  # no internal ids on show
        if name != "convo.view() settle box":
            assert STOPPED_TOLD in text, name
    # one count: the same number of problems wherever a count is given
    for name in ("repr", "text", "report", "mimebundle text", "widget", "convo.view()", "convo.view() mimebundle"):
        assert "1 problem(s)" in views[name] and "0 problem(s)" not in views[name], name
    # and the model reads that very text once the conversation goes on
    convo.resume()
    sent = [m for m in provider.requests[-1] if m.role == "tool"]
    assert [m.content for m in sent] == [STOPPED_TOLD]


# --------------------------------------------------------------------------- a lost WebSearch


def _cut_websearch_result(src: Path, out: Path) -> str:
    """The session with the line that answers its WebSearch call cut out; that call's id."""
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    calls = [b for x in lines for b in (json.loads(x).get("message") or {}).get("content") or []
             if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == "WebSearch"]
    assert len(calls) == 1  # the file's one web search
    victim = calls[0]["id"]
    kept = [x for x in lines if not any(isinstance(b, dict) and b.get("tool_use_id") == victim
                                        for b in (json.loads(x).get("message") or {}).get("content") or [])]
    assert len(kept) == len(lines) - 1
    out.write_text("".join(kept), encoding="utf-8")
    return str(victim)


@pytest.mark.upstream
def test_a_lost_websearch_is_read_only_in_every_view_and_in_what_repair_writes(
    upstream_transcripts_dir: Path, tmp_path: Path
) -> None:
    # Claude Code runs WebSearch without asking for permission: one of its tools that only read
    src = tmp_path / "session.jsonl"
    victim = _cut_websearch_result(upstream_transcripts_dir / "claude-code" / "tool_heavy.jsonl", src)
    ins = pk.inspect(src)
    assert [(r.original_id, r.read_only, r.note) for r in ins.interrupted] == [(victim, True, READ_ONLY_TOLD)]
    views = _views(ins)
    views["cli inspect"] = _cli("inspect", src).stdout
    for name, text in views.items():
        assert READ_ONLY_SAID in text and READ_ONLY_TOLD in text, name
        assert "not read-only" not in text and "may have partly run" not in text and "may have run" not in text, name
    for name in ("repr", "text", "report", "mimebundle text", "widget", "cli inspect"):
        assert "1 problem(s)" in views[name], name
    # what repair writes back for Claude Code to resume: that same text as the call's result
    done = _cli("repair", src, "--to", "claude_code")
    assert done.returncode in (0, 1), done.stderr
    written = [p for p in tmp_path.glob("*.jsonl") if p != src]
    assert len(written) == 1
    results = [b for x in written[0].read_text().splitlines() for b in (json.loads(x).get("message") or {}).get("content")
               or [] if isinstance(b, dict) and b.get("tool_use_id") == victim]
    assert [b["content"] if isinstance(b["content"], str) else b["content"][0]["text"] for b in results] == [READ_ONLY_TOLD]
