"""Round trips: load a fixture, repair, ``export``, then hand it to the real framework.

These need the ``interop`` extra (installed by ``make test``); without it they skip locally and
fail under CI=true.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from providerkit_nb.core.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from providerkit_nb.core.repair import repair_history
from providerkit_nb.transcripts import load
from providerkit_nb.transcripts.export import export

from .conftest import FIXTURES, REPO, need

pytestmark = pytest.mark.interop

SOURCES: list[tuple[str, str | None]] = [
    ("pydantic_ai_complete.json", None),
    ("pydantic_ai_tool_raised.json", None),
    ("pydantic_ai_ctrl_c.json", None),
    ("pydantic_ai_retry_legacy.json", None),
    ("langchain_dumpd.json", None),
    ("langchain_legacy_additional_kwargs.json", None),
    ("langgraph.sqlite", "tool-raised"),
    ("langgraph.sqlite", "waiting-human"),
    ("langgraph_died.sqlite", None),
]


def repaired(name: str, thread: str | None) -> tuple[Any, list[str]]:
    t = load(FIXTURES / name, thread=thread)
    return repair_history(t.messages, pending=t.pending_approval), t.pending_approval


@pytest.mark.parametrize(("name", "thread"), SOURCES)
def test_pydantic_ai_accepts_it_and_its_repair_changes_nothing(name: str, thread: str | None) -> None:
    need("pydantic_ai")
    from pydantic_ai.messages import ModelMessagesTypeAdapter, repair_messages

    r, pending = repaired(name, thread)
    data = export(r, "pydantic_ai")
    msgs = ModelMessagesTypeAdapter.validate_json(json.dumps(data))
    dump = ModelMessagesTypeAdapter.dump_json(msgs)
    # the calls a person still has to answer stay open (pydantic-ai keeps a last response's calls)
    assert ModelMessagesTypeAdapter.dump_json(repair_messages(msgs, repair_last_response=False)) == dump
    if not pending:
        assert ModelMessagesTypeAdapter.dump_json(repair_messages(msgs)) == dump
    returned = {p.tool_call_id for m in msgs for p in m.parts if p.part_kind == "tool-return"}
    assert not returned & set(pending), "export wrote a result for a pending call"
    for i in r.interrupted:
        (part,) = [p for m in msgs for p in m.parts if p.part_kind == "tool-return" and p.tool_call_id == i.id]
        assert part.outcome == "interrupted" and part.content == i.note


@pytest.mark.parametrize(("name", "thread"), SOURCES)
def test_langchain_reads_it_back(name: str, thread: str | None) -> None:
    need("langchain_core")
    from langchain_core.messages import AIMessage, messages_from_dict
    from langchain_core.messages import ToolMessage as LCTool

    r, pending = repaired(name, thread)
    lc = messages_from_dict(export(r, "langchain"))
    want_calls = [c.id for m in r.messages if m.role == "assistant" for c in m.tool_calls or ()]
    got_calls = [c["id"] for m in lc if isinstance(m, AIMessage) for c in m.tool_calls + m.invalid_tool_calls]
    assert got_calls == want_calls
    assert [m.tool_call_id for m in lc if isinstance(m, LCTool)] == [
        m.tool_call_id for m in r.messages if m.role == "tool"  # type: ignore[union-attr]
    ]
    assert not {m.tool_call_id for m in lc if isinstance(m, LCTool)} & set(pending)


def test_signed_reasoning_goes_only_to_its_provider() -> None:
    sig = "sig-anthropic"
    msgs = [
        UserMessage("hi"),
        AssistantMessage("ok", reasoning="t", reasoning_items=__import__(
            "providerkit_nb.core.messages", fromlist=["ReasoningItems"]).ReasoningItems(
            "anthropic", [{"type": "thinking", "thinking": "t", "signature": sig}])),
    ]
    assert sig not in json.dumps(export(msgs, "responses"))
    assert sig in json.dumps(export(msgs, "langchain"))
    assert sig not in json.dumps(export(msgs, "langchain", provider="openai-responses"))
    pa = export(msgs, "pydantic_ai")
    (think,) = [p for m in pa for p in m["parts"] if p["part_kind"] == "thinking"]
    assert think["provider_name"] == "anthropic" and think["signature"] == sig


def test_broken_history_is_refused() -> None:
    with pytest.raises(ValueError, match="break"):
        export([UserMessage("q"), AssistantMessage("", tool_calls=[ToolCall("c1", "f", "{}")]), UserMessage("again")],
               "langchain")
    with pytest.raises(ValueError, match="unknown export format"):
        export([UserMessage("q")], "nope")


def test_agents_session_takes_the_responses_items(tmp_path: Path) -> None:
    need("agents")
    from agents import SQLiteSession

    r, _ = repaired("pydantic_ai_tool_raised.json", None)
    items = export(r, "responses")
    db = tmp_path / "session.db"
    session = SQLiteSession("restored", str(db))

    async def roundtrip() -> list[Any]:
        await session.add_items(items)  # type: ignore[arg-type]
        return list(await session.get_items())

    got = asyncio.run(roundtrip())
    session.close()
    assert got == items
    t = load(db, format="openai_agents", thread="restored")
    def plain(ms: list[Any]) -> list[dict[str, Any]]:
        # the Anthropic-signed thinking stays behind (the Responses wire never sends it)
        return [{k: v for k, v in m.to_dict().items() if k not in ("reasoning", "reasoning_items")} for m in ms]

    assert plain(t.messages) == plain(r.messages)

    # and the SDK continues the conversation from it: its model gets our items, then the new prompt
    from agents import Agent, ModelResponse, Runner, Usage, set_tracing_disabled
    from agents.models.interface import Model
    from openai.types.responses import ResponseOutputMessage, ResponseOutputText

    seen: list[Any] = []

    class Recorder(Model):  # the one stand-in: no provider can run here
        async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
            seen.append(input)
            text = ResponseOutputText(type="output_text", text="resumed", annotations=[])
            msg = ResponseOutputMessage(id="msg_1", type="message", role="assistant", status="completed", content=[text])
            return ModelResponse(output=[msg], usage=Usage(), response_id="resp_1")

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    set_tracing_disabled(True)
    session = SQLiteSession("restored", str(db))
    result = Runner.run_sync(Agent(name="a", model=Recorder()), "go on", session=session)
    session.close()
    assert result.final_output == "resumed"
    (sent,) = seen
    assert [json.loads(json.dumps(i, default=str)) for i in sent[: len(items)]] == items
    assert sent[len(items)] == {"content": "go on", "role": "user"}
    assert not repair_history(t.messages).changes


def test_langgraph_thread_continues_after_update_state(tmp_path: Path) -> None:
    """The README recipe: answer the interrupted calls with update_state, then resume."""
    need("langgraph.checkpoint.sqlite")
    import sqlite3

    from langchain_core.messages import messages_from_dict
    from langgraph.checkpoint.sqlite import SqliteSaver

    db = tmp_path / "lg.sqlite"
    shutil.copy(FIXTURES / "langgraph.sqlite", db)
    import providerkit_nb as pk

    report = pk.inspect(db, thread="tool-raised")
    added = {c.id for c in report.interrupted}
    answers = [m for m in messages_from_dict(pk.export(report, "langchain")) if getattr(m, "tool_call_id", None) in added]
    assert len(answers) == 2

    sys.path.insert(0, str(REPO / "scripts" / "make_transcript_fixtures"))
    try:
        import part2
    finally:
        sys.path.pop(0)
    conn = sqlite3.connect(db, check_same_thread=False)
    graph = part2.build_graph(SqliteSaver(conn))
    cfg = {"configurable": {"thread_id": "tool-raised"}}
    graph.update_state(cfg, {"messages": answers}, as_node="tools")
    final = graph.invoke(None, cfg)
    conn.close()
    assert final["messages"][-1].content == "Done."
    after = load(db, thread="tool-raised")
    assert after.markers == [] and not repair_history(after.messages).changes


def test_cli_is_not_needed_for_export_of_pending_calls() -> None:
    """A thread waiting for a human exports with its calls open, in every format."""
    r, pending = repaired("langgraph.sqlite", "waiting-human")
    assert pending
    for fmt in ("pydantic_ai", "langchain", "responses"):
        text = json.dumps(export(r, fmt))
        for cid in pending:
            assert text.count(cid) == 1, (fmt, cid)  # the call, and no result
    assert isinstance(r.messages[-1], AssistantMessage)
    assert not any(isinstance(m, ToolMessage) for m in r.messages)


def test_openai_signed_thinking_round_trips_through_pydantic_ai() -> None:
    """Encrypted Responses reasoning in a pydantic-ai history: replayed by our Responses wire,
    and given back to pydantic-ai as the same signed part."""
    need("pydantic_ai")
    from pydantic_ai import messages as pm

    from providerkit_nb.transcripts.base import Source
    from providerkit_nb.wire.openai_responses import to_responses_input

    part = pm.ThinkingPart("weighing it", id="rs_1", signature="ENC==", provider_name="openai")
    history = [
        pm.ModelRequest([pm.UserPromptPart("q")]),
        pm.ModelResponse([part, pm.ToolCallPart("lookup", {"q": 1}, tool_call_id="call_9")], provider_name="openai",
                         provider_response_id="resp_1"),
        pm.ModelRequest([pm.ToolReturnPart("lookup", "1", tool_call_id="call_9")]),
        pm.ModelResponse([pm.TextPart("one")], provider_name="openai", provider_response_id="resp_2"),
    ]
    t = load(Source(json.loads(pm.ModelMessagesTypeAdapter.dump_json(history))), format="pydantic_ai")
    assert t.wire == "responses" and t.meta["provider"] == "openai"
    chat = [history[0], pm.ModelResponse([pm.TextPart("hi")], provider_name="openai", provider_response_id="chatcmpl-1")]
    assert load(Source(json.loads(pm.ModelMessagesTypeAdapter.dump_json(chat))), format="pydantic_ai").wire == "openai_chat"
    items = to_responses_input(t.messages)[1]
    (reasoning,) = [i for i in items if i.get("type") == "reasoning"]
    assert reasoning["id"] == "rs_1" and reasoning["encrypted_content"] == "ENC=="
    back = pm.ModelMessagesTypeAdapter.validate_json(json.dumps(export(t.messages, "pydantic_ai")))
    (again,) = [p for m in back for p in m.parts if p.part_kind == "thinking"]
    assert (again.id, again.signature, again.provider_name, again.content) == ("rs_1", "ENC==", "openai", "weighing it")


def test_langchain_responses_reasoning_is_tagged_for_openai() -> None:
    need("langchain_core")
    from langchain_core.messages import AIMessage, HumanMessage, messages_to_dict
    from langchain_core.messages import ToolMessage as LCTool

    from providerkit_nb.transcripts.base import Source
    from providerkit_nb.wire.openai_responses import to_responses_input

    block = {"type": "reasoning", "id": "rs_7", "summary": [{"type": "summary_text", "text": "hm"}],
             "encrypted_content": "ENC7"}
    msgs = [HumanMessage("q"),
            AIMessage(content=[block], tool_calls=[{"name": "f", "args": {}, "id": "call_7", "type": "tool_call"}],
                      response_metadata={"model_provider": "openai"}),
            LCTool("r", tool_call_id="call_7")]
    t = load(Source(messages_to_dict(msgs)), format="langchain")
    a = t.messages[1]
    assert a.reasoning_items.provider == "openai-responses" and a.reasoning == "hm"  # type: ignore[union-attr]
    assert [i for i in to_responses_input(t.messages)[1] if i.get("type") == "reasoning"][0]["encrypted_content"] == "ENC7"
    exported = export(t.messages, "langchain")
    assert exported[1]["data"]["content"][0]["encrypted_content"] == "ENC7"


def test_pending_call_under_a_reused_id_exports() -> None:
    """A call waiting for a person whose id an earlier call already used: repair renames it,
    and export follows the repaired id (it stays open, nothing answers it)."""
    msgs = [UserMessage("q"), AssistantMessage("", tool_calls=[ToolCall("a", "f", "{}")]), ToolMessage("a", "f", "ok"),
            AssistantMessage("", tool_calls=[ToolCall("a", "ask", "{}")])]
    r = repair_history(msgs, pending=["a"])
    assert [p.id for p in r.pending] == ["a_2"]
    for fmt in ("pydantic_ai", "langchain", "responses"):
        text = json.dumps(export(r, fmt))
        assert text.count('"a_2"') == 1
