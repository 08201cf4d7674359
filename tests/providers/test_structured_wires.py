"""json= on every wire: the request fields, checked field by field against each vendor's
documented field names, and against the one shared recording that carries a structured-output request
(Gemini, mirascope). The other three wires have no such recording: their round trips start
from constructed request bodies, labelled as such below."""

from __future__ import annotations

import json
from typing import Any

import pytest

import providerkit_nb.structured as pk_structured
from providerkit_nb.core.messages import SystemMessage, UserMessage
from providerkit_nb.core.structured import schema_prompt
from providerkit_nb.core.tools import ToolDefinition
from providerkit_nb.core.turn import collect_turn
from providerkit_nb.providers import anthropic, gemini, openai_chat, openai_responses
from providerkit_nb.providers.anthropic import AnthropicProvider
from providerkit_nb.providers.base import CallOptions, WireProvider
from providerkit_nb.providers.gemini import GeminiProvider
from providerkit_nb.providers.openai_chat import OpenAIChatProvider
from providerkit_nb.providers.openai_responses import ResponsesProvider
from providerkit_nb.structured import JsonFormat

from .cassette_loader import UPSTREAM, cases, chopped_transport

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
    "additionalProperties": False,
}
LOOSE = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
HISTORY = [SystemMessage("You are terse."), UserMessage("Who wrote the first program?")]
TOOLS = [ToolDefinition("search", "Search the web", {"type": "object", "properties": {"q": {"type": "string"}}})]


def body(p: WireProvider, tools: list[ToolDefinition] | None = None, **opts: Any) -> dict[str, Any]:
    return p.build_request(p.prepare(HISTORY), tools, CallOptions(**opts), stream=True).body


# --------------------------------------------------------------------------- OpenAI Chat


def test_chat_openai_sends_a_strict_json_schema() -> None:
    b = body(OpenAIChatProvider(model="gpt-5", api_key="k"), json=PERSON)
    assert b["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "answer", "schema": PERSON, "strict": True}
    }
    assert [m["role"] for m in b["messages"]] == ["system", "user"]  # no prompt copy when enforced


def test_chat_openai_states_strict_false_for_a_loose_schema_and_honours_an_explicit_one() -> None:
    p = OpenAIChatProvider(model="gpt-5", api_key="k")
    assert body(p, json=LOOSE)["response_format"]["json_schema"]["strict"] is False
    fmt = JsonFormat("who", PERSON, strict=False)
    assert body(p, json=fmt)["response_format"]["json_schema"] == {"name": "who", "schema": PERSON, "strict": False}


def test_chat_compatible_servers_get_openais_form_first() -> None:
    b = body(OpenAIChatProvider(model="m", api_key="k", id="vllm"), json=PERSON)
    assert b["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "answer", "schema": PERSON, "strict": True}
    }
    assert [m["role"] for m in b["messages"]] == ["system", "user"]


def test_a_server_known_to_have_no_json_schema_gets_json_object_and_a_trailing_schema_prompt() -> None:
    b = body(OpenAIChatProvider(model="deepseek-chat", api_key="k", id="deepseek", json_mode="object"), json=PERSON)
    assert b["response_format"] == {"type": "json_object"}
    # after the history: the cached prefix (system + earlier turns) is unchanged
    assert b["messages"][:2] == [{"role": "system", "content": "You are terse."},
                                 {"role": "user", "content": "Who wrote the first program?"}]
    assert b["messages"][-1] == {"role": "system", "content": schema_prompt(PERSON)}


def test_chat_json_object_for_any_object() -> None:
    b = body(OpenAIChatProvider(model="gpt-5", api_key="k"), json="object")
    assert b["response_format"] == {"type": "json_object"}
    assert b["messages"][-1]["role"] == "system" and "single JSON object" in b["messages"][-1]["content"]


def test_chat_with_tools_json_with_tools_prompt_carries_the_schema_only_in_the_prompt() -> None:
    p = OpenAIChatProvider(model="gpt-5", api_key="k")
    b = body(p, TOOLS, json=PERSON, json_with_tools="prompt")
    assert "response_format" not in b
    assert b["messages"][-1] == {"role": "system", "content": schema_prompt(PERSON)}
    b = body(p, TOOLS, json=PERSON)  # default: response_format even with tools
    assert b["response_format"]["type"] == "json_schema"


def test_json_mode_is_a_constructor_choice() -> None:
    b = body(OpenAIChatProvider(model="m", api_key="k", id="vllm", json_mode="object"), json=PERSON)
    assert b["response_format"]["type"] == "json_object"
    with pytest.raises(ValueError, match="json_mode"):
        OpenAIChatProvider(model="m", api_key="k", json_mode="xml")


def test_bad_json_options_fail_before_any_request() -> None:
    with pytest.raises(ValueError, match="json_with_tools"):
        CallOptions(json=PERSON, json_with_tools="tools")


# --------------------------------------------------------------------------- Responses


def test_responses_text_format() -> None:
    p = ResponsesProvider(model="gpt-5", api_key="k")
    assert body(p, json=PERSON)["text"] == {
        "format": {"type": "json_schema", "name": "answer", "schema": PERSON, "strict": True}
    }
    assert body(p, json=LOOSE)["text"]["format"]["strict"] is False
    assert body(p, json="object")["text"] == {"format": {"type": "json_object"}}
    assert body(p, json="object")["input"][-1]["role"] == "developer"  # JSON mode needs the word JSON
    b = body(p, TOOLS, json=PERSON, json_with_tools="prompt")
    assert "text" not in b
    assert b["input"][-1] == {"type": "message", "role": "developer",
                              "content": [{"type": "input_text", "text": schema_prompt(PERSON)}]}
    assert b["instructions"] == "You are terse."  # the cached instructions are untouched


# --------------------------------------------------------------------------- both OpenAI wires


def _read_by_the_model(b: dict[str, Any]) -> str:
    """Every text the model reads in a Chat or Responses body (instructions, messages, items)."""
    parts = [b.get("instructions") or ""]
    for m in b.get("messages") or b.get("input") or []:
        content = m.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(c.get("text", "") for c in content if isinstance(c, dict))
    return "\n".join(parts)


@pytest.mark.parametrize(
    "provider",
    [
        ResponsesProvider(model="gpt-5", api_key="k"),
        OpenAIChatProvider(model="gpt-5", api_key="k"),
        OpenAIChatProvider(model="deepseek-chat", api_key="k", id="deepseek", json_mode="object"),
    ],
    ids=["responses", "chat-openai", "chat-compatible"],
)
def test_json_mode_always_says_json_where_the_model_reads_it(provider: WireProvider) -> None:
    # OpenAI refuses JSON mode unless the word JSON is in what the model reads
    b = body(provider, json="object")
    assert "JSON" not in json.dumps(HISTORY[0].content) + json.dumps(HISTORY[1].content)
    fmt = b.get("response_format") or b["text"]["format"]
    assert fmt == {"type": "json_object"}
    assert "JSON" in _read_by_the_model(b)
    assert _read_by_the_model(b).endswith("Respond with a single JSON object. No prose, no code fence.\n"
                                          "Write a line break inside a string value as \\n. "
                                          "A real line break there is invalid JSON.")


FREE_FORM_INSIDE = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "meta": {"type": "object"}},
    "required": ["name", "meta"],
    "additionalProperties": False,
}


def test_a_nested_free_form_object_is_not_strict_on_either_wire() -> None:
    # OpenAI's strict mode wants additionalProperties:false on every object, a free-form one too
    chat = body(OpenAIChatProvider(model="gpt-5", api_key="k"), json=FREE_FORM_INSIDE)
    assert chat["response_format"]["json_schema"]["strict"] is False
    resp = body(ResponsesProvider(model="gpt-5", api_key="k"), json=FREE_FORM_INSIDE)
    assert resp["text"]["format"]["strict"] is False
    tool = ToolDefinition("save", "Save a record", FREE_FORM_INSIDE)
    resp_tools = body(ResponsesProvider(model="gpt-5", api_key="k"), [tool])
    assert resp_tools["tools"][0]["strict"] is False
    closed = {**FREE_FORM_INSIDE, "properties": {"name": {"type": "string"}, "meta": {
        "type": "object", "properties": {}, "additionalProperties": False}}}
    assert body(OpenAIChatProvider(model="gpt-5", api_key="k"), json=closed)["response_format"]["json_schema"]["strict"] is True
    assert body(ResponsesProvider(model="gpt-5", api_key="k"), [ToolDefinition("save", "", closed)])["tools"][0]["strict"] is True


# --------------------------------------------------------------------------- Anthropic


def test_anthropic_second_uncached_system_block() -> None:
    b = body(AnthropicProvider(model="claude-sonnet-4-6", api_key="k"), json=PERSON)
    assert b["system"] == [
        {"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": schema_prompt(PERSON)},
    ]
    p = AnthropicProvider(model="claude-sonnet-4-6", api_key="k")
    b = p.build_request(p.prepare([UserMessage("x")]), None, CallOptions(json=PERSON), stream=True).body
    assert b["system"] == [{"type": "text", "text": schema_prompt(PERSON)}]
    assert len(body(p)["system"]) == 1  # without json= only the cached block


# --------------------------------------------------------------------------- Gemini


def test_gemini_3_response_json_schema() -> None:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **LOOSE, "additionalProperties": True}
    gen = body(GeminiProvider(model="gemini-3-flash-preview", api_key="k"), json=schema)["generationConfig"]
    assert gen == {"responseMimeType": "application/json", "responseJsonSchema": LOOSE}
    gen = body(GeminiProvider(model="gemini-3-flash-preview", api_key="k"), TOOLS, json=PERSON)["generationConfig"]
    assert gen["responseJsonSchema"] == PERSON  # Gemini 3 takes a schema beside tools


def test_gemini_2_with_tools_is_forced_to_the_prompt() -> None:
    b = body(GeminiProvider(model="gemini-2.5-flash", api_key="k"), TOOLS, json=PERSON)
    assert "generationConfig" not in b
    assert b["systemInstruction"]["parts"] == [{"text": "You are terse."}, {"text": schema_prompt(PERSON)}]
    b = body(GeminiProvider(model="gemini-2.5-flash", api_key="k"), json=PERSON)  # no tools: enforced
    assert b["generationConfig"]["responseJsonSchema"] == PERSON
    b = body(GeminiProvider(model="gemini-3-flash-preview", api_key="k"), TOOLS, json=PERSON, json_with_tools="prompt")
    assert "generationConfig" not in b and b["systemInstruction"]["parts"][-1] == {"text": schema_prompt(PERSON)}


def test_gemini_object_only_sets_the_mime_type() -> None:
    gen = body(GeminiProvider(model="gemini-3-flash-preview", api_key="k"), json="object")["generationConfig"]
    assert gen == {"responseMimeType": "application/json"}


# --------------------------------------------------------------------------- the recording


def _recorded() -> list[Any]:
    if not UPSTREAM.is_dir():
        return []
    found = []
    for c in cases(wire="gemini"):
        gen = c.request.get("generationConfig") or {}
        if "responseSchema" in gen or "responseJsonSchema" in gen:
            found.append(c)
    return found


def _lower_types(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: (v.lower() if k == "type" and isinstance(v, str) else _lower_types(v))
                for k, v in node.items() if k != "property_ordering"}
    return node


@pytest.mark.upstream
def test_gemini_recording_structured_request_and_answer(upstream_dir: Any) -> None:
    recorded = _recorded()
    assert recorded, "the mirascope Gemini strict-mode recording carries responseSchema"
    for case in recorded:
        imported = gemini.import_request(case.url, case.request)
        assert "json" in imported.options, case.id
        p = gemini.replay_provider(case.url, case.request, chopped_transport(case.status, case.body, seed=7))
        opts = {k: v for k, v in imported.options.items() if k != "effort"}
        wr = p.build_request(p.prepare(imported.messages), imported.tools, CallOptions(**opts), stream=True)
        gen = wr.body["generationConfig"]
        rec = case.request["generationConfig"]
        assert gen["responseMimeType"] == rec["responseMimeType"] == "application/json"
        want = _lower_types(rec["responseSchema"])
        assert gen["responseJsonSchema"] == want
        assert gen["responseJsonSchema"]["required"] == rec["responseSchema"]["required"]
        # the recorded answer reads back through parse_json_answer into the recorded schema
        turn = collect_turn(p.create_stream(imported.messages, imported.tools, **opts))
        got = pk_structured.parse_json_answer(turn.message.content)
        assert got.ok, got.error
        assert set(got.value) == set(rec["responseSchema"]["required"])
        assert got.value["answer"] == got.value["integer_a"] + got.value["integer_b"] == 4  # "2 + 2"


# --------------------------------------------------------------------------- importers, per wire

# Constructed request bodies (no shared recording carries structured output on these wires):
# each importer must read the option back, and the request we then build must carry the same field.


def test_chat_importer_round_trip_constructed() -> None:
    rf = {"type": "json_schema", "json_schema": {"name": "person", "schema": PERSON, "strict": True}}
    recorded = {"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}], "response_format": rf,
                "service_tier": "flex", "stream": True}
    imp = openai_chat.import_request("https://api.openai.com/v1/chat/completions", recorded)
    p = OpenAIChatProvider(model="gpt-5", api_key="k")
    b = p.build_request(p.prepare(imp.messages), imp.tools, CallOptions(**imp.options), stream=True).body
    assert b["response_format"] == rf and b["service_tier"] == "flex"
    recorded["response_format"] = {"type": "json_object"}
    imp = openai_chat.import_request("https://api.openai.com/v1/chat/completions", recorded)
    assert imp.options["json"] == "object"


def test_responses_importer_round_trip_constructed() -> None:
    fmt = {"type": "json_schema", "name": "person", "schema": PERSON, "strict": True}
    recorded = {"model": "gpt-5", "input": [{"role": "user", "content": "hi"}], "text": {"format": fmt}, "stream": True}
    imp = openai_responses.import_request("https://api.openai.com/v1/responses", recorded)
    p = ResponsesProvider(model="gpt-5", api_key="k")
    b = p.build_request(p.prepare(imp.messages), imp.tools, CallOptions(**imp.options), stream=True).body
    assert b["text"] == {"format": fmt}


def test_anthropic_carries_the_schema_as_its_prompt_block_constructed() -> None:
    # Anthropic has no response-format field: the option is the second system block, which an
    # importer reads back as a system message (text) - the request rebuilt carries the same text.
    p = AnthropicProvider(model="claude-sonnet-4-6", api_key="k")
    sent = p.build_request(p.prepare(HISTORY), None, CallOptions(json=PERSON), stream=True).body
    imp = anthropic.import_request("https://api.anthropic.com/v1/messages", json.loads(json.dumps(sent)))
    again = p.build_request(p.prepare(imp.messages), imp.tools, CallOptions(**imp.options), stream=True).body
    assert schema_prompt(PERSON) in again["system"][0]["text"]
