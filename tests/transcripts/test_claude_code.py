"""claude_code: the real Claude Code captures (read in place), variants cut from them, and small
constructed trees for the branch rules. Expectations come from the raw lines, read here
independently of the importer."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import providerkit_nb as pk
from providerkit_nb import transcripts
from providerkit_nb.core.messages import AssistantMessage, ToolMessage, UserMessage

from .conftest import FIXTURES, cut, raw_lines

# the exact texts, pinned here (not imported from the code under test)
MAY_HAVE_RUN = (
    "This call was interrupted before it returned. It may have partly run, so check its effect "
    "before calling it again."
)
READ_ONLY_NOTE = "This call was interrupted before it returned. It changed nothing, so it is safe to call again."


def _blocks(line: dict[str, Any]) -> list[dict[str, Any]]:
    c = (line.get("message") or {}).get("content")
    return [b for b in c if isinstance(b, dict)] if isinstance(c, list) else []


def _calls(lines: list[dict[str, Any]]) -> list[str]:
    return [b["id"] for x in lines if x.get("type") == "assistant" for b in _blocks(x) if b.get("type") == "tool_use"]


def _results(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [b for x in lines if x.get("type") == "user" for b in _blocks(x) if b.get("type") == "tool_result"]


def _skippable(lines: list[dict[str, Any]]) -> Counter[str]:
    return Counter(x["type"] for x in lines if x["type"] in ("progress", "file-history-snapshot", "queue-operation"))


@pytest.fixture
def cc(upstream_transcripts_dir: Path) -> Path:
    return upstream_transcripts_dir / "claude-code"


@pytest.mark.parametrize("name", ["short.jsonl", "tool_heavy.jsonl"])
def test_real_session_loads_with_every_call_answered(cc, name):
    path = cc / name
    raw = raw_lines(path)
    calls, results = _calls(raw), _results(raw)
    assert calls and sorted(calls) == sorted(r["tool_use_id"] for r in results)
    report = pk.inspect(path)
    assert report.format == "claude_code"
    assert report.thread == next(x["sessionId"] for x in raw if x.get("sessionId"))
    # every call of the file is in the history, once, and answered by a tool message
    loaded_calls = [c.id for m in report.messages if isinstance(m, AssistantMessage) for c in m.tool_calls or []]
    assert sorted(loaded_calls) == sorted(calls)
    assert sorted(m.tool_call_id for m in report.messages if isinstance(m, ToolMessage)) == sorted(calls)
    assert report.problems == [] and report.interrupted == [] and report.orphans == []
    # what the format cannot represent is counted, line for line
    for kind, n in _skippable(raw).items():
        assert report.skipped[kind] == n
    # Claude Code's own interruption lines become markers
    said = [b["text"] for x in raw if x.get("type") == "user" for b in _blocks(x)
            if b.get("type") == "text" and b["text"].startswith("[Request interrupted by user")]
    assert [m.text for m in report.markers if m.kind == "user_interrupt"] == said
    assert pk.validate_history(report.repaired.messages, wire="anthropic") == []


def test_split_message_is_one_assistant_message_with_its_thinking_signature(cc):
    raw = raw_lines(cc / "short.jsonl")
    ids = Counter((x.get("message") or {}).get("id") for x in raw if x.get("type") == "assistant")
    split_id, n_lines = ids.most_common(1)[0]
    assert n_lines >= 3
    lines = [x for x in raw if x.get("type") == "assistant" and x["message"]["id"] == split_id]
    thinking = next(b for x in lines for b in _blocks(x) if b.get("type") == "thinking")
    report = pk.inspect(cc / "short.jsonl")
    assistants = [m for m in report.messages if isinstance(m, AssistantMessage)]
    assert len(assistants) == 1  # five lines, one API message
    a = assistants[0]
    assert [c.id for c in a.tool_calls or []] == _calls(lines)
    assert a.reasoning_items is not None
    assert {"signature": thinking["signature"]}.items() <= a.reasoning_items.items[0].items()


def test_rejected_calls_are_results_not_dangling(cc):
    raw = raw_lines(cc / "short.jsonl")
    rejected = [
        b["tool_use_id"] for x in raw if x.get("toolUseResult") == "User rejected tool use"
        for b in _blocks(x) if b.get("type") == "tool_result" and b.get("is_error")
    ]
    assert len(rejected) == 2
    report = pk.inspect(cc / "short.jsonl")
    assert sorted(i for m in report.markers if m.kind == "rejected" for i in m.ids) == sorted(rejected)
    assert report.valid and not report.repaired.changes


@pytest.mark.parametrize("name", ["short.jsonl", "tool_heavy.jsonl"])
def test_a_result_line_cut_out_is_reported_under_its_id_and_repaired(cc, tmp_path, name):
    raw = raw_lines(cc / name)
    victim = _results(raw)[-1]["tool_use_id"]  # for tool_heavy: one of the parallel pair
    variant = tmp_path / name
    cut(cc / name, variant, lambda x: any(b.get("tool_use_id") == victim for b in _blocks(x)))
    report = pk.inspect(variant)
    assert report.format == "claude_code"
    dangling = [p for p in report.problems if p.rule == "dangling_call"]
    assert len(dangling) == 1 and victim in dangling[0].message
    assert [r.original_id for r in report.interrupted] == [victim]
    assert pk.validate_history(report.repaired.messages, wire="anthropic") == []
    assert not report.valid


def test_loading_never_writes_to_the_session(cc):
    path = cc / "tool_heavy.jsonl"
    before = hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns
    pk.inspect(path)
    assert (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns) == before


# --------------------------------------------------------------------------- constructed trees


def _line(kind: str, uuid: str, parent: str | None, content: Any, **extra: Any) -> dict[str, Any]:
    role = "assistant" if kind == "assistant" else "user"
    msg: dict[str, Any] = {"role": role, "content": content}
    if kind == "assistant":
        msg["id"] = extra.pop("mid", f"msg_{uuid}")
    return {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s1", "message": msg, **extra}


def _write(tmp_path: Path, lines: list[dict[str, Any]]) -> Path:
    p = tmp_path / "session.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return p


def _texts(messages: list[Any]) -> list[str]:
    out = []
    for m in messages:
        if isinstance(m, (UserMessage, AssistantMessage)):
            out.append(m.content if isinstance(m.content, str) else "".join(p.text for p in m.content))
    return out


def test_a_rewind_leaves_a_dead_branch_that_is_not_loaded(tmp_path):
    path = _write(tmp_path, [
        _line("user", "u1", None, "start"),
        _line("assistant", "a1", "u1", [{"type": "text", "text": "ok"}]),
        _line("user", "u2", "a1", "first try"),
        _line("assistant", "a2", "u2", [{"type": "text", "text": "first answer"}]),
        _line("user", "u3", "a1", "second try"),  # the user rewound to a1
        _line("assistant", "a3", "u3", [{"type": "text", "text": "second answer"}]),
    ])
    t = transcripts.load(path)
    assert _texts(t.messages) == ["start", "ok", "second try", "second answer"]
    assert t.skipped["off_branch"] == 2


def test_a_compaction_starts_a_new_root(tmp_path):
    path = _write(tmp_path, [
        _line("user", "u1", None, "old question"),
        _line("assistant", "a1", "u1", [{"type": "text", "text": "old answer"}]),
        {"type": "system", "subtype": "compact_boundary", "uuid": "c1", "parentUuid": None,
         "logicalParentUuid": "a1", "sessionId": "s1"},
        _line("user", "u2", "c1", "Summary of the conversation so far", isCompactSummary=True),
        _line("user", "u3", "u2", "go on"),
    ])
    t = transcripts.load(path)
    assert _texts(t.messages) == ["Summary of the conversation so far", "go on"]
    assert t.skipped["off_branch"] == 2 and t.skipped["system:compact_boundary"] == 1


def test_lines_without_parent_links_are_read_in_file_order(tmp_path):
    lines = [
        {"type": "user", "message": {"role": "user", "content": "hi"}},
        {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"path": "a"}}]}},
    ]
    path = _write(tmp_path, lines)
    assert transcripts.detect(path) == "claude_code"
    report = pk.inspect(path, format="claude_code")
    assert [p.rule for p in report.problems if p.rule == "dangling_call"] == ["dangling_call"]
    assert [r.original_id for r in report.interrupted] == ["toolu_1"]


def test_a_malformed_line_is_reported_not_fatal(tmp_path):
    src = FIXTURES / "claude_code_killed_mid_tool.jsonl"
    text = src.read_text().splitlines(keepends=True)
    path = tmp_path / "torn.jsonl"
    path.write_text("".join(text[:3]) + '{"type": "user", "mess\n' + "".join(text[3:]))
    t = transcripts.load(path)
    assert t.skipped["malformed_line"] == 1
    assert any("line 4" in w for w in t.warnings)
    assert [c.id for m in t.messages if isinstance(m, AssistantMessage) for c in m.tool_calls or []] == [
        "toolu_01Tests", "toolu_02Lint"]


def test_the_constructed_killed_session_dangles_on_the_call_with_no_result_line():
    raw = raw_lines(FIXTURES / "claude_code_killed_mid_tool.jsonl")
    missing = set(_calls(raw)) - {r["tool_use_id"] for r in _results(raw)}
    report = pk.inspect(FIXTURES / "claude_code_killed_mid_tool.jsonl")
    assert [r.original_id for r in report.interrupted] == sorted(missing)
    # one broken call, one finding, with the provider's wording attached
    assert [p.rule for p in report.problems] == ["dangling_call"] * len(missing)
    for p in report.problems:
        assert p.provider_wording.startswith("messages.1: `tool_use` ids were found without `tool_result` blocks")
        assert all(m in p.provider_wording for m in missing)
    assert pk.validate_history(report.repaired.messages, wire="anthropic") == []


def test_blocks_a_canonical_history_cannot_hold_are_skipped_and_counted(tmp_path):
    path = _write(tmp_path, [
        _line("user", "u1", None, [{"type": "text", "text": "look"},
                                   {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}]),
        _line("assistant", "a1", "u1", [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
            {"type": "tool_use", "id": "toolu_1", "name": "ToolSearch", "input": {"q": "x"}}]),
        _line("user", "u2", "a1", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [
            {"type": "text", "text": "found"}, {"type": "tool_reference", "tool_name": "Grep"}]}]),
    ])
    t = transcripts.load(path)
    assert t.skipped == {"block:image": 1, "block:server_tool_use": 1, "block:tool_result:tool_reference": 1}
    assert t.messages[-1].content == "found"
    assert pk.inspect(path).valid


def test_a_line_written_twice_is_read_once(tmp_path):
    lines = [
        _line("user", "u1", None, "hi"),
        _line("assistant", "a1", "u1", [{"type": "text", "text": "hello"}]),
    ]
    path = _write(tmp_path, lines + lines)
    t = transcripts.load(path)
    assert _texts(t.messages) == ["hi", "hello"] and t.skipped["duplicate_line"] == 2


def test_a_file_of_another_format_named_claude_code_is_refused():
    with pytest.raises(transcripts.TranscriptError, match="no Claude Code session line"):
        transcripts.load(FIXTURES / "vercel_ui_complete.json", format="claude_code")


def test_an_interrupted_read_only_tool_is_said_to_be_safe_to_repeat(tmp_path):
    path = _write(tmp_path, [
        _line("user", "u1", None, "look around"),
        _line("assistant", "a1", "u1", [
            {"type": "tool_use", "id": "toolu_r", "name": "Grep", "input": {"pattern": "x"}},
            {"type": "tool_use", "id": "toolu_w", "name": "Bash", "input": {"command": "rm -rf build"}}]),
    ])
    report = pk.inspect(path)
    said = {r.original_id: r.read_only for r in report.interrupted}
    assert said == {"toolu_r": True, "toolu_w": False}
    notes = {r.original_id: r.note for r in report.interrupted}
    assert notes["toolu_r"] == READ_ONLY_NOTE and notes["toolu_w"] == MAY_HAVE_RUN
