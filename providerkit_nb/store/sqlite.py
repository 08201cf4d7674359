"""NotebookStore: one SQLite file that lives next to the notebook.

WAL mode with ``synchronous=NORMAL`` by default: a commit survives the process being killed
(kill -9, a kernel restart) and never corrupts on power loss, though on power loss the last
commits may be lost; ``synchronous="FULL"`` closes that gap at roughly 10x the cost per save.

Every write holds SQLite's write lock from its start (a save is one INSERT statement, which
takes the lock as it begins; multi-statement writes use ``BEGIN IMMEDIATE``), waits through a
busy timeout, and reads the per-conversation seq under that lock, so several threads of one
kernel (one connection behind a lock) and several processes (two notebooks, a notebook and a
script) can save to one file without losing or reordering messages. The file is recognised by its SQLite application_id and
versioned by ``user_version`` with numbered migrations; a file from a newer version is refused
and left as it is.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from ..core.json_input import read_json
from .base import (
    BaseStore,
    ConversationInfo,
    ConversationMeta,
    NotAStoreError,
    SavedMessage,
    StoreCorruptError,
    StoredMessage,
    StoreError,
    StoreLockedError,
    StoreReadOnlyError,
    StoreVersionError,
    merge_meta,
    newest_first,
    now_utc,
)
from .guard import FileGuard
from .migrations import APPLICATION_ID, statements
from .notebook_path import beside_notebook
from .room import no_room_reason, no_room_text

__all__ = ["NotebookStore", "MIGRATIONS", "APPLICATION_ID", "default_path"]

SQLITE_MAGIC = b"SQLite format 3\x00"
DEFAULT_NAME = "providerkit.sqlite"
SUFFIX = ".providerkit.sqlite"

# Migration i + 1's statements (store/migrations.py numbers and names them for both stores):
# MIGRATIONS[i] takes user_version i to i + 1.
MIGRATIONS: tuple[tuple[str, ...], ...] = statements("sqlite")


def h8(digest: str) -> int | None:
    """The first 60 bits of a hex sha256, as the index keeps them (None for another text)."""
    try:
        return int(digest[:15], 16)
    except (TypeError, ValueError):
        return None


# The last seq of a conversation and its latest row before seq ?4 with hash ?2 (?3: its h8),
# both from the index: the second reads the index's h8 of each row and the table row of a match.
_LAST_AND_DUP = """
SELECT (SELECT seq FROM messages WHERE conversation_id = ?1 AND seq < ?4 ORDER BY seq DESC LIMIT 1),
       (SELECT seq FROM messages WHERE conversation_id = ?1 AND seq < ?4 AND h8 = ?3 AND hash = ?2
        ORDER BY seq DESC LIMIT 1)
"""


# Files this process has opened and checked (identity, schema, journal mode), by (device, inode):
# a store opened again in the same process (a re-run cell, a worker's next task) skips the checks
# when the file's header agrees (see ``NotebookStore._open``).
_CHECKED: set[tuple[int, int]] = set()
_APPLICATION_ID_BYTES = APPLICATION_ID.to_bytes(4, "big")  # at offset 68 (user_version: at 60)

# One autocommit statement. An INSERT takes SQLite's write lock when it starts (waiting through
# the busy timeout, exactly like BEGIN IMMEDIATE), so max(seq) is read under that lock and the
# new seq can never be taken twice, even by another process. duplicate_of (kept on the row)
# comes from the store object's hash map of the conversation (see ``_append``): no index on the
# hash to update on every save, and no lookup in the statement.
#
# The usual save knows the seq already (the last one it saw + 1) and only has SQLite confirm it
# under the write lock: the conversation's last seq must be the one before it, else the seq is
# NULL and the NOT NULL constraint refuses the row (this is also what keeps seqs unique: the
# statement runs under the write lock). A refused save wrote nothing; it reads the conversation
# again and uses _INSERT. This spares the
# RETURNING (about a fifth of the statement's time). The map can be wrong in one case only:
# another connection deleted the conversation and wrote exactly as many rows again since this
# object last looked; duplicate_of is a hint for a viewer, never a reason to drop a row.
_INSERT_NEXT = """
INSERT INTO messages (conversation_id, seq, created_at, hash, h8, body, duplicate_of)
VALUES (
    ?1,
    CASE WHEN coalesce((SELECT seq FROM messages WHERE conversation_id = ?1 ORDER BY seq DESC LIMIT 1), 0) = ?2 - 1
         THEN ?2 END,
    ?3, ?4, ?5, ?6, ?7
)
"""
_INSERT = """
INSERT INTO messages (conversation_id, seq, created_at, hash, h8, body, duplicate_of)
SELECT ?1, coalesce((SELECT seq FROM messages WHERE conversation_id = ?1 ORDER BY seq DESC LIMIT 1), 0) + 1,
       ?2, ?3, ?4, ?5, ?6
RETURNING seq
"""
# (ORDER BY ... LIMIT 1 rather than max(): SQLite answers it from the end of the index in
# O(log n), where max() with a WHERE clause scans the whole conversation.)
_PUT_MARK = (
    "INSERT INTO call_marks (conversation_id, call_id, state, detail, updated_at) "
    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (conversation_id, call_id) DO UPDATE SET "
    "state = excluded.state, detail = excluded.detail, updated_at = excluded.updated_at"
)


_SQLITE_FULL = 13  # "database or disk is full" (a write that found no room)
_SQLITE_IOERR = 10  # "disk I/O error" (and its extended codes): a write past RLIMIT_FSIZE is one


# What a store object's map of a conversation's hashes (``_seen``) holds: every row's hash (read
# by load, or the conversation was new), every row's h8 (read from the index whole), or only the
# rows this object saved (the index answers for the others).
_PARTIAL, _BY_DIGEST, _BY_H8 = 0, 1, 2
_MAP_AFTER = 2  # index lookups of new hashes before the map of the whole index is read


def _ts(dt: datetime) -> str:
    return dt.isoformat()  # (timespec="microseconds" costs twice as much; both read back alike)


# --------------------------------------------------------------------------- default path


def default_path() -> tuple[Path, str]:
    """(path, how it was found) when no path is given: ``<notebook name>.providerkit.sqlite``
    beside the running notebook, else ``providerkit.sqlite`` in the working directory (a
    script, a worker, a notebook whose path cannot be found)."""
    return beside_notebook(SUFFIX) or (Path.cwd() / DEFAULT_NAME, "working directory (no notebook path found)")


# --------------------------------------------------------------------------- the store


class NotebookStore(FileGuard, BaseStore):
    """``NotebookStore(path=None, synchronous="NORMAL")``: the embedded default store; opened
    without a path, ``<notebook name>.providerkit.sqlite`` beside the running notebook, or
    ``providerkit.sqlite`` in the working directory outside one."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        synchronous: str = "NORMAL",
        *,
        busy_timeout: float = 10.0,
    ) -> None:
        sync = str(synchronous).upper()
        if sync not in ("NORMAL", "FULL"):
            raise ValueError(f"synchronous must be 'NORMAL' or 'FULL', got {synchronous!r}")
        if path is None:
            resolved, self.path_source = self.default_path()
        else:
            resolved, self.path_source = Path(path), "given"
        self.path = resolved.expanduser().absolute()
        self.synchronous = sync
        self.busy_timeout = float(busy_timeout)
        self._lock = threading.RLock()
        # conversation id -> (last seq seen, hash -> latest seq, what the map holds: see _PARTIAL):
        # duplicate detection off the hot path. A map made by load() is complete; one started by
        # a save holds only what this object saw, and a hash missing from it is looked up in
        # the index (a few times; then the index's map is read whole).
        self._seen: dict[str, tuple[int, dict[Any, int], int]] = {}
        self._misses: dict[str, int] = {}  # lookups of new hashes in the index, per partial map
        self._sync_pending = False
        self._conn = self._open()

    @staticmethod
    def default_path() -> tuple[Path, str]:
        return default_path()

    def __repr__(self) -> str:
        state = ", closed" if self.closed else ""
        return f"NotebookStore({str(self.path)!r}, synchronous={self.synchronous!r}{state})"

    # ---- opening

    def _fail(self, cls: type[StoreError], what: str, fix: str) -> StoreError:
        return cls(f"{self.path}: {what}. {fix}")

    def _open(self) -> sqlite3.Connection:
        p = self.path
        try:
            st: os.stat_result | None = os.stat(p)
        except OSError:
            st = None
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise self._fail(NotAStoreError, "is a directory", "Pass a file path such as "
                             f"{str(p / DEFAULT_NAME)!r}.")
        if st is None and not p.parent.is_dir():
            raise self._fail(StoreError, "its folder does not exist", "Create the folder or pass "
                             "another path.")
        exists = st is not None and st.st_size > 0
        wal = known = False
        if exists:
            assert st is not None
            fd = os.open(p, os.O_RDONLY)  # the first page only: a third of what open() costs
            try:
                header = os.pread(fd, 4096, 0)
                size = _page_size(header)
                if size > len(header):
                    header = os.pread(fd, size, 0)
            finally:
                os.close(fd)
            head = header[: len(SQLITE_MAGIC)]
            wal = header[18:20] == b"\x02\x02"  # the file format versions of a WAL database
            # The header says: our application id, the current schema (user_version), WAL. It
            # is the whole truth when no commit waits in the -wal file (a store closed cleanly:
            # the last connection checkpoints and removes it), and was checked before when this
            # process opened the file already. Then the checks are not repeated, and the open
            # runs no statement at all (the first read or write opens the -wal and reads the
            # schema, as it would anyway); the schema's page is looked at first, so a damaged
            # one still goes through SQLite's checks here. (With commits in the -wal, the
            # header can lag them: a newer version migrating the file from another process is
            # the one change it could miss, so that case is checked by SQL; damage done since
            # is found by the first statement, with the same error.)
            known = (
                wal
                and header[60:64] == len(MIGRATIONS).to_bytes(4, "big")
                and header[68:72] == _APPLICATION_ID_BYTES
                and ((st.st_dev, st.st_ino) in _CHECKED or _no_pending_wal(p) and _schema_page_sound(header))
            )
            if head != SQLITE_MAGIC:
                raise self._fail(
                    NotAStoreError,
                    f"is not a SQLite file (it starts with {head[:12]!r})",
                    "It was not changed. Pass another path for the store, e.g. "
                    f"NotebookStore({str(p.with_name(p.stem + SUFFIX))!r}).",
                )
        try:
            conn = sqlite3.connect(
                p, isolation_level=None, check_same_thread=False, timeout=self.busy_timeout
            )
        except sqlite3.Error as exc:
            raise self._translate(exc, "open") from exc
        try:
            if known:  # nothing to read now: synchronous is set before this object's first statement
                self._sync_pending = True
                return conn
            version = self._check_identity(conn, exists)
            if not wal:  # WAL mode is kept in the file; setting it again costs a lock and a read
                self._switch_to_wal(conn)
            conn.execute(f"PRAGMA synchronous={self.synchronous}")
            self._migrate(conn, version)
            if st is None:  # created now (an existing file keeps its inode through a migration)
                st = os.stat(p)
        except BaseException as exc:
            conn.close()
            if isinstance(exc, sqlite3.Error):
                raise self._translate(exc, "open") from exc
            raise
        _CHECKED.add((st.st_dev, st.st_ino))
        return conn

    def _switch_to_wal(self, conn: sqlite3.Connection) -> None:
        """``PRAGMA journal_mode=WAL``, waiting out other processes opening the same new file.

        SQLite answers "database is locked" at once, without its busy handler, when another
        connection holds the file while the journal mode changes (seen with several processes
        creating one store together), so the wait up to ``busy_timeout`` is done here."""
        deadline = time.monotonic() + self.busy_timeout
        pause = 0.002
        while True:
            try:
                conn.execute("PRAGMA journal_mode=WAL").fetchone()
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc).lower() or time.monotonic() + pause > deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    def _check_identity(self, conn: sqlite3.Connection, exists: bool) -> int:
        """Refuse another application's database or a newer store before writing anything;
        returns the schema version read."""
        # One read transaction, so the three reads see one snapshot: read one by one, a store
        # that another process is creating right now looks like tables without our id.
        conn.execute("BEGIN")
        try:
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            tables = (
                []
                if app_id == APPLICATION_ID
                else [r[0] for r in conn.execute("SELECT name FROM sqlite_master LIMIT 6")]
            )
        finally:
            conn.execute("COMMIT")
        if app_id == APPLICATION_ID:
            if version > len(MIGRATIONS):
                raise self._fail(
                    StoreVersionError,
                    f"was written by a newer providerkit_nb (schema {version}; this one knows up "
                    f"to {len(MIGRATIONS)})",
                    "It was not changed. Upgrade providerkit_nb to open it.",
                )
            return version
        if app_id != 0 or version != 0 or tables:
            listed = ", ".join(tables[:5]) or "none"
            raise self._fail(
                NotAStoreError,
                f"is a SQLite database of another application (application_id={app_id}, "
                f"tables: {listed})",
                "It was not changed. Pass another path for the store, e.g. "
                f"NotebookStore({str(self.path.with_name(self.path.stem + SUFFIX))!r}).",
            )
        return version

    def _migrate(self, conn: sqlite3.Connection, version: int | None = None) -> None:
        """Bring the schema up to date (``version``: the one just read, if any)."""
        if version is None:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version == len(MIGRATIONS):
            return
        conn.create_function("h8", 1, h8, deterministic=True)  # used by migration 6
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]  # re-read under the lock
            if version > len(MIGRATIONS):
                raise self._fail(StoreVersionError, f"was upgraded to schema {version} meanwhile",
                                 "Upgrade providerkit_nb to open it.")
            for number in range(version, len(MIGRATIONS)):
                for stmt in MIGRATIONS[number]:
                    conn.execute(stmt)
                conn.execute(f"PRAGMA user_version = {number + 1}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _translate(self, exc: sqlite3.Error, doing: str) -> StoreError:
        text = str(exc)
        if len(text) > 160:
            text = text[:160] + "..."
        low = text.lower()
        if "locked" in low or "busy" in low:
            return self._fail(
                StoreLockedError,
                f"stayed locked by another connection for {self.busy_timeout:g} s while trying to "
                f"{doing} ({text})",
                "Another notebook or script is holding a long write; finish or close it, or pass "
                "a larger busy_timeout. Nothing was written by this call.",
            )
        code = getattr(exc, "sqlite_errorcode", 0) or 0
        if code == _SQLITE_FULL or code & 0xFF == _SQLITE_IOERR:
            reason = no_room_reason(self.path.parent)
            if reason is not None or code == _SQLITE_FULL:
                return StoreError(f"{self.path}: {no_room_text(doing, reason or text)} (SQLite: {text})")
            return self._fail(
                StoreError,
                f"could not {doing}: the disk failed a read or write ({text})",
                "Nothing of this write was kept. Check the disk (and that the file is still "
                "there), then save again.",
            )
        if "readonly" in low or "read-only" in low or "unable to open" in low or "permission" in low:
            writable = os.access(self.path.parent, os.W_OK)
            return self._fail(
                StoreReadOnlyError,
                f"cannot be written ({text}; its folder is "
                f"{'writable' if writable else 'read-only'})",
                "SQLite in WAL mode needs to create -wal and -shm files next to it: pass a path in "
                "a writable folder, e.g. NotebookStore('~/providerkit.sqlite'). Nothing was changed.",
            )
        if any(w in low for w in ("malformed", "not a database", "corrupt", "could not decode")):
            return self._fail(
                StoreCorruptError,
                f"is damaged ({text})",
                f"It was not changed. Keep a copy of it, then try `sqlite3 '{self.path}' .recover "
                f"| sqlite3 '{self.path.with_suffix('.recovered.sqlite')}'` and open the recovered "
                "file.",
            )
        return self._fail(StoreError, f"failed to {doing} ({text})", "Nothing was changed by this call.")

    # ---- plumbing

    def _check_open(self) -> None:
        super()._check_open()
        if self._sync_pending:  # a file opened before by this process (see _open)
            try:
                self._conn.execute(f"PRAGMA synchronous={self.synchronous}")
            except sqlite3.Error as exc:
                raise self._translate(exc, "open") from exc
            self._sync_pending = False

    @contextmanager
    def _read(self, doing: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._check_open()
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise self._translate(exc, doing) from exc

    @contextmanager
    def _write(self, doing: str) -> Iterator[sqlite3.Connection]:
        """One BEGIN IMMEDIATE transaction: committed on success, rolled back on anything else
        (KeyboardInterrupt included)."""
        with self._lock:
            self._check_open()
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise self._translate(exc, doing) from exc

    # ---- primitives

    def _append(
        self, conversation_id: str, text: str, digest: str, created_at: datetime | None
    ) -> SavedMessage:
        at = created_at or now_utc()
        with self._lock:  # inlined rather than _read(): this is the hot path
            self._check_open()
            try:
                seq, dup = self._insert(conversation_id, text, digest, _ts(at))
            except sqlite3.Error as exc:
                self._seen.pop(conversation_id, None)
                raise self._translate(exc, "save a message") from exc
        return SavedMessage(seq, digest, at, dup)

    def _insert(self, conversation_id: str, text: str, digest: str, at: str) -> tuple[int, int | None]:
        """One row under SQLite's write lock (its own autocommit statement, or a statement of
        the transaction that holds the lock): (seq, duplicate_of)."""
        short = int(digest[:15], 16)  # h8 of a digest this library made
        seen = self._seen.get(conversation_id)
        if seen is None:  # first save to it from this object: two lookups in the index
            last, dup = self._last_and_dup(conversation_id, digest, short)
            hashes: dict[Any, int] = {}
            mode = _BY_DIGEST if last == 0 else _PARTIAL  # a new conversation: the empty map is all
        else:
            last, hashes, mode = seen
            if mode == _BY_H8:
                dup = self._confirmed(conversation_id, hashes.get(short), digest)
            else:
                dup = hashes.get(digest)
                if dup is None and mode == _PARTIAL:
                    # a hash this object has not seen: the index has it. After a few, the map
                    # of the whole index is read once and answers from then on.
                    misses = self._misses[conversation_id] = self._misses.get(conversation_id, 0) + 1
                    if misses < _MAP_AFTER:
                        dup = self._last_and_dup(conversation_id, digest, short, last + 1)[1]
                    else:
                        hashes, mode = self._h8_map(conversation_id), _BY_H8
                        dup = self._confirmed(conversation_id, hashes.get(short), digest)
        seq = last + 1
        try:
            self._conn.execute(_INSERT_NEXT, (conversation_id, seq, at, digest, short, text, dup))
        except sqlite3.IntegrityError:
            # Another connection wrote to (or deleted) this conversation since we last
            # looked: take the next seq under the write lock, look the hash up again
            # and correct the row's duplicate_of if that changes the answer; from now
            # on the map is partial.
            seq = self._conn.execute(_INSERT, (conversation_id, at, digest, short, text, dup)).fetchone()[0]
            found = self._last_and_dup(conversation_id, digest, short, seq)[1]
            hashes, mode = {}, _PARTIAL
            self._misses.pop(conversation_id, None)
            if found != dup:
                dup = found
                self._conn.execute(
                    "UPDATE messages SET duplicate_of = ? WHERE conversation_id = ? AND seq = ?",
                    (dup, conversation_id, seq),
                )
        hashes[short if mode == _BY_H8 else digest] = seq
        self._seen[conversation_id] = (seq, hashes, mode)
        return seq, dup

    def _h8_map(self, conversation_id: str) -> dict[Any, int]:
        """h8 -> latest seq, for the whole conversation, from the index alone."""
        return dict(self._conn.execute(
            "SELECT h8, seq FROM messages WHERE conversation_id = ? ORDER BY seq", (conversation_id,)))

    def _confirmed(self, conversation_id: str, seq: int | None, digest: str) -> int | None:
        """``seq`` when its row has ``digest`` whole (not only its first 60 bits), else None."""
        if seq is None:
            return None
        row = self._conn.execute("SELECT hash FROM messages WHERE conversation_id = ? AND seq = ?",
                                 (conversation_id, seq)).fetchone()
        return seq if row is not None and row[0] == digest else None

    def _append_step(
        self, conversation_id: str, rows: Sequence[tuple[str, str]], marks: Sequence[tuple[str, str, str]]
    ) -> list[SavedMessage]:
        """One BEGIN IMMEDIATE transaction: every row and mark of the step, or (after a crash or
        an error) none of them."""
        at = now_utc()
        stamp = _ts(at)
        saved: list[SavedMessage] = []
        try:
            with self._write("save a step") as c:
                for text, digest in rows:
                    seq, dup = self._insert(conversation_id, text, digest, stamp)
                    saved.append(SavedMessage(seq, digest, at, dup))
                for call_id, state, detail in marks:
                    c.execute(_PUT_MARK, (conversation_id, call_id, state, detail, stamp))
        except BaseException:
            self._seen.pop(conversation_id, None)  # it may name rows the rollback took back
            raise
        return saved

    def _last_and_dup(
        self, conversation_id: str, digest: str, short: int, before: int = 2**62
    ) -> tuple[int, int | None]:
        """(last seq, latest seq with this hash) among the conversation's rows before ``before``."""
        last, dup = self._conn.execute(_LAST_AND_DUP, (conversation_id, digest, short, before)).fetchone()
        return last or 0, dup

    def _bodies(self, conversation_id: str) -> list[tuple[int, str, bytes]]:
        # the bodies as their bytes: SQLite hands them over without making text of them, and
        # the hash and the JSON parser read bytes
        with self._read("load a conversation") as c:
            rows: list[tuple[int, str, bytes]] = c.execute(
                "SELECT seq, hash, CAST(body AS BLOB) FROM messages WHERE conversation_id = ? ORDER BY seq",
                (conversation_id,),
            ).fetchall()
            self._seen[conversation_id] = (rows[-1][0] if rows else 0, {h: s for s, h, _ in rows}, _BY_DIGEST)
        return rows

    def records(self, conversation_id: str) -> list[StoredMessage]:
        with self._read("load a conversation") as c:
            rows = c.execute(
                "SELECT seq, hash, created_at, body FROM messages WHERE conversation_id = ? "
                "ORDER BY seq",
                (conversation_id,),
            ).fetchall()
            # the hashes came with the rows: the next save here needs no read of its own
            self._seen[conversation_id] = (rows[-1][0] if rows else 0, {h: s for s, h, _, _ in rows}, _BY_DIGEST)
        parse = datetime.fromisoformat
        try:
            return [StoredMessage(s, h, parse(t), b) for s, h, t, b in rows]
        except (TypeError, ValueError):
            bad = next(s for s, _, t, _ in rows if not _is_timestamp(t))
            raise StoreCorruptError(
                f"{self!r}: conversation {conversation_id!r} row seq={bad} has a damaged "
                "created_at; fix or delete that row by hand (sqlite3 on the file) to load the rest"
            ) from None

    def conversations(self) -> list[ConversationInfo]:
        with self._read("list conversations") as c:
            rows = c.execute(
                """
                WITH ids AS (SELECT DISTINCT conversation_id AS id FROM messages
                             UNION SELECT id FROM conversations)
                SELECT ids.id,
                       (SELECT count(*) FROM messages m WHERE m.conversation_id = ids.id),
                       (SELECT created_at FROM messages m WHERE m.conversation_id = ids.id
                        ORDER BY seq DESC LIMIT 1),
                       c.updated_at, c.session_id, c.title, c.model, c.tags
                FROM ids LEFT JOIN conversations c ON c.id = ids.id
                """
            ).fetchall()
        out = []
        for cid, n, last, meta_at, sid, title, model, tags in rows:
            at = last or meta_at
            out.append(ConversationInfo(cid, n, datetime.fromisoformat(at) if at else None,
                                        sid, title, model, read_json(tags) if tags else []))
        return newest_first(out)

    def _delete(self, conversation_id: str) -> int:
        with self._write("delete a conversation") as c:
            self._seen.pop(conversation_id, None)
            n = c.execute("DELETE FROM messages WHERE conversation_id = ?", (conversation_id,)).rowcount
            c.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))
            c.execute("DELETE FROM lost_turns WHERE conversation_id = ?", (conversation_id,))
            c.execute("DELETE FROM call_marks WHERE conversation_id = ?", (conversation_id,))
            c.execute("DELETE FROM turn_usage WHERE conversation_id = ?", (conversation_id,))
        return n

    @staticmethod
    def _meta_of(row: Sequence[Any] | None) -> ConversationMeta | None:
        if row is None:
            return None
        return ConversationMeta(row[0], row[1], row[2], read_json(row[3]))

    _META_SQL = "SELECT session_id, title, model, tags FROM conversations WHERE id = ?"

    def _read_meta(self, conversation_id: str) -> ConversationMeta | None:
        with self._read("read metadata") as c:
            return self._meta_of(c.execute(self._META_SQL, (conversation_id,)).fetchone())

    def _put_meta(self, c: sqlite3.Connection, cid: str, meta: ConversationMeta) -> None:
        c.execute(
            "INSERT INTO conversations (id, session_id, title, model, tags, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET session_id = excluded.session_id, "
            "title = excluded.title, model = excluded.model, tags = excluded.tags, "
            "updated_at = excluded.updated_at",
            (cid, meta.session_id, meta.title, meta.model, json.dumps(meta.tags), _ts(now_utc())),
        )

    def _write_meta(self, conversation_id: str, changes: dict[str, Any]) -> ConversationMeta:
        with self._write("write metadata") as c:
            current = self._meta_of(c.execute(self._META_SQL, (conversation_id,)).fetchone())
            meta = merge_meta(current, changes)
            self._put_meta(c, conversation_id, meta)
        return meta

    def _ensure_session_id(self, conversation_id: str, candidate: str) -> str:
        with self._write("create a session id") as c:
            current = self._meta_of(c.execute(self._META_SQL, (conversation_id,)).fetchone())
            if current is not None and current.session_id:
                return current.session_id
            self._put_meta(c, conversation_id, merge_meta(current, {"session_id": candidate}))
        return candidate

    def _add_lost_turn(self, conversation_id: str, body: str, error: str) -> int:
        with self._write("save a lost turn") as c:
            cur = c.execute(
                "INSERT INTO lost_turns (conversation_id, created_at, error, turn) VALUES (?, ?, ?, ?)",
                (conversation_id, _ts(now_utc()), error, body),
            )
            return int(cur.lastrowid or 0)

    def _lost_turns(self, conversation_id: str) -> Sequence[tuple[int, str, str, datetime]]:
        with self._read("read lost turns") as c:
            rows = c.execute(
                "SELECT id, turn, error, created_at FROM lost_turns WHERE conversation_id = ? ORDER BY id",
                (conversation_id,),
            ).fetchall()
        return [(i, t, e, datetime.fromisoformat(at)) for i, t, e, at in rows]

    def _put_mark(self, conversation_id: str, call_id: str, state: str, detail: str) -> None:
        with self._read("mark a tool call") as c:  # one autocommit statement
            c.execute(_PUT_MARK, (conversation_id, call_id, state, detail, _ts(now_utc())))

    def _marks(self, conversation_id: str) -> Sequence[tuple[str, str, str, datetime]]:
        with self._read("read call marks") as c:
            rows = c.execute(
                "SELECT call_id, state, detail, updated_at FROM call_marks WHERE conversation_id = ? "
                "ORDER BY updated_at, call_id",
                (conversation_id,),
            ).fetchall()
        return [(i, s, d, datetime.fromisoformat(at)) for i, s, d, at in rows]

    def _add_usage(self, conversation_id: str, record: str) -> None:
        with self._read("save a turn's usage") as c:  # one autocommit statement
            c.execute(
                "INSERT INTO turn_usage (conversation_id, created_at, record) VALUES (?, ?, ?)",
                (conversation_id, _ts(now_utc()), record),
            )

    def _usages(self, conversation_id: str) -> Sequence[tuple[int, str]]:
        with self._read("read usage per turn") as c:
            return c.execute(
                "SELECT id, record FROM turn_usage WHERE conversation_id = ? ORDER BY id", (conversation_id,)
            ).fetchall()

    # ---- maintenance

    def check(self) -> list[str]:
        """SQLite's integrity_check: ["ok"] when the file is sound."""
        with self._read("check integrity") as c:
            return [r[0] for r in c.execute("PRAGMA integrity_check")]

    @property
    def schema_version(self) -> int:
        with self._read("read the schema version") as c:
            return int(c.execute("PRAGMA user_version").fetchone()[0])

    # ---- the per-conversation guard: an OS file lock beside the store file (guard.FileGuard)

    def _guard_base(self) -> Path:
        return self.path

    def _guard_failed(self, conversation_id: str, where: Path, exc: OSError) -> Exception:
        return self._fail(
            StoreReadOnlyError, f"cannot lock conversation {conversation_id!r} in {where} "
            f"({exc.strerror})", "The guard needs to create that file beside the store; make "
            "the folder writable.")

    def close(self) -> None:
        with self._lock:
            if not self.closed:
                self.closed = True
                self._conn.close()
            self._close_guard()


def _page_size(header: bytes) -> int:
    size = int.from_bytes(header[16:18], "big")
    return 65536 if size == 1 else size


def _schema_page_sound(page: bytes) -> bool:
    """A look at the schema table's page (page 1, after the file header) before trusting the
    header alone: a b-tree page header whose cells all point inside the page. A page that fails
    it goes through SQLite's own checks at open, which name the damage."""
    size = _page_size(page)
    if len(page) < size or page[100] not in (0x05, 0x0D):  # an interior or a leaf table page
        return False
    usable = size - page[20]  # less the bytes reserved at the end of each page
    start = 100 + (12 if page[100] == 0x05 else 8)
    cells = int.from_bytes(page[103:105], "big")
    content = int.from_bytes(page[105:107], "big") or 65536
    freeblock = int.from_bytes(page[101:103], "big")
    if start + 2 * cells > content or content > usable or (freeblock and not content <= freeblock < usable):
        return False
    pointers = page[start : start + 2 * cells]
    return all(content <= int.from_bytes(pointers[i : i + 2], "big") < usable for i in range(0, 2 * cells, 2))


def _no_pending_wal(path: Path) -> bool:
    """No commit waits in the file's -wal (there is none, or it is empty)."""
    try:
        return os.stat(f"{path}-wal").st_size == 0
    except FileNotFoundError:
        return True
    except OSError:
        return False


def _is_timestamp(value: object) -> bool:
    try:
        datetime.fromisoformat(value)  # type: ignore[arg-type]  # a damaged row may hold anything
    except (TypeError, ValueError):
        return False
    return True
