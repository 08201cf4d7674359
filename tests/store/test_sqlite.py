"""NotebookStore specifics: the file, its pragmas and migrations, where it lives, and the clear
errors for files it must not touch (each one leaves the file byte for byte as it was)."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import threading
from pathlib import Path

import pytest

import providerkit_nb as pk
from providerkit_nb.store import sqlite as sqlite_mod
from providerkit_nb.store.base import (
    NotAStoreError,
    StoreCorruptError,
    StoreLockedError,
    StoreReadOnlyError,
    StoreVersionError,
)
from providerkit_nb.store.sqlite import NotebookStore

from .convo import first

REPO = Path(__file__).resolve().parents[2]


def digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_pragmas_and_identity(tmp_path):
    p = tmp_path / "a.sqlite"
    with NotebookStore(p) as s:
        s.save("c", pk.UserMessage("x"))
        assert s.schema_version == 6
        assert repr(s) == f"NotebookStore({str(p)!r}, synchronous='NORMAL')"
    raw = sqlite3.connect(p)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert raw.execute("PRAGMA application_id").fetchone()[0] == 0x706B6E62  # "pknb"
    assert raw.execute("PRAGMA user_version").fetchone()[0] == 6
    raw.close()
    with NotebookStore(p, synchronous="full") as s:
        s.load("c")  # a file this process opened before: set with the first statement
        assert s._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert "synchronous='FULL'" in repr(s)
    with NotebookStore(p) as s:
        s.load("c")
        assert s._conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    with pytest.raises(ValueError, match="synchronous"):
        NotebookStore(p, synchronous="OFF")


def test_a_later_migration_is_applied_in_order_and_keeps_data(tmp_path, monkeypatch):
    p = tmp_path / "m.sqlite"
    with NotebookStore(p) as s:
        s.save("c", pk.UserMessage("old"))
    extra = ("CREATE TABLE added_later (x INTEGER)", "INSERT INTO added_later VALUES (42)")
    monkeypatch.setattr(sqlite_mod, "MIGRATIONS", (*sqlite_mod.MIGRATIONS, extra))
    with NotebookStore(p) as s:
        assert s.schema_version == 7  # the six shipped migrations and this one
        assert s._conn.execute("SELECT x FROM added_later").fetchall() == [(42,)]
        assert s.load("c") == [pk.UserMessage("old")]
    with NotebookStore(p) as s:  # applied once only
        assert s._conn.execute("SELECT count(*) FROM added_later").fetchone()[0] == 1


def test_newer_file_is_refused_untouched(tmp_path):
    p = tmp_path / "new.sqlite"
    with NotebookStore(p) as s:
        s.save("c", pk.UserMessage("x"))
    raw = sqlite3.connect(p)
    raw.execute(f"PRAGMA user_version = {len(sqlite_mod.MIGRATIONS) + 5}")
    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw.close()
    before = digest(p)
    with pytest.raises(StoreVersionError) as e:
        NotebookStore(p)
    assert str(p) in str(e.value) and "newer providerkit_nb" in str(e.value)
    assert "Upgrade" in str(e.value)
    assert digest(p) == before


def test_text_file_is_not_a_store(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("my notes\nline two\n")
    with pytest.raises(NotAStoreError) as e:
        NotebookStore(p)
    msg = str(e.value)
    assert str(p) in msg and "not a SQLite file" in msg and "another path" in msg
    assert p.read_text() == "my notes\nline two\n"


def test_another_sqlite_database_is_not_a_store(tmp_path):
    p = tmp_path / "app.db"
    raw = sqlite3.connect(p)
    raw.execute("CREATE TABLE users (name TEXT)")
    raw.execute("INSERT INTO users VALUES ('ada')")
    raw.commit()
    raw.close()
    before = digest(p)
    with pytest.raises(NotAStoreError) as e:
        NotebookStore(p)
    assert str(p) in str(e.value) and "users" in str(e.value) and "another application" in str(e.value)
    assert digest(p) == before
    assert not Path(str(p) + "-wal").exists()  # not even switched to WAL


def _corrupt(p: Path, offset: int, length: int) -> None:
    with open(p, "r+b") as f:
        f.seek(offset)
        f.write(b"\xde\xad\xbe\xef" * (length // 4))


def test_corrupt_pages_give_a_clear_error(tmp_path):
    p = tmp_path / "c.sqlite"
    with NotebookStore(p) as s:
        for m in first(1, 200):
            s.save("c", m)
        s._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = p.stat().st_size
    assert size > 40_000
    _corrupt(p, size // 2, 8192)
    before = digest(p)
    with pytest.raises(StoreCorruptError) as e:
        with NotebookStore(p) as s:
            s.load("c")
            s.check()
            assert s.check() == ["ok"], "the damage went unnoticed"
    msg = str(e.value)
    assert str(p) in msg and "damaged" in msg and ".recover" in msg
    assert digest(p) == before


def test_corrupt_schema_page_refused_on_open(tmp_path):
    p = tmp_path / "c1.sqlite"
    with NotebookStore(p) as s:
        s.save("c", pk.UserMessage("x"))
        s._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    _corrupt(p, 100, 3996)  # page 1 after the header: the schema table
    before = digest(p)
    fresh = tmp_path / "copy.sqlite"  # a file this process has not opened: refused on open
    fresh.write_bytes(p.read_bytes())
    with pytest.raises(StoreCorruptError, match="damaged"):
        NotebookStore(fresh)
    assert digest(fresh) == before
    # the file this process opened before is refused by its first statement, unchanged too
    with pytest.raises(StoreCorruptError, match="damaged"):
        with NotebookStore(p) as s:
            s.load("c")
    assert digest(p) == before


def test_locked_file_gives_a_clear_error_and_loses_nothing(tmp_path):
    p = tmp_path / "l.sqlite"
    s = NotebookStore(p, busy_timeout=0.2)
    s.save("c", pk.UserMessage("before"))
    other = sqlite3.connect(p, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreLockedError) as e:
            s.save("c", pk.UserMessage("blocked"))
        assert str(p) in str(e.value) and "busy_timeout" in str(e.value)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert s.save("c", pk.UserMessage("after")).seq == 2
    assert [m.content for m in s.load("c")] == ["before", "after"]
    s.close()


def test_waits_for_a_short_lock_instead_of_failing(tmp_path):
    p = tmp_path / "w.sqlite"
    s = NotebookStore(p, busy_timeout=5)
    other = sqlite3.connect(p, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    t = threading.Timer(0.2, lambda: other.execute("COMMIT"))
    t.start()
    assert s.save("c", pk.UserMessage("x")).seq == 1
    t.join()
    other.close()
    s.close()


@pytest.fixture
def readonly_dir(tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    if os.geteuid() == 0:  # root ignores mode bits; the immutable attribute binds root too
        if subprocess.run(["chattr", "+i", str(d)], capture_output=True).returncode != 0:
            pytest.skip("running as root and chattr +i is not permitted here, so no directory "
                        "is read-only for this process")
        yield d
        subprocess.run(["chattr", "-i", str(d)], check=True)
    else:
        d.chmod(0o555)
        yield d
        d.chmod(0o755)


def test_read_only_directory(readonly_dir):
    p = readonly_dir / "x.providerkit.sqlite"
    with pytest.raises(StoreReadOnlyError) as e:
        NotebookStore(p)
    msg = str(e.value)
    assert str(p) in msg and "writable folder" in msg
    assert not p.exists()


def test_missing_folder_and_directory_path(tmp_path):
    with pytest.raises(pk.store.base.StoreError, match="folder does not exist"):
        NotebookStore(tmp_path / "nope" / "x.sqlite")
    with pytest.raises(NotAStoreError, match="is a directory"):
        NotebookStore(tmp_path)


def test_empty_file_becomes_a_store(tmp_path):
    p = tmp_path / "empty.sqlite"
    p.touch()
    with NotebookStore(p) as s:
        assert s.save("c", pk.UserMessage("x")).seq == 1


def test_without_a_path_the_store_layers_class_opens_beside_the_notebook_too(tmp_path, monkeypatch):
    """One NotebookStore: the store layer's name finds the running notebook as pk's does."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nb").mkdir()
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "nb" / "a.ipynb"))
    with NotebookStore() as s:
        assert s.path == tmp_path / "nb" / "a.providerkit.sqlite"
        assert "JPY_SESSION_NAME" in s.path_source


def test_row_changed_behind_the_stores_back_is_reported(tmp_path):
    p = tmp_path / "h.sqlite"
    with NotebookStore(p) as s:
        s.save("c", pk.UserMessage("kept"))
        s.save("c", pk.UserMessage("original"))
    raw = sqlite3.connect(p)
    raw.execute("""UPDATE messages SET body = '{"content":"forged","role":"user"}' WHERE seq = 2""")
    raw.commit()
    raw.close()
    with NotebookStore(p) as s:
        with pytest.raises(StoreCorruptError, match=r"seq=2 .*no longer matches its hash"):
            s.load("c")
        assert s.records("c")[0].json == '{"content":"kept","role":"user"}'


def test_the_files_beside_an_open_store_share_its_name(tmp_path):
    """While a conversation is held: the database, SQLite's -wal and -shm, and the guard's -lock
    file, all named after the store; once closed, SQLite removes -wal and -shm."""
    from providerkit_nb.store.sqlite import NotebookStore as Store

    path = tmp_path / "analysis.providerkit.sqlite"
    store = Store(path)
    store.save("c", {"role": "user", "content": "hi"})
    with store.hold("c"):
        names = sorted(p.name for p in tmp_path.iterdir())
    store.close()
    assert names == [
        "analysis.providerkit.sqlite",
        "analysis.providerkit.sqlite-lock",
        "analysis.providerkit.sqlite-shm",
        "analysis.providerkit.sqlite-wal",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "analysis.providerkit.sqlite",
        "analysis.providerkit.sqlite-lock",
    ]
