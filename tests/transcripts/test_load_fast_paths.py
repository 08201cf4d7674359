"""The shortcuts of the Claude Code hot path (issue 28) give what the long way gives: a line that
is blank but for spaces, a result that is the missing-result text padded with whitespace, a
block with a source that is not an object, a forked session, and a message with a field of the
wrong type (refused by the full check, which the shortcut must not let through)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from providerkit_nb import transcripts
from providerkit_nb.core.messages import (
    AssistantMessage,
    ReasoningItems,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
    message_from_dict,
)
from providerkit_nb.transcripts import TranscriptError, _plainly_typed
from providerkit_nb.transcripts.inspection import examine as inspect


def _line(kind: str, uuid: str, parent: str | None, message: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s-1", "message": message, **extra}


def _write(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join(x if isinstance(x, str) else json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def _session(call_input: Any = None, block: dict[str, Any] | None = None, result: str = "ok") -> list[Any]:
    return [
        _line("user", "u1", None, {"role": "user", "content": "hi"}),
        "   \t \n",
        _line("assistant", "a1", "u1", {"id": "m1", "role": "assistant", "content": [
            block or {"type": "tool_use", "id": "t1", "name": "Bash", "input": call_input or {"command": "ls"}}]}),
        {"type": "progress", "uuid": "p1", "parentUuid": "a1", "sessionId": "s-1", "data": {"n": 1}},
        _line("user", "r1", "a1", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": result}]}),
    ]


def test_blank_lines_and_padded_missing_result(tmp_path: Path) -> None:
    t = transcripts.load(_write(tmp_path / "s.jsonl", _session(
        result="\n  [Tool result missing due to internal error]  \n")))
    assert [type(m).__name__ for m in t.messages] == ["UserMessage", "AssistantMessage", "ToolMessage"]
    assert [(m.kind, m.index) for m in t.markers] == [("result_missing", 2)]
    assert t.skipped == {"progress": 1}
    assert t.warnings == []
    call = t.messages[1].tool_calls[0]
    assert (call.id, call.name, call.arguments) == ("t1", "Bash", '{"command":"ls"}')


def test_call_arguments_keep_non_ascii_and_order(tmp_path: Path) -> None:
    t = transcripts.load(_write(tmp_path / "s.jsonl", _session(call_input={"z": "café", "a": [1, 2.5]})))
    assert t.messages[1].tool_calls[0].arguments == '{"z":"café","a":[1,2.5]}'


def test_text_block_with_a_source_that_is_not_an_object(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", _session(block={"type": "text", "text": "x", "source": "nope"}))
    with pytest.raises(TranscriptError, match="cannot be read as claude_code"):
        transcripts.load(path)


def test_call_without_an_id_is_refused_by_the_full_check(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", _session(block={"type": "tool_use", "name": "Bash", "input": {}}))
    with pytest.raises(TranscriptError, match=r"tool_calls\[0\]\.id"):
        transcripts.load(path)


def test_fork_keeps_only_the_resumed_branch(tmp_path: Path) -> None:
    lines = _session()[:3] + [
        _line("user", "x1", "a1", {"role": "user", "content": "an abandoned branch"}),
        _line("user", "r1", "a1", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}),
        _line("assistant", "a2", "r1", {"id": "m2", "role": "assistant", "content": [{"type": "text", "text": "done"}]}),
    ]
    t = transcripts.load(_write(tmp_path / "s.jsonl", lines))
    assert [m.content for m in t.messages if isinstance(m, UserMessage | AssistantMessage)] == ["hi", "", "done"]
    assert t.skipped.get("off_branch") == 1


WELL = [
    UserMessage("a"),
    SystemMessage("s"),
    ToolMessage("c1", "f", "out"),
    AssistantMessage("x", "why", None, ReasoningItems("anthropic", [{"type": "thinking"}]), [ToolCall("c1", "f", "{}", "sig")]),
    AssistantMessage("", tool_calls=[]),
]
BAD = [
    UserMessage(3),  # type: ignore[arg-type]
    SystemMessage(None),  # type: ignore[arg-type]
    ToolMessage("", "f", "out"),
    ToolMessage("c1", "f", 5),  # type: ignore[arg-type]
    AssistantMessage("x", reasoning=4),  # type: ignore[arg-type]
    AssistantMessage("x", reasoning_items=ReasoningItems("", [])),
    AssistantMessage("x", reasoning_items=ReasoningItems("p", {})),  # type: ignore[arg-type]
    AssistantMessage("x", tool_calls=[ToolCall("", "f", "{}")]),
    AssistantMessage("x", tool_calls=[ToolCall("c", "", "{}")]),
    AssistantMessage("x", tool_calls=[ToolCall("c", "f", {})]),  # type: ignore[arg-type]
    AssistantMessage("x", tool_calls=[ToolCall("c", "f", "{}", 7)]),  # type: ignore[arg-type]
]


@pytest.mark.parametrize("m", WELL)
def test_shortcut_passes_well_typed_messages(m: Any) -> None:
    assert _plainly_typed(m) is True
    message_from_dict(m.to_dict(), 0)


@pytest.mark.parametrize("m", BAD)
def test_shortcut_leaves_every_refused_message_to_the_full_check(m: Any) -> None:
    assert _plainly_typed(m) is False
    with pytest.raises((ValueError, TypeError, AttributeError)):  # what _check_messages catches
        message_from_dict(m.to_dict(), 0)


# Sessions for the one-pass load (issue 28), which converts each message line as soon as it is
# parsed and, when the walk at the end finds a line off the branch, reads the file again the
# general way. Each is compared with the general way (``_load_tree``) and pinned.
_FORK_FREE = _session() + [
    _line("assistant", "a2", "r1", {"id": "m2", "role": "assistant", "content": [
        {"type": "tool_use", "id": "t2", "name": "Read", "input": {}}]}),
    _line("assistant", "a3", "a2", {"id": "m2", "role": "assistant", "content": [
        {"type": "tool_use", "id": "t3", "name": "Grep", "input": {}}]}),
    {"type": "progress", "uuid": "p2", "parentUuid": "a3", "sessionId": "s-1", "data": {}},
    # the results of the parallel calls: one hangs from its own call line, beside the chain
    _line("user", "r2", "a2", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "two"}]}),
    _line("user", "r3", "a3", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t3", "content": "three"}]}),
    # blocks a canonical history cannot hold are counted, after what the pass over the lines counts
    _line("assistant", "a4", "r3", {"id": "m3", "role": "assistant", "content": [
        {"type": "server_tool_use"}, {"type": "text", "text": "done"}, {"type": "web_search_tool_result"}]},
          timestamp="2026-02-01T10:00:05Z"),
    {"type": "queue-operation", "operation": "enqueue", "sessionId": "s-1"},
]
# two children of one parentUuid: the first branch was abandoned (rewound), the second resumed
_FORKED = _session() + [
    _line("assistant", "b1", "r1", {"id": "m2", "role": "assistant", "content": [{"type": "text", "text": "first try"}]}),
    _line("user", "b2", "b1", {"role": "user", "content": "no, again"}),
    _line("assistant", "c1", "r1", {"id": "m3", "role": "assistant", "content": [{"type": "text", "text": "second try"}]}),
]
# a line off the branch that cannot be converted (a linked image) must not stop the load
_FORKED_BAD_OFF_BRANCH = _session() + [
    _line("user", "b1", "r1", {"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png"}}, {"type": "text", "text": 5}]}),
    _line("assistant", "c1", "r1", {"id": "m3", "role": "assistant", "content": [{"type": "text", "text": "kept"}]}),
]
# a compaction starts a new root: what came before it is off the branch
_COMPACTED = _session() + [
    _line("user", "n1", None, {"role": "user", "content": "summary of the session"}),
    _line("assistant", "n2", "n1", {"id": "m9", "role": "assistant", "content": [{"type": "text", "text": "go on"}]}),
]

# a line lost from the file: the walk goes on from the line written before the orphan, and says so
_LINE_LOST = _session() + [
    _line("assistant", "a2", "gone", {"id": "m2", "role": "assistant", "content": [{"type": "text", "text": "after the gap"}]}),
]

# links that go round in a circle (a damaged file): read, not a hang
_CYCLE = [
    _line("user", "u1", "a1", {"role": "user", "content": "hi"}),
    _line("assistant", "a1", "u1", {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "back"}]}),
]


def _same(a: transcripts.Transcript, b: transcripts.Transcript) -> None:
    assert a.messages == b.messages
    assert list(a.skipped.items()) == list(b.skipped.items())  # the same counts, in the same order
    assert (a.details, a.markers, a.warnings, a.meta, a.thread) == (b.details, b.markers, b.warnings, b.meta, b.thread)


@pytest.mark.parametrize(("lines", "again", "texts", "skipped"), [
    (_FORK_FREE, 0, ["hi", "", "ok", "", "two", "three", "done"],
     {"progress": 2, "queue-operation": 1, "block:server_tool_use": 1, "block:web_search_tool_result": 1}),
    (_FORKED, 1, ["hi", "", "ok", "second try"], {"progress": 1, "off_branch": 2}),
    (_FORKED_BAD_OFF_BRANCH, 1, ["hi", "", "ok", "kept"], {"progress": 1, "off_branch": 1}),
    (_COMPACTED, 1, ["summary of the session", "go on"], {"progress": 1, "off_branch": 3}),
    (_LINE_LOST, 0, ["hi", "", "ok", "after the gap"], {"progress": 1}),
    (_CYCLE, 0, ["hi", "back"], {}),
], ids=["fork-free", "forked", "forked-bad-line-off-branch", "compacted", "line-lost", "cycle"])
def test_one_pass_load_equals_the_tree_walk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: list[Any],
                                            again: int, texts: list[str], skipped: dict[str, int]) -> None:
    from providerkit_nb.transcripts import claude_code
    from providerkit_nb.transcripts.base import Source

    path = _write(tmp_path / "s.jsonl", lines)
    general = claude_code._load_tree(Source(path), "claude_code", None)
    calls: list[int] = []
    tree = claude_code._load_tree
    monkeypatch.setattr(claude_code, "_load_tree", lambda *a: calls.append(1) or tree(*a))  # counts, then reads
    fast = transcripts.load(path)
    assert len(calls) == again  # read again only when a line is off the branch
    _same(fast, general)
    assert [m.content for m in fast.messages] == texts
    assert list(fast.skipped.items()) == list(skipped.items())
    assert fast.thread == "s-1" and fast.meta["session_id"] == "s-1"
    lost = [f"{path}: line a2 points to parent gone, which is not in the file; continuing with the line written before it"]
    # a branch that was not resumed is shown nested, unless a line of it cannot be read (then it says so)
    at = len(_FORKED_BAD_OFF_BRANCH) - 1  # the file's line of the bad message (the one before the last)
    bad = [f"{path}: lines {at} to {at}: a branch that was not resumed (1 line(s)) is not shown: a line of it is not a "
           "well-formed message"]
    assert fast.warnings == (lost if lines is _LINE_LOST else bad if lines is _FORKED_BAD_OFF_BRANCH else [])


@pytest.fixture(params=["orjson", "stdlib"])
def line_parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    from providerkit_nb.core.json_input import read_json
    from providerkit_nb.transcripts import base

    if request.param == "orjson":
        orjson = pytest.importorskip("orjson", reason="the fast-json extra is not installed")
        monkeypatch.setattr(base, "_json_loads", lambda: orjson.loads)
    else:
        monkeypatch.setattr(base, "_json_loads", lambda: read_json)
    return str(request.param)


def test_lines_orjson_refuses_read_as_without_it(tmp_path: Path, line_parser: str) -> None:
    lines = _session() + [
        '{"type": "progress", "uuid": "p2", "parentUuid": "r1", "data": {"v": NaN, "w": 1e400}}\n',
        '{"type": "user", "uuid": "u2", "parentUuid": "p2", "message": {"role": "user", "content": "odd \\ud800"}}\n',
        '{"type": "user", "uuid": "u3", "parentUuid": "u2", "message": {"role": "user", "content": "cut\n',
    ]
    path = _write(tmp_path / "s.jsonl", lines)
    t = transcripts.load(path)
    assert [m.content for m in t.messages] == ["hi", "", "ok", "odd \ud800"]
    assert t.skipped == {"progress": 2, "malformed_line": 1}
    # the bad line is named in the standard reader's words, whichever parser read the others
    assert t.warnings == [f"{path}: line 8 is not valid JSON (the JSON stops before the document ends (cut short) "
                          "at line 1, column 95 (char 94)); skipped"]


def _use(cid: str, name: str = "Bash") -> dict[str, Any]:
    return {"type": "tool_use", "id": cid, "name": name, "input": {"command": cid}}


@pytest.mark.parametrize("fork", [False, True], ids=["every-line-on-the-branch", "forked"])
def test_calls_off_the_branch_are_found_in_the_one_pass(tmp_path: Path, fork: bool) -> None:
    """Which calls a resume left off the branch, read from the lines the load does not convert:
    a duplicated line, a line of another type that carries a message, a malformed one; a call
    answered anywhere in the file, or in a sidechain, is not one."""
    lines = _session() + [
        _line("assistant", "a1", "u1", {"id": "m9", "role": "assistant", "content": [_use("t_dup")]}),  # same uuid
        _line("attachment", "x1", "r1", {"role": "assistant", "content": [_use("t_other", "Read")]}),
        {**_line("assistant", "x2", "r1", {"id": "m8", "role": "assistant", "content": [_use("t_bad")]}), "parentUuid": 7},
        _line("assistant", "x3", "r1", {"id": "m7", "role": "assistant", "content": [_use("t_side")]}, isSidechain=True),
        _line("attachment", "x4", "r1", {"role": "assistant", "content": [_use("t_answered")]}),
        _line("attachment", "x5", "x4", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t_answered", "content": "done"}]}),
    ]
    if fork:  # a rewound branch: the long way, with an off-branch message line of its own
        lines += [_line("assistant", "f1", "u1", {"id": "m6", "role": "assistant", "content": [_use("t_fork")]}),
                  _line("user", "f2", "r1", {"role": "user", "content": "kept"})]
    r = inspect(_write(tmp_path / "s.jsonl", lines))
    off = [(a.call_id, a.name, a.read_only, a.index) for a in r.abandoned]
    expected = [("t_dup", "Bash", False, None), ("t_other", "Read", True, None), ("t_bad", "Bash", False, None)]
    assert sorted(off) == sorted(expected + ([("t_fork", "Bash", False, None)] if fork else []))
    assert all("left off the conversation" in a.what for a in r.abandoned)
    assert next(a for a in r.abandoned if a.call_id == "t_other").arguments == '{"command": "t_other"}'
