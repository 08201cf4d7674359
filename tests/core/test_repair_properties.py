"""Property tests: whatever a crash left behind, repair gives a history every rule accepts."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import providerkit_nb as pk
from providerkit_nb.messages import dumps, loads

# the exact texts, pinned here (not imported from the code under test)
MAY_HAVE_RUN = (
    "This call was interrupted before it returned. It may have partly run, so check its effect "
    "before calling it again."
)
READ_ONLY_NOTE = "This call was interrupted before it returned. It changed nothing, so it is safe to call again."

NAMES = ["read_file", "write_file", "grep"]
IDS = ["a", "b", "c", "a_2", "call_0"]  # a small pool: ids collide within and across messages


@st.composite
def broken_histories(draw: st.DrawFn) -> list[pk.Message]:
    counter = itertools.count()
    out: list[pk.Message] = []
    for _ in range(draw(st.integers(0, 14))):
        kind = draw(st.sampled_from(["user", "system", "text", "empty", "calls", "calls", "stray"]))
        if kind == "user":
            out.append(pk.UserMessage(f"user {next(counter)}"))
        elif kind == "system":
            out.append(pk.SystemMessage("sys"))
        elif kind == "text":
            out.append(pk.AssistantMessage(f"answer {next(counter)}"))
        elif kind == "empty":
            out.append(pk.AssistantMessage(draw(st.sampled_from(["", " ", "\n\t"]))))
        elif kind == "stray":
            out.append(pk.ToolMessage(draw(st.sampled_from([*IDS, "zz"])), "grep", f"result {next(counter)}"))
        else:
            calls = [
                pk.ToolCall(draw(st.sampled_from(IDS)), draw(st.sampled_from(NAMES)), f'{{"n":{next(counter)}}}')
                for _ in range(draw(st.integers(1, 3)))
            ]
            out.append(pk.AssistantMessage(draw(st.sampled_from(["", "ok"])), tool_calls=calls))
            # results: a subset in any order, maybe an extra or a duplicate, maybe a placeholder between
            answered = draw(st.permutations(calls))[: draw(st.integers(0, len(calls)))]
            extra = draw(st.lists(st.sampled_from([*IDS, "zz"]), max_size=2))
            if draw(st.booleans()):
                out.append(pk.AssistantMessage(""))
            for c in answered:
                out.append(pk.ToolMessage(c.id, c.name, f"result {next(counter)}"))
            for cid in extra:
                out.append(pk.ToolMessage(cid, "grep", f"result {next(counter)}"))
    return out


@st.composite
def valid_histories(draw: st.DrawFn) -> list[pk.Message]:
    counter = itertools.count()
    out: list[pk.Message] = [pk.SystemMessage("sys")]
    for _ in range(draw(st.integers(0, 6))):
        out.append(pk.UserMessage(f"user {next(counter)}"))
        for _ in range(draw(st.integers(0, 2))):
            calls = [pk.ToolCall(f"id{next(counter)}", draw(st.sampled_from(NAMES)), "{}") for _ in range(draw(st.integers(1, 3)))]
            out.append(pk.AssistantMessage(draw(st.sampled_from(["", "thinking aloud"])), tool_calls=calls))
            for c in draw(st.permutations(calls)):
                out.append(pk.ToolMessage(c.id, c.name, f"result {next(counter)}"))
        out.append(pk.AssistantMessage(f"answer {next(counter)}"))
    return out


def ro(name: str) -> bool:
    return name == "read_file"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(broken_histories())
def test_output_validates_clean_and_is_idempotent_and_deterministic(h: list[pk.Message]) -> None:
    r = pk.repair_history(h, is_read_only=ro)
    assert pk.validate_history(r.messages) == []
    again = pk.repair_history(r.messages, is_read_only=ro)
    assert again.changes == [] and again.interrupted == []
    assert dumps(again.messages) == dumps(r.messages)
    other = pk.repair_history(loads(dumps(h)), is_read_only=ro)
    assert dumps(other.messages) == dumps(r.messages)
    assert other.changes == r.changes and other.interrupted == r.interrupted


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(broken_histories())
def test_nothing_is_lost(h: list[pk.Message]) -> None:
    r = pk.repair_history(h)
    # every call survives (arguments are unique per call), exactly once, with exactly one result
    calls_in = sorted(c.arguments for m in h if isinstance(m, pk.AssistantMessage) for c in m.tool_calls or [])
    calls_out = [c for m in r.messages if isinstance(m, pk.AssistantMessage) for c in m.tool_calls or []]
    assert sorted(c.arguments for c in calls_out) == calls_in
    ids_out = [c.id for c in calls_out]
    assert len(set(ids_out)) == len(ids_out)
    results = [m for m in r.messages if isinstance(m, pk.ToolMessage)]
    assert sorted(m.tool_call_id for m in results) == sorted(ids_out)
    # every result's content is still there, as a result or inside a note naming its call id
    kept = {m.content for m in results}
    notes = [m.content for m in r.messages if isinstance(m, pk.UserMessage) and m.content.startswith("[Result")]
    for m in h:
        if isinstance(m, pk.ToolMessage):
            assert m.content in kept or any(m.content in n and m.tool_call_id in n for n in notes)
    # the text of non-empty messages is kept in order
    said = [pk.core.messages.text_of(m) for m in h if not isinstance(m, pk.ToolMessage) and pk.core.messages.text_of(m).strip()]
    said_out = [pk.core.messages.text_of(m) for m in r.messages if not isinstance(m, pk.ToolMessage)]
    said_out = [t for t in said_out if t.strip() and not t.startswith("[Result")]
    assert said_out == said
    # interrupted rows and synthesized results agree
    synthesized = [m for m in results if m.content in (MAY_HAVE_RUN, READ_ONLY_NOTE)]
    assert sorted(m.tool_call_id for m in synthesized) == sorted(x.id for x in r.interrupted)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_histories())
def test_valid_input_is_unchanged(h: list[pk.Message]) -> None:
    r = pk.repair_history(h)
    assert r.changes == [] and r.interrupted == []
    assert dumps(r.messages) == dumps(h)
    assert pk.validate_history(h) == []


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(broken_histories())
def test_validate_reports_exactly_when_repair_changes_something(h: list[pk.Message]) -> None:
    problems = pk.validate_history(h)
    r = pk.repair_history(h)
    assert bool(problems) == bool(r.changes)
    by_rule = {p.rule for p in problems}
    kinds = {c.kind for c in r.changes}
    assert ("dangling_call" in by_rule) == ("added_interrupted_result" in kinds)
    assert ("empty_assistant" in by_rule) == ("dropped_empty_assistant" in kinds)
    assert ("duplicate_id" in by_rule) == ("renamed_call" in kinds)
    assert bool(by_rule & {"orphan_result", "misplaced_result", "duplicate_result"}) == ("result_to_note" in kinds)
