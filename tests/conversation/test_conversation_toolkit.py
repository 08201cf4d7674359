"""Conversation options against a real Chat server on 127.0.0.1: send(json=)
returns the parsed answer beside the turn, a UsageTracker per conversation with a budget that
stops send before a call, and compact=True (on a context error, and when the window is nearly
full) leaving a history every rule accepts - also after a reload from the store."""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest

import providerkit_nb as pk
from providerkit_nb.compaction import parse_context_overflow
from providerkit_nb.core.usage import BudgetExceeded
from providerkit_nb.stream import Usage

from .chat_server import ChatServer, Refuse, _frame, call_answer, text_answer

# the exact texts, pinned here (not imported from the code under test)
SUMMARY = "[Earlier conversation, summarized]\n\n"

pytestmark = pytest.mark.timeout(60)


class Person(pydantic.BaseModel):
    name: str
    age: int


def answer_with_usage(text: str, prompt: int, completion: int, cached: int = 0) -> list[tuple[float, bytes]]:
    usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion}
    if cached:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    return [
        (0.0, _frame({"role": "assistant", "content": text})),
        (0.0, _frame(finish="stop")),
        (0.0, _frame(usage=usage)),
        (0.0, b"data: [DONE]\n\n"),
    ]


def convo(server: ChatServer, cid: str = "c", store: Any = None, **kw: Any) -> pk.Conversation:
    # the local server stands in for OpenAI's own (a base_url elsewhere is otherwise a compatible server)
    provider = pk.openai(model="gpt-5", base_url=server.base_url, api_key="sk-test", id="openai")
    return pk.Conversation(store or pk.MemoryStore(), cid, provider, system="Be terse.", display=False, **kw)


# --------------------------------------------------------------------------- json=


def test_send_json_returns_the_validated_answer_next_to_the_turn() -> None:
    with ChatServer([text_answer(['Sure:\n```json\n{"name": "Ada",', ' "age": 36}\n```'])]) as srv:
        c = convo(srv)
        reply = c.send("Who wrote the first program?", json=Person)
        value, turn = reply
        assert value == Person(name="Ada", age=36) and reply.ok
        assert turn.message.content.startswith("Sure:")
        sent = srv.requests[0]
        assert sent["response_format"] == {"type": "json_schema", "json_schema": {
            "name": "Person", "schema": Person.model_json_schema(), "strict": False}}
        # the answer is saved like any other turn
        assert c.messages[-1].content == turn.message.content


def test_send_json_says_why_an_answer_did_not_fit() -> None:
    # asked once more in the other JSON form first; the second reply's fault is the one reported
    with ChatServer([text_answer(['{"name": "Ada"}']), text_answer(['{"name": "Ada", "age": "old"}'])]) as srv:
        reply = convo(srv).send("x", json=Person)
        assert reply.value is None and "age" in reply.error and reply.turn is not None
        assert len(srv.requests) == 2


def test_json_goes_on_every_step_of_a_tool_loop() -> None:
    tool = pk.define_tool("lookup", "look", {"type": "object", "properties": {}}, lambda a: "Ada, 36")
    with ChatServer([call_answer("c1", "lookup", "{}"), text_answer(['{"name":"Ada","age":36}'])]) as srv:
        provider = pk.openai(model="gpt-5", base_url=srv.base_url, api_key="sk-test")
        c = pk.Conversation(pk.MemoryStore(), "t", provider, pk.ToolRegistry([tool]), display=False,
                            options={"json_with_tools": "prompt"})
        reply = c.send("who?", json="object")
        assert reply.value == {"name": "Ada", "age": 36}
        for body in srv.requests:  # prompt-carried with tools: the schema is the last message
            assert "response_format" not in body
            assert body["messages"][-1]["role"] == "system" and "single JSON object" in body["messages"][-1]["content"]


# --------------------------------------------------------------------------- usage and budget


def test_usage_tracker_per_conversation_and_the_frames() -> None:
    rate = {"input": 2.0, "output": 10.0, "cache_read": 0.5}
    with ChatServer([answer_with_usage("a", 1000, 100, cached=400), answer_with_usage("b", 2000, 50)]) as srv:
        c = convo(srv, rate=rate)
        c.send("one")
        c.send("two")
        assert c.usage.totals == Usage(3000, 400, 0, 150)
        want = ((600 * 2.0 + 400 * 0.5 + 100 * 10.0) + (2000 * 2.0 + 50 * 10.0)) / 1e6
        assert c.usage.cost_usd == pytest.approx(want)
        assert c.usage.savings_usd == pytest.approx(400 * 1.5 / 1e6)
        frame = pk.turns_frame(c)
        assert frame["cost_usd"].sum() == pytest.approx(want)
        totals = pk.usage_frame(c)
        assert totals.loc[0, "calls"] == 2 and totals.loc[0, "input_tokens"] == 3000
        assert totals.loc[0, "cost_usd"] == pytest.approx(want, abs=1e-8)
        assert f"2 calls ${want:.4f}" in repr(c)


def test_a_budget_stops_send_before_the_call() -> None:
    with ChatServer([answer_with_usage("a", 1_000_000, 0), answer_with_usage("b", 10, 0)]) as srv:
        c = convo(srv, rate={"input": 1.0, "output": 1.0}, budget_usd=0.5)
        c.send("one")  # under budget before the call; $1.00 after it
        stored = len(c.messages)
        with pytest.raises(BudgetExceeded) as info:
            c.send("two")
        assert info.value.kind == pk.ErrorKind.QUOTA and "$0.5000" in str(info.value)
        assert len(srv.requests) == 1 and len(c.messages) == stored  # nothing sent, nothing saved
        c.usage.budget_usd = 2.0
        assert c.send("two").message.content == "b"


def test_a_budget_stops_a_tool_loop_between_steps() -> None:
    tool = pk.define_tool("lookup", "look", {"type": "object", "properties": {}}, lambda a: "x")
    expensive = call_answer("c1", "lookup", "{}")
    expensive[3] = (0.0, _frame(usage={"prompt_tokens": 1_000_000, "completion_tokens": 0}))
    with ChatServer([expensive, text_answer(["never"])]) as srv:
        provider = pk.openai(model="gpt-5", base_url=srv.base_url, api_key="sk-test")
        c = pk.Conversation(pk.MemoryStore(), "t", provider, pk.ToolRegistry([tool]), display=False,
                            rate={"input": 1.0, "output": 1.0}, budget_usd=0.5)
        with pytest.raises(BudgetExceeded):
            c.send("go")
        assert len(srv.requests) == 1
        assert pk.validate_history(c.repair().messages) == []  # the result was saved before stopping


# --------------------------------------------------------------------------- compaction

OVERFLOW = json.dumps({"error": {"message": "This model's maximum context length is 128000 tokens. However, "
                                            "your messages resulted in 130000 tokens.", "type": "invalid_request_error",
                                 "code": "context_length_exceeded"}}).encode()


def _long_history(c: pk.Conversation, turns: int = 6) -> None:
    for i in range(turns):
        c._save(pk.UserMessage(f"question {i} " + "x" * 4000))
        c._save(pk.AssistantMessage(f"answer {i} " + "y" * 4000))


def test_compact_on_a_context_error_summarises_and_goes_on(tmp_path: Any) -> None:
    store = pk.NotebookStore(tmp_path / "c.sqlite")
    with ChatServer([Refuse(400, OVERFLOW), text_answer(["They asked six questions."]), text_answer(["fine"])]) as srv:
        c = convo(srv, store=store, compact=True, context_window=40_000)
        _long_history(c)
        turn = c.send("and now?")
        assert turn.message.content == "fine" and c.compactions == 1
        summary_req, retried = srv.requests[1], srv.requests[2]
        assert summary_req["messages"][0]["content"].startswith("Summarize the conversation")
        assert "question 0" in summary_req["messages"][1]["content"]
        assert "tools" not in summary_req
        roles = [m["role"] for m in retried["messages"]]
        assert roles[:2] == ["system", "user"]
        assert retried["messages"][1]["content"] == SUMMARY + "They asked six questions."
        assert retried["messages"][-1]["content"] == "and now?"  # the newest message is kept
        assert len(json.dumps(retried)) < len(json.dumps(srv.requests[0]))
        assert pk.validate_history(c.repaired.messages) == []
        # another process reading the store sees the same compacted history
        again = pk.Conversation(store, "c", c.provider, display=False)
        assert [m.to_dict() for m in again.repaired.messages] == [m.to_dict() for m in c.repair().messages]
        # the record keeps everything
        assert any("question 0" in getattr(m, "content", "") for m in again.messages)
    store.close()


def test_compact_when_the_last_prompt_nearly_filled_the_window() -> None:
    with ChatServer([answer_with_usage("ok", 9_000, 5), text_answer(["summary"]), text_answer(["next"])]) as srv:
        c = convo(srv, compact=True, context_window=40_000)  # 9000 >= 40000 - 32000
        _long_history(c)
        c.send("first")
        assert c.compactions == 0 and len(srv.requests) == 1
        assert c.send("second").message.content == "next"
        assert c.compactions == 1
        assert srv.requests[2]["messages"][1]["content"] == SUMMARY + "summary"


def test_compaction_never_orphans_a_tool_result() -> None:
    tool = pk.define_tool("lookup", "look", {"type": "object", "properties": {}}, lambda a: "r" * 30_000)
    with ChatServer([call_answer("c1", "lookup", "{}"), Refuse(400, OVERFLOW), text_answer(["sum"]),
                     text_answer(["done"])]) as srv:
        provider = pk.openai(model="gpt-5", base_url=srv.base_url, api_key="sk-test")
        c = pk.Conversation(pk.MemoryStore(), "t", provider, pk.ToolRegistry([tool]), display=False,
                            compact=True, context_window=40_000)
        _long_history(c)
        assert c.send("go").message.content == "done"
        sent = srv.requests[3]["messages"]
        # the big result is newer than the budget allows, but it keeps its call beside it
        i = next(k for k, m in enumerate(sent) if m["role"] == "tool")
        assert sent[i - 1]["role"] == "assistant" and sent[i - 1]["tool_calls"][0]["id"] == "c1"
        assert pk.validate_history(c.repaired.messages) == []


def test_without_compact_the_context_error_propagates() -> None:
    with ChatServer([Refuse(400, OVERFLOW)]) as srv:
        c = convo(srv)
        with pytest.raises(pk.ProviderError) as info:
            c.send("x")
        assert info.value.kind == pk.ErrorKind.CONTEXT
        got = parse_context_overflow(info.value)
        assert got is not None and (got.input_tokens, got.context_limit) == (130000, 128000)
