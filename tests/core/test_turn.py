"""collect_turn and TurnAssembler: fragments back into one message, or nothing at all."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import providerkit_nb as pk
import providerkit_nb.stream as pk_stream
from providerkit_nb.messages import ReasoningItems
from providerkit_nb.stream import (
    Finish,
    ModelInfo,
    ReasoningDelta,
    ReasoningDetailsDelta,
    ReasoningItemsDelta,
    TextDelta,
    ToolCallDelta,
    Usage,
    UsageUpdate,
)


def test_text_reasoning_usage_model_and_finish() -> None:
    turn = pk.collect_turn(
        iter(
            [
                ModelInfo("m-1"),
                ReasoningDelta("think "),
                ReasoningDelta("more"),
                TextDelta("Hel"),
                TextDelta("lo"),
                UsageUpdate(Usage(input_tokens=10, output_tokens=1)),
                UsageUpdate(Usage(input_tokens=10, cached_input_tokens=4, output_tokens=7, reasoning_tokens=3)),
                Finish("stop"),
            ]
        )
    )
    assert turn.message == pk.AssistantMessage("Hello", reasoning="think more")
    # the last usage wins: never summed
    assert turn.usage == Usage(input_tokens=10, cached_input_tokens=4, output_tokens=7, reasoning_tokens=3)
    assert turn.finish_reason == "stop"
    assert turn.model == "m-1"


def test_parallel_call_fragments_group_by_index() -> None:
    chunks = [
        ToolCallDelta(index=0, id="call_a", name="read_file", arguments='{"pa'),
        ToolCallDelta(index=1, id="call_b", name="write_file", arguments='{"path":'),
        ToolCallDelta(index=0, arguments='th": "a"}'),
        ToolCallDelta(index=1, arguments=' "b", "text": "x"}'),
        Finish("tool_calls"),
    ]
    turn = pk.collect_turn(iter(chunks))
    assert turn.message.tool_calls == [
        pk.ToolCall("call_a", "read_file", '{"path": "a"}'),
        pk.ToolCall("call_b", "write_file", '{"path": "b", "text": "x"}'),
    ]
    assert turn.finish_reason == "tool_calls"


def test_last_stated_id_and_name_win_and_repeated_name_is_not_concatenated() -> None:
    chunks = [
        ToolCallDelta(index=0, id="tmp", name="read_file", arguments="{"),
        ToolCallDelta(index=0, name="read_file", arguments='"path":'),  # name resent
        ToolCallDelta(index=0, id="call_real", name="read_file", arguments='"x"}'),
        Finish("tool_calls"),
    ]
    call = pk.collect_turn(iter(chunks)).message.tool_calls[0]
    assert call.name == "read_file"  # not "read_fileread_fileread_file"
    assert call.id == "call_real"
    assert call.arguments == '{"path":"x"}'


def test_nameless_fragment_without_index_continues_the_current_call() -> None:
    chunks = [
        ToolCallDelta(id="c1", name="search", arguments='{"q":'),
        ToolCallDelta(arguments='"cats"}'),
        ToolCallDelta(id="c2", name="search", arguments='{"q":"dogs"}'),
        ToolCallDelta(thought_signature="sig2"),
        Finish("stop"),  # some wires say stop on a turn with calls
    ]
    turn = pk.collect_turn(iter(chunks))
    assert turn.message.tool_calls == [
        pk.ToolCall("c1", "search", '{"q":"cats"}'),
        pk.ToolCall("c2", "search", '{"q":"dogs"}', thought_signature="sig2"),
    ]
    assert turn.finish_reason == "tool_calls"


def test_reasoning_details_and_items_append_in_order() -> None:
    chunks = [
        ReasoningDetailsDelta([{"type": "reasoning.text", "text": "a"}]),
        ReasoningItemsDelta("anthropic", [{"type": "thinking", "thinking": "t", "signature": "s1"}]),
        TextDelta("ok"),
        ReasoningDetailsDelta([{"type": "reasoning.encrypted", "data": "b"}]),
        ReasoningItemsDelta("anthropic", [{"type": "redacted_thinking", "data": "r"}]),
        Finish("stop"),
    ]
    m = pk.collect_turn(iter(chunks)).message
    assert m.reasoning_details == [
        {"type": "reasoning.text", "text": "a"},
        {"type": "reasoning.encrypted", "data": "b"},
    ]
    assert m.reasoning_items == ReasoningItems(
        "anthropic",
        [{"type": "thinking", "thinking": "t", "signature": "s1"}, {"type": "redacted_thinking", "data": "r"}],
    )


def test_snapshot_is_a_copy_and_grows_with_the_stream() -> None:
    asm = pk_stream.TurnAssembler()
    asm.feed(TextDelta("a"))
    asm.feed(ToolCallDelta(index=0, id="c", name="t", arguments="{"))
    snap = asm.snapshot()
    asm.feed(TextDelta("b"))
    asm.feed(ToolCallDelta(index=0, arguments="}"))
    assert snap.message.content == "a"
    assert snap.message.tool_calls[0].arguments == "{"
    assert not snap.finished
    assert asm.snapshot().message.content == "ab"
    assert asm.snapshot().message.tool_calls[0].arguments == "{}"


class Recorded:
    """A stream whose close() and generator finally are recorded."""

    def __init__(self, chunks: list, fail: BaseException | None) -> None:
        self.closed = 0
        self.finally_ran = False
        self._gen = self._run(chunks, fail)

    def _run(self, chunks: list, fail: BaseException | None) -> Iterator:
        try:
            yield from chunks
            if fail is not None:
                raise fail
        finally:
            self.finally_ran = True

    def __iter__(self) -> Recorded:
        return self

    def __next__(self):
        return next(self._gen)

    def close(self) -> None:
        self.closed += 1
        self._gen.close()


def test_stream_without_end_signal_raises_with_partial() -> None:
    stream = Recorded([TextDelta("half an ans"), ToolCallDelta(index=0, id="c", name="t", arguments='{"a":')], None)
    with pytest.raises(pk.ProviderError) as exc:
        pk.collect_turn(stream)
    assert exc.value.kind == "network"
    assert exc.value.partial.message.content == "half an ans"
    assert exc.value.partial.message.tool_calls[0].arguments == '{"a":'
    assert exc.value.partial.finish_reason is None
    assert stream.closed == 1 and stream.finally_ran


def test_keyboard_interrupt_inside_the_stream_returns_nothing_and_closes_it() -> None:
    stream = Recorded([TextDelta("I will now")], KeyboardInterrupt())
    result = "untouched"
    with pytest.raises(KeyboardInterrupt) as exc:
        result = pk.collect_turn(stream)
    assert result == "untouched"  # nothing was returned
    assert exc.value.partial.message.content == "I will now"
    assert stream.closed == 1 and stream.finally_ran


def test_error_raised_mid_stream_propagates_with_partial_and_closes() -> None:
    boom = pk.ProviderError("x", "overload", "overloaded mid-stream")
    stream = Recorded([TextDelta("par")], boom)
    with pytest.raises(pk.ProviderError) as exc:
        pk.collect_turn(stream)
    assert exc.value is boom
    assert exc.value.partial.message.content == "par"
    assert stream.closed == 1


def test_failure_inside_assembly_closes_the_generator() -> None:
    # a plain generator: collect_turn must close it when the failure is in the feed, not the stream
    state = {"closed": False}

    def gen():
        try:
            yield TextDelta("a")
            yield "not a chunk"  # the assembler refuses it
            yield Finish("stop")
        finally:
            state["closed"] = True

    with pytest.raises(TypeError):
        pk.collect_turn(gen())
    assert state["closed"]


def test_nameless_call_at_finish_is_refused() -> None:
    with pytest.raises(pk.ProviderError, match="without a name"):
        pk.collect_turn(iter([ToolCallDelta(index=0, id="c", arguments="{}"), Finish("tool_calls")]))


def test_items_from_two_providers_in_one_turn_are_refused() -> None:
    asm = pk_stream.TurnAssembler()
    asm.feed(ReasoningItemsDelta("anthropic", [{"type": "thinking"}]))
    with pytest.raises(ValueError, match="two providers"):
        asm.feed(ReasoningItemsDelta("gemini", [{"x": 1}]))


# --------------------------------------------------------------------------- notices


def test_notices_are_collected_kept_and_read_back() -> None:
    from providerkit_nb.stream import Notice, Turn, TurnAssembler

    asm = TurnAssembler()
    for c in (Notice("json_form", "JSON asked for as json_object", "json_object_schema"), TextDelta("{}"),
              Notice("forced_call", "forced call not made", "none"), Finish("stop")):
        asm.feed(c)
    turn = asm.turn()
    assert [n.kind for n in turn.notices] == ["json_form", "forced_call"]
    assert turn.notice("json_form").value == "json_object_schema" and turn.notice("nope") is None
    back = Turn.from_dict(turn.to_dict())
    assert back.notices == turn.notices
    assert turn == Turn(turn.message, None, "stop")  # metadata, not the turn's data
    # a stored record with a damaged notice keeps the good ones
    d = {**turn.to_dict(), "notices": [{"kind": "json_form"}, 3, {"kind": "x", "text": "y", "value": 5}]}
    assert [(n.kind, n.text, n.value) for n in Turn.from_dict(d).notices] == [("x", "y", None)]
    assert "notices" not in Turn(turn.message, None, "stop").to_dict()
