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
