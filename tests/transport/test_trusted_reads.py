"""The SSE reader checks once per read whether orjson may parse that read's events (no run of 19
digits in it) and hands the parsers that answer on each event. What orjson would read otherwise
(an integer beyond 64 bits becomes a float) or refuses (NaN) must still read exactly as the
standard library reads it, on every path: ``SSEEvent.json()`` and the wires' own loops."""

from __future__ import annotations

import json
import math
from typing import Any

import httpx

import providerkit_nb as pk
from providerkit_nb.providers.anthropic import AnthropicProvider
from providerkit_nb.providers.openai_chat import OpenAIChatProvider
from providerkit_nb.transport.sse import iter_sse

BIG = 18446744073709551617  # 2**64 + 1: orjson alone reads 1.8446744073709552e19


def _read(*chunks: bytes) -> list[Any]:
    return [ev.json() for ev in iter_sse(iter(chunks), "p")]


def test_a_long_integer_reads_exactly_beside_short_events(parser: str) -> None:
    got = _read(b'data: {"n":1}\n\nevent: e\ndata: {"n":18446744073709551617}\n\ndata: {"n":2}\n\n')
    assert repr(got) == "[{'n': 1}, {'n': 18446744073709551617}, {'n': 2}]"


def test_a_long_integer_cut_across_reads_reads_exactly(parser: str) -> None:
    got = _read(b'data: {"n":1}\n\ndata: {"n":1844674407', b'3709551617}\n\ndata: {"n":3}\n\n')
    assert repr(got) == "[{'n': 1}, {'n': 18446744073709551617}, {'n': 3}]"


def test_what_orjson_refuses_is_read_by_the_standard_library(parser: str) -> None:
    got = _read(b'data: {"n":1}\n\ndata: {"x":NaN}\n\n')
    assert got[0] == {"n": 1} and math.isnan(got[1]["x"])


def _serving(*reads: bytes) -> httpx.MockTransport:
    """The body in these reads: the NaN frame in a read orjson is trusted with, the long count
    in another."""
    return httpx.MockTransport(
        lambda request: httpx.Response(200, headers={"content-type": "text/event-stream"}, content=iter(reads))
    )


def _anthropic(*payloads: str) -> bytes:
    return b"".join(f"event: {json.loads(p.replace('NaN', '0'))['type']}\ndata: {p}\n\n".encode() for p in payloads)


def test_anthropic_keeps_a_long_count_and_a_frame_orjson_refuses(parser: str) -> None:
    first = _anthropic(
        '{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}',
        '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
        '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}',
        '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"},"x":NaN}',
        '{"type":"ping"}',
        '{"type":"content_block_stop","index":0}',
    )
    last = _anthropic(
        '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":18446744073709551617}}',
        '{"type":"message_stop"}',
    )
    p = AnthropicProvider(model="c", api_key="sk-ant-test-key", transport=_serving(first, last))
    turn = pk.collect_turn(p.create_stream([pk.UserMessage("hi")]))
    assert turn.message.content == "Hello"
    assert turn.usage is not None and turn.usage.output_tokens == BIG and type(turn.usage.output_tokens) is int


def test_chat_keeps_a_long_count_and_a_frame_orjson_refuses(parser: str) -> None:
    frames = [
        '{"id":"c","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}',
        '{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"lo"}}],"x":NaN}',
        '{"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
        '{"id":"c","model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":18446744073709551617,"total_tokens":5}}',
        "[DONE]",
    ]
    first, last = (b"".join(f"data: {f}\n\n".encode() for f in part) for part in (frames[:3], frames[3:]))
    p = OpenAIChatProvider(model="m", api_key="sk-test-key-123456", transport=_serving(first, last))
    turn = pk.collect_turn(p.create_stream([pk.UserMessage("hi")]))
    assert turn.message.content == "Hello"
    assert turn.usage is not None and turn.usage.output_tokens == BIG and type(turn.usage.output_tokens) is int
