"""``providerkit-nb inspect`` and ``repair`` through a real subprocess: the three exit statuses,
the JSON shape the issue fixes, the HTML report, and the repaired file importing back."""

from __future__ import annotations

import hashlib
import html
import json
import subprocess
import sys
from pathlib import Path

import pytest

import providerkit_nb as pk
from tests.transcripts.conftest import FIXTURES

REPO = Path(__file__).resolve().parents[2]
JSON_KEYS = {"source", "format", "thread", "messages", "skipped", "problems", "interrupted", "orphans",
             "pending_approval", "changes", "abandoned", "error_results"}  # error_results: issue 24


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "providerkit_nb", *map(str, args)],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )


def test_a_valid_transcript_exits_0_with_a_readable_report():
    r = run("inspect", FIXTURES / "vercel_ui_complete.json")
    assert r.returncode == 0, r.stderr
    assert "vercel_ui" in r.stdout and "0 problem(s)" in r.stdout


def test_problems_exit_1_and_the_json_has_exactly_the_issue_shape():
    db = FIXTURES / "openai_agents_sessions.db"
    r = run("inspect", db, "--thread", "weather-broken", "--json")
    assert r.returncode == 1, r.stderr
    out = json.loads(r.stdout)
    assert set(out) == JSON_KEYS
    assert out["format"] == "openai_agents" and out["thread"] == "weather-broken"
    assert out["source"] == str(db)
    assert isinstance(out["messages"], int) and out["messages"] > 0
    assert all(set(p) == {"rule", "index", "message", "provider_wording"} for p in out["problems"])
    assert [set(i) for i in out["interrupted"]] == [{"id", "original_id", "name", "read_only"}]
    assert out["interrupted"][0]["original_id"] == "call_get_weather_1"
    assert out["orphans"] == ["call_lookup_9"]
    assert out["pending_approval"] == []
    assert {c["kind"] for c in out["changes"]} == {"added_interrupted_result", "result_to_note"}


def test_pending_approval_is_listed_and_not_a_problem():
    r = run("inspect", FIXTURES / "vercel_ui_approval.json", "--json")
    out = json.loads(r.stdout)
    assert r.returncode == 0 and out["pending_approval"] == ["call-approval-1"] and out["problems"] == []


def test_several_threads_without_thread_are_listed_and_exit_2():
    r = run("inspect", FIXTURES / "openai_agents_sessions.db")
    assert r.returncode == 2
    assert "weather-complete" in r.stderr and "weather-broken" in r.stderr and "--thread" in r.stderr
    assert r.stdout == ""


@pytest.mark.parametrize(
    "args",
    [
        ("inspect", "no/such/file.jsonl"),
        ("inspect", FIXTURES / "VERSIONS.json"),
        ("inspect", FIXTURES / "vercel_ui_complete.json", "--format", "codex"),
        ("inspect", FIXTURES / "vercel_ui_complete.json", "--wire", "carrier_pigeon"),
    ],
)
def test_an_unreadable_source_exits_2_with_one_line_naming_the_file(args):
    r = run(*args)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(args[1]) in lines[0], r.stderr


def test_a_usage_error_exits_2():
    assert run("inspect").returncode == 2
    assert run("repair", FIXTURES / "codex_turn_aborted.jsonl").returncode == 2  # no -o


def test_html_writes_the_before_after_report_escaped(tmp_path):
    page = tmp_path / "report.html"
    r = run("inspect", FIXTURES / "codex_turn_aborted.jsonl", "--html", page)
    assert r.returncode == 1
    text = page.read_text()
    assert text.startswith("<!doctype html>") and "call_slow_1" in text
    # the page's own script (its rows are in the page) and no other: no CDN, nothing from the file
    assert text.count("<script") == 1 and 'src="http' not in text


def test_repair_writes_canonical_jsonl_that_imports_and_validates(tmp_path):
    src = FIXTURES / "claude_code_killed_mid_tool.jsonl"
    before = hashlib.sha256(src.read_bytes()).hexdigest()
    out = tmp_path / "repaired.jsonl"
    r = run("repair", src, "-o", out)
    assert r.returncode == 1, r.stderr  # it had problems; the repaired file is written anyway
    assert hashlib.sha256(src.read_bytes()).hexdigest() == before
    store = pk.MemoryStore()
    store.import_jsonl(out)  # the existing import path takes it
    [info] = store.conversations()
    thread = json.loads(run("inspect", src, "--json").stdout)["thread"]
    assert info.id == thread  # saved under the session's own id
    messages = store.load(thread)
    assert pk.validate_history(messages, wire="anthropic") == []
    assert any(m.role == "tool" and m.tool_call_id == "toolu_02Lint" for m in messages)
    # and the repaired file is itself a valid transcript
    assert run("inspect", out).returncode == 0


def test_repair_refuses_to_write_in_place(tmp_path):
    src = tmp_path / "s.jsonl"
    src.write_bytes((FIXTURES / "codex_turn_aborted.jsonl").read_bytes())
    before = src.read_bytes()
    r = run("repair", src, "-o", src)
    assert r.returncode == 2 and "in place" in r.stderr
    assert src.read_bytes() == before


@pytest.mark.parametrize(
    ("name", "call_id", "wording"),
    [
        ("claude_code_killed_mid_tool.jsonl", "toolu_02Lint", "`tool_use` ids were found without `tool_result` blocks"),
        ("codex_turn_aborted.jsonl", "call_slow_1", "No tool output found for function call call_slow_1."),
    ],
)
def test_one_dangling_call_is_one_finding_with_the_provider_wording_everywhere(tmp_path, name, call_id, wording):
    # the generic rule and the wire's own dangling rule describe the same broken call
    src = FIXTURES / name
    html_out = tmp_path / "report.html"
    r = run("inspect", src, "--html", html_out)
    assert r.returncode == 1, r.stderr
    assert "1 problem(s)" in r.stdout and r.stdout.count(call_id + "'") == 1
    assert "dangling_tool_use" not in r.stdout and "dangling_function_call" not in r.stdout
    assert "the provider would answer: " in r.stdout and wording in r.stdout  # the views' words
    out = json.loads(run("inspect", src, "--json").stdout)
    assert [p["rule"] for p in out["problems"]] == ["dangling_call"]
    assert call_id in out["problems"][0]["message"] and wording in out["problems"][0]["provider_wording"]
    page = html_out.read_text(encoding="utf-8")
    findings = page[page.index('<ol class="pk-findings">'):page.index("</ol>")]
    lost = [li for li in findings.split("<li ")[1:] if call_id in li and "pk-fk-lost_call" in li]
    assert len(lost) == 1 and "pk-fk-dangling_call" not in findings
    assert "dangling_tool_use" not in page and "dangling_function_call" not in page
    assert html.escape(wording, quote=False) in findings
    view = pk.inspect(src).view  # the widget reads the same Inspection, through the same renderer
    shown = view.findings.value
    lost = [li for li in shown.split("<li ")[1:] if call_id in li and "pk-fk-lost_call" in li]
    assert len(lost) == 1 and "pk-fk-dangling_call" not in shown and html.escape(wording, quote=False) in lost[0]


@pytest.mark.parametrize("to", ["claude_code", "codex", "opencode"])
def test_output_with_a_coding_agents_to_is_a_usage_error_naming_why(tmp_path, to):
    """The new session goes where the agent finds it (beside the original): ``-o`` cannot be
    honoured, so it is refused rather than ignored, and nothing is written."""
    src = tmp_path / "session.jsonl"
    src.write_bytes((FIXTURES / "coding_agents" / "claude_code" / "killed_mid_tool.jsonl").read_bytes())
    out = tmp_path / "elsewhere.jsonl"
    r = run("repair", src, "--to", to, "-o", out)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert f"-o/--output cannot be used with --to {to}" in r.stderr
    assert "beside the original" in r.stderr
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl"]


def test_read_only_without_a_coding_agents_to_is_a_usage_error(tmp_path):
    out = tmp_path / "out.jsonl"
    r = run("repair", FIXTURES / "vercel_ui_complete.json", "-o", out, "--read-only", "read_file")
    assert r.returncode == 2 and "--read-only is only used with --to claude_code, codex or opencode" in r.stderr
    assert not out.exists()
