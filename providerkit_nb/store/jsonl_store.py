"""JsonlStore: one JSONL file per conversation in a folder, appended to and fsynced.

The simple store for people who want to read (and grep, and diff) what was saved: each line is
one record of the export format (``store/jsonl.py``), a message embedded byte for byte as
saved, plus the lines a store keeps beside the history (call marks, usage per turn, lost
turns). A write is one ``write()`` of whole lines under an exclusive ``flock`` of the file, then
an ``fsync`` (``fsync=False`` trusts the OS page cache: a killed process loses nothing, a power
cut may lose the last writes), so several threads and processes can append to one
conversation without losing or reordering anything.

A crash can leave two things behind, and every reader and appender treats them alike:

- a torn last line (no newline, not a whole record; a cut inside a multi-byte character is
  one): ignored by readers, cut off by the next appender. A whole record that only lost its
  newline is kept by both (the appender adds the newline).
- an unfinished step. Several rows that must be seen together (a compaction's summary and the
  copies it carries, a decision and its result: ``save_step``) are written as lines tagged with
  the step's id followed by a closing ``{"done": n}`` line; readers count the step only once that
  line is read, and the next appender cuts an unfinished one off.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import threading
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from .base import (
    BaseStore,
    ConversationInfo,
    ConversationMeta,
    NotAStoreError,
    SavedMessage,
    StoreCorruptError,
    StoredMessage,
    StoreError,
    StoreReadOnlyError,
    StoreVersionError,
    merge_meta,
    newest_first,
    now_utc,
)
from .guard import FileGuard
from .jsonl import LineReader, Record, whole_record
from .room import NO_ROOM_ERRNOS, no_room_reason, no_room_text

__all__ = ["JsonlStore"]

MARKER = "providerkit-store.json"
FORMAT = "providerkit_nb jsonl store"
VERSION = 1
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,120}")
_T = TypeVar("_T")


def _canon(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _ts(dt: datetime) -> str:
    return dt.isoformat(timespec="microseconds")


def _file_name(conversation_id: str) -> str:
    """The conversation's own name when it is a plain one, else a digest of it (the id is in
    every line, so nothing depends on reading it back from the name)."""
    if _PLAIN.fullmatch(conversation_id):
        return conversation_id + ".jsonl"
    return "~" + hashlib.sha256(conversation_id.encode()).hexdigest()[:40] + ".jsonl"


class _Conversation:
    """What this store object has read of one conversation's file, up to ``offset``."""

    def __init__(self, path: Path, conversation_id: str) -> None:
        self.path = path
        self.id = conversation_id
        self.fd: int | None = None
        self.reset()

    def reset(self) -> None:
        self.ident: tuple[int, int] | None = None
        self.offset = 0  # bytes read and counted
        self.plain_end = 0  # where the last line that is not part of an unfinished step ends
        self.line = 0  # lines read
        self.newline_owed = False  # the last record read had no newline (a crash cut only that)
        self.reader = LineReader(str(self.path), self.id, strict=False)
        self.rows: list[StoredMessage] = []
        self.hashes: dict[str, int] = {}
        self.meta: ConversationMeta | None = None
        self.marks: dict[str, tuple[str, str, datetime]] = {}
        self.usage: list[str] = []
        self.lost: list[tuple[int, str, str, datetime]] = []

    def apply(self, rec: Record) -> None:
        kind = rec.kind
        if kind == "message":
            seq = len(self.rows) + 1
            self.rows.append(StoredMessage(seq, rec.hash, rec.at, rec.text))
            self.hashes[rec.hash] = seq
        elif kind == "mark":
            self.marks.pop(rec.call_id, None)  # re-inserted last: the order of the latest marks
            self.marks[rec.call_id] = (rec.state, rec.text, rec.at or now_utc())
        elif kind == "meta":
            self.meta = rec.meta
        elif kind == "usage":
            self.usage.append(rec.text)
        elif kind == "lost":
            self.lost.append((len(self.lost) + 1, rec.text, rec.error, rec.at or now_utc()))


class JsonlStore(FileGuard, BaseStore):
    """``JsonlStore(folder, fsync=True)``: a folder of JSONL files, one per conversation."""

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = True) -> None:
        self.path = Path(path).expanduser().absolute()
        self.fsync = bool(fsync)
        self._lock = threading.RLock()
        self._convs: dict[str, _Conversation] = {}
        self._open_folder()

    def __repr__(self) -> str:
        state = ", closed" if self.closed else ""
        return f"JsonlStore({str(self.path)!r}{state})"

    # ---- opening

    def _open_folder(self) -> None:
        p = self.path
        if p.exists() and not p.is_dir():
            raise NotAStoreError(f"{p}: is a file, not a folder. A JsonlStore keeps one file per "
                                 "conversation in a folder: pass the path of a folder (it is created).")
        marker = p / MARKER
        try:
            if not p.exists():
                if not p.parent.is_dir():
                    raise StoreError(f"{p}: its parent folder does not exist. Create it or pass another path.")
                p.mkdir(exist_ok=True)
            if marker.exists():
                self._check_marker(marker)
                return
            tmp = p / f".{MARKER}.{os.getpid()}.tmp"
            tmp.write_text(_canon({"format": FORMAT, "version": VERSION}) + "\n")
            os.replace(tmp, marker)
        except PermissionError as exc:
            raise StoreReadOnlyError(f"{p}: cannot be written ({exc.strerror}). Pass a folder you can "
                                     "write to. Nothing was changed.") from exc
        except OSError as exc:
            if isinstance(exc, StoreError):
                raise
            raise self._os_error(exc, "open the store", p) from exc

    def _check_marker(self, marker: Path) -> None:
        try:
            data = json.loads(marker.read_text())
            fmt, version = data["format"], data["version"]
        except (ValueError, KeyError, TypeError) as exc:
            raise NotAStoreError(f"{marker}: is not a providerkit store's marker ({exc}). It was not "
                                 "changed; pass another folder.") from exc
        if fmt != FORMAT:
            raise NotAStoreError(f"{self.path}: is a store of another kind ({fmt!r}). It was not changed.")
        if not isinstance(version, int) or version > VERSION:
            raise StoreVersionError(f"{self.path}: was written by a newer providerkit_nb (format {version}; "
                                    f"this one knows up to {VERSION}). It was not changed. Upgrade "
                                    "providerkit_nb to open it.")

    def _os_error(self, exc: OSError, doing: str, where: Path | None = None) -> StoreError:
        where = where or self.path
        if exc.errno in NO_ROOM_ERRNOS:
            reason = no_room_reason(self.path) or exc.strerror or "the disk is full"
            return StoreError(f"{where}: {no_room_text(doing, reason)} ({exc.strerror})")
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            return StoreReadOnlyError(f"{where}: cannot {doing} ({exc.strerror}). Make the folder "
                                      "writable or pass another one. Nothing was changed by this call.")
        return StoreError(f"{where}: failed to {doing} ({exc.strerror or exc}). Nothing was changed by this call.")

    # ---- reading

    def _conv(self, conversation_id: str) -> _Conversation:
        conv = self._convs.get(conversation_id)
        if conv is None:
            conv = self._convs[conversation_id] = _Conversation(
                self.path / _file_name(conversation_id), conversation_id
            )
        return conv

    def _read(self, conversation_id: str) -> _Conversation:
        """The conversation, with whatever was appended since this object last looked."""
        self._check_open()
        conv = self._conv(conversation_id)
        try:
            self._sync(conv)
        except ValueError as exc:
            conv.reset()
            raise StoreCorruptError(
                f"{self!r}: {exc}. The store reads the rest of the folder; fix that line by hand "
                "(or move the file away) to read this conversation."
            ) from None
        except OSError as exc:
            conv.reset()
            raise self._os_error(exc, "read a conversation", conv.path) from exc
        return conv

    def _sync(self, conv: _Conversation) -> None:
        try:
            st = os.stat(conv.path)
        except FileNotFoundError:
            if conv.ident is not None or conv.rows:
                conv.reset()  # deleted
            return
        ident = (st.st_dev, st.st_ino)
        if ident != conv.ident or st.st_size < conv.offset:  # replaced, or cut by another appender
            conv.reset()
            conv.ident = ident
        if st.st_size == conv.offset:
            return
        with open(conv.path, "rb") as f:
            f.seek(conv.offset)
            data = f.read(st.st_size - conv.offset)
        pos = conv.offset
        if conv.newline_owed and data.startswith(b"\n"):
            data, pos = data[1:], pos + 1  # the newline an appender added after a whole record
        conv.newline_owed = False
        end = data.rfind(b"\n") + 1
        reader = conv.reader
        for raw in data[:end].split(b"\n")[:-1]:
            conv.line += 1
            for rec in reader.line(raw, conv.line, pos):
                conv.apply(rec)
            pos += len(raw) + 1
            if not reader.held:
                conv.plain_end = pos
        fragment = data[end:]
        if fragment and whole_record(fragment):  # only its newline is missing
            conv.line += 1
            for rec in reader.line(fragment, conv.line, pos):
                conv.apply(rec)
            pos += len(fragment)
            conv.newline_owed = True
            if not reader.held:
                conv.plain_end = pos
        conv.offset = pos  # a torn fragment after it is not counted: a reader ignores it

    # ---- writing

    def _write(self, fd: int, data: bytes) -> None:
        """One write of whole lines, then fsync (the crash explorer counts its points here)."""
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        if self.fsync:
            os.fsync(fd)

    def _append(self, conversation_id: str, text: str, digest: str, created_at: datetime | None) -> SavedMessage:
        at = created_at or now_utc()

        def lines(conv: _Conversation) -> tuple[list[str], SavedMessage]:
            seq = len(conv.rows) + 1
            return [_message_line(conversation_id, seq, digest, at, text, None)], SavedMessage(
                seq, digest, at, conv.hashes.get(digest))

        return self._append_lines(conversation_id, "save a message", lines)

    def _append_step(
        self, conversation_id: str, rows: Sequence[tuple[str, str]], marks: Sequence[tuple[str, str, str]]
    ) -> list[SavedMessage]:
        at = now_utc()

        def lines(conv: _Conversation) -> tuple[list[str], list[SavedMessage]]:
            step = uuid.uuid4().hex[:16] if len(rows) + len(marks) > 1 else None
            out: list[str] = []
            saved: list[SavedMessage] = []
            seen = dict(conv.hashes)
            seq = len(conv.rows)
            for text, digest in rows:
                seq += 1
                out.append(_message_line(conversation_id, seq, digest, at, text, step))
                saved.append(SavedMessage(seq, digest, at, seen.get(digest)))
                seen[digest] = seq
            for call_id, state, detail in marks:
                out.append(_mark_line(conversation_id, call_id, state, detail, at, step))
            if step is not None:
                out.append(_canon({"conversation_id": conversation_id, "done": len(out), "step": step}) + "\n")
            return out, saved

        return self._append_lines(conversation_id, "save a step", lines)

    def _append_lines(
        self, conversation_id: str, doing: str, build: Callable[[_Conversation], tuple[list[str], _T]]
    ) -> _T:
        import fcntl

        with self._lock:
            conv = self._read(conversation_id)
            try:
                fd = self._fd(conv)
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError as exc:
                raise self._os_error(exc, doing, conv.path) from exc
            try:
                conv = self._read(conversation_id)  # under the lock: everything written before
                if conv.ident != _ident(fd):  # deleted (and perhaps made again) meanwhile
                    self._close_fd(conv)
                    return self._append_lines(conversation_id, doing, build)
                size = os.fstat(fd).st_size
                prefix = self._clean_tail(conv, fd, size)
                lines, result = build(conv)
                data = (prefix + "".join(lines)).encode()
                try:
                    self._write(fd, data)
                except OSError as exc:
                    try:  # nothing of this write stays: a reader would take it for a torn tail
                        os.ftruncate(fd, conv.offset)
                    except OSError:
                        pass
                    raise self._os_error(exc, doing, conv.path) from exc
                self._read(conversation_id)
                return result
            finally:
                try:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                except OSError:
                    pass

    def _clean_tail(self, conv: _Conversation, fd: int, size: int) -> str:
        """Before appending: cut off a torn last line and an unfinished step (what every reader
        ignores), or owe a whole record its newline (what every reader keeps)."""
        cut = min(conv.reader.pending_at.values(), default=None)
        if cut is not None and cut < conv.plain_end:
            cut = None  # lines came after that step (another writer's): readers skip it where it is
        if cut is None and size > conv.offset:
            cut = conv.offset
        if cut is not None:
            os.ftruncate(fd, cut)
            if self.fsync:
                os.fsync(fd)
            conv.reset()
            self._sync(conv)
        return "\n" if conv.newline_owed else ""

    def _fd(self, conv: _Conversation) -> int:
        if conv.fd is None:
            flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
            conv.fd = os.open(conv.path, flags, 0o644)
            if conv.ident is None:
                conv.ident = _ident(conv.fd)
        return conv.fd

    def _close_fd(self, conv: _Conversation) -> None:
        if conv.fd is not None:
            try:
                os.close(conv.fd)
            finally:
                conv.fd = None
                conv.reset()

    # ---- primitives

    def records(self, conversation_id: str) -> list[StoredMessage]:
        with self._lock:
            return list(self._read(conversation_id).rows)

    def conversations(self) -> list[ConversationInfo]:
        with self._lock:
            self._check_open()
            out = []
            for entry in sorted(os.scandir(self.path), key=lambda e: e.name):
                if not entry.name.endswith(".jsonl") or not entry.is_file():
                    continue
                cid = entry.name[: -len(".jsonl")] if not entry.name.startswith("~") else _first_id(entry.path)
                if cid is None:
                    continue
                conv = self._read(cid)
                meta = conv.meta or ConversationMeta()
                updated = next((r.created_at for r in reversed(conv.rows) if r.created_at), None)
                if updated is None:
                    updated = datetime.fromtimestamp(entry.stat().st_mtime).astimezone()
                out.append(ConversationInfo(cid, len(conv.rows), updated, meta.session_id, meta.title,
                                            meta.model, list(meta.tags)))
        return newest_first(out)

    def _delete(self, conversation_id: str) -> int:
        import fcntl

        with self._lock:
            conv = self._read(conversation_id)
            n = len(conv.rows)
            if not conv.path.exists():
                return 0
            fd = self._fd(conv)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                os.unlink(conv.path)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise self._os_error(exc, "delete a conversation", conv.path) from exc
            finally:
                self._close_fd(conv)  # closing it lets go of the lock
            return n

    def _read_meta(self, conversation_id: str) -> ConversationMeta | None:
        with self._lock:
            meta = self._read(conversation_id).meta
            return merge_meta(meta, {}) if meta is not None else None

    def _write_meta(self, conversation_id: str, changes: dict[str, Any]) -> ConversationMeta:
        def lines(conv: _Conversation) -> tuple[list[str], ConversationMeta]:
            meta = merge_meta(conv.meta, changes)
            return [_canon({"conversation_id": conversation_id, "meta": meta.to_dict()}) + "\n"], meta

        return self._append_lines(conversation_id, "write metadata", lines)

    def _ensure_session_id(self, conversation_id: str, candidate: str) -> str:
        with self._lock:
            meta = self._read(conversation_id).meta
            if meta is not None and meta.session_id:
                return meta.session_id

            def lines(conv: _Conversation) -> tuple[list[str], str]:
                if conv.meta is not None and conv.meta.session_id:
                    return [], conv.meta.session_id
                meta = merge_meta(conv.meta, {"session_id": candidate})
                return [_canon({"conversation_id": conversation_id, "meta": meta.to_dict()}) + "\n"], candidate

            return self._append_lines(conversation_id, "create a session id", lines)

    def _add_lost_turn(self, conversation_id: str, body: str, error: str) -> int:
        def lines(conv: _Conversation) -> tuple[list[str], int]:
            line = (f'{{"conversation_id":{_canon(conversation_id)},"created_at":{_canon(_ts(now_utc()))},'
                    f'"error":{_canon(error)},"lost_turn":{body}}}\n')
            return [line], len(conv.lost) + 1

        return self._append_lines(conversation_id, "save a lost turn", lines)

    def _lost_turns(self, conversation_id: str) -> Sequence[tuple[int, str, str, datetime]]:
        with self._lock:
            return list(self._read(conversation_id).lost)

    def _put_mark(self, conversation_id: str, call_id: str, state: str, detail: str) -> None:
        at = now_utc()
        self._append_lines(conversation_id, "mark a tool call",
                           lambda conv: ([_mark_line(conversation_id, call_id, state, detail, at, None)], None))

    def _marks(self, conversation_id: str) -> Sequence[tuple[str, str, str, datetime]]:
        with self._lock:
            marks = self._read(conversation_id).marks
            return [(cid, state, detail, at) for cid, (state, detail, at) in marks.items()]

    def _add_usage(self, conversation_id: str, record: str) -> None:
        line = (f'{{"conversation_id":{_canon(conversation_id)},"created_at":{_canon(_ts(now_utc()))},'
                f'"usage":{record}}}\n')
        self._append_lines(conversation_id, "save a turn's usage", lambda conv: ([line], None))

    def _usages(self, conversation_id: str) -> Sequence[tuple[int, str]]:
        with self._lock:
            return list(enumerate(self._read(conversation_id).usage, 1))

    # ---- the per-conversation guard: an OS file lock in the folder (guard.FileGuard)

    def _guard_base(self) -> Path:
        return self.path / ".providerkit"

    def _guard_failed(self, conversation_id: str, where: Path, exc: OSError) -> Exception:
        return StoreReadOnlyError(f"{self.path}: cannot lock conversation {conversation_id!r} in {where} "
                                  f"({exc.strerror}); make the folder writable.")

    def close(self) -> None:
        with self._lock:
            if not self.closed:
                self.closed = True
                for conv in self._convs.values():
                    if conv.fd is not None:
                        os.close(conv.fd)
                        conv.fd = None
                self._convs.clear()
            self._close_guard()


def _ident(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


def _message_line(cid: str, seq: int, digest: str, at: datetime, text: str, step: str | None) -> str:
    # spliced rather than re-encoded, so the saved bytes are carried over verbatim (keys sorted)
    tail = f',"step":{_canon(step)}' if step is not None else ""
    return (f'{{"conversation_id":{_canon(cid)},"created_at":{_canon(_ts(at))},"hash":{_canon(digest)},'
            f'"message":{text},"seq":{seq}{tail}}}\n')


def _mark_line(cid: str, call_id: str, state: str, detail: str, at: datetime, step: str | None) -> str:
    tail = f',"step":{_canon(step)}' if step is not None else ""
    return (f'{{"call_id":{_canon(call_id)},"conversation_id":{_canon(cid)},"detail":{detail},'
            f'"mark":{_canon(state)}{tail},"updated_at":{_canon(_ts(at))}}}\n')


def _first_id(path: str) -> str | None:
    """The conversation id a file's first line names (for files named by a digest)."""
    try:
        with open(path, "rb") as f:
            first = f.readline()
        cid = json.loads(first).get("conversation_id")
    except (OSError, ValueError, AttributeError):
        return None
    return cid if isinstance(cid, str) and cid else None
