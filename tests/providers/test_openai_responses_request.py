"""What the Responses wire sends: body fields, tools, effort, sessions, the ChatGPT backend,
signed reasoning replay (same provider only, newest first within 8 MiB, always with a follower),
and the importer that reads a Responses ``input`` back."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from providerkit_nb.core.errors import ProviderError
from providerkit_nb.core.messages import (
    AssistantMessage,
    FilePart,
    ImagePart,
    ReasoningItems,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    UserMessage,
    dumps,
)
from providerkit_nb.core.structured import is_strict_schema
from providerkit_nb.core.tools import ToolDefinition
from providerkit_nb.core.turn import collect_turn
from providerkit_nb.providers.openai_responses import ResponsesProvider
from providerkit_nb.wire.openai_responses import (
    check,
    check_wire,
    from_responses_input,
    to_responses_input,
    without_patterns,
)
from providerkit_nb.wire.options import CallOptions
from providerkit_nb.wire.validate import validate_history

from .responses_cases import serving, sse

KEY = "sk-test-secret-key-0123456789abcdef"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg=="
DONE = sse({"type": "response.output_text.delta", "item_id": "m", "content_index": 0, "delta": "ok"},
           {"type": "response.completed", "response": {"status": "completed"}})


def prov(**kw: Any) -> ResponsesProvider:
    kw.setdefault("transport", serving(200, DONE))
    return ResponsesProvider(model=kw.pop("model", "gpt-5.5"), api_key=KEY, **kw)


def body(messages: list[Any], tools: list[ToolDefinition] | None = None, p: ResponsesProvider | None = None,
         stream: bool = True, **opts: Any) -> dict[str, Any]:
    p = p or prov()
    return p.build_request(p.prepare(messages), tools, CallOptions(**opts), stream=stream).body


def rs(rid: str, size: int = 16) -> dict[str, Any]:
    return {"type": "reasoning", "id": rid, "summary": [], "encrypted_content": "g" * size}


def turn_with(tag: str, *items: dict[str, Any], text: str = "answer", calls: list[ToolCall] | None = None) -> AssistantMessage:
    return AssistantMessage(content=text, reasoning="readable thoughts", reasoning_items=ReasoningItems(tag, list(items)),
                            tool_calls=calls)


# --------------------------------------------------------------------------- body


def test_body_basics_store_instructions_include_and_user_parts():
    msgs = [SystemMessage("Be terse."), UserMessage([TextPart("look"), ImagePart("image/png", PNG),
                                                      FilePart("application/pdf", "JVBERi0=", "a.pdf")]),
            SystemMessage("Cite sources."), UserMessage("and?")]
    b = body(msgs)
    assert b["store"] is False and b["stream"] is True
    assert b["instructions"] == "Be terse.\n\nCite sources."
    assert b["include"] == ["reasoning.encrypted_content"]
    assert b["input"] == [
        {"role": "user", "content": [{"type": "input_text", "text": "look"},
                                     {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"},
                                     {"type": "input_file", "filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBERi0="}]},
        {"role": "user", "content": "and?"},
    ]
    assert "instructions" not in body([UserMessage("x")])


def test_a_file_the_wire_cannot_take_is_refused_with_what_to_do():
    with pytest.raises(ProviderError) as info:
        body([UserMessage([FilePart("audio/wav", "AAAA")])])
    assert info.value.kind == "invalid"
    assert "PDF" in str(info.value) and "audio/wav" in str(info.value)


def test_sampling_options_and_what_is_not_sent():
    b = body([UserMessage("x")], max_tokens=50, temperature=0.2, top_p=0.9, stop=["END"], extra_body={"service_tier": "flex"})
    assert (b["max_output_tokens"], b["temperature"], b["top_p"], b["service_tier"]) == (50, 0.2, 0.9, "flex")
    assert "stop" not in json.dumps(b)  # Responses has no stop sequences
    assert "reasoning" not in b  # silence: the provider's default effort


def test_tools_are_flat_strict_stated_truthfully_and_patterns_removed():
    closed = {"type": "object", "additionalProperties": False, "required": ["path"],
              "properties": {"path": {"type": "string", "pattern": "^/"}}}
    loose = {"type": "object", "required": ["q"],
             "properties": {"q": {"type": "string"}, "limit": {"type": "integer"},
                            "pattern": {"type": "string", "description": "a property named pattern stays"},
                            "tags": {"type": "array", "items": {"type": "string", "pattern": "[a-z]+"}},
                            "any": {"anyOf": [{"type": "string", "pattern": "x"}, {"type": "null"}]}},
             "$defs": {"d": {"type": "string", "pattern": "y"}}}
    b = body([UserMessage("x")], [ToolDefinition("read", "Read a file", closed), ToolDefinition("find", "", loose)],
             parallel_tool_calls=False, tool_choice="read")
    t0, t1 = b["tools"]
    assert t0 == {"type": "function", "name": "read", "description": "Read a file", "strict": True,
                  "parameters": {"type": "object", "additionalProperties": False, "required": ["path"],
                                 "properties": {"path": {"type": "string"}}}}
    assert t1["strict"] is False  # optional "limit" stays optional
    assert '"pattern": "' not in json.dumps(t1) and "pattern" in t1["parameters"]["properties"]
    assert b["parallel_tool_calls"] is False
    assert b["tool_choice"] == {"type": "function", "name": "read"}
    assert "parallel_tool_calls" not in body([UserMessage("x")], parallel_tool_calls=False)


def test_schema_helpers():
    assert without_patterns({"type": "string", "pattern": "a", "enum": ["pattern"]}) == {"type": "string", "enum": ["pattern"]}
    assert is_strict_schema({"type": "object", "properties": {}, "additionalProperties": False})
    assert not is_strict_schema({"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}, "required": ["a"],
                                 "additionalProperties": False})
    assert is_strict_schema({"anyOf": [{"type": "string"}, {"type": "null"}]})


def test_results_quote_the_call_id_and_carry_images():
    msgs = [UserMessage("go"), AssistantMessage("", tool_calls=[ToolCall("call_A", "shot", "{}")]),
            ToolMessage("call_A", "shot", "here", [ImagePart("image/png", PNG)])]
    items = body(msgs)["input"]
    assert items[1] == {"type": "function_call", "call_id": "call_A", "name": "shot", "arguments": "{}"}
    assert items[2] == {"type": "function_call_output", "call_id": "call_A",
                        "output": [{"type": "input_text", "text": "here"},
                                   {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"}]}
    assert "fc_" not in json.dumps(items)


@pytest.mark.parametrize(
    "model,effort,want",
    [
        ("gpt-5.5", None, None),
        ("gpt-5.5", "none", {"effort": "none"}),
        ("gpt-5", "none", {"effort": "minimal"}),
        ("gpt-5-mini-2025-08-07", "none", {"effort": "minimal"}),
        ("o3", "none", {"effort": "low"}),
        ("gpt-5.5", "low", {"effort": "low", "summary": "auto"}),
        ("gpt-5.5", "max", {"effort": "high", "summary": "auto"}),
    ],
)
def test_effort_dialect_none_differs_from_silence(model: str, effort: str | None, want: Any):
    b = body([UserMessage("x")], p=prov(model=model), effort=effort)
    assert b.get("reasoning") == want


def test_a_constructor_effort_is_the_default_and_a_call_overrides_it():
    p = prov(effort="high")
    assert body([UserMessage("x")], p=p)["reasoning"]["effort"] == "high"
    assert body([UserMessage("x")], p=p, effort="low")["reasoning"]["effort"] == "low"


def test_session_id_is_prompt_cache_key_on_openai_and_stable_per_instance():
    p = prov()
    assert body([UserMessage("x")], p=p, session_id="conv-1")["prompt_cache_key"] == "conv-1"
    a, b2 = body([UserMessage("x")], p=p), body([UserMessage("y")], p=p)
    assert a["prompt_cache_key"] == b2["prompt_cache_key"] == p.instance_session_id
    wr = p.build_request([UserMessage("x")], None, CallOptions(session_id="conv-1"), stream=True)
    assert "session-id" not in wr.headers


def test_chatgpt_backend_request():
    seen: list[httpx.Request] = []
    p = ResponsesProvider(model="gpt-5.5", api_key=KEY, backend="chatgpt", account_id="acct_42",
                          transport=serving(200, DONE, seen=seen))
    turn = p.complete([UserMessage("hi")], session_id="conv-9", max_tokens=100)  # the backend only streams
    assert turn.message.content == "ok"
    (req,) = seen
    sent = json.loads(req.content)
    assert str(req.url) == "https://chatgpt.com/backend-api/codex/responses"
    assert req.headers["session-id"] == "conv-9" and sent["prompt_cache_key"] == "conv-9"
    assert req.headers["chatgpt-account-id"] == "acct_42"
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert sent["stream"] is True and sent["instructions"] == "" and sent["store"] is False
    assert "max_output_tokens" not in sent


def test_the_key_is_sent_but_never_shown():
    seen: list[httpx.Request] = []
    p = ResponsesProvider(model="gpt-5.5", api_key=KEY, transport=serving(200, DONE, seen=seen))
    collect_turn(p.create_stream([UserMessage("hi")]))
    assert seen[0].headers["authorization"] == f"Bearer {KEY}"
    wr = p.build_request([UserMessage("hi")], None, CallOptions(), stream=True)
    assert KEY not in repr(wr) and KEY not in repr(p)
    echo = json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}", "code": "invalid_api_key"}}).encode()
    bad = ResponsesProvider(model="gpt-5.5", api_key=KEY, transport=serving(401, echo, content_type="application/json"))
    with pytest.raises(ProviderError) as info:
        collect_turn(bad.create_stream([UserMessage("hi")]))
    assert info.value.kind == "auth"
    assert KEY not in str(info.value) and KEY not in (info.value.body or "") and KEY not in repr(info.value)


def test_non_streaming_request_and_response():
    out = json.dumps({"status": "completed", "model": "gpt-5.5", "output": [
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "think"}], "encrypted_content": "E"},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": "{}"},
        {"type": "function_call", "id": "fc_2", "name": "g", "arguments": "{}"},  # no call_id: unanswerable
    ], "usage": {"input_tokens": 5, "output_tokens": 3}}).encode()
    seen: list[httpx.Request] = []
    p = ResponsesProvider(model="gpt-5.5", api_key=KEY, transport=serving(200, out, seen=seen, content_type="application/json"))
    turn = p.complete([UserMessage("hi")])
    assert json.loads(seen[0].content)["stream"] is False
    assert [c.id for c in turn.message.tool_calls] == ["call_1"]
    assert turn.message.reasoning == "think"
    assert turn.message.reasoning_items.items == [{"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "think"}],
                                                   "encrypted_content": "E"}]
    assert turn.finish_reason == "tool_calls"


# --------------------------------------------------------------------------- reasoning replay


def _reasoning_ids(items: list[dict[str, Any]]) -> list[str]:
    return [i["id"] for i in items if i.get("type") == "reasoning"]


def test_reasoning_goes_back_only_to_the_provider_that_signed_it():
    msgs = [UserMessage("a"), turn_with("openai-responses", rs("rs_mine")), UserMessage("b"),
            turn_with("chatgpt", rs("rs_chatgpt")), UserMessage("c"),
            turn_with("anthropic", {"type": "thinking", "thinking": "t", "signature": "s"}), UserMessage("d")]
    openai_items = body(msgs)["input"]
    assert _reasoning_ids(openai_items) == ["rs_mine"]
    chatgpt_items = body(msgs, p=prov(backend="chatgpt"))["input"]
    assert _reasoning_ids(chatgpt_items) == ["rs_chatgpt"]
    assert _reasoning_ids(body(msgs, p=prov(id="other-openai"))["input"]) == []
    for items in (openai_items, chatgpt_items):
        text = json.dumps(items)
        assert "readable thoughts" not in text and "signature" not in text
        assert [i.get("content") for i in items if i.get("role") == "assistant"] == [[{"type": "output_text", "text": "answer"}]] * 3


def test_reasoning_items_come_first_in_their_turn_whole_and_with_summary():
    item = {"type": "reasoning", "id": "rs_1", "encrypted_content": "E", "content": [{"type": "reasoning_text", "text": "x"}]}
    msgs = [UserMessage("a"), turn_with("openai-responses", item, calls=[ToolCall("call_1", "f", "{}")]),
            ToolMessage("call_1", "f", "done")]
    items = body(msgs)["input"]
    assert [i.get("type") or i["role"] for i in items] == ["user", "reasoning", "message", "function_call", "function_call_output"]
    assert items[1] == {**item, "summary": []}  # strict servers need summary; nothing else changed
    assert msgs[1].reasoning_items.items[0] == item  # the stored history is not touched


REPLAY_LIMIT = 8 * 1024 * 1024  # the documented replay budget


def test_replay_budget_is_newest_first_within_8_mib_and_older_turns_lose_theirs_first():
    big = REPLAY_LIMIT // 2 - 1000  # two of these fit, three do not
    msgs = [UserMessage("q0"), turn_with("openai-responses", rs("rs_small", 10)),
            UserMessage("q1"), turn_with("openai-responses", rs("rs_old", big)),
            UserMessage("q2"), turn_with("openai-responses", rs("rs_mid", big)),
            UserMessage("q3"), turn_with("openai-responses", rs("rs_new", big)), UserMessage("q4")]
    items = body(msgs)["input"]
    assert _reasoning_ids(items) == ["rs_mid", "rs_new"]  # rs_small is older than a dropped turn
    sent = sum(len(json.dumps([i], separators=(",", ":"))) for i in items if i.get("type") == "reasoning")
    assert sent <= REPLAY_LIMIT
    # the turns that lost their reasoning still send their text
    assert sum(1 for i in items if i.get("role") == "assistant") == 4


def test_a_reasoning_item_never_travels_without_a_follower_after_repair():
    """A crash after the model called tools: repair adds the results; a placeholder turn that
    holds only reasoning is dropped. The built input pairs every reasoning item with the call
    that follows it, and the recorded 400's shape (reasoning, then a user turn) never appears."""
    calls = [ToolCall("call_1", "read", '{"p":"a"}'), ToolCall("call_2", "read", '{"p":"b"}')]
    msgs = [UserMessage("read both"),
            AssistantMessage("", reasoning_items=ReasoningItems("openai-responses", [rs("rs_calls")]), tool_calls=calls),
            AssistantMessage("", reasoning_items=ReasoningItems("openai-responses", [rs("rs_alone")])),
            UserMessage("are you there?")]
    broken = check(msgs)
    assert any(p.rule == "responses.dangling_function_call" and p.message == "No tool output found for function call call_1."
               for p in broken)
    b = body(msgs)  # prepare() repairs, as every send does
    items = b["input"]
    assert [i.get("type") or i["role"] for i in items] == [
        "user", "reasoning", "function_call", "function_call", "function_call_output", "function_call_output", "user"]
    assert _reasoning_ids(items) == ["rs_calls"]
    assert [p for p in check_wire(items)] == []
    assert [i["output"] for i in items if i.get("type") == "function_call_output"][0].startswith("This call was interrupted")


def test_the_builder_itself_never_leaves_reasoning_without_a_follower():
    p = prov()
    msgs = [UserMessage("a"), AssistantMessage("", reasoning_items=ReasoningItems("openai-responses", [rs("rs_x")])),
            UserMessage("b")]
    items = p.build_request(msgs, None, CallOptions(), stream=True).body["input"]  # no repair on purpose
    assert _reasoning_ids(items) == []
    assert not [x for x in check_wire(items) if x.rule == "responses.reasoning_without_follower"]


def test_a_duplicated_turn_does_not_send_its_reasoning_twice():
    t = turn_with("openai-responses", rs("rs_dup"))
    items = body([UserMessage("a"), t, UserMessage("b"), t, UserMessage("c")])["input"]
    assert _reasoning_ids(items) == ["rs_dup"]
    assert check_wire(items) == []


def test_repaired_history_passes_the_responses_validator():
    msgs = [UserMessage("x"), turn_with("openai-responses", rs("rs_1"), calls=[ToolCall("c1", "f", "{}")]),
            ToolMessage("ghost", "f", "orphan result"), ToolMessage("c1", "f", "ok"), ToolMessage("c1", "f", "dup")]
    assert validate_history(msgs, wire="responses")
    p = prov()
    assert validate_history(p.prepare(msgs), wire="responses") == []


# --------------------------------------------------------------------------- importer


def test_importer_round_trips_a_rich_history():
    history = [
        SystemMessage("sys"),
        UserMessage([TextPart("see"), ImagePart("image/png", PNG)]),
        AssistantMessage("I'll look.", reasoning="s1\n\ns2",
                         reasoning_items=ReasoningItems("openai-responses", [
                             {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "s1"},
                                                                             {"type": "summary_text", "text": "s2"}],
                              "encrypted_content": "E1"}]),
                         tool_calls=[ToolCall("call_1", "look", '{"at": 1}'), ToolCall("call_2", "look", "{}")]),
        ToolMessage("call_1", "look", "seen"),
        ToolMessage("call_2", "look", "also", [ImagePart("image/png", PNG)]),
        AssistantMessage("Done."),
        UserMessage("thanks"),
    ]
    instructions, items, _ = to_responses_input(history)
    back = from_responses_input(items, instructions)
    assert dumps(back) == dumps(history)


def test_importer_reads_the_shapes_servers_accept():
    got = from_responses_input([
        {"role": "developer", "content": [{"type": "input_text", "text": "dev"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "q"}]},
        {"role": "assistant", "content": "first"},
        {"role": "assistant", "content": "second"},
        {"type": "function_call_output", "call_id": "nowhere", "output": {"json": True}},
    ], instructions="top")
    assert [m.to_dict() for m in got] == [
        {"role": "system", "content": "top"}, {"role": "system", "content": "dev"},
        {"role": "user", "content": [{"type": "text", "text": "q"}]},
        {"role": "assistant", "content": "first"}, {"role": "assistant", "content": "second"},
        {"role": "tool", "tool_call_id": "nowhere", "name": "", "content": '{"json": true}'},
    ]
    assert [m.to_dict() for m in from_responses_input("just text")] == [{"role": "user", "content": "just text"}]


@pytest.mark.parametrize(
    "item,words",
    [
        ({"type": "web_search_call", "id": "ws_1"}, "input[1]: items of type 'web_search_call'"),
        ({"role": "user", "content": [{"type": "input_image", "image_url": "https://x/y.png"}]}, "data URI"),
        ({"type": "function_call", "name": "f", "arguments": "{}"}, "needs a call_id"),
    ],
)
def test_importer_refuses_what_it_would_have_to_drop(item: dict[str, Any], words: str):
    with pytest.raises(ValueError) as info:
        from_responses_input([{"role": "user", "content": "a"}, item])
    assert words in str(info.value)
