"""What the Anthropic adapter sends: headers, system, turn shape, tools, thinking, replay.

Requests are built with ``build_request`` (no network) or caught by an ``httpx.MockTransport``
handler; expected values are written from the Messages API's documented shape.
"""

from __future__ import annotations

import json

import httpx
import pytest

import providerkit_nb as pk
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
)
from providerkit_nb.core.tools import ToolDefinition
from providerkit_nb.dialects import from_anthropic_messages
from providerkit_nb.providers import anthropic as a
from providerkit_nb.wire import anthropic as w
from providerkit_nb.wire.options import CallOptions

from .anthropic_cases import UPSTREAM, anthropic_cases, end, serving, sse, start, text_block

SIG = "EqQBCkYIBxgCKkBsigned"
THINK = {"type": "thinking", "thinking": "Check the file first.", "signature": SIG}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3redacted"}
READ = ToolDefinition("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
LS = ToolDefinition("ls", "", {"type": "object", "properties": {}})


# no request leaves build(); the transport only spares each provider a real client
NO_NETWORK = httpx.MockTransport(lambda request: httpx.Response(599))


def build(messages, tools=None, model="claude-sonnet-4-5", provider=None, **opts):
    p = provider or a.AnthropicProvider(model=model, api_key="sk-ant-test-key", transport=NO_NETWORK)
    return p.build_request(p.prepare(messages), tools, CallOptions(**opts), stream=True)


def tool_loop(items=None, provider="anthropic"):
    """user -> assistant(thinking?, text, call) -> tool result: a request continuing a tool loop."""
    return [
        SystemMessage("You are terse."),
        UserMessage("What's in README.md?"),
        AssistantMessage(
            "Reading it.",
            reasoning="Check the file first.",
            reasoning_items=ReasoningItems(provider, items) if items is not None else None,
            tool_calls=[ToolCall("toolu_01", "read_file", '{"path": "README.md"}')],
        ),
        ToolMessage("toolu_01", "read_file", "# Hello"),
    ]


# ----------------------------------------------------------------------------- headers and body


def test_headers_key_version_and_secret_hygiene():
    seen: list[httpx.Request] = []
    body = sse(start(), *text_block(0, "hi"), *end())
    p = a.AnthropicProvider(model="claude-sonnet-4-5", api_key="sk-ant-test-key", transport=serving(200, body, seen=seen))
    turn = pk.collect_turn(p.create_stream([UserMessage("hello")]))
    assert turn.message.content == "hi"
    req = seen[0]
    assert str(req.url) == "https://api.anthropic.com/v1/messages"
    assert req.headers["x-api-key"] == "sk-ant-test-key"
    assert req.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in req.headers
    assert "sk-ant-test-key" not in repr(p)
    assert "sk-ant-test-key" not in repr(p.build_request([UserMessage("x")], None, CallOptions(), stream=True))


def test_bearer_presets_send_authorization_and_their_headers():
    c = pk.preset("claude", api_key="oauth-token-123", transport=NO_NETWORK)
    wr = c.build_request([UserMessage("x")], None, CallOptions(), stream=True)
    assert wr.headers["authorization"] == "Bearer oauth-token-123"
    assert "x-api-key" not in wr.headers
    assert c.headers["anthropic-beta"] == "claude-code-20250219,oauth-2025-04-20"
    assert c.replay_tag == "anthropic"  # same server as the key preset: signatures verify there
    z = pk.preset("zai", api_key="zai-key-123", transport=NO_NETWORK)
    assert z.replay_tag == "zai" and z.build_request([UserMessage("x")], None, CallOptions(), stream=True).body["max_tokens"] == 65536


def test_session_header_when_configured():
    p = a.AnthropicProvider(model="minimax-m3", api_key="k" * 8, session_header="x-opencode-session", transport=NO_NETWORK)
    wr = p.build_request([UserMessage("x")], None, CallOptions(session_id="conv-7"), stream=True)
    assert wr.headers["x-opencode-session"] == "conv-7"


def test_system_is_one_cached_block_and_max_tokens_defaults():
    wr = build([SystemMessage("Be terse."), SystemMessage("Answer in French."), UserMessage("hi")])
    assert wr.body["system"] == [{"type": "text", "text": "Be terse.\n\nAnswer in French.", "cache_control": {"type": "ephemeral"}}]
    assert wr.body["max_tokens"] == 8192
    assert wr.body["stream"] is True
    assert build([UserMessage("hi")], max_tokens=500).body["max_tokens"] == 500
    assert "system" not in build([UserMessage("hi")]).body


def test_parallel_results_and_following_user_text_form_one_turn_results_first():
    msgs = [
        UserMessage("two files"),
        AssistantMessage("", tool_calls=[ToolCall("t1", "read_file", '{"path":"a"}'), ToolCall("t2", "read_file", '{"path":"b"}')]),
        ToolMessage("t1", "read_file", "A"),
        ToolMessage("t2", "read_file", "B", images=[ImagePart("image/png", "iVBOR")]),
        UserMessage("and now?"),
    ]
    turns = build(msgs, [READ]).body["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[1]["content"] == [
        {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a"}},
        {"type": "tool_use", "id": "t2", "name": "read_file", "input": {"path": "b"}},
    ]
    assert turns[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "A"},
        {
            "type": "tool_result",
            "tool_use_id": "t2",
            "content": [{"type": "text", "text": "B"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}}],
        },
        {"type": "text", "text": "and now?"},
    ]


def test_consecutive_user_and_assistant_messages_merge():
    msgs = [UserMessage("a"), UserMessage([TextPart("b"), ImagePart("image/jpeg", "/9j/")]), AssistantMessage("x"), AssistantMessage("y")]
    turns = build(msgs).body["messages"]
    assert turns == [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"},
                                     {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/"}}]},
        {"role": "assistant", "content": [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}]},
    ]


def test_empty_text_is_never_sent_and_files():
    msgs = [UserMessage([TextPart(""), FilePart("application/pdf", "JVBER", "spec.pdf")]), AssistantMessage(""), UserMessage("")]
    turns = build(msgs).body["messages"]
    assert turns == [{"role": "user", "content": [
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBER"}, "title": "spec.pdf"}]}]
    with pytest.raises(ProviderError) as info:
        build([UserMessage([FilePart("audio/wav", "UklGR")])])
    assert info.value.kind == "invalid" and "PDF" in str(info.value)


@pytest.mark.parametrize(
    "raw, expected",
    [
        ('{"path": "README.md"}', {"path": "README.md"}),
        ("", {}),
        ('{"path": "READ', {"path": "READ"}),  # cut off mid-string: salvaged
        ('{}{"path":"b"}', {"path": "b"}),  # two objects glued: the last wins
    ],
)
def test_tool_use_input_comes_from_the_raw_arguments(raw, expected):
    msgs = [UserMessage("x"), AssistantMessage("", tool_calls=[ToolCall("t1", "read_file", raw)]), ToolMessage("t1", "read_file", "ok")]
    assert build(msgs, [READ]).body["messages"][1]["content"][0]["input"] == expected


def test_tool_schema_root_union_is_merged_and_draft_keys_dropped():
    t = ToolDefinition("f", "d", {"$schema": "x", "anyOf": [{"properties": {"a": {"type": "string"}}, "required": ["a"]},
                                                       {"properties": {"b": {"type": "integer"}}}]})
    sent = build([UserMessage("x")], [t]).body["tools"][0]
    assert sent == {"name": "f", "description": "d", "input_schema": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a"]}}


# ----------------------------------------------------------------------------- tool choice


@pytest.mark.parametrize(
    "choice, sent",
    [("auto", {"type": "auto"}), ("none", {"type": "none"}), ("required", {"type": "any"}), ({"name": "ls"}, {"type": "tool", "name": "ls"})],
)
def test_tool_choice_mapping(choice, sent):
    assert build([UserMessage("x")], [READ, LS], tool_choice=choice).body["tool_choice"] == sent


def test_disable_parallel_tool_use():
    body = build([UserMessage("x")], [READ], parallel_tool_calls=False).body
    assert body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    body = build([UserMessage("x")], [READ], parallel_tool_calls=False, tool_choice="required").body
    assert body["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}
    assert build([UserMessage("x")], [READ], parallel_tool_calls=False, tool_choice="none").body["tool_choice"] == {"type": "none"}
    assert "tool_choice" not in build([UserMessage("x")], [READ], parallel_tool_calls=True).body
    assert "tool_choice" not in build([UserMessage("x")], None, parallel_tool_calls=False).body


def test_models_that_refuse_forced_tools_get_auto_with_only_the_named_tool():
    body = build([UserMessage("x")], [READ, LS], model="claude-opus-5-5", tool_choice={"name": "ls"}).body
    assert "tool_choice" not in body
    assert [t["name"] for t in body["tools"]] == ["ls"]
    body = build([UserMessage("x")], [READ, LS], model="claude-opus-4-7", tool_choice={"name": "ls"}).body
    assert body["tool_choice"] == {"type": "tool", "name": "ls"} and len(body["tools"]) == 2


# ----------------------------------------------------------------------------- thinking table


@pytest.mark.parametrize(
    "model, effort, fields",
    [
        # adaptive families: graded effort
        ("claude-opus-4-6", "high", {"thinking": {"type": "adaptive"}, "output_config": {"effort": "high"}}),
        ("claude-fable-5-1-20260301", "max", {"thinking": {"type": "adaptive"}, "output_config": {"effort": "max"}}),
        # explicit none, per family
        ("claude-opus-5-5", "none", {"output_config": {"effort": "low"}}),
        ("claude-opus-5", "none", {"output_config": {"effort": "low"}}),
        ("claude-sonnet-5-5", "none", {"thinking": {"type": "between_tools"}}),
        ("claude-sonnet-5", "none", {"thinking": {"type": "disabled"}}),
        ("claude-opus-4-7", "none", {}),
        ("claude-sonnet-4-6", "none", {}),
        ("claude-some-future-9", "none", {"output_config": {"effort": "low"}}),  # unknown claude: as the latest
        # budget dialect: Claude <= 4.5 and non-Claude models
        ("claude-sonnet-4-5-20250929", "low", {"thinking": {"type": "enabled", "budget_tokens": 2048}}),
        ("claude-3-7-sonnet-20250219", "high", {"thinking": {"type": "enabled", "budget_tokens": 6553}}),  # 0.8 * 8192
        ("claude-haiku-4-5", "none", {}),
        ("MiniMax-M3", "medium", {"thinking": {"type": "enabled", "budget_tokens": 6553}}),
        # silence is never sent
        ("claude-opus-4-6", None, {}),
        ("claude-sonnet-4-5", None, {}),
    ],
)
def test_thinking_table(model, effort, fields):
    body = build([UserMessage("x")], model=model, effort=effort).body
    assert {k: body[k] for k in ("thinking", "output_config") if k in body} == fields


def test_none_differs_from_silence_except_where_silence_is_off():
    for model in ("claude-opus-5-5", "claude-sonnet-5", "claude-sonnet-5-5"):
        assert build([UserMessage("x")], model=model, effort="none").body != build([UserMessage("x")], model=model).body
    for model in ("claude-sonnet-4-5", "claude-opus-4-7"):
        assert build([UserMessage("x")], model=model, effort="none").body == build([UserMessage("x")], model=model).body


def test_explicit_none_sends_disabled_on_zai():
    z = pk.preset("zai", api_key="zai-key-123", transport=NO_NETWORK)
    assert build([UserMessage("x")], provider=z, effort="none").body["thinking"] == {"type": "disabled"}
    assert build([UserMessage("x")], provider=z).body["thinking"] == {"type": "disabled"}
    assert build([UserMessage("x")], provider=z, effort="low").body["thinking"] == {"type": "enabled", "budget_tokens": 2048}


def test_sampling_is_dropped_when_thinking_or_refused():
    assert build([UserMessage("x")], model="claude-sonnet-4-5", temperature=0.2, effort="low").body.get("temperature") is None
    assert build([UserMessage("x")], model="claude-sonnet-4-5", temperature=0.2).body["temperature"] == 0.2
    assert build([UserMessage("x")], model="claude-sonnet-4-6", top_p=0.9).body["top_p"] == 0.9
    assert "top_p" not in build([UserMessage("x")], model="claude-opus-4-7", top_p=0.9).body
    assert build([UserMessage("x")], stop=["END"]).body["stop_sequences"] == ["END"]


def test_a_tiny_max_tokens_cannot_think_on_claude():
    assert "thinking" not in build([UserMessage("x")], model="claude-sonnet-4-5", effort="low", max_tokens=1000).body


def test_forced_tool_suppresses_budget_thinking():
    assert "thinking" not in build([UserMessage("x")], [READ], model="claude-sonnet-4-5", effort="low", tool_choice="required").body


# ----------------------------------------------------------------------------- signed reasoning replay


def test_signed_blocks_go_back_unchanged_and_in_place_so_the_loop_keeps_thinking():
    body = build(tool_loop([THINK, REDACTED]), [READ], effort="low").body
    assert body["messages"][1]["content"] == [
        THINK,
        REDACTED,
        {"type": "text", "text": "Reading it."},
        {"type": "tool_use", "id": "toolu_01", "name": "read_file", "input": {"path": "README.md"}},
    ]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    # the readable reasoning is not sent a second time as text: it lives in the signed block only
    assert json.dumps(body).count("Check the file first.") == 1


def test_a_loop_without_signed_blocks_runs_without_budget_thinking():
    body = build(tool_loop(None), [READ], effort="low").body
    assert "thinking" not in body
    assert body["messages"][1]["content"][0] == {"type": "text", "text": "Reading it."}


def test_blocks_signed_elsewhere_are_dropped():
    body = build(tool_loop([THINK], provider="zai"), [READ], effort="low").body
    assert all(b["type"] not in ("thinking", "redacted_thinking") for b in body["messages"][1]["content"])
    assert SIG not in json.dumps(body)
    # and the zai provider replays its own
    z = pk.preset("zai", api_key="zai-key-123", transport=NO_NETWORK)
    assert build(tool_loop([THINK], provider="zai"), [READ], provider=z, effort="low").body["messages"][1]["content"][0] == THINK


def test_thinking_off_drops_blocks_from_the_last_assistant_turn_only():
    msgs = [
        UserMessage("q1"),
        AssistantMessage("a1", reasoning_items=ReasoningItems("anthropic", [THINK])),
        UserMessage("q2"),
        AssistantMessage("a2", reasoning_items=ReasoningItems("anthropic", [dict(THINK, signature="S2")])),
        UserMessage("q3"),
    ]
    turns = build(msgs, model="claude-sonnet-4-5").body["messages"]
    assert turns[1]["content"][0] == THINK  # earlier turns keep theirs
    assert turns[3]["content"] == [{"type": "text", "text": "a2"}]
    # with thinking on, the last one keeps its block too
    assert build(msgs, model="claude-sonnet-4-5", effort="low").body["messages"][3]["content"][0]["signature"] == "S2"


def test_a_thinking_only_assistant_turn_is_not_sent():
    msgs = [UserMessage("q"), AssistantMessage("", reasoning_items=ReasoningItems("anthropic", [THINK])), UserMessage("again")]
    assert build(msgs).body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "q"}, {"type": "text", "text": "again"}]}]


@pytest.mark.parametrize(
    "make, model",
    [(pk.openai, "gpt-5-mini"), (pk.responses, "gpt-5"), (pk.gemini, "gemini-2.5-flash"), (pk.preset, "deepseek")],
    ids=["openai-chat", "responses", "gemini", "deepseek"],
)
def test_drop_to_another_provider(make, model):
    """The same history sent to any other wire carries no Anthropic signature or block, and
    still carries the call and its result."""
    other = make(model, api_key="sk-test-key", transport=NO_NETWORK) if make is pk.preset else make(model=model, api_key="sk-test-key", transport=NO_NETWORK)
    wr = other.build_request(other.prepare(tool_loop([THINK, REDACTED])), [READ], CallOptions(effort="low"), stream=True)
    text = json.dumps(wr.body)
    assert SIG not in text and REDACTED["data"] not in text and "redacted_thinking" not in text
    assert "toolu_01" in text and "# Hello" in text


def test_turn_from_a_stream_goes_back_exactly():
    """Stream a thinking + tool_use turn, then send the history on: the blocks are byte-equal."""
    stream = sse(
        start(),
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Let me "}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "look."}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "SIG1"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking", "data": "RED1"}},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_9", "name": "ls", "input": {}}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": ""}},
        {"type": "content_block_stop", "index": 2},
        *end("tool_use"),
    )
    p = a.AnthropicProvider(model="claude-sonnet-4-5", api_key="sk-ant-test-key", transport=serving(200, stream))
    turn = pk.collect_turn(p.create_stream([UserMessage("list")], [LS], effort="low"))
    assert turn.message.reasoning == "Let me look."
    assert turn.finish_reason == "tool_calls"
    history = [UserMessage("list"), turn.message, ToolMessage("toolu_9", "ls", "a b")]
    sent = build(history, [LS], effort="low").body
    assert sent["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "Let me look.", "signature": "SIG1"},
        {"type": "redacted_thinking", "data": "RED1"},
        {"type": "tool_use", "id": "toolu_9", "name": "ls", "input": {}},
    ]
    assert sent["thinking"]["type"] == "enabled"


# ----------------------------------------------------------------------------- round trips


def _norm(turns):
    """Recorded requests spell some things differently; compare what the API reads."""
    out = []
    for t in turns:
        content = t["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        out.append({"role": t["role"], "content": [{k: v for k, v in b.items() if k not in ("cache_control", "is_error")} for b in content]})
    return out


ROUND_TRIPS = [c for c in (anthropic_cases() if UPSTREAM.is_dir() else []) if len(c.request.get("messages", [])) > 1]


@pytest.mark.upstream
def test_round_trip_set():
    # tool loops (with and without thinking) and a multi-turn thinking conversation
    assert len(ROUND_TRIPS) == 5
    assert sum('"signature"' in json.dumps(c.request) for c in ROUND_TRIPS) == 3


@pytest.mark.upstream
@pytest.mark.parametrize("case", ROUND_TRIPS, ids=lambda c: c.id)
def test_request_from_the_imported_history_equals_the_recorded_one(case):
    imp = w.import_request(case.url, case.request)
    p = a.replay_provider(case.url, case.request, NO_NETWORK)
    body = p.build_request(p.prepare(imp.messages), imp.tools, CallOptions(**imp.options), stream=imp.stream).body
    assert _norm(body["messages"]) == _norm(case.request["messages"])
    strip = lambda xs: [{k: v for k, v in x.items() if k != "cache_control"} for x in xs or []]  # noqa: E731
    assert strip(body.get("system")) == strip(case.request.get("system"))
    assert strip(body.get("tools")) == strip(case.request.get("tools"))
    assert body["model"] == case.request["model"] and body["max_tokens"] == case.request["max_tokens"]
    # a recorded request that thinks still thinks when we send it (signed blocks lead the loop)
    assert ("thinking" in body) == ("thinking" in case.request)


# ----------------------------------------------------------------------------- importer


def test_importer_keeps_blocks_results_and_images():
    msgs = w.from_anthropic_messages(
        [
            {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}}]},
            {"role": "assistant", "content": [THINK, REDACTED, {"type": "text", "text": "ok"},
                                              {"type": "tool_use", "id": "t1", "name": "ls", "input": {"dir": "é"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "a"}, {"type": "image", "source": {"type": "base64", "media_type": "image/gif", "data": "R0lG"}}]},
                                         {"type": "text", "text": "next"}]},
        ],
        system=[{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
    )
    assert [m.to_dict() for m in msgs] == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image", "mime_type": "image/png", "data": "iVBOR"}]},
        {"role": "assistant", "content": "ok", "reasoning": "Check the file first.",
         "reasoning_items": {"provider": "anthropic", "items": [THINK, REDACTED]},
         "tool_calls": [{"id": "t1", "name": "ls", "arguments": '{"dir":"é"}'}]},
        {"role": "tool", "tool_call_id": "t1", "name": "ls", "content": "a", "images": [{"type": "image", "mime_type": "image/gif", "data": "R0lG"}]},
        {"role": "user", "content": "next"},
    ]
    assert from_anthropic_messages is w.from_anthropic_messages


def test_importer_refuses_what_it_cannot_hold():
    with pytest.raises(ValueError, match="not base64"):
        w.from_anthropic_messages([{"role": "user", "content": [{"type": "image", "source": {"type": "url", "url": "https://x"}}]}])
    with pytest.raises(ValueError, match="server_tool_use"):
        w.from_anthropic_messages([{"role": "assistant", "content": [{"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}}]}])
    with pytest.raises(ValueError, match="role 'system'"):
        w.from_anthropic_messages([{"role": "system", "content": "x"}])
