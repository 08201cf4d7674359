"""The README's comparison, run: the same broken pydantic-ai histories repaired by pydantic-ai's
own ``repair_messages`` and by ``repair_history`` (after loading the same JSON)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from providerkit_nb import validate_history  # loads the wire adapter its rules need
from providerkit_nb.core.repair import (
    repair_history,
)
from providerkit_nb.transcripts import load
from providerkit_nb.transcripts.base import Source

from .conftest import need

# the exact texts, pinned here (not imported from the code under test)
MAY_HAVE_RUN = (
    "This call was interrupted before it returned. It may have partly run, so check its effect "
    "before calling it again."
)
READ_ONLY_NOTE = "This call was interrupted before it returned. It changed nothing, so it is safe to call again."

pytestmark = pytest.mark.interop


def both(build: Any) -> tuple[list[Any], Any]:
    """(pydantic-ai's repair, ours) of the history ``build(messages_module)`` makes."""
    need("pydantic_ai")
    from pydantic_ai import messages as pm

    history = build(pm)
    theirs = pm.repair_messages(history)
    data = json.loads(pm.ModelMessagesTypeAdapter.dump_json(history))
    ours = repair_history(load(Source(data), format="pydantic_ai").messages, lambda name: name == "lookup")
    assert not validate_history(ours.messages)
    return theirs, ours


def _returns(msgs: list[Any]) -> list[Any]:
    return [p for m in msgs for p in m.parts if p.part_kind == "tool-return"]


def test_orphan_result_dropped_there_kept_as_note_here() -> None:
    def build(pm: Any) -> list[Any]:
        return [
            pm.ModelRequest([pm.UserPromptPart("q")]),
            pm.ModelResponse([pm.TextPart("hello")]),
            pm.ModelRequest([pm.ToolReturnPart("lookup", "PRECIOUS RESULT", tool_call_id="gone"),
                             pm.UserPromptPart("go on")]),
        ]

    theirs, ours = both(build)
    assert "PRECIOUS RESULT" not in json.dumps([str(m) for m in theirs])
    assert any("PRECIOUS RESULT" in str(m.content) for m in ours.messages if m.role == "user")
    assert [c.kind for c in ours.changes] == ["result_to_note"]


def test_duplicate_ids_kept_there_renamed_here() -> None:
    def build(pm: Any) -> list[Any]:
        return [
            pm.ModelRequest([pm.UserPromptPart("q")]),
            pm.ModelResponse([pm.ToolCallPart("lookup", {"q": 1}, tool_call_id="dup")]),
            pm.ModelRequest([pm.ToolReturnPart("lookup", "one", tool_call_id="dup")]),
            pm.ModelResponse([pm.ToolCallPart("lookup", {"q": 2}, tool_call_id="dup")]),
            pm.ModelRequest([pm.ToolReturnPart("lookup", "two", tool_call_id="dup")]),
            pm.ModelResponse([pm.TextPart("done")]),
        ]

    theirs, ours = both(build)
    their_ids = [p.tool_call_id for m in theirs for p in m.parts if p.part_kind == "tool-call"]
    assert their_ids == ["dup", "dup"]  # still duplicated: providers that check ids refuse it
    our_ids = [c.id for m in ours.messages if m.role == "assistant" for c in m.tool_calls or ()]
    assert our_ids == ["dup", "dup_2"]
    assert {c.kind for c in ours.changes} == {"renamed_call", "renamed_result"}


def test_one_fixed_text_there_read_only_aware_texts_here() -> None:
    def build(pm: Any) -> list[Any]:
        return [
            pm.ModelRequest([pm.UserPromptPart("q")]),
            pm.ModelResponse([pm.ToolCallPart("lookup", {}, tool_call_id="r"),
                              pm.ToolCallPart("write_note", {}, tool_call_id="w")]),
            pm.ModelRequest([pm.UserPromptPart("hello?")]),
        ]

    theirs, ours = both(build)
    texts = {p.tool_call_id: p.content for p in _returns(theirs)}
    assert texts["r"] == texts["w"]  # one text whatever the tool did
    by_id = {i.id: i.note for i in ours.interrupted}
    assert by_id == {"r": READ_ONLY_NOTE, "w": MAY_HAVE_RUN}


def test_change_list_here_silent_there() -> None:
    def build(pm: Any) -> list[Any]:
        return [
            pm.ModelRequest([pm.UserPromptPart("q")]),
            pm.ModelResponse([pm.ToolCallPart("lookup", {}, tool_call_id="a")]),
            pm.ModelRequest([pm.UserPromptPart("next")]),
        ]

    theirs, ours = both(build)
    assert isinstance(theirs, list)  # messages only: the repair is marked in part metadata, not reported
    (part,) = _returns(theirs)
    assert part.metadata == {"pydantic_ai_synthesized_tool_return": True}
    assert [(c.kind, c.ids) for c in ours.changes] == [("added_interrupted_result", ["a"])]
