"""Opening a store file again in the same process (issue 28): the identity, schema and
journal-mode checks ran on the first open and are not repeated while the file's header agrees,
but a file that changed under the same path is checked again, and the durability asked for
still applies."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

import providerkit_nb as pk
from providerkit_nb.store.base import NotAStoreError, StoreVersionError
from providerkit_nb.store.sqlite import APPLICATION_ID, NotebookStore


def _made(path: Path) -> None:
    with NotebookStore(path) as s:
        s.save("c", pk.UserMessage("one"))


@pytest.mark.parametrize(("sync", "level"), [("NORMAL", 1), ("FULL", 2)])
def test_reopened_store_works_at_the_durability_asked(tmp_path: Path, sync: str, level: int) -> None:
    path = tmp_path / "s.sqlite"
    _made(path)
    with NotebookStore(path, synchronous=sync) as s:
        assert s.save("c", pk.UserMessage("two")).seq == 2
        assert s._conn.execute("PRAGMA synchronous").fetchone()[0] == level
        assert [m.content for m in s.load("c")] == ["one", "two"]
        assert s.schema_version == 6


def test_file_replaced_by_another_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    _made(path)
    os.remove(path)
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE other (x)")
    with pytest.raises(NotAStoreError, match="another application"):
        NotebookStore(path)


def test_file_upgraded_meanwhile_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    _made(path)
    with sqlite3.connect(path, isolation_level=None) as c:  # what a newer version would do
        c.execute("PRAGMA user_version = 99")
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with pytest.raises(StoreVersionError, match="schema 99"):
        NotebookStore(path)


def test_file_switched_out_of_wal_is_put_back(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    _made(path)
    with sqlite3.connect(path, isolation_level=None) as c:
        assert c.execute("PRAGMA journal_mode=DELETE").fetchone()[0] == "delete"
        assert c.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    with NotebookStore(path) as s:
        s.save("c", pk.UserMessage("two"))
    assert path.read_bytes()[18:20] == b"\x02\x02"  # WAL again
