"""repair_history, rule by rule, with the exact texts the model reads, and the seed's scenarios."""

from __future__ import annotations

import copy
import gc

import pytest

import providerkit_nb as pk
from providerkit_nb.messages import dumps, loads

RO = "This call was interrupted before it returned. It changed nothing, so it is safe to call again."
RUN = (
    "This call was interrupted before it returned. It may have partly run, so check its effect "
    "before calling it again."
)


def note(name: str, cid: str, content: str) -> str:
    return (
        f"[Result of the tool {name} for call id {cid}. No call was waiting for it at this point "
        f"of the conversation, so it is passed on here as a note.]\n{content}"
    )


def S(text: str = "sys") -> dict:
    return {"role": "system", "content": text}


def U(text: str) -> dict:
    return {"role": "user", "content": text}


def A(text: str = "", *calls: tuple[str, str]) -> dict:
    d: dict = {"role": "assistant", "content": text}
    if calls:
        d["tool_calls"] = [{"id": i, "name": n, "arguments": "{}"} for i, n in calls]
    return d


def T(cid: str, name: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": cid, "name": name, "content": content}


def out(r: pk.Repaired) -> list[dict]:
    return [m.to_dict() for m in r.messages]


def read_only(name: str) -> bool:
    return {"read_file": True, "write_file": False}[name]  # KeyError for anything else


def test_the_two_texts_are_exact() -> None:
    assert pk.INTERRUPTED_READ_ONLY == RO
    assert pk.INTERRUPTED_MAY_HAVE_RUN == RUN


def test_valid_history_comes_back_as_is() -> None:
    h = loads(
        dumps(
            loads(
                '[{"role":"system","content":"s"},{"role":"user","content":"hi"},'
                '{"role":"assistant","content":"","tool_calls":[{"id":"a","name":"read_file","arguments":"{}"},'
                '{"id":"b","name":"read_file","arguments":"{}"}]},'
                '{"role":"tool","tool_call_id":"b","name":"read_file","content":"2"},'
                '{"role":"tool","tool_call_id":"a","name":"read_file","content":"1"},'
                '{"role":"assistant","content":"done"}]'
            )
        )
    )
    r = pk.repair_history(h)
    assert all(x is y for x, y in zip(r.messages, h, strict=True))
    assert r.messages is not h  # a new list: the caller may append to it
    assert r.changes == [] and r.interrupted == []
    assert pk.validate_history(h) == []


def test_dangling_call_gets_a_result_under_the_same_id() -> None:
    r = pk.repair_history([U("go"), A("", ("c1", "write_file"))])
    assert out(r) == [U("go"), A("", ("c1", "write_file")), T("c1", "write_file", RUN)]
    (row,) = r.interrupted
    assert (row.id, row.original_id, row.name, row.arguments, row.read_only, row.message_index, row.note) == (
        "c1",
        "c1",
        "write_file",
        "{}",
        False,
        1,
        RUN,
    )
    (ch,) = r.changes
    assert (ch.kind, ch.index_before, ch.index_after, ch.ids) == ("added_interrupted_result", None, 2, ["c1"])


def test_read_only_decides_the_text_and_unknown_tools_count_as_not_read_only() -> None:
    h = [U("go"), A("", ("c1", "read_file"), ("c2", "write_file"), ("c3", "mystery"))]
    r = pk.repair_history(h, is_read_only=read_only)
    assert out(r)[2:] == [T("c1", "read_file", RO), T("c2", "write_file", RUN), T("c3", "mystery", RUN)]
    assert [x.read_only for x in r.interrupted] == [True, False, False]
    # without is_read_only, every call gets the second text
    assert [m["content"] for m in out(pk.repair_history(h))[2:]] == [RUN, RUN, RUN]


def test_synthesized_results_go_after_existing_ones_in_call_order() -> None:
    h = [
        U("go"),
        A("", ("a", "read_file"), ("b", "read_file"), ("c", "read_file"), ("d", "read_file")),
        T("c", "read_file", "C"),
        T("a", "read_file", "A"),
        U("next"),
    ]
    r = pk.repair_history(h, is_read_only=read_only)
    assert out(r) == [
        U("go"),
        h[1],
        T("c", "read_file", "C"),
        T("a", "read_file", "A"),
        T("b", "read_file", RO),
        T("d", "read_file", RO),
        U("next"),
    ]
    assert [x.id for x in r.interrupted] == ["b", "d"]


def test_orphan_result_becomes_a_note_after_its_run() -> None:
    h = [U("go"), A("", ("a", "read_file"), ("b", "read_file")), T("a", "read_file", "A"), T("zz", "grep", "found 3"), T("b", "read_file", "B"), U("more")]
    r = pk.repair_history(h)
    assert out(r) == [
        U("go"),
        h[1],
        T("a", "read_file", "A"),
        T("b", "read_file", "B"),
        U(
            "[Result of the tool grep for call id zz. No call was waiting for it at this point of the "
            "conversation, so it is passed on here as a note.]\nfound 3"
        ),
        U("more"),
    ]
    (ch,) = r.changes
    assert (ch.kind, ch.index_before, ch.index_after, ch.ids) == ("result_to_note", 3, 4, ["zz"])
    assert "no call in the history has this id" in ch.detail


def test_notes_follow_the_synthesized_results_so_they_never_split_a_run() -> None:
    h = [A("", ("a", "read_file"), ("b", "read_file")), T("zz", "grep", "x"), T("a", "read_file", "A")]
    assert out(pk.repair_history(h)) == [
        h[0],
        T("a", "read_file", "A"),
        T("b", "read_file", RUN),
        U(note("grep", "zz", "x")),
    ]


def test_result_with_no_assistant_before_it_becomes_a_note_in_place() -> None:
    h = [S(), T("x", "grep", "early"), U("hi")]
    assert out(pk.repair_history(h)) == [S(), U(note("grep", "x", "early")), U("hi")]


def test_result_after_an_intervening_user_message_is_misplaced() -> None:
    h = [A("", ("a", "write_file")), U("are you there?"), T("a", "write_file", "wrote 3 bytes")]
    r = pk.repair_history(h)
    assert out(r) == [h[0], T("a", "write_file", RUN), U("are you there?"), U(note("write_file", "a", "wrote 3 bytes"))]
    assert [p.rule for p in pk.validate_history(h)] == ["dangling_call", "misplaced_result"]


def test_second_result_for_one_call_becomes_a_note() -> None:
    h = [A("", ("a", "read_file")), T("a", "read_file", "first"), T("a", "read_file", "second")]
    r = pk.repair_history(h)
    assert out(r) == [h[0], T("a", "read_file", "first"), U(note("read_file", "a", "second"))]
    assert [p.rule for p in pk.validate_history(h)] == ["duplicate_result"]


def test_empty_and_whitespace_assistants_are_dropped() -> None:
    h = [U("hi"), A(""), A(" \n\t"), A("hello")]
    r = pk.repair_history(h)
    assert out(r) == [U("hi"), A("hello")]
    assert [(c.kind, c.index_before, c.index_after) for c in r.changes] == [
        ("dropped_empty_assistant", 1, None),
        ("dropped_empty_assistant", 2, None),
    ]


def test_duplicate_id_within_one_message_pairs_nth_result_with_nth_call() -> None:
    h = [A("", ("a", "read_file"), ("a", "write_file")), T("a", "read_file", "r1"), T("a", "write_file", "w1")]
    r = pk.repair_history(h)
    assert out(r) == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "a", "name": "read_file", "arguments": "{}"},
                {"id": "a_2", "name": "write_file", "arguments": "{}"},
            ],
        },
        T("a", "read_file", "r1"),
        T("a_2", "write_file", "w1"),
    ]
    assert [(c.kind, c.index_before, c.index_after, c.ids) for c in r.changes] == [
        ("renamed_call", 0, 0, ["a", "a_2"]),
        ("renamed_result", 2, 2, ["a", "a_2"]),
    ]


def test_seed_same_id_reused_by_a_later_turn() -> None:
    # some servers number calls per turn (call_0, call_1...) so a later turn reuses an id
    h = [
        U("read a"),
        A("", ("call_0", "read_file")),
        T("call_0", "read_file", "A"),
        A("read b now"),
        U("and b"),
        A("", ("call_0", "read_file")),
        T("call_0", "read_file", "B"),
        A("", ("call_0", "write_file")),
    ]
    r = pk.repair_history(h, is_read_only=read_only)
    assert out(r) == [
        U("read a"),
        A("", ("call_0", "read_file")),
        T("call_0", "read_file", "A"),
        A("read b now"),
        U("and b"),
        A("", ("call_0_2", "read_file")),
        T("call_0_2", "read_file", "B"),
        A("", ("call_0_3", "write_file")),
        T("call_0_3", "write_file", RUN),
    ]
    (row,) = r.interrupted
    assert (row.id, row.original_id, row.message_index) == ("call_0_3", "call_0", 7)


def test_a_suffix_already_used_anywhere_is_skipped() -> None:
    h = [
        A("", ("a", "read_file")),
        T("a", "read_file", "1"),
        A("", ("a_2", "read_file")),
        T("a_2", "read_file", "2"),
        T("a_3", "read_file", "orphan"),  # an id only a result uses still counts as used
        A("", ("a", "read_file")),
        T("a", "read_file", "4"),
    ]
    r = pk.repair_history(h)
    assert out(r)[5:] == [A("", ("a_4", "read_file")), T("a_4", "read_file", "4")]
    assert out(r)[4] == U(note("read_file", "a_3", "orphan"))


def test_seed_placeholder_assistant_saved_before_tools_ran() -> None:
    # the app saved an empty assistant message as a placeholder, then the turn's call, then
    # a second placeholder between the call and its result
    h = [U("go"), A(""), A("", ("a", "read_file")), A("  "), T("a", "read_file", "A"), A("Done.")]
    r = pk.repair_history(h)
    assert out(r) == [U("go"), A("", ("a", "read_file")), T("a", "read_file", "A"), A("Done.")]
    assert r.interrupted == []
    assert [c.kind for c in r.changes] == ["dropped_empty_assistant", "dropped_empty_assistant"]


def test_seed_placeholder_then_crash_before_any_tool_ran() -> None:
    h = [U("go"), A("", ("a", "read_file"), ("b", "write_file")), A("")]
    r = pk.repair_history(h, is_read_only=read_only)
    assert out(r) == [U("go"), h[1], T("a", "read_file", RO), T("b", "write_file", RUN)]


def test_seed_crash_after_the_second_of_three_parallel_results() -> None:
    h = [
        S(),
        U("sync the three files"),
        A("On it.", ("t1", "read_file"), ("t2", "read_file"), ("t3", "write_file")),
        T("t1", "read_file", "one"),
        T("t2", "read_file", "two"),
    ]
    r = pk.repair_history(h, is_read_only=read_only)
    assert out(r) == [*h, T("t3", "write_file", RUN)]
    assert [(x.id, x.name, x.read_only, x.message_index) for x in r.interrupted] == [("t3", "write_file", False, 2)]
    assert pk.validate_history(r.messages) == []


def test_note_keeps_the_images_of_a_result() -> None:
    img = {"type": "image", "mime_type": "image/png", "data": "iVBOR"}
    h = [U("x"), {"role": "tool", "tool_call_id": "q", "name": "shot", "content": "see", "images": [img]}]
    (_, n) = out(pk.repair_history(h))
    assert n == {"role": "user", "content": [{"type": "text", "text": note("shot", "q", "see")}, img]}


def test_input_is_not_mutated_and_dicts_are_accepted() -> None:
    h = [A("", ("a", "read_file"), ("a", "read_file")), T("a", "read_file", "1"), A("")]
    before = copy.deepcopy(h)
    from_dicts = pk.repair_history(h)  # canonical dicts in, message objects out
    assert h == before
    objects = [pk.core.messages.message_from_dict(d) for d in h]
    saved = dumps(objects)
    from_objects = pk.repair_history(objects)
    assert dumps(objects) == saved  # the objects were not edited in place
    assert dumps(from_objects.messages) == dumps(from_dicts.messages)
    # the assistant, its real result, the one it never got; the placeholder is gone
    assert [m.role for m in from_dicts.messages] == ["assistant", "tool", "tool"]


def test_repaired_is_plain_data() -> None:
    r = pk.repair_history([U("go"), A("", ("c1", "read_file"))], is_read_only=read_only)
    assert r.to_dict() == {
        "messages": [U("go"), A("", ("c1", "read_file")), T("c1", "read_file", RO)],
        "interrupted": [
            {
                "id": "c1",
                "original_id": "c1",
                "name": "read_file",
                "arguments": "{}",
                "read_only": True,
                "message_index": 1,
                "note": RO,
                "why": "read_only",
            }
        ],
        "changes": [
            {
                "kind": "added_interrupted_result",
                "index_before": None,
                "index_after": 2,
                "ids": ["c1"],
                "detail": "call c1 (read_file) from message 1 never returned; added a result saying "
                "it was interrupted (read-only tool)",
            }
        ],
        "pending": [],
    }


def test_repairing_twice_changes_nothing() -> None:
    h = [U("go"), A("", ("a", "read_file"), ("a", "write_file")), A(""), T("x", "g", "o"), T("a", "read_file", "1")]
    once = pk.repair_history(h)
    twice = pk.repair_history(once.messages)
    assert twice.changes == [] and twice.interrupted == []
    assert dumps(twice.messages) == dumps(once.messages)


def test_the_garbage_collector_is_paused_only_for_long_histories_and_always_back_on() -> None:
    seen: list[bool] = []

    def read_only(name: str) -> bool:
        seen.append(gc.isenabled())
        return False

    long = [U("hi")] * 6000 + [A("", ("a", "t"))]
    pk.repair_history(long, is_read_only=read_only)
    pk.repair_history([A("", ("a", "t"))], is_read_only=read_only)
    assert seen == [False, True]  # paused inside the long repair only
    assert gc.isenabled()
    with pytest.raises(ValueError, match="message 6000: unknown role 'robot'"):
        pk.repair_history([U("hi")] * 6000 + [{"role": "robot", "content": "x"}])
    assert gc.isenabled()


# --------------------------------------------------------------------------- pending approval


def _waiting_history() -> list[dict]:
    return [
        {"role": "user", "content": "clean up"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "w1", "name": "delete_file", "arguments": '{"path": "a"}'},
                {"id": "r1", "name": "read_file", "arguments": '{"path": "b"}'},
            ],
        },
        {"role": "tool", "tool_call_id": "r1", "name": "read_file", "content": "b's text"},
    ]


def test_pending_call_at_the_end_is_left_unanswered():
    out = pk.repair_history(_waiting_history(), pending={"w1"})
    assert [p.id for p in out.pending] == ["w1"]
    assert out.pending[0].name == "delete_file" and out.pending[0].message_index == 1
    assert out.interrupted == [] and out.changes == []
    assert len(out.messages) == 3  # no result was written for the waiting call


def test_pending_call_the_conversation_went_past_is_repaired_like_any_other():
    history = [*_waiting_history(), {"role": "user", "content": "never mind"}]
    out = pk.repair_history(history, pending={"w1"})
    assert out.pending == []
    assert [c.id for c in out.interrupted] == ["w1"]
    assert out.messages[3].content == RUN


def test_pending_names_only_what_it_names():
    out = pk.repair_history(_waiting_history(), pending={"other"})
    assert out.pending == [] and [c.id for c in out.interrupted] == ["w1"]
