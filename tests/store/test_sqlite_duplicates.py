"""Duplicate detection in NotebookStore: a map per store object, the index for the first saves.

Each store object keeps a map of the conversation's hashes (complete after a load; partial when
it started saving without one, the rest looked up in the index of (conversation, seq, 60 bits
of the hash), whose map it reads whole after two such lookups); these tests check that
the answer (``SavedMessage.duplicate_of`` and the row's ``duplicate_of`` column) stays right when
another connection writes or deletes in between, after a reopen, without a load, and on files
made before either change.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import providerkit_nb as pk
from providerkit_nb.store.sqlite import MIGRATIONS, NotebookStore


def _column(path: Path, cid: str) -> list[tuple[int, int | None]]:
    with sqlite3.connect(path) as c:
        return list(c.execute("SELECT seq, duplicate_of FROM messages WHERE conversation_id = ? "
                              "ORDER BY seq", (cid,)))


def test_other_connection_writes_in_between(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    a, b = NotebookStore(path), NotebookStore(path)
    one, two = pk.UserMessage("one"), pk.UserMessage("two")
    assert a.save("c", one).duplicate_of is None  # seq 1
    assert b.save("c", two).duplicate_of is None  # seq 2, unseen by a
    assert a.save("c", two).duplicate_of == 2  # a catches up on b's row
    assert b.save("c", one).duplicate_of == 1  # seq 4: b catches up on a's rows
    assert a.save("c", one).duplicate_of == 4  # the latest earlier row, not the first
    assert _column(path, "c") == [(1, None), (2, None), (3, 2), (4, 1), (5, 4)]
    a.close()
    b.close()


def test_other_connection_deletes(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    a, b = NotebookStore(path), NotebookStore(path)
    m = pk.UserMessage("same")
    a.save("c", m)
    a.save("c", pk.UserMessage("other"))
    assert b.delete("c") == 2
    saved = a.save("c", m)  # a's map still lists the deleted rows
    assert (saved.seq, saved.duplicate_of) == (1, None)
    assert _column(path, "c") == [(1, None)]
    assert b.save("c", m).duplicate_of == 1
    a.close()
    b.close()


def test_own_delete_and_reopen(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with NotebookStore(path) as s:
        m = pk.UserMessage("hello")
        s.save("c", m)
        s.delete("c")
        assert s.save("c", m).duplicate_of is None
        s.save("c", pk.UserMessage("more"))
    with NotebookStore(path) as s:  # a new object reads the hashes on its first save
        assert s.save("c", m).duplicate_of == 1
        assert s.save("d", m).duplicate_of is None  # per conversation
    with NotebookStore(path) as s:  # ... or takes them from a load
        assert len(s.load("c")) == 3
        assert s.save("c", pk.UserMessage("more")).duplicate_of == 2


def test_load_then_other_writer_then_save(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    a, b = NotebookStore(path), NotebookStore(path)
    m = pk.UserMessage("x")
    a.save("c", pk.UserMessage("first"))
    assert len(a.load("c")) == 1  # a's map now comes from this load
    b.save("c", m)  # seq 2, after a's load
    saved = a.save("c", m)
    assert (saved.seq, saved.duplicate_of) == (3, 2)
    assert _column(path, "c") == [(1, None), (2, None), (3, 2)]
    a.close()
    b.close()


def test_file_from_before_the_change(tmp_path: Path) -> None:
    """A store at schema 2 (with the hash index, rows written by the old statement) opens,
    goes through the migration that dropped the index and the one that brings it back, and
    keeps finding duplicates among its old rows."""
    path = tmp_path / "old.sqlite"
    msgs: list[pk.Message] = [pk.UserMessage("a"), pk.AssistantMessage("b"), pk.UserMessage("a")]
    with sqlite3.connect(path, isolation_level=None) as c:
        for number in range(2):
            for stmt in MIGRATIONS[number]:
                c.execute(stmt)
        c.execute("PRAGMA user_version = 2")
        assert c.execute("PRAGMA application_id").fetchone()[0] == 0x706B6E62  # "pknb"
        from providerkit_nb.store.base import encode_message

        for seq, m in enumerate(msgs, 1):
            text, digest = encode_message(m)
            c.execute("INSERT INTO messages (conversation_id, seq, created_at, hash, body, duplicate_of) "
                      "VALUES ('c', ?, '2026-01-01T00:00:00+00:00', ?, ?, ?)",
                      (seq, digest, text, 1 if seq == 3 else None))
        assert c.execute("SELECT count(*) FROM sqlite_master WHERE name = 'messages_by_hash'").fetchone()[0] == 1
    s = NotebookStore(path)
    with s:
        assert s.schema_version == 6
        assert s.load("c") == msgs
        assert s.save("c", pk.UserMessage("a")).duplicate_of == 3
        assert s.save("c", pk.AssistantMessage("b")).duplicate_of == 2
    with sqlite3.connect(path) as c:
        assert c.execute("SELECT sql FROM sqlite_master WHERE name = 'messages_by_seq'").fetchone()[0] == (
            "CREATE INDEX messages_by_seq ON messages (conversation_id, seq, h8)")
        assert [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE tbl_name = 'messages' "
                                        "AND type = 'index'")] == ["messages_by_seq"]


def test_file_from_schema_3_gets_the_index(tmp_path: Path) -> None:
    path = tmp_path / "s3.sqlite"
    with sqlite3.connect(path, isolation_level=None) as c:
        for number in range(3):
            for stmt in MIGRATIONS[number]:
                c.execute(stmt)
        c.execute("PRAGMA user_version = 3")
    with NotebookStore(path) as s:
        assert s.schema_version == 6
        s.save("c", pk.UserMessage("x"))
        assert s.save("c", pk.UserMessage("x")).duplicate_of == 1


def _plan(path: Path, sql: str, args: tuple[object, ...]) -> str:
    with sqlite3.connect(path) as c:
        return " ".join(str(r[-1]) for r in c.execute("EXPLAIN QUERY PLAN " + sql, args))


def test_first_save_without_a_load_looks_up_one_hash(tmp_path: Path) -> None:
    """A new object saving to a long conversation answers from the index (the plan says so)
    and finds a duplicate anywhere in it, the latest one; later saves of hashes it has not seen
    are looked up too, and those it has are answered from its map."""
    from providerkit_nb.store.sqlite import _LAST_AND_DUP

    path = tmp_path / "s.sqlite"
    msgs = [pk.UserMessage(f"m{i}") for i in range(300)]
    with NotebookStore(path) as s:
        for m in msgs:
            s.save("c", m)
        s.save("c", msgs[5])  # seq 301, a duplicate of seq 6
    plan = _plan(path, _LAST_AND_DUP, ("c", "h", 7, 2**62))
    assert "SEARCH messages USING INDEX messages_by_seq (conversation_id=? AND seq<?)" in plan
    assert "SCAN messages" not in plan
    with NotebookStore(path) as s:
        first = s.save("c", msgs[5])
        assert (first.seq, first.duplicate_of) == (302, 301)
        assert s.save("c", msgs[0]).duplicate_of == 1  # not in its map: looked up
        assert s.save("c", pk.UserMessage("new")).duplicate_of is None
        assert s.save("c", msgs[5]).duplicate_of == 302  # from its map
        assert s.save("d", msgs[0]).duplicate_of is None  # per conversation
        assert s.save("d", msgs[0]).duplicate_of == 1  # a new conversation's map is complete
    assert _column(path, "c")[-5:] == [(301, 6), (302, 301), (303, 1), (304, None), (305, 302)]


def test_partial_map_then_other_writer(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with NotebookStore(path) as s:
        for i in range(5):
            s.save("c", pk.UserMessage(f"m{i}"))
    a, b = NotebookStore(path), NotebookStore(path)
    assert a.save("c", pk.UserMessage("m1")).duplicate_of == 2  # seq 6, a's map is partial
    assert b.save("c", pk.UserMessage("x")).duplicate_of is None  # seq 7, unseen by a
    saved = a.save("c", pk.UserMessage("x"))  # a's seq 7 is taken: it looks again
    assert (saved.seq, saved.duplicate_of) == (8, 7)
    assert a.save("c", pk.UserMessage("m3")).duplicate_of == 4
    assert _column(path, "c")[5:] == [(6, 2), (7, None), (8, 7), (9, 4)]
    a.close()
    b.close()


def test_a_new_object_reads_the_index_map_whole_after_two_lookups(tmp_path: Path) -> None:
    """Without a load, a save of a hash the object has not seen is looked up in the index;
    after two of those the object reads the index's map of the conversation (60 bits of each
    hash) once, and answers from it, confirming a match against the row's whole hash."""
    path = tmp_path / "s.sqlite"
    msgs = [pk.UserMessage(f"m{i}") for i in range(50)]
    with NotebookStore(path) as s:
        for m in msgs:
            s.save("c", m)
    with NotebookStore(path) as s:
        got = [s.save("c", msgs[i]).duplicate_of for i in (3, 7, 11, 3, 20)]
        assert got == [4, 8, 12, 51, 21]
        assert s.save("c", pk.UserMessage("new")).duplicate_of is None
        assert s._seen["c"][2] == 2  # read whole: keyed by h8 now (see _BY_H8)
        queries: list[str] = []
        s._conn.set_trace_callback(queries.append)
        assert s.save("c", msgs[40]).duplicate_of == 41
        assert s.save("c", pk.UserMessage("newer")).duplicate_of is None
        s._conn.set_trace_callback(None)
        assert not [q for q in queries if "h8 = " in q], "answered from the index again"


def test_a_hash_that_shares_its_first_60_bits_is_not_a_duplicate(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    one, two = pk.UserMessage("one"), pk.UserMessage("two")
    with NotebookStore(path) as s:
        s.save("c", one)
        s.save("c", two)
    with sqlite3.connect(path) as c:  # make row 2's h8 the one of "three", its hash staying its own
        from providerkit_nb.store.base import encode_message

        _, three = encode_message(pk.UserMessage("three"))
        c.execute("UPDATE messages SET h8 = ? WHERE seq = 2", (int(three[:15], 16),))
    with NotebookStore(path) as s:
        assert s.save("c", pk.UserMessage("three")).duplicate_of is None  # looked up in the index
    with NotebookStore(path) as s:
        for text in ("four", "five", "six"):  # past the lookups: the index's map is read whole
            s.save("c", pk.UserMessage(text))
        assert s._seen["c"][2] == 2
        assert s.save("c", pk.UserMessage("three")).duplicate_of == 3  # row 3, not the forged row 2
    with NotebookStore(path) as s:
        for text in ("seven", "eight", "nine"):
            s.save("c", pk.UserMessage(text))
        s._seen["c"][1][int(three[:15], 16)] = 2  # the map says row 2 (the forged one) is the latest
        assert s.save("c", pk.UserMessage("three")).duplicate_of is None  # its whole hash differs
