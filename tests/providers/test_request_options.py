"""Small request options: service_tier, strip_reasoning when effort is none, and
on_activity on every byte read - request bodies checked field by field, refusals checked to
happen before any request reaches a real local server."""

from __future__ import annotations

from typing import Any

import pytest

from providerkit_nb.core.errors import ErrorKind, ProviderError
from providerkit_nb.core.messages import (
    AssistantMessage,
    ReasoningItems,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from providerkit_nb.core.turn import collect_turn
from providerkit_nb.providers.anthropic import AnthropicProvider
from providerkit_nb.providers.base import WireProvider
from providerkit_nb.providers.gemini import GeminiProvider
from providerkit_nb.providers.openai_chat import OpenAIChatProvider
from providerkit_nb.providers.openai_responses import ResponsesProvider
from providerkit_nb.wire.options import CallOptions

from .local_server import LocalServer


def _body(p: WireProvider, history: list[Any], **opts: Any) -> dict[str, Any]:
    o = CallOptions(**opts)
    return p.build_request(p.prepare(history, o), None, o, stream=True).body


@pytest.fixture(scope="module")
def server() -> Any:
    with LocalServer() as srv:
        yield srv


# --------------------------------------------------------------------------- service_tier


def test_service_tier_on_chat_and_responses() -> None:
    h = [UserMessage("hi")]
    assert _body(OpenAIChatProvider(model="gpt-5", api_key="k"), h, service_tier="priority")["service_tier"] == "priority"
    assert _body(ResponsesProvider(model="gpt-5", api_key="k"), h, service_tier="flex")["service_tier"] == "flex"
    assert "service_tier" not in _body(OpenAIChatProvider(model="gpt-5", api_key="k"), h)
    with pytest.raises(ValueError, match="service_tier"):
        CallOptions(service_tier="cheap")


@pytest.mark.parametrize(
    "make",
    [lambda url: AnthropicProvider(model="claude-sonnet-4-6", api_key="k", base_url=url),
     lambda url: GeminiProvider(model="gemini-2.5-flash", api_key="k", base_url=url)],
    ids=["anthropic", "gemini"],
)
def test_service_tier_is_refused_before_any_request(server: Any, make: Any) -> None:
    server.requests.clear()
    with pytest.raises(ProviderError) as info:
        list(make(server.url).create_stream([UserMessage("hi")], service_tier="priority"))
    assert info.value.kind == ErrorKind.INVALID and "service_tier" in str(info.value)
    assert server.requests == []


# --------------------------------------------------------------------------- strip_reasoning

ENC = {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAA", "summary": []}


def _history(provider_tag: str) -> list[Any]:
    return [
        UserMessage("look it up"),
        AssistantMessage(
            "",
            reasoning="I should search.",
            reasoning_details=[{"type": "reasoning.text", "text": "I should search."}],
            reasoning_items=ReasoningItems(provider_tag, [ENC]),
            tool_calls=[ToolCall("c1", "search", '{"q":"x"}', thought_signature="sig-1")],
        ),
        ToolMessage("c1", "search", "found"),
    ]


def test_openrouter_stops_replaying_reasoning_details_when_effort_is_none() -> None:
    p = OpenAIChatProvider(model="openai/gpt-5-mini", api_key="k", id="openrouter", base_url="https://openrouter.ai/api/v1")
    on = _body(p, _history("openrouter"), effort="low")
    assert on["messages"][1]["reasoning_details"] == [{"type": "reasoning.text", "text": "I should search."}]
    off = _body(p, _history("openrouter"), effort="none")
    assert "reasoning_details" not in off["messages"][1]
    assert off["messages"][1]["tool_calls"][0]["id"] == "c1"  # the calls themselves stay


def test_responses_stops_replaying_reasoning_items_when_effort_is_none() -> None:
    p = ResponsesProvider(model="gpt-5", api_key="k")
    on = _body(p, _history("openai-responses"), effort="low")
    assert ENC in on["input"]
    off = _body(p, _history("openai-responses"), effort="none")
    assert not any(it.get("type") == "reasoning" for it in off["input"])
    assert [it.get("type") for it in off["input"]][1:] == ["function_call", "function_call_output"]


def test_deepseek_drops_reasoning_content_when_thinking_is_off() -> None:
    p = OpenAIChatProvider(model="deepseek-reasoner", api_key="k", id="deepseek", base_url="https://api.deepseek.com")
    assert "reasoning_content" not in _body(p, _history("deepseek"), effort="none")["messages"][1]


def test_gemini_keeps_the_call_signature_when_stripping() -> None:
    p = GeminiProvider(model="gemini-2.5-flash", api_key="k")
    off = _body(p, _history("gemini"), effort="none")
    model_parts = off["contents"][1]["parts"]
    assert model_parts == [{"functionCall": {"id": "c1", "name": "search", "args": {"q": "x"}}, "thoughtSignature": "sig-1"}]


def test_the_constructor_effort_counts_and_strip_reasoning_overrides() -> None:
    p = ResponsesProvider(model="gpt-5", api_key="k", effort="none")
    assert not any(it.get("type") == "reasoning" for it in _body(p, _history("openai-responses"))["input"])
    assert ENC in _body(p, _history("openai-responses"), strip_reasoning=False)["input"]
    q = ResponsesProvider(model="gpt-5", api_key="k")
    assert not any(it.get("type") == "reasoning" for it in _body(q, _history("openai-responses"), strip_reasoning=True)["input"])


# --------------------------------------------------------------------------- on_activity

CHAT_BODY = (
    b'data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n'
    b": keep-alive\n\n"
    b'data: {"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)


def test_on_activity_fires_on_the_headers_and_every_read(server: Any) -> None:
    server.answer(200, CHAT_BODY, max_piece=5, seed=1)
    p = OpenAIChatProvider(model="m", api_key="k", base_url=server.url + "/v1")
    calls: list[int] = []
    turn = collect_turn(p.create_stream([UserMessage("hi")], on_activity=lambda: calls.append(1)))
    assert turn.message.content == "Hello"
    # the body went out in pieces of at most 5 bytes: at least one call per ~5 bytes, plus the headers
    assert len(calls) >= 1 + len(CHAT_BODY) // 64


def test_on_activity_counts_keepalives_too(server: Any) -> None:
    server.answer(200, b": ping\n\n" * 40 + CHAT_BODY, max_piece=8, seed=2)
    p = OpenAIChatProvider(model="m", api_key="k", base_url=server.url + "/v1")
    quiet: list[int] = []
    collect_turn(p.create_stream([UserMessage("hi")], on_activity=lambda: quiet.append(1)))
    server.answer(200, CHAT_BODY, max_piece=8, seed=2)
    fewer: list[int] = []
    collect_turn(p.create_stream([UserMessage("hi")], on_activity=lambda: fewer.append(1)))
    assert len(quiet) > len(fewer)


def test_on_activity_must_be_callable() -> None:
    with pytest.raises(TypeError, match="on_activity"):
        CallOptions(on_activity="yes")


def test_anthropic_leaves_the_choice_to_its_thinking_table() -> None:
    # claude-opus-5 still thinks at effort "none" (output_config effort low): its signed
    # thinking blocks must go back in a tool loop, so "none" alone does not strip them
    blocks = ReasoningItems("anthropic", [{"type": "thinking", "thinking": "plan", "signature": "s1"}])
    h = [UserMessage("go"), AssistantMessage("", reasoning="plan", reasoning_items=blocks,
                                             tool_calls=[ToolCall("c1", "search", "{}")]), ToolMessage("c1", "search", "r")]
    p = AnthropicProvider(model="claude-opus-5", api_key="k")
    kept = _body(p, h, effort="none")["messages"][1]["content"]
    assert kept[0] == {"type": "thinking", "thinking": "plan", "signature": "s1"}
    stripped = _body(p, h, effort="none", strip_reasoning=True)["messages"][1]["content"]
    assert [b["type"] for b in stripped] == ["tool_use"]


def test_call_options_are_keyword_only():
    # a new option must never shift another: positional construction is refused
    with pytest.raises(TypeError):
        CallOptions("conv-1")  # type: ignore[misc]
    assert CallOptions(session_id="conv-1").session_id == "conv-1"
