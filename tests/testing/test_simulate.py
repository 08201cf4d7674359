"""pk.simulate: each lesson breaks a conversation one way; each test checks what survives."""

from __future__ import annotations

import pytest

import providerkit_nb as pk
from providerkit_nb.testing import simulate
from providerkit_nb.wire.validate import validate_history

# the exact texts, pinned here (not imported from the code under test)
MAY_HAVE_RUN = (
    "This call was interrupted before it returned. It may have partly run, so check its effect "
    "before calling it again."
)


def test_cut_stream_saves_nothing_of_the_turn():
    lesson = simulate.lesson("cut_stream")
    assert "network" in lesson.error
    assert [m.role for m in lesson.saved] == ["system", "user"]
    assert lesson.repaired.changes == [] and lesson.told == []


def test_tool_error_becomes_a_result_and_the_turn_goes_on():
    lesson = simulate.lesson("tool_error")
    assert lesson.error is None
    roles = [m.role for m in lesson.saved]
    assert roles == ["system", "user", "assistant", "tool", "tool", "assistant"]
    write = next(m for m in lesson.saved if m.role == "tool" and m.name == "write_file")
    assert "simulated failure inside write_file" in write.content


def test_stop_in_tool_leaves_a_call_repair_answers_with_check_first():
    lesson = simulate.lesson("stop_in_tool")
    assert lesson.error.startswith("KeyboardInterrupt")
    assert [r.name for r in lesson.repaired.interrupted] == ["write_file"]
    assert lesson.told == [f"write_file [call_2]: {MAY_HAVE_RUN}"]
    assert validate_history(lesson.repaired.messages) == []


def test_kill_process_keeps_every_acknowledged_save(tmp_path):
    lesson = simulate.lesson("kill_process", workdir=tmp_path)
    # system, user, the call turn and the read's result were saved; the write never returned
    assert [m.role for m in lesson.saved] == ["system", "user", "assistant", "tool"]
    assert [r.name for r in lesson.repaired.interrupted] == ["write_file"]
    assert validate_history(lesson.repaired.messages) == []


def test_stalled_stream_is_hung_up_by_the_watchdog():
    lesson = simulate.lesson("stalled_stream")
    assert "timeout" in lesson.error
    assert [m.role for m in lesson.saved] == ["system", "user"]


def test_cut_stream_wraps_any_provider_and_keeps_the_partial():
    provider = simulate.cut_stream(simulate.ScriptedProvider([simulate.text_turn("abcdefgh", pieces=4)]), after=3)
    with pytest.raises(pk.ProviderError) as info:
        pk.collect_turn(provider.create_stream([pk.UserMessage("hi")]))
    assert info.value.kind == "network"
    assert info.value.partial.message.content == "abcd"  # ModelInfo, then two text pieces


def test_unknown_lesson_says_which_exist():
    with pytest.raises(ValueError, match="cut_stream"):
        simulate.lesson("flood")
