"""Detection: every fixture of every format is recognised by its own detector and by no other
(the loose dialects, tried last, included); a source of no known format gets an error listing the
formats tried."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import providerkit_nb as pk
from providerkit_nb import transcripts
from providerkit_nb.transcripts import FORMATS, Source
from providerkit_nb.transcripts.base import TranscriptError

from .conftest import FIXTURES

REPO = Path(__file__).resolve().parents[2]
DIRS = [FIXTURES, REPO / "notebooks" / "transcripts"]


# The fixtures' formats, written down (the name rule below must agree, and every file is listed)
EXPECTED = {
    "pydantic_ai_complete.json": "pydantic_ai",
    "pydantic_ai_tool_raised.json": "pydantic_ai",
    "pydantic_ai_ctrl_c.json": "pydantic_ai",
    "pydantic_ai_retry.json": "pydantic_ai",
    "pydantic_ai_retry_legacy.json": "pydantic_ai",
    "langchain_messages_to_dict.json": "langchain",
    "langchain_dumpd.json": "langchain",
    "langchain_legacy_additional_kwargs.json": "langchain",
    "langgraph.sqlite": "langgraph_sqlite",
    "langgraph_died.sqlite": "langgraph_sqlite",
    "llm_logs_0.36.db": "llm_logs",
    "llm_logs_0.31.db": "llm_logs",
    "claude_code_killed_mid_tool.jsonl": "claude_code",
    "codex_turn_aborted.jsonl": "codex",
    "openai_agents_sessions.db": "openai_agents",
    "openai_agents_custom_tables.db": "openai_agents",
    "vercel_ui_approval.json": "vercel_ui",
    "vercel_ui_complete.json": "vercel_ui",
    "vercel_ui_interrupted.json": "vercel_ui",
    "vercel_ui_tool_error.json": "vercel_ui",
}


def _expected(path: Path) -> str | None:
    """The format a fixture is of, by its file name (fixtures are named after their format)."""
    stem = path.name
    if stem.startswith("langgraph") and path.suffix in (".sqlite", ".db"):
        return "langgraph_sqlite"
    names = [n for n in FORMATS if stem.startswith(n + "_") or stem.startswith(n + ".")]
    return max(names, key=len) if names else None


def _fixtures() -> list[Path]:
    out = []
    for d in DIRS:
        if d.is_dir():
            out += [p for p in sorted(d.iterdir()) if p.is_file() and _expected(p) is not None]
    return out


def _detectors(source: Source) -> set[str]:
    found = set()
    for name in FORMATS:
        try:
            module = transcripts.format_module(name)
        except transcripts.FormatUnavailable:
            continue
        if module.detect(source, name):
            found.add(name)
    return found


def test_every_fixture_is_listed() -> None:
    on_disk = {p.name for p in FIXTURES.iterdir() if p.is_file() and p.name != "VERSIONS.json"}
    assert on_disk == set(EXPECTED)
    # ... and named after its format, so the test below checks each against the table too
    assert {name: _expected(FIXTURES / name) for name in EXPECTED} == EXPECTED


@pytest.mark.parametrize("path", _fixtures(), ids=lambda p: p.name)
def test_each_fixture_is_claimed_by_its_own_detector_only(path):
    assert _detectors(Source(path)) == {_expected(path)}
    assert transcripts.detect(path) == _expected(path)


def test_the_real_samples_are_claimed_by_their_own_detector_only(upstream_transcripts_dir):
    files = {"claude_code": sorted((upstream_transcripts_dir / "claude-code").glob("*.jsonl")),
             "codex": sorted((upstream_transcripts_dir / "codex").glob("*.jsonl"))}
    assert all(files.values())
    for fmt, paths in files.items():
        for p in paths:
            assert _detectors(Source(p)) == {fmt}, p.name


def test_our_own_jsonl_export_is_canonical_and_nothing_else(tmp_path):
    store = pk.MemoryStore()
    store.save("c", pk.UserMessage("go"))
    path = tmp_path / "c.jsonl"
    store.export_jsonl(path)
    assert _detectors(Source(path)) == {"canonical"}


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("notes.txt", b"just some notes\nnothing to see\n"),
        ("request.json", b'{"prompt": "hi"}'),
        ("lines.jsonl", b'{"event": "click"}\n{"event": "scroll"}\n'),
        ("empty.json", b""),
    ],
)
def test_a_file_of_no_known_format_gets_the_formats_tried(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(TranscriptError) as e:
        transcripts.load(path)
    text = str(e.value)
    assert str(path) in text
    for fmt in ("claude_code", "codex", "openai_agents", "vercel_ui", "canonical", "openai_chat"):
        assert fmt in text


def test_an_unrelated_sqlite_database_is_not_a_session(tmp_path):
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    conn.close()
    with pytest.raises(TranscriptError, match="tried .*openai_agents"):
        transcripts.load(path)


def test_a_format_named_that_does_not_exist_is_refused(tmp_path):
    with pytest.raises(TranscriptError, match="unknown transcript format 'nope'"):
        transcripts.load(FIXTURES / "vercel_ui_complete.json", format="nope")


def test_a_first_line_longer_than_the_head_still_detects(tmp_path):
    src = (FIXTURES / "claude_code_killed_mid_tool.jsonl").read_text().splitlines(keepends=True)
    first = json.loads(src[1])
    first["message"]["content"] = "pasted log line\n" * 20000  # ~320 KB on one line
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps(first) + "\n" + "".join(src[2:]))
    assert transcripts.detect(path) == "claude_code"
