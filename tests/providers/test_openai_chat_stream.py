"""The Chat wire's stream parsing on constructed streams (edge cases the recordings lack), served
through httpx.MockTransport (the transport seam), and the stream's lifecycle on a real socket."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

import providerkit_nb as pk
from providerkit_nb.core.errors import ErrorKind, ProviderError
from providerkit_nb.providers.openai_chat import OpenAIChatProvider
from providerkit_nb.stream import TextDelta

from .cassette_loader import ChoppedStream

HELLO = [{"role": "user", "content": "hi"}]


def sse(*payloads: Any, done: bool = True) -> bytes:
    out = b"".join(b"data: " + json.dumps(p).encode() + b"\n\n" for p in payloads)
    return out + (b"data: [DONE]\n\n" if done else b"")


def ch(delta: dict[str, Any] | None = None, finish: str | None = None, index: int = 0, **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"id": "c1", "object": "chat.completion.chunk", "model": "m-1", **extra}
    d["choices"] = [] if delta is None else [{"index": index, "delta": delta, "finish_reason": finish}]
    return d


def provider(body: bytes, status: int = 200, seed: int = 3, **kw: Any) -> OpenAIChatProvider:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, headers={"content-type": "text/event-stream"}, stream=ChoppedStream(body, seed))

    kw.setdefault("id", "openai")
    return OpenAIChatProvider(model="m", api_key="sk-test-key-123456", transport=httpx.MockTransport(handler), **kw)


def turn(body: bytes, **kw: Any) -> pk.Turn:
    return pk.collect_turn(provider(body, **kw).create_stream(HELLO))


def test_tool_call_fragments_without_index_follow_position() -> None:
    body = sse(
        ch({"role": "assistant", "content": None}),
        ch({"tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": ""}},
                           {"id": "b", "type": "function", "function": {"name": "g", "arguments": "{}"}}]}),
        ch({"tool_calls": [{"function": {"arguments": '{"x":'}}]}),
        ch({"tool_calls": [{"function": {"arguments": "1}"}}]}),
        ch({}, "tool_calls"),
    )
    t = turn(body)
    assert [(c.id, c.name, c.arguments) for c in t.message.tool_calls] == [("a", "f", '{"x":1}'), ("b", "g", "{}")]
    assert t.finish_reason == "tool_calls"


def test_only_choice_zero_is_assembled() -> None:
    body = sse(ch({"content": "zero "}, index=0), ch({"content": "one"}, index=1), ch({"content": "again"}, index=0),
               ch({}, "stop", index=1), ch({}, "length", index=0))
    t = turn(body)
    assert (t.message.content, t.finish_reason) == ("zero again", "length")


def test_reasoning_fields_and_deepseek_usage() -> None:
    usage = {"prompt_tokens": 100, "completion_tokens": 40, "prompt_cache_hit_tokens": 64, "prompt_cache_miss_tokens": 36,
             "completion_tokens_details": {"reasoning_tokens": 30}}
    body = sse(ch({"role": "assistant", "content": None, "reasoning_content": ""}), ch({"reasoning_content": "think"}),
               ch({"content": None, "reasoning": "ing"}), ch({"content": "ok", "reasoning_content": None}),
               ch({}, "stop", usage=usage))
    t = turn(body, id="deepseek")
    assert (t.message.reasoning, t.message.content) == ("thinking", "ok")
    assert t.usage.to_dict() == {"input_tokens": 100, "cached_input_tokens": 64, "cache_write_tokens": 0,
                                 "output_tokens": 40, "reasoning_tokens": 30}


def test_reasoning_details_are_merged_into_whole_items() -> None:
    body = sse(
        ch({"reasoning": "a", "reasoning_details": [{"type": "reasoning.text", "text": "a", "index": 0, "format": "x"}]}),
        ch({"reasoning": "b", "reasoning_details": [{"type": "reasoning.text", "text": "b", "index": 0, "signature": None}]}),
        ch({"reasoning_details": [{"type": "reasoning.text", "text": "", "index": 0, "signature": "SIG"}]}),
        ch({"reasoning_details": [{"type": "reasoning.encrypted", "data": "ENC", "index": 1}]}),
        ch({"content": "hi"}, "stop", usage={"prompt_tokens": 1, "completion_tokens": 2, "cost": 0.5, "is_byok": False}),
    )
    t = turn(body, id="openrouter", base_url="https://openrouter.ai/api/v1")
    assert t.message.reasoning_details == [
        {"type": "reasoning.text", "text": "ab", "index": 0, "format": "x", "signature": "SIG"},
        {"type": "reasoning.encrypted", "data": "ENC", "index": 1},
    ]
    assert t.message.reasoning == "ab" and t.usage.reported_cost_usd == 0.5


def test_cost_only_from_openrouter_host() -> None:
    body = sse(ch({"content": "hi"}, "stop"), ch(None, usage={"prompt_tokens": 1, "completion_tokens": 2, "cost": 0.5}))
    assert turn(body).usage.reported_cost_usd is None


def test_finish_reason_without_done_is_complete_and_missing_both_is_a_cut() -> None:
    assert turn(sse(ch({"content": "hi"}), ch({}, "stop"), done=False)).message.content == "hi"
    with pytest.raises(ProviderError) as e:
        turn(sse(ch({"content": "half an ans"}), done=False))
    assert e.value.kind is ErrorKind.NETWORK and e.value.message == "openai: the stream ended before the turn did"
    assert e.value.partial.message.content == "half an ans" and not e.value.partial.finished


def test_empty_body_is_overload_and_keepalives_are_skipped() -> None:
    with pytest.raises(ProviderError) as e:
        turn(b"")
    assert e.value.kind is ErrorKind.OVERLOAD
    body = b": keep-alive\n\ndata: not json\n\n" + sse(ch({"content": "ok"}, "stop"))
    assert turn(body).message.content == "ok"


def test_error_frames_raise_classified_errors() -> None:
    with pytest.raises(ProviderError) as e:
        turn(sse(ch({"content": "x"}), {"error": {"code": 429, "message": "Rate limit exceeded"}}, done=False))
    assert (e.value.kind, e.value.status) == (ErrorKind.RATE, 429)
    groq = b'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\nevent: error\ndata: {"error":{"message":"Tool call validation failed","code":"tool_use_failed","status_code":400}}\n\n'
    with pytest.raises(ProviderError) as e:
        turn(groq, id="groq")
    assert (e.value.kind, e.value.code) == (ErrorKind.INVALID, "tool_use_failed")


def test_non_2xx_raises_before_any_chunk_and_never_shows_the_key() -> None:
    body = json.dumps({"error": {"message": "Incorrect API key provided: sk-test-key-123456", "code": "invalid_api_key"}}).encode()
    stream = provider(body, status=401).create_stream(HELLO)
    with pytest.raises(ProviderError) as e:
        next(iter(stream))
    assert e.value.kind is ErrorKind.AUTH and "sk-test-key-123456" not in str(e.value) + (e.value.body or "")


def test_model_info_and_usage_last_wins() -> None:
    body = sse(ch({"content": "a"}, usage={"prompt_tokens": 1, "completion_tokens": 1}),
               ch({}, "stop", usage={"prompt_tokens": 5, "completion_tokens": 7}))
    t = turn(body)
    assert (t.model, t.usage.input_tokens, t.usage.output_tokens) == ("m-1", 5, 7)


def test_complete_uses_the_non_stream_body() -> None:
    body = json.dumps({"id": "x", "model": "m-2", "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None, "reasoning_content": "hmm",
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}}]}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4, "prompt_tokens_details": {"cached_tokens": 2}}}).encode()
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(200, content=body)

    p = OpenAIChatProvider(model="m", api_key="k" * 20, transport=httpx.MockTransport(handler))
    t = p.complete(HELLO)
    assert "stream" not in seen[0] and "stream_options" not in seen[0]
    assert (t.message.reasoning, t.message.tool_calls[0].arguments, t.usage.cached_input_tokens, t.model) == ("hmm", '{"a":1}', 2, "m-2")


class _Endless(httpx.SyncByteStream):
    """A body that never ends; records when httpx closes it."""

    def __init__(self) -> None:
        self.closed = False

    def __iter__(self):  # type: ignore[override]
        yield sse(ch({"content": "one"}), done=False)
        while True:
            yield b": keep-alive\n\n"

    def close(self) -> None:
        self.closed = True


@pytest.mark.parametrize("how", ["close", "with", "break-then-close"])
def test_closing_the_stream_closes_the_response(how: str) -> None:
    body = _Endless()
    p = OpenAIChatProvider(model="m", api_key="k" * 20, transport=httpx.MockTransport(
        lambda r: httpx.Response(200, stream=body)))
    if how == "with":
        with p.create_stream(HELLO) as stream:
            for chunk in stream:
                if isinstance(chunk, TextDelta):
                    break
    else:
        stream = p.create_stream(HELLO)
        for chunk in stream:
            if isinstance(chunk, TextDelta):
                break
        stream.close()
    assert body.closed and stream.closed
