"""A row damaged on disk: ``load`` names the store, the conversation and the seq, or, with
``on_corrupt="skip"``, loads the rest and reports what it left out; other conversations are
unaffected. The damage is done the way it happens: a hand edit of the real file (or table)
with the database's own client, outside the store."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import sqlite3
import warnings
from pathlib import Path
from typing import Any

import pytest

import providerkit_nb as pk
from providerkit_nb.core import fastjson
from providerkit_nb.core.messages import message_from_dict
from providerkit_nb.messages import ReasoningItems
from providerkit_nb.store import base
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
    ("a field of the wrong type", '{"content":5,"role":"assistant"}'),
    ("an unknown field", '{"content":"","role":"assistant","tools":[]}'),
    ("not an object", '["content","role"]'),
]


@pytest.fixture
def parser(parser: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The suite's orjson/stdlib switch, also for the store's row reader (bound at import)."""
    if parser == "orjson":
        monkeypatch.setattr(base, "loads_utf8", fastjson._orjson_loads)
    else:
        monkeypatch.setattr(base, "loads_utf8", lambda raw: json.loads(raw.decode()))
    return parser


def _damage(backing: Backing, store: Any, cid: str, seq: int, body: str, rehash: bool = False) -> None:
    """Write ``body`` over the row; with ``rehash`` its hash too (the sha256 of the new body, as
    a careful hand edit or a bug that writes a consistent wrong row would), so the damage is
    not caught by the hash and must be caught by reading the body."""
    if backing.kind == "postgres":
        body = body.replace("\x00", "\ufffd")  # PostgreSQL text refuses NUL
    old = store.records(cid)[seq - 1].hash
    digest = hashlib.sha256(body.encode()).hexdigest() if rehash else old
    if backing.kind == "sqlite":
        with sqlite3.connect(backing.target) as db:
            n = db.execute(
                "UPDATE messages SET body = ?, hash = ? WHERE conversation_id = ? AND seq = ?",
                (body, digest, cid, seq),
            ).rowcount
        assert n == 1
    elif backing.kind == "postgres":
        import psycopg

        with psycopg.connect(backing.target, autocommit=True) as db:
            db.execute(f'SET search_path TO "{backing.schema}"')
            cur = db.execute(
                "UPDATE providerkit_messages SET body = %s, hash = %s WHERE conversation_id = %s AND seq = %s",
                (body, digest, cid, seq),
            )
            assert cur.rowcount == 1
    elif backing.kind == "jsonl":  # the conversation's file, edited where the row's message is
        path = next(Path(backing.target).glob(f"{cid}.jsonl"))
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        at = [i for i, line in enumerate(lines) if '"message":' in line][seq - 1]
        row = store.records(cid)[seq - 1]
        assert row.json in lines[at]
        lines[at] = lines[at].replace(row.json, body).replace(old, digest)
        path.write_text("".join(lines), encoding="utf-8")
    else:  # memory: there is no disk; the row object itself is replaced
        rows = store._rows[cid]
        rows[seq - 1] = dataclasses.replace(rows[seq - 1], json=body, hash=digest)


@pytest.mark.parametrize("rehash", [False, True], ids=["hash kept", "hash rewritten"])
@pytest.mark.parametrize(("what", "body"), DAMAGE, ids=[d[0] for d in DAMAGE])
def test_a_damaged_row_is_named_or_skipped_and_other_conversations_load(
    backing: Backing, what: str, body: str, rehash: bool, parser: str
) -> None:
    store = backing.new()
    for m in HISTORY:
        store.save("broken", m)
        store.save("healthy", m)
    _damage(backing, store, "broken", 2, body, rehash)
    fresh = backing.new() if backing.durable else store
    want = [message_from_dict(m) for m in HISTORY]

    with pytest.raises(StoreCorruptError) as ei:
        fresh.load("broken")
    text = str(ei.value)
    assert "'broken'" in text and "seq=2" in text and "on_corrupt='skip'" in text
    # the hash is checked first; past it, the body itself is what is wrong
    assert ("no longer matches its hash" in text) is not rehash
    if backing.kind in ("sqlite", "jsonl"):
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


def test_numbers_in_reasoning_payloads_load_exactly(backing: Backing, parser: str) -> None:
    """The only place a message holds numbers; a faster JSON parser may read an integer beyond
    64 bits as a float, and load must give back what was saved."""
    saved = pk.AssistantMessage(
        "the id 1234567890123456789012 is text",
        reasoning_details=[{"n": 18446744073709551616, "m": -9223372036854775809, "f": 0.1, "i": 7}],
        reasoning_items=ReasoningItems("openai", [{"seed": 100000000000000000000000000001}]),
    )
    store = backing.new()
    store.save("c", pk.UserMessage("hi"))
    store.save("c", saved)
    fresh = backing.new() if backing.durable else store
    got = fresh.load("c")[1]
    assert isinstance(got, pk.AssistantMessage) and got.reasoning_details and got.reasoning_items
    assert got.reasoning_details[0]["n"] == 18446744073709551616
    assert type(got.reasoning_details[0]["n"]) is int and type(got.reasoning_details[0]["m"]) is int
    assert got.reasoning_items.items == [{"seed": 100000000000000000000000000001}]
    assert got == saved


def test_what_only_the_standard_json_reader_accepts_still_loads(backing: Backing, parser: str) -> None:
    """NaN is JSON to Python's reader (and so to load before it had a faster path), not to
    orjson: a row holding one (a hand edit, hash rewritten) loads as it did."""
    store = backing.new()
    for m in HISTORY:
        store.save("c", m)
    _damage(backing, store, "c", 2, '{"content":"","reasoning_details":[NaN],"role":"assistant"}', rehash=True)
    fresh = backing.new() if backing.durable else store
    got = fresh.load("c")[1]
    assert isinstance(got, pk.AssistantMessage) and got.reasoning_details is not None
    assert math.isnan(got.reasoning_details[0])


@pytest.mark.parametrize(
    ("what", "value"),
    [("an integer", "12"), ("a blob that is not UTF-8", "X'FFFE7B7D'"), ("text that is not UTF-8", "CAST(X'7BFF7D' AS TEXT)")],
)
def test_a_sqlite_body_that_is_not_utf8_text_is_named_or_skipped(tmp_path: Any, what: str, value: str) -> None:
    """SQLite keeps whatever a hand edit puts in a column; the row is named (and can be
    skipped), never a raw error or a whole conversation that cannot load."""
    path = tmp_path / "b.providerkit.sqlite"
    with pk.NotebookStore(path) as s:
        for m in HISTORY:
            s.save("c", m)
    with sqlite3.connect(path) as db:
        db.execute(f"UPDATE messages SET body = {value} WHERE seq = 3")
    with pk.NotebookStore(path) as s:
        with pytest.raises(StoreCorruptError) as ei:
            s.load("c")
        assert str(path) in str(ei.value) and "'c' row seq=3" in str(ei.value)
        with pytest.warns(StoreCorruptWarning, match=r"seq 3"):
            got = s.load("c", on_corrupt="skip")
    assert got == [message_from_dict(m) for i, m in enumerate(HISTORY) if i != 2]


def test_a_sqlite_seq_edited_to_text_is_named_or_skipped(tmp_path: Any) -> None:
    """A hand edit can put text where the row number goes: that row is named, not a TypeError."""
    path = tmp_path / "q.providerkit.sqlite"
    with pk.NotebookStore(path) as s:
        for m in HISTORY:
            s.save("c", m)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE messages SET seq = 'three' WHERE seq = 3")
    with pk.NotebookStore(path) as s:
        with pytest.raises(StoreCorruptError) as ei:
            s.load("c")
        assert str(path) in str(ei.value) and "row seq=three " in str(ei.value) and "not a whole number" in str(ei.value)
        with pytest.warns(StoreCorruptWarning):
            got = s.load("c", on_corrupt="skip")
    assert got == [message_from_dict(m) for i, m in enumerate(HISTORY) if i != 2]
