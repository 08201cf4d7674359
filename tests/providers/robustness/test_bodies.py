"""Bad bodies outside the frame parsers: damaged compression, hostile error bodies, in-stream
error frames of the wrong shape, the malformed error's own contract, and ``loads`` of
foreign data. Each ends in this library's own error, naming the wire (or the field's path)."""

from __future__ import annotations

import gzip
import json
from typing import Any

import httpx
import pytest

import providerkit_nb as pk
from providerkit_nb.core.errors import ProviderError, is_retryable
from providerkit_nb.core.messages import MessageFormatError
from providerkit_nb.messages import loads
from providerkit_nb.transport.classify import http_error, stream_error

from ..local_server import LocalServer

HI = [{"role": "user", "content": "hi"}]
GOOD_SSE = b'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
KEY = "sk-test-0123456789abcdefghij"


def _mock(status: int, body: bytes, **headers: str) -> httpx.MockTransport:
    return httpx.MockTransport(
        lambda r: httpx.Response(status, headers={"content-type": "text/event-stream", **headers}, content=body)
    )


def _outcome(provider: Any, stream: bool = True) -> Any:
    try:
        if stream:
            return pk.collect_turn(provider.create_stream(HI))
        return provider.complete(HI)
    finally:
        provider.close()


def _damaged_gzip() -> bytes:
    body = gzip.compress(GOOD_SSE)
    return body[:20] + bytes([body[20] ^ 0xFF]) + body[21:]


@pytest.mark.parametrize("stream", [True, False])
def test_a_damaged_gzip_body_is_a_malformed_response_over_httpx(stream: bool) -> None:
    p = pk.openai(model="m", api_key=KEY, transport=_mock(200, _damaged_gzip(), **{"content-encoding": "gzip"}))
    with pytest.raises(ProviderError) as ei:
        _outcome(p, stream)
    assert ei.value.provider == "openai" and ei.value.kind == "overload"
    assert "could not be decompressed" in str(ei.value)


def test_a_damaged_gzip_body_is_a_provider_error_over_requests() -> None:
    with LocalServer() as srv:
        srv.answer(200, _damaged_gzip(), content_type="text/event-stream", seed=3, max_piece=50,
                   headers={"content-encoding": "gzip"})
        p = pk.openai(model="m", api_key=KEY, base_url=srv.url + "/v1", transport="requests", id="openai")
        with pytest.raises(ProviderError) as ei:
            _outcome(p)
    assert ei.value.provider == "openai" and ei.value.message


def test_the_malformed_kind_is_retried_before_the_first_chunk() -> None:
    """The README's promise: a malformed frame from a gateway is worth one more try."""
    frames = [b'data: {"choices":[{"index":0,"delta":[1]}]}\n\n', GOOD_SSE]
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=frames[len(calls) - 1])

    p = pk.with_retry(pk.openai(model="m", api_key=KEY, transport=httpx.MockTransport(handler)), base=0, cap=0)
    assert pk.collect_turn(p.create_stream(HI)).message.content == "hi"
    assert len(calls) == 2


def test_the_malformed_error_names_wire_event_type_field_and_keeps_the_partial() -> None:
    body = (
        b'event: message_start\ndata: {"type":"message_start","message":{"model":"claude-x","usage":{"input_tokens":3}}}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0}\n\n'
    )
    p = pk.anthropic(model="claude-x", api_key=KEY, transport=_mock(200, body))
    with pytest.raises(ProviderError) as ei:
        _outcome(p)
    err = ei.value
    assert str(err).startswith("anthropic stream event 4 (content_block_delta): 'delta' missing")
    assert err.kind == "overload" and err.code == "malformed_response" and is_retryable(err)
    assert err.partial.message.content == "Hel" and not err.partial.finished
    assert KEY not in str(err) and KEY not in (err.body or "")


def test_an_excerpt_never_carries_a_key() -> None:
    body = b'data: {"choices":[{"index":0,"delta":{"content":{"leak":"' + KEY.encode() + b'"}}}]}\n\n'
    p = pk.openai(model="m", api_key=KEY, transport=_mock(200, body))
    with pytest.raises(ProviderError) as ei:
        _outcome(p)
    assert "openai stream event 1" in str(ei.value)
    assert KEY not in str(ei.value) and KEY not in (ei.value.body or "") and KEY not in repr(ei.value)


@pytest.mark.parametrize(
    "body",
    ["", "null", "[]", "[1, 2]", '{"error": [1]}', '{"error": {"message": {"a": 1}}}', "[" * 5000 + "]" * 5000,
     '{"error": ' * 3000 + "1" + "}" * 3000, "\udcff not utf-8", "<html><title>502</title>"],
)
@pytest.mark.parametrize("status", [400, 429, 500, 529])
def test_any_error_body_classifies(status: int, body: str) -> None:
    err = http_error("anthropic", status, {"retry-after": "x"}, body, secrets=[KEY])
    assert isinstance(err, ProviderError) and err.provider == "anthropic" and err.message
    frame = stream_error("anthropic", body, secrets=[KEY])
    assert isinstance(frame, ProviderError) and frame.message


def test_an_in_stream_error_frame_of_any_shape_is_a_provider_error() -> None:
    for payload in ({"type": "error", "error": [1, 2]}, {"type": "error"}, {"type": "error", "error": "boom"}):
        body = b"event: error\ndata: " + json.dumps(payload).encode() + b"\n\n"
        p = pk.anthropic(model="claude-x", api_key=KEY, transport=_mock(200, body))
        with pytest.raises(ProviderError) as ei:
            _outcome(p)
        assert ei.value.provider == "anthropic" and ei.value.message


# ----------------------------------------------------------------------------- loads


def test_loads_of_foreign_data_names_the_path_of_the_bad_field() -> None:
    doc = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u"},
        {"role": "assistant", "content": "a"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "name": "t", "arguments": {"x": 1}}]},
    ]
    with pytest.raises(MessageFormatError) as ei:
        loads(json.dumps(doc))
    assert "[3].tool_calls[0].arguments: expected str, got dict" in str(ei.value)
    assert ei.value.path == "[3].tool_calls[0].arguments"
    doc[3] = {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image", "mime_type": 5}]}
    with pytest.raises(MessageFormatError, match=r"\[3\]\.content\[1\]\.mime_type: expected str, got int"):
        loads(json.dumps(doc))


@pytest.mark.parametrize("raw", [b"\xff\xfe[", "[" * 100000 + "]" * 100000, b"", "[1]", '[{"role": ["user"]}]'])
def test_loads_of_anything_is_a_message_format_error(raw: Any) -> None:
    with pytest.raises(MessageFormatError):
        loads(raw)
