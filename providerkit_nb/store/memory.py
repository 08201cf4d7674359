"""MemoryStore: the Store interface in a dict, for tests and throwaway notebooks.

Nothing survives the process; everything else (seq numbers, hashes, duplicates, metadata,
lost turns, JSONL) behaves as in the durable stores. Thread-safe with one lock.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from .base import (
    BaseStore,
    ConversationInfo,
    ConversationMeta,
    SavedMessage,
    StoredMessage,
    merge_meta,
    newest_first,
    now_utc,
)

__all__ = ["MemoryStore"]


class MemoryStore(BaseStore):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: dict[str, list[StoredMessage]] = {}
        self._last_by_hash: dict[str, dict[str, int]] = {}
        self._meta: dict[str, tuple[ConversationMeta, datetime]] = {}
        self._lost: dict[str, list[tuple[int, str, str, datetime]]] = {}
        self._lost_id = 0
        self._call_marks: dict[str, dict[str, tuple[str, str, str, datetime]]] = {}
        self._usage: dict[str, list[str]] = {}

    def __repr__(self) -> str:
        return f"MemoryStore({len(self._rows)} conversations, not saved to disk)"

    def _append(
        self, conversation_id: str, text: str, digest: str, created_at: datetime | None
    ) -> SavedMessage:
        with self._lock:
            self._check_open()
            return self._add_row(conversation_id, text, digest, created_at or now_utc())

    def _add_row(self, conversation_id: str, text: str, digest: str, at: datetime) -> SavedMessage:
        rows = self._rows.setdefault(conversation_id, [])
        seen = self._last_by_hash.setdefault(conversation_id, {})
        dup = seen.get(digest)
        row = StoredMessage(len(rows) + 1, digest, at, text)
        rows.append(row)
        seen[digest] = row.seq
        return SavedMessage(row.seq, digest, at, dup)

    def _append_step(
        self, conversation_id: str, rows: Sequence[tuple[str, str]], marks: Sequence[tuple[str, str, str]]
    ) -> list[SavedMessage]:
        with self._lock:  # one hold of the lock: another thread sees the step whole or not at all
            self._check_open()
            at = now_utc()
            saved = [self._add_row(conversation_id, text, digest, at) for text, digest in rows]
            for call_id, state, detail in marks:
                self._set_mark(conversation_id, call_id, state, detail)
            return saved

    def records(self, conversation_id: str) -> list[StoredMessage]:
        with self._lock:
            self._check_open()
            return list(self._rows.get(conversation_id, ()))

    def conversations(self) -> list[ConversationInfo]:
        with self._lock:
            self._check_open()
            out = []
            for cid in set(self._rows) | set(self._meta):
                rows = self._rows.get(cid, [])
                meta, meta_at = self._meta.get(cid, (ConversationMeta(), None))
                updated = rows[-1].created_at if rows else meta_at
                out.append(
                    ConversationInfo(cid, len(rows), updated, meta.session_id, meta.title,
                                     meta.model, list(meta.tags))
                )
        return newest_first(out)

    def _delete(self, conversation_id: str) -> int:
        with self._lock:
            self._check_open()
            self._meta.pop(conversation_id, None)
            self._lost.pop(conversation_id, None)
            self._call_marks.pop(conversation_id, None)
            self._usage.pop(conversation_id, None)
            self._last_by_hash.pop(conversation_id, None)
            return len(self._rows.pop(conversation_id, ()))

    def _read_meta(self, conversation_id: str) -> ConversationMeta | None:
        with self._lock:
            self._check_open()
            got = self._meta.get(conversation_id)
            return merge_meta(got[0], {}) if got else None

    def _write_meta(self, conversation_id: str, changes: dict[str, Any]) -> ConversationMeta:
        with self._lock:
            self._check_open()
            got = self._meta.get(conversation_id)
            meta = merge_meta(got[0] if got else None, changes)
            self._meta[conversation_id] = (meta, now_utc())
            return merge_meta(meta, {})

    def _ensure_session_id(self, conversation_id: str, candidate: str) -> str:
        with self._lock:
            self._check_open()
            got = self._meta.get(conversation_id)
            if got and got[0].session_id:
                return got[0].session_id
            meta = merge_meta(got[0] if got else None, {"session_id": candidate})
            self._meta[conversation_id] = (meta, now_utc())
            return candidate

    def _add_lost_turn(self, conversation_id: str, body: str, error: str) -> int:
        with self._lock:
            self._check_open()
            self._lost_id += 1
            self._lost.setdefault(conversation_id, []).append((self._lost_id, body, error, now_utc()))
            return self._lost_id

    def _lost_turns(self, conversation_id: str) -> Sequence[tuple[int, str, str, datetime]]:
        with self._lock:
            self._check_open()
            return list(self._lost.get(conversation_id, ()))

    def _put_mark(self, conversation_id: str, call_id: str, state: str, detail: str) -> None:
        with self._lock:
            self._check_open()
            self._set_mark(conversation_id, call_id, state, detail)

    def _set_mark(self, conversation_id: str, call_id: str, state: str, detail: str) -> None:
        marks = self._call_marks.setdefault(conversation_id, {})
        marks.pop(call_id, None)  # re-inserted last: the order is the order of the latest marks
        marks[call_id] = (call_id, state, detail, now_utc())

    def _marks(self, conversation_id: str) -> Sequence[tuple[str, str, str, datetime]]:
        with self._lock:
            self._check_open()
            return list(self._call_marks.get(conversation_id, {}).values())

    def _add_usage(self, conversation_id: str, record: str) -> None:
        with self._lock:
            self._check_open()
            self._usage.setdefault(conversation_id, []).append(record)

    def _usages(self, conversation_id: str) -> Sequence[tuple[int, str]]:
        with self._lock:
            self._check_open()
            return list(enumerate(self._usage.get(conversation_id, ()), 1))

    def close(self) -> None:
        self.closed = True

