"""A row damaged on disk: ``load`` names the store, the conversation and the seq, or, with
``on_corrupt="skip"``, loads the rest and reports what it left out; other conversations are
unaffected. The damage is done the way it happens: a hand edit of the real file (or table)
with the database's own client, outside the store."""

from __future__ import annotations

import dataclasses
import sqlite3
import warnings
from typing import Any

import pytest

import providerkit_nb as pk
from providerkit_nb.core.messages import message_from_dict
from providerkit_nb.store.base import StoreCorruptError
from providerkit_nb.store.corrupt import StoreCorruptWarning

from .conftest import Backing

HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": "read a.txt"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "read", "arguments": '{"p": "a.txt"}'}]},
    {"role": "tool", "tool_call_id": "c1", "name": "read", "content": "hello"},
    {"role": "assistant", "content": "It says hello."},
]
# (what the damage stands for, the body written over row seq=2)
DAMAGE = [
    ("cut short on disk", '{"content":"","role":"assistant","tool_calls":[{"argum'),
    ("edited by hand, still JSON", '{"content":"","role":"assistant","tool_calls":[{"id":"c1"}]}'),
    ("not even text", "\x00\x00\x00\x00"),
]


def _damage(backing: Backing, store: Any, cid: str, seq: int, body: str) -> None:
    if backing.kind == "sqlite":
        with sqlite3.connect(backing.target) as db:
            n = db.execute(
                "UPDATE messages SET body = ? WHERE conversation_id = ? AND seq = ?", (body, cid, seq)
            ).rowcount
        assert n == 1
    elif backing.kind == "postgres":
        import psycopg

        with psycopg.connect(backing.target, autocommit=True) as db:
            db.execute(f'SET search_path TO "{backing.schema}"')
            cur = db.execute(
                "UPDATE providerkit_messages SET body = %s WHERE conversation_id = %s AND seq = %s",
                (body.replace("\x00", "\ufffd"), cid, seq),  # PostgreSQL text refuses NUL
            )
            assert cur.rowcount == 1
    else:  # memory: there is no disk; the row object itself is replaced
        rows = store._rows[cid]
        rows[seq - 1] = dataclasses.replace(rows[seq - 1], json=body)


@pytest.mark.parametrize(("what", "body"), DAMAGE, ids=[d[0] for d in DAMAGE])
def test_a_damaged_row_is_named_or_skipped_and_other_conversations_load(
    backing: Backing, what: str, body: str
) -> None:
    store = backing.new()
    for m in HISTORY:
        store.save("broken", m)
        store.save("healthy", m)
    _damage(backing, store, "broken", 2, body)
    fresh = backing.new() if backing.durable else store
    want = [message_from_dict(m) for m in HISTORY]

    with pytest.raises(StoreCorruptError) as ei:
        fresh.load("broken")
    text = str(ei.value)
    assert "'broken'" in text and "seq=2" in text
    if backing.kind == "sqlite":
        assert backing.target in text  # the file, so a person can find it
    assert fresh.load("healthy") == want

    with pytest.warns(StoreCorruptWarning, match=r"skipped 1 row\(s\).*seq 2"):
        got = fresh.load("broken", on_corrupt="skip")
    assert got == [want[0], want[2], want[3]]
    assert [(r.conversation_id, r.seq) for r in got.skipped] == [("broken", 2)]
    assert got.skipped[0].reason
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a healthy load does not warn
        assert fresh.load("healthy", on_corrupt="skip") == want


def test_on_corrupt_takes_only_raise_or_skip(store: Any) -> None:
    with pytest.raises(ValueError, match="on_corrupt"):
        store.load("x", on_corrupt="ignore")


def test_a_damaged_sqlite_file_is_not_written_by_load(tmp_path: Any) -> None:
    path = tmp_path / "n.providerkit.sqlite"
    with pk.NotebookStore(path) as s:
        for m in HISTORY:
            s.save("c", m)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE messages SET body = 'garbage' WHERE seq = 3")
    before = path.read_bytes()
    with pk.NotebookStore(path) as s, pytest.warns(StoreCorruptWarning):
        assert len(s.load("c", on_corrupt="skip")) == 3
    assert path.read_bytes() == before  # a read never repairs (or rewrites) the file


def test_a_damaged_lost_turn_is_a_store_error_naming_it(tmp_path: Any) -> None:
    path = tmp_path / "l.providerkit.sqlite"
    with pk.NotebookStore(path) as s:
        s.save_lost_turn("c", pk.Turn(pk.AssistantMessage("half an ans")), "cut")
        assert s.lost_turns("c")[0].turn.message.content == "half an ans"
    for body in ('{"usage": null}', "[1, 2]", '{"message": {"role": "assistant", "content": 5}}', "not json"):
        with sqlite3.connect(path) as db:
            db.execute("UPDATE lost_turns SET turn = ?", (body,))
        with pk.NotebookStore(path) as s, pytest.raises(StoreCorruptError, match=r"conversation 'c' lost turn 1"):
            s.lost_turns("c")


def test_a_damaged_timestamp_names_the_row(tmp_path: Any) -> None:
    path = tmp_path / "t.providerkit.sqlite"
    with pk.NotebookStore(path) as s:
        for m in HISTORY:
            s.save("c", m)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE messages SET created_at = 'last tuesday' WHERE seq = 3")
    with pk.NotebookStore(path) as s:
        # the messages carry no timestamp: load reads only what they are made of ...
        assert s.load("c") == [message_from_dict(m) for m in HISTORY]
        with pytest.raises(StoreCorruptError) as ei:  # ... records(), which has the times, names the row
            s.records("c")
    text = str(ei.value)
    assert str(path) in text and "'c'" in text and "seq=3" in text and "created_at" in text


def test_unfinished_lists_a_damaged_conversation_and_still_reads_the_others(backing: Backing) -> None:
    store = backing.new()
    for m in HISTORY:
        store.save("done", m)
        store.save("damaged", m)
    for m in HISTORY[:2]:  # a call without its result
        store.save("open", m)
    _damage(backing, store, "damaged", 4, "garbage")  # its last row
    fresh = backing.new() if backing.durable else store
    assert fresh.unfinished() == ["damaged", "open"]
