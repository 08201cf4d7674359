"""LangChain messages_to_dict / dumpd files written by the real langchain-core."""

from __future__ import annotations

import json
from typing import Any

import pytest

from providerkit_nb import validate_history  # loads the wire adapter its rules need
from providerkit_nb.core.repair import repair_history
from providerkit_nb.transcripts import TranscriptError, detect, load
from providerkit_nb.transcripts.base import Source

from .conftest import FIXTURES

FILES = ["langchain_messages_to_dict.json", "langchain_dumpd.json", "langchain_legacy_additional_kwargs.json"]


def raw(obj: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if obj.get("lc") == 1:
        cls = obj["id"][-1]
        return {"HumanMessage": "human", "AIMessage": "ai", "ToolMessage": "tool", "SystemMessage": "system"}[cls], obj["kwargs"]
    return obj["type"], obj["data"]


def expected(name: str) -> tuple[list[str], list[str], list[str]]:
    """(call ids, dangling call ids, orphan result ids) read from the file."""
    calls: list[str] = []
    answered: list[str] = []
    orphans: list[str] = []
    for obj in json.loads((FIXTURES / name).read_text()):
        kind, data = raw(obj)
        if kind == "ai":
            ids = [c["id"] for c in data.get("tool_calls") or ()]
            ids = ids or [c["id"] for c in (data.get("additional_kwargs") or {}).get("tool_calls") or ()]
            calls.extend(ids)
        elif kind == "tool":
            (answered if data["tool_call_id"] in calls else orphans).append(data["tool_call_id"])
    return calls, [c for c in calls if c not in answered], orphans


@pytest.mark.parametrize("name", FILES)
def test_loads_with_the_dangling_and_orphan_ids_of_the_file(name: str) -> None:
    calls, dangling, orphans = expected(name)
    assert detect(FIXTURES / name) == "langchain"
    t = load(FIXTURES / name)
    assert [c.id for m in t.messages if m.role == "assistant" for c in m.tool_calls or ()] == calls  # type: ignore[union-attr]
    r = repair_history(t.messages)
    assert [i.id for i in r.interrupted] == dangling and dangling
    assert [c.ids[0] for c in r.changes if c.kind == "result_to_note"] == orphans
    assert not validate_history(r.messages, t.wire)


def test_both_forms_give_the_same_messages() -> None:
    a = load(FIXTURES / "langchain_messages_to_dict.json")
    b = load(FIXTURES / "langchain_dumpd.json")
    assert [m.to_dict() for m in a.messages] == [m.to_dict() for m in b.messages]
    assert a.wire == "anthropic"  # response_metadata.model_provider


def test_thinking_block_signature_is_kept() -> None:
    data = json.loads((FIXTURES / "langchain_messages_to_dict.json").read_text())
    block = next(b for d in data if d["type"] == "ai" for b in d["data"]["content"] if b.get("type") == "thinking")
    t = load(FIXTURES / "langchain_messages_to_dict.json")
    a = next(m for m in t.messages if m.role == "assistant")
    assert a.reasoning_items.provider == "anthropic"  # type: ignore[union-attr]
    assert a.reasoning_items.items == [block]  # type: ignore[union-attr]


def test_legacy_arguments_are_kept_verbatim() -> None:
    data = json.loads((FIXTURES / "langchain_legacy_additional_kwargs.json").read_text())
    raw_calls = next(d["data"]["additional_kwargs"]["tool_calls"] for d in data if d["type"] == "ai")
    t = load(FIXTURES / "langchain_legacy_additional_kwargs.json")
    a = next(m for m in t.messages if m.role == "assistant")
    assert [(c.id, c.name, c.arguments) for c in a.tool_calls] == [  # type: ignore[union-attr]
        (c["id"], c["function"]["name"], c["function"]["arguments"]) for c in raw_calls
    ]


def test_a_foreign_item_is_refused_with_its_index() -> None:
    good = json.loads((FIXTURES / "langchain_messages_to_dict.json").read_text())
    with pytest.raises(TranscriptError, match="item 1"):
        load(Source([good[0], {"nope": 1}]), format="langchain")


def test_openai_wire_is_told_apart_by_the_response_id() -> None:
    def history(rid: str) -> list[dict[str, Any]]:
        return [{"type": "human", "data": {"content": "q"}},
                {"type": "ai", "data": {"content": "a", "response_metadata": {"model_provider": "openai", "id": rid}}}]

    assert load(Source(history("resp_1")), format="langchain").wire == "responses"
    assert load(Source(history("chatcmpl-1")), format="langchain").wire == "openai_chat"
