"""The terminal walkthrough (``make demo``) runs, fits 100 columns, and tells the story right."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import providerkit_nb as pk
from providerkit_nb.cli.demo import find_example, run_walkthrough
from providerkit_nb.messages import loads

# the exact texts, pinned here (not imported from the code under test)
MAY_HAVE_RUN = (
    "This call was interrupted before it returned. It may have partly run, so check its effect "
    "before calling it again."
)

REPO = Path(__file__).resolve().parents[2]


def test_example_is_the_cut_off_conversation_it_claims_to_be() -> None:
    history = loads(find_example().read_text(encoding="utf-8"))
    rules = sorted(p.rule for p in pk.validate_history(history))
    assert rules == ["dangling_call", "duplicate_id", "empty_assistant", "orphan_result"]


def test_demo_prints_tables_within_100_columns() -> None:
    buf = io.StringIO()
    assert run_walkthrough(out=buf) == 0
    text = buf.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 100
    # the one call that never returned is the write, which may have partly run
    interrupted = text.split("== calls that never returned")[1].split("\n== ")[0]
    rows = [line.split() for line in interrupted.splitlines() if line.startswith("call_")]
    assert [r[:5] for r in rows] == [["call_1", "call_1", "write_file", "no", "2"]]
    assert MAY_HAVE_RUN.split(".")[0] in text
    assert "call_0_2" in text
    assert "no problems: every provider accepts this history" in text
    assert "repairing the repaired history changes nothing: True" in text


def test_cli_runs_the_demo() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "providerkit_nb", "demo"], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert "== every change repair made" in proc.stdout


def test_the_demo_report_says_what_it_shows(tmp_path: Path) -> None:
    """The report is the repair (the history as stored before the resume, and as the resume sent
    it): its title must not call it resumed, and the resumed answer is not in it."""
    import html
    import re

    proc = subprocess.run([sys.executable, "-m", "providerkit_nb", "demo"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "demo-output" / "report.html").read_text(encoding="utf-8")
    title = html.unescape(re.search(r"<title>(.*?)</title>", page, re.S).group(1))  # type: ignore[union-attr]
    assert "resumed" not in title
    assert "as stored" in title and "as the resume sent it" in title
    stored = pk.NotebookStore(tmp_path / "demo-output" / "demo.providerkit.sqlite").load("crash-demo")
    answer = stored[-1]
    assert answer.role == "assistant" and not answer.tool_calls and answer.content
    assert json_text(answer.content) not in page  # what the model said after the resume is not shown
    # the resume first saved what the model was told for the call the kill interrupted (the
    # library's settling), then the answer: the report shows the history before both
    told = stored[-2]
    marks = pk.NotebookStore(tmp_path / "demo-output" / "demo.providerkit.sqlite").call_marks("crash-demo")
    assert told.role == "tool" and marks[told.tool_call_id].detail.get("by") == "library"
    before = len(stored) - 2
    assert f"{before} messages as stored" in page


def json_text(text: str) -> str:
    """How the report's embedded data spells a text (JSON inside the page)."""
    import json

    return json.dumps(text)[1:-1].replace("<", "\\u003c")
