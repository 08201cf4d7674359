"""Stream and body parsing rules of the Anthropic wire that the recordings do not all show:
usage reconciliation with cache reads and writes, in-stream errors, pings, a gateway that skips
message_stop, several thinking blocks, and the non-streaming body."""

from __future__ import annotations

import pytest

import providerkit_nb as pk
from providerkit_nb.core.errors import ProviderError, is_retryable
from providerkit_nb.core.messages import UserMessage
from providerkit_nb.core.turn import Finish, TextDelta, TurnAssembler
from providerkit_nb.providers import anthropic as a
from providerkit_nb.wire.options import CallOptions

from .anthropic_cases import end, events, serving, sse, start, text_block

PROVIDER = a.AnthropicProvider(model="claude-sonnet-4-5", api_key="sk-ant-test-key", transport=serving(200, b""))


def turn_of(*payloads):
    asm = TurnAssembler()
    for c in PROVIDER.parse_stream(iter(events(*payloads)), CallOptions()):
        asm.feed(c)
    return asm.turn()


def test_usage_counts_cache_reads_and_writes_inside_input():
    t = turn_of(
        start(input_tokens=12, cache_read_input_tokens=3000, cache_creation_input_tokens=500, output_tokens=1),
        *text_block(0, "ok"),
        *end(output_tokens=42),
    )
    assert t.usage.to_dict() == {
        "input_tokens": 3512,
        "cached_input_tokens": 3000,
        "cache_write_tokens": 500,
        "output_tokens": 42,
        "reasoning_tokens": 0,
    }


def test_message_delta_usage_overwrites_what_start_said():
    # a gateway that reports 0 at the start and the real totals at the end
    t = turn_of(
        start(input_tokens=0, output_tokens=0),
        *text_block(0, "ok"),
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
         "usage": {"input_tokens": 900, "cache_read_input_tokens": 100, "output_tokens": 7, "output_tokens_details": {"thinking_tokens": 3}}},
        {"type": "message_stop"},
    )
    assert (t.usage.input_tokens, t.usage.cached_input_tokens, t.usage.output_tokens, t.usage.reasoning_tokens) == (1000, 100, 7, 3)


@pytest.mark.parametrize(
    "stop, finish",
    [("end_turn", "stop"), ("stop_sequence", "stop"), ("tool_use", "tool_calls"), ("max_tokens", "length"), ("refusal", "content_filter")],
)
def test_stop_reasons(stop, finish):
    assert turn_of(start(), *text_block(0, "x"), *end(stop)).finish_reason == finish


def test_pings_anywhere_and_non_json_keepalives_change_nothing():
    ping = {"type": "ping"}
    plain = turn_of(start(), *text_block(0, "a", "b"), *end())
    body = [start(), ping, *text_block(0, "a", "b")[:2], ping, *text_block(0, "a", "b")[2:], ping, *end()]
    evs = events(*body)
    evs.insert(2, type(evs[0])(None, "not json"))
    asm = TurnAssembler()
    for c in PROVIDER.parse_stream(iter(evs), CallOptions()):
        asm.feed(c)
    assert asm.turn().to_dict() == plain.to_dict()


def test_in_stream_overloaded_error_is_a_retryable_overload():
    body = sse(
        start(),
        *text_block(0, "partial answ"),
        {"type": "error", "error": {"details": None, "type": "overloaded_error", "message": "Overloaded"}},
    )
    p = a.AnthropicProvider(model="claude-sonnet-4-5", api_key="sk-ant-test-key", transport=serving(200, body))
    with pytest.raises(ProviderError) as info:
        pk.collect_turn(p.create_stream([UserMessage("hi")]))
    err = info.value
    assert err.kind == "overload"
    assert is_retryable(err)
    assert "Overloaded" in str(err)
    assert err.partial.message.content == "partial answ"  # shown, never saved as a turn
    assert err.partial.finish_reason is None


def test_a_gateway_that_skips_message_stop_still_ends_the_turn():
    t = turn_of(start(), *text_block(0, "done"), *end()[:1])
    assert t.finish_reason == "stop" and t.message.content == "done" and t.usage.output_tokens == 5


def test_no_stop_reason_and_no_message_stop_is_a_cut():
    with pytest.raises(ProviderError) as info:
        turn_of(start(), *text_block(0, "half"))
    assert info.value.kind == "network"


def test_nothing_after_finish():
    chunks = list(PROVIDER.parse_stream(iter(events(start(), *text_block(0, "x"), *end(), *text_block(1, "late"))), CallOptions()))
    assert isinstance(chunks[-1], Finish)
    assert [c.text for c in chunks if isinstance(c, TextDelta)] == ["x"]


def test_two_thinking_blocks_read_as_two_paragraphs_and_two_items():
    def thinking(i, text, sig):
        return [
            {"type": "content_block_start", "index": i, "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
            {"type": "content_block_delta", "index": i, "delta": {"type": "thinking_delta", "thinking": text}},
            {"type": "content_block_delta", "index": i, "delta": {"type": "signature_delta", "signature": sig}},
            {"type": "content_block_stop", "index": i},
        ]

    empty = [
        {"type": "content_block_start", "index": 1, "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "signature_delta", "signature": "S0"}},
        {"type": "content_block_stop", "index": 1},
    ]
    t = turn_of(start(), *thinking(0, "First.", "S1"), *empty, *thinking(2, "Second.", "S2"), *text_block(3, "ok"), *end())
    assert t.message.reasoning == "First.\n\nSecond."
    assert t.message.reasoning_items.items == [
        {"type": "thinking", "thinking": "First.", "signature": "S1"},
        {"type": "thinking", "thinking": "", "signature": "S0"},
        {"type": "thinking", "thinking": "Second.", "signature": "S2"},
    ]


def test_tool_input_given_whole_in_the_start_block():
    t = turn_of(
        start(),
        {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t1", "name": "ls", "input": {"dir": "/"}}},
        {"type": "content_block_stop", "index": 0},
        *end("tool_use"),
    )
    assert t.message.tool_calls[0].to_dict() == {"id": "t1", "name": "ls", "arguments": '{"dir":"/"}'}


def test_non_streaming_body():
    body = {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-opus-4-6",
        "content": [
            {"type": "thinking", "thinking": "Hmm.", "signature": "S1"},
            {"type": "redacted_thinking", "data": "R1"},
            {"type": "text", "text": "Calling."},
            {"type": "tool_use", "id": "t1", "name": "ls", "input": {"dir": "é"}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 5, "cache_read_input_tokens": 10, "cache_creation_input_tokens": 20, "output_tokens": 30},
    }
    asm = TurnAssembler()
    for c in PROVIDER.parse_response(body, CallOptions()):
        asm.feed(c)
    t = asm.turn()
    assert t.to_dict() == {
        "message": {
            "role": "assistant", "content": "Calling.", "reasoning": "Hmm.",
            "reasoning_items": {"provider": "anthropic", "items": [body["content"][0], body["content"][1]]},
            "tool_calls": [{"id": "t1", "name": "ls", "arguments": '{"dir":"é"}'}],
        },
        "usage": {"input_tokens": 35, "cached_input_tokens": 10, "cache_write_tokens": 20, "output_tokens": 30, "reasoning_tokens": 0},
        "finish_reason": "tool_calls",
        "model": "claude-opus-4-6",
    }


def test_an_error_body_with_status_200_is_not_a_turn():
    with pytest.raises(ProviderError) as info:
        list(PROVIDER.parse_response({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, CallOptions()))
    assert info.value.kind == "overload"
