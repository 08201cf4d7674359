"""The Responses stream reader on constructed event sequences: what no recording shows.

Each stream is written out as SSE and served by httpx.MockTransport (in random small pieces
where the split matters), so the whole path runs: transport, SSE reader, parser, assembler.
The shapes are the Responses events as servers send them (servers without item ids, snapshots
that restate or complete what streamed, done-only calls, the ChatGPT backend's frames).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from providerkit_nb.core.errors import ProviderError
from providerkit_nb.core.turn import (
    Finish,
    ReasoningItemsDelta,
    ToolCallDelta,
    collect_turn,
)
from providerkit_nb.providers.openai_responses import ResponsesProvider

from .responses_cases import serving, sse

CREATED = {"type": "response.created", "response": {"id": "resp_1", "model": "gpt-5.5-2026-04-23", "status": "in_progress", "output": []}}
USAGE = {"input_tokens": 120, "input_tokens_details": {"cached_tokens": 100}, "output_tokens": 40,
         "output_tokens_details": {"reasoning_tokens": 30}, "total_tokens": 160}


def completed(status: str = "completed", **extra: Any) -> dict[str, Any]:
    return {"type": "response.completed", "response": {"id": "resp_1", "status": status, "model": "gpt-5.5-2026-04-23",
                                                       "usage": USAGE, **extra}}


def provider(body: bytes, seed: int | None = 3, **kw: Any) -> ResponsesProvider:
    return ResponsesProvider(model="gpt-5.5", api_key="sk-test-key-0123456789", transport=serving(200, body, seed=seed), **kw)


def run(*events: dict[str, Any], seed: int | None = 3, **kw: Any):
    p = provider(sse(*events), seed, **kw)
    return collect_turn(p.create_stream([{"role": "user", "content": "hi"}]))


def chunks(*events: dict[str, Any]) -> list[Any]:
    p = provider(sse(*events), None)
    return list(p.create_stream([{"role": "user", "content": "hi"}]))


def fc_added(**item: Any) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": item.pop("output_index", 0),
            "item": {"type": "function_call", "arguments": "", **item}}


def fc_done(**item: Any) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": item.pop("output_index", 0),
            "item": {"type": "function_call", "status": "completed", **item}}


# --------------------------------------------------------------------------- calls


def test_calls_keyed_by_call_id_when_the_server_sends_no_item_id():
    turn = run(
        CREATED,
        fc_added(call_id="call_g1", name="lookup"),
        {"type": "response.function_call_arguments.delta", "call_id": "call_g1", "output_index": 0, "delta": '{"k":'},
        {"type": "response.function_call_arguments.delta", "call_id": "call_g1", "output_index": 0, "delta": '"v"}'},
        {"type": "response.function_call_arguments.done", "call_id": "call_g1", "output_index": 0, "arguments": '{"k":"v"}'},
        fc_done(call_id="call_g1", name="lookup", arguments='{"k":"v"}'),
        completed(),
    )
    assert [c.to_dict() for c in turn.message.tool_calls] == [{"id": "call_g1", "name": "lookup", "arguments": '{"k":"v"}'}]
    assert turn.finish_reason == "tool_calls"


def test_done_item_gives_identity_to_a_skeleton_that_had_none():
    turn = run(
        fc_added(id="fc_1"),  # no call_id, no name yet
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": "{}"},
        fc_done(id="fc_1", call_id="call_1", name="ping", arguments="{}"),
        completed(),
    )
    assert [c.to_dict() for c in turn.message.tool_calls] == [{"id": "call_1", "name": "ping", "arguments": "{}"}]


def test_arguments_before_any_skeleton_are_kept_and_named_at_done():
    turn = run(
        {"type": "response.function_call_arguments.delta", "item_id": "fc_9", "output_index": 1, "delta": '{"a":'},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_9", "output_index": 1, "delta": "1}"},
        fc_done(id="fc_9", call_id="call_9", name="add", arguments='{"a":1}', output_index=1),
        completed(),
    )
    assert [c.to_dict() for c in turn.message.tool_calls] == [{"id": "call_9", "name": "add", "arguments": '{"a":1}'}]


def test_done_only_call_without_call_id_is_dropped_and_not_a_tool_turn():
    turn = run(
        {"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}},
        {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "ok"},
        fc_done(id="fc_x", name="ghost", arguments="{}", output_index=1),
        completed(),
    )
    assert turn.message.tool_calls is None
    assert turn.message.content == "ok"
    assert turn.finish_reason == "stop"


def test_done_only_call_with_call_id_arrives_whole():
    turn = run(fc_done(id="fc_2", call_id="call_2", name="ls", arguments='{"p":"/"}'), completed())
    assert [c.to_dict() for c in turn.message.tool_calls] == [{"id": "call_2", "name": "ls", "arguments": '{"p":"/"}'}]
    assert turn.finish_reason == "tool_calls"


def test_arguments_stated_only_in_the_done_snapshot_are_emitted_once():
    # xAI states the full arguments in .done without deltas; a later output_item.done restates them
    got = chunks(
        fc_added(id="fc_3", call_id="call_3", name="sum"),
        {"type": "response.function_call_arguments.done", "item_id": "fc_3", "output_index": 0, "arguments": '{"n":[1,2]}'},
        fc_done(id="fc_3", call_id="call_3", name="sum", arguments='{"n":[1,2]}'),
        completed(),
    )
    args = [c.arguments for c in got if isinstance(c, ToolCallDelta) and c.arguments]
    assert args == ['{"n":[1,2]}']


def test_snapshot_adds_only_the_unsent_tail():
    got = chunks(
        fc_added(id="fc_4", call_id="call_4", name="f"),
        {"type": "response.function_call_arguments.delta", "item_id": "fc_4", "output_index": 0, "delta": '{"x"'},
        {"type": "response.function_call_arguments.done", "item_id": "fc_4", "output_index": 0, "arguments": '{"x":2}'},
        completed(),
    )
    assert [c.arguments for c in got if isinstance(c, ToolCallDelta) and c.arguments] == ['{"x"', ":2}"]


def test_parallel_calls_with_interleaved_argument_deltas():
    turn = run(
        fc_added(id="fc_a", call_id="call_a", name="f", output_index=0),
        fc_added(id="fc_b", call_id="call_b", name="g", output_index=1),
        {"type": "response.function_call_arguments.delta", "item_id": "fc_a", "output_index": 0, "delta": '{"a"'},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_b", "output_index": 1, "delta": '{"b"'},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_a", "output_index": 0, "delta": ":1}"},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_b", "output_index": 1, "delta": ":2}"},
        completed(),
    )
    assert [(c.id, c.name, c.arguments) for c in turn.message.tool_calls] == [
        ("call_a", "f", '{"a":1}'), ("call_b", "g", '{"b":2}')
    ]


def test_done_restating_a_different_call_id_wins():
    turn = run(
        fc_added(id="fc_5", call_id="call_old", name="f"),
        fc_done(id="fc_5", call_id="call_new", name="f", arguments="{}"),
        completed(),
    )
    assert turn.message.tool_calls[0].id == "call_new"


# --------------------------------------------------------------------------- text and reasoning


def test_text_snapshot_without_deltas_and_restated_message_are_not_doubled():
    turn = run(
        {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "Hel"},
        {"type": "response.output_text.done", "item_id": "msg_1", "output_index": 0, "content_index": 0, "text": "Hello"},
        {"type": "response.output_item.done", "output_index": 0, "item": {"type": "message", "id": "msg_1", "role": "assistant",
         "content": [{"type": "output_text", "text": "Hello"}, {"type": "output_text", "text": " world"}]}},
        completed(),
    )
    assert turn.message.content == "Hello world"


def test_reasoning_parts_joined_by_a_blank_line_and_items_in_stream_order():
    rs1 = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "A"}, {"type": "summary_text", "text": "B"}],
           "encrypted_content": "enc-1"}
    rs2 = {"type": "reasoning", "id": "rs_2", "summary": [], "content": [{"type": "reasoning_text", "text": "C"}],
           "encrypted_content": "enc-2"}
    evs = [
        {"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": []}},
        {"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0, "summary_index": 0, "delta": "A"},
        {"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0, "summary_index": 1, "delta": "B"},
        {"type": "response.output_item.done", "output_index": 0, "item": rs1},
        {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 1, "content_index": 0, "delta": "x"},
        {"type": "response.reasoning_text.delta", "item_id": "rs_2", "output_index": 2, "content_index": 0, "delta": "C"},
        {"type": "response.output_item.done", "output_index": 2, "item": rs2},
        completed(),
    ]
    turn = run(*evs)
    assert turn.message.reasoning == "A\n\nB\n\nC"
    assert turn.message.reasoning_items.to_dict() == {"provider": "openai-responses", "items": [rs1, rs2]}
    got = chunks(*evs)
    assert [type(c).__name__ for c in got if isinstance(c, ReasoningItemsDelta | Finish)] == [
        "ReasoningItemsDelta", "ReasoningItemsDelta", "Finish"
    ]


def test_reasoning_items_are_tagged_with_the_provider_id_and_can_be_turned_off():
    rs = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"}
    evs = ({"type": "response.output_item.done", "output_index": 0, "item": rs},
           {"type": "response.output_text.delta", "item_id": "m", "output_index": 1, "content_index": 0, "delta": "a"},
           completed())
    assert run(*evs, id="my-openai").message.reasoning_items.provider == "my-openai"
    assert run(*evs, replay_reasoning=False).message.reasoning_items is None


def test_a_reasoning_item_without_content_of_its_own_is_not_kept():
    # with store:false a bare rs_ id cannot be resolved later ("not found"), so it is not state
    turn = run({"type": "response.output_item.done", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": []}},
               {"type": "response.output_text.delta", "item_id": "m", "output_index": 1, "content_index": 0, "delta": "a"},
               completed())
    assert turn.message.reasoning_items is None


def test_usage_model_and_split_utf8():
    turn = run(CREATED, {"type": "response.output_text.delta", "item_id": "m", "output_index": 0, "content_index": 0,
                         "delta": "naïve — 東京 🎉"}, completed(), seed=11)
    assert turn.message.content == "naïve — 東京 🎉"
    assert turn.model == "gpt-5.5-2026-04-23"
    assert turn.usage.to_dict() == {"input_tokens": 120, "cached_input_tokens": 100, "cache_write_tokens": 0,
                                    "output_tokens": 40, "reasoning_tokens": 30}


# --------------------------------------------------------------------------- endings


@pytest.mark.parametrize("reason,finish", [("max_output_tokens", "length"), ("content_filter", "content_filter")])
def test_incomplete_maps_to_length_or_content_filter(reason: str, finish: str):
    ev = {"type": "response.incomplete", "response": {"status": "incomplete", "incomplete_details": {"reason": reason}, "usage": USAGE}}
    assert run({"type": "response.output_text.delta", "item_id": "m", "content_index": 0, "delta": "cut"}, ev).finish_reason == finish
    done = {"type": "response.done", "response": {"status": "incomplete", "incomplete_details": {"reason": reason}}}
    assert run({"type": "response.output_text.delta", "item_id": "m", "content_index": 0, "delta": "cut"}, done).finish_reason == finish


def test_response_done_ends_a_turn_like_completed():
    turn = run({"type": "response.output_text.delta", "item_id": "m", "content_index": 0, "delta": "hi"},
               {"type": "response.done", "response": {"status": "completed", "usage": USAGE}})
    assert (turn.message.content, turn.finish_reason) == ("hi", "stop")


def test_a_stream_without_its_terminal_event_is_a_network_error_with_the_partial_turn():
    with pytest.raises(ProviderError) as info:
        run(CREATED, {"type": "response.output_text.delta", "item_id": "m", "content_index": 0, "delta": "half"})
    assert info.value.kind == "network"
    assert str(info.value) == "openai-responses: the stream ended before the turn did"
    assert info.value.partial.message.content == "half"


@pytest.mark.parametrize(
    "frame,kind",
    [
        ({"type": "response.failed", "response": {"status": "failed", "error": {
            "code": "rate_limit_exceeded", "message": "Rate limit reached for gpt-5 on tokens per min (TPM)"}}}, "rate"),
        ({"type": "response.failed", "response": {"status": "failed", "error": {
            "code": "server_error", "message": "The server had an error while processing your request."}}}, "overload"),
        ({"type": "error", "code": "invalid_prompt", "message": "Invalid prompt: flagged as potentially violating our usage policy.",
          "param": None, "sequence_number": 3}, "content"),
        ({"type": "response.completed", "response": {"status": "failed", "error": {
            "code": "context_length_exceeded", "message": "Your input exceeds the context window of this model."}}}, "context"),
    ],
)
def test_failure_frames_raise_classified_provider_errors(frame: dict[str, Any], kind: str):
    with pytest.raises(ProviderError) as info:
        run(CREATED, frame)
    assert info.value.kind == kind
    assert "stream error" in str(info.value)


def test_chatgpt_usage_limit_frame_is_quota_with_its_window():
    frame = {"type": "error", "status_code": 429,
             "error": {"type": "usage_limit_reached", "message": "The usage limit has been reached", "plan_type": "plus",
                       "resets_in_seconds": 3600},
             "headers": {"x-codex-primary-used-percent": "100", "x-codex-primary-window-minutes": "300",
                         "x-codex-primary-reset-after-seconds": "3600"}}
    with pytest.raises(ProviderError) as info:
        run(frame, backend="chatgpt")
    err = info.value
    assert err.kind == "quota"
    assert err.status == 429
    assert err.retry_after == pytest.approx(3600, abs=5)


def _limits(primary: float, secondary: float, **extra: Any) -> dict[str, Any]:
    return {"type": "codex.rate_limits", "plan_type": "plus",
            "rate_limits": {"primary": {"used_percent": primary, "window_minutes": 300, "reset_after_seconds": 1200},
                            "secondary": {"used_percent": secondary, "window_minutes": 10080, "reset_after_seconds": 86400},
                            **extra}}


def test_chatgpt_rate_limit_wall_then_close_is_quota_on_the_binding_window():
    with pytest.raises(ProviderError) as info:
        run(CREATED, _limits(40, 100, limit_reached=True, allowed=False), backend="chatgpt")
    err = info.value
    assert err.kind == "quota"
    assert err.window == "weekly"
    assert err.retry_after == 86400
    assert err.reset_at is not None


@pytest.mark.parametrize(
    "frame",
    [
        _limits(40, 10, limit_reached=False, allowed=True),  # plenty left
        {**_limits(100, 100, limit_reached=True, allowed=False), "credits": {"has_credits": True}},  # paid overflow
    ],
)
def test_a_rate_limit_frame_that_is_not_a_wall_leaves_the_cut_a_network_error(frame: dict[str, Any]):
    with pytest.raises(ProviderError) as info:
        run(CREATED, frame, backend="chatgpt")
    assert info.value.kind == "network"


def test_a_wall_after_output_was_produced_is_a_cut_not_quota():
    with pytest.raises(ProviderError) as info:
        run(_limits(100, 10, limit_reached=True, allowed=False),
            {"type": "response.output_text.delta", "item_id": "m", "content_index": 0, "delta": "partial"},
            backend="chatgpt")
    assert info.value.kind == "network"


def test_a_normal_turn_on_the_chatgpt_backend_reads_past_its_rate_limit_frame():
    turn = run(_limits(12, 3), {"type": "response.output_text.delta", "item_id": "m", "content_index": 0, "delta": "ok"},
               completed(), backend="chatgpt")
    assert turn.message.content == "ok"


def test_no_chunk_after_finish_and_keepalives_are_skipped():
    body = b": keep-alive\n\n" + sse({"type": "response.output_text.delta", "item_id": "m", "content_index": 0, "delta": "a"}) \
        + b"data: not json\n\n" + sse(completed(), {"type": "response.output_text.delta", "item_id": "m", "content_index": 0, "delta": "late"})
    p = provider(body, 5)
    got = list(p.create_stream([{"role": "user", "content": "hi"}]))
    assert isinstance(got[-1], Finish)
    assert "late" not in json.dumps([getattr(c, "text", "") for c in got])
