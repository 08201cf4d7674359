"""The Store protocol, its plain records, and the logic every store shares.

A store keeps each conversation as an ordered list of canonical message JSON texts, one row per
``save``, each with a sequence number (1, 2, 3, ... per conversation, assigned by the store inside
the write), a UTC timestamp and the sha256 of the text. ``load`` decodes exactly the bytes that
were saved. Saving the same message twice is never dropped: the second row is written and the
returned ``SavedMessage.duplicate_of`` names the earlier seq with the same hash, so a caller can
notice (and a viewer can flag) an accidental double save.

Encoding, hashing, JSONL export/import and the context-manager plumbing live here in
``BaseStore`` so the memory, SQLite and PostgreSQL stores only implement storage primitives.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Protocol, runtime_checkable

from ..core.messages import Message, dump_message, message_from_dict
from ..core.turn import Turn

__all__ = [
    "Store",
    "BaseStore",
    "SavedMessage",
    "StoredMessage",
    "ConversationInfo",
    "ConversationMeta",
    "LostTurn",
    "ImportResult",
    "StoreError",
    "NotAStoreError",
    "StoreCorruptError",
    "StoreLockedError",
    "StoreReadOnlyError",
    "StoreVersionError",
    "encode_message",
    "now_utc",
]


# --------------------------------------------------------------------------- errors


class StoreError(Exception):
    """A store could not do what was asked. The message names the file or server and the fix."""


class NotAStoreError(StoreError):
    """The file exists but is not a providerkit store (another database, a text file)."""


class StoreCorruptError(StoreError):
    """The file is a store but SQLite reports it damaged, or a row does not decode."""


class StoreLockedError(StoreError):
    """Another process held the write lock longer than the busy timeout."""


class StoreReadOnlyError(StoreError):
    """The file or its directory cannot be written."""


class StoreVersionError(StoreError):
    """The store was written by a newer providerkit_nb than this one."""


# --------------------------------------------------------------------------- records


def now_utc() -> datetime:
    return datetime.now(UTC)


def _dt(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return datetime.fromisoformat(str(value))


@dataclass(slots=True, frozen=True)
class SavedMessage:
    """What ``save`` returns once the row is durable.

    ``duplicate_of`` is the seq of the most recent earlier row of the same conversation with the
    same content hash (None when the content is new). The row is saved either way.
    """

    seq: int
    hash: str
    created_at: datetime
    duplicate_of: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "hash": self.hash,
            "created_at": self.created_at.isoformat(),
            "duplicate_of": self.duplicate_of,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SavedMessage:
        return cls(d["seq"], d["hash"], _dt(d["created_at"]), d.get("duplicate_of"))


@dataclass(slots=True, frozen=True)
class StoredMessage:
    """One stored row: ``json`` is the canonical text exactly as saved.

    ``created_at`` is None only for rows read from a JSONL file that did not say when.
    """

    seq: int
    hash: str
    created_at: datetime | None
    json: str

    @property
    def message(self) -> Message:
        return message_from_dict(json.loads(self.json), self.seq - 1)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "hash": self.hash,
            "created_at": self.created_at.isoformat() if self.created_at else None,
            "message": json.loads(self.json),
        }


@dataclass(slots=True)
class ConversationMeta:
    """Per-conversation metadata. ``session_id`` is sent to the provider so a resumed
    conversation keeps its prompt cache across restarts."""

    session_id: str | None = None
    title: str | None = None
    model: str | None = None
    tags: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "title": self.title,
            "model": self.model,
            "tags": list(self.tags),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ConversationMeta:
        extra = set(d) - {"session_id", "title", "model", "tags"}
        if extra:
            raise ValueError(f"conversation meta: unknown field(s) {sorted(extra)}")
        return cls(d.get("session_id"), d.get("title"), d.get("model"), list(d.get("tags") or []))

    @property
    def is_empty(self) -> bool:
        return not (self.session_id or self.title or self.model or self.tags)


@dataclass(slots=True)
class ConversationInfo:
    """One line of ``conversations()``: counts and last update, plus the metadata."""

    id: str
    messages: int
    updated_at: datetime | None
    session_id: str | None = None
    title: str | None = None
    model: str | None = None
    tags: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "messages": self.messages,
            "updated_at": self.updated_at.isoformat() if self.updated_at else None,
            "session_id": self.session_id,
            "title": self.title,
            "model": self.model,
            "tags": list(self.tags),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ConversationInfo:
        up = d.get("updated_at")
        return cls(
            d["id"], d["messages"], _dt(up) if up else None, d.get("session_id"),
            d.get("title"), d.get("model"), list(d.get("tags") or []),
        )


@dataclass(slots=True)
class LostTurn:
    """A partial turn kept for inspection when a stream failed; never part of the history."""

    id: int
    conversation_id: str
    turn: Turn
    error: str
    created_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "conversation_id": self.conversation_id,
            "turn": self.turn.to_dict(),
            "error": self.error,
            "created_at": self.created_at.isoformat(),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LostTurn:
        return cls(
            d["id"], d["conversation_id"], Turn.from_dict(d["turn"]), d["error"], _dt(d["created_at"])
        )


@dataclass(slots=True)
class ImportResult:
    """Per conversation: rows added and rows already present (so a re-import adds 0)."""

    added: dict[str, int] = field(default_factory=dict)
    already_present: dict[str, int] = field(default_factory=dict)
    torn_tail: bool = False

    @property
    def total_added(self) -> int:
        return sum(self.added.values())


# --------------------------------------------------------------------------- protocol


@runtime_checkable
class Store(Protocol):
    """What every store offers. ``save`` is durable when it returns."""

    def save(self, conversation_id: str, message: Message | dict) -> SavedMessage: ...
    def load(self, conversation_id: str) -> list[Message]: ...
    def records(self, conversation_id: str) -> list[StoredMessage]: ...
    def conversations(self) -> list[ConversationInfo]: ...
    def delete(self, conversation_id: str) -> int: ...
    def get_meta(self, conversation_id: str) -> ConversationMeta: ...
    def set_meta(
        self, conversation_id: str, *, session_id: Any = ..., title: Any = ..., model: Any = ...,
        tags: Any = ...,
    ) -> ConversationMeta: ...
    def session_id(self, conversation_id: str) -> str: ...
    def save_lost_turn(self, conversation_id: str, partial: Turn, error: BaseException | str) -> int: ...
    def lost_turns(self, conversation_id: str) -> list[LostTurn]: ...
    def export_jsonl(self, target: str | Path | IO[str], ids: Iterable[str] | None = None) -> int: ...
    def import_jsonl(self, source: str | Path | IO[str]) -> ImportResult: ...
    def close(self) -> None: ...


# --------------------------------------------------------------------------- shared logic

_META_FIELDS = ("session_id", "title", "model", "tags")
_UNSET: Any = object()


def encode_message(message: Message | dict) -> tuple[str, str]:
    """(canonical JSON text, sha256 hex) of one message; a dict is validated first."""
    if isinstance(message, dict):
        message = message_from_dict(message)
    try:
        text = dump_message(message)
    except AttributeError:
        raise TypeError(
            f"a store saves canonical messages (SystemMessage, UserMessage, AssistantMessage, "
            f"ToolMessage or their dicts), got {type(message).__name__}"
        ) from None
    return text, hashlib.sha256(text.encode()).hexdigest()


def _check_id(conversation_id: str) -> str:
    if not isinstance(conversation_id, str) or not conversation_id:
        raise ValueError(f"conversation_id must be a non-empty string, got {conversation_id!r}")
    return conversation_id


def _error_text(error: BaseException | str) -> str:
    if isinstance(error, BaseException):
        return f"{type(error).__name__}: {error}"
    return str(error)


def _check_tags(tags: Any) -> list[str]:
    if isinstance(tags, str) or not all(isinstance(t, str) for t in tags):
        raise ValueError(f"tags must be a list of strings, got {tags!r}")
    return list(tags)


class BaseStore:
    """Shared front half of every store: validation, encoding, hashing, JSONL, lifecycle.

    Subclasses implement the primitives ``_append``, ``records``, ``conversations``,
    ``_delete``, ``_read_meta``, ``_write_meta``, ``_ensure_session_id``, ``_add_lost_turn``,
    ``_lost_turns`` and ``close``.
    """

    closed: bool = False

    # ---- messages

    def save(self, conversation_id: str, message: Message | dict) -> SavedMessage:
        """Append one message; durable when this returns. Never skips a duplicate (see
        ``SavedMessage.duplicate_of``)."""
        text, digest = encode_message(message)
        return self._append(_check_id(conversation_id), text, digest, None)

    def load(self, conversation_id: str) -> list[Message]:
        """The conversation's messages in save order ([] for an unknown id)."""
        out: list[Message] = []
        for r in self.records(conversation_id):
            out.append(self._decode(conversation_id, r))
        return out

    def _decode(self, conversation_id: str, r: StoredMessage) -> Message:
        try:
            if hashlib.sha256(r.json.encode()).hexdigest() != r.hash:
                raise ValueError("its content no longer matches its hash")
            return message_from_dict(json.loads(r.json), r.seq - 1)
        except ValueError as exc:
            raise StoreCorruptError(
                f"{self!r}: conversation {conversation_id!r} row seq={r.seq} does not decode as a "
                f"canonical message ({exc}); export it with records() and fix it by hand"
            ) from exc

    def delete(self, conversation_id: str) -> int:
        """Remove a conversation, its metadata and its lost turns; returns messages removed."""
        return self._delete(_check_id(conversation_id))

    # ---- metadata

    def get_meta(self, conversation_id: str) -> ConversationMeta:
        return self._read_meta(_check_id(conversation_id)) or ConversationMeta()

    def set_meta(
        self,
        conversation_id: str,
        *,
        session_id: Any = _UNSET,
        title: Any = _UNSET,
        model: Any = _UNSET,
        tags: Any = _UNSET,
    ) -> ConversationMeta:
        """Change only the fields given (None clears one); returns the metadata now stored."""
        changes: dict[str, Any] = {}
        for name, value in (("session_id", session_id), ("title", title), ("model", model)):
            if value is _UNSET:
                continue
            if value is not None and not isinstance(value, str):
                raise ValueError(f"{name} must be a string or None, got {type(value).__name__}")
            changes[name] = value
        if tags is not _UNSET:
            changes["tags"] = _check_tags(tags or [])
        return self._write_meta(_check_id(conversation_id), changes)

    def session_id(self, conversation_id: str) -> str:
        """The conversation's session id, created and stored on first use, so a restarted
        process sends the resumed conversation under the same id."""
        return self._ensure_session_id(_check_id(conversation_id), str(uuid.uuid4()))

    # ---- lost turns

    def save_lost_turn(
        self, conversation_id: str, partial: Turn, error: BaseException | str
    ) -> int:
        """Keep a failed turn's partial snapshot for inspection (never in the history)."""
        if not isinstance(partial, Turn):
            raise TypeError(f"save_lost_turn takes a Turn snapshot, got {type(partial).__name__}")
        body = json.dumps(partial.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return self._add_lost_turn(_check_id(conversation_id), body, _error_text(error))

    def lost_turns(self, conversation_id: str) -> list[LostTurn]:
        return [
            LostTurn(i, conversation_id, Turn.from_dict(json.loads(body)), err, at)
            for i, body, err, at in self._lost_turns(_check_id(conversation_id))
        ]

    # ---- JSONL

    def export_jsonl(
        self, target: str | Path | IO[str], ids: Iterable[str] | None = None
    ) -> int:
        """Write conversations (all, or ``ids``) as canonical JSONL; returns lines written."""
        from .jsonl import write_records

        chosen = [c.id for c in self.conversations()] if ids is None else list(ids)
        return write_records(
            target, ((cid, self.get_meta(cid), self.records(cid)) for cid in chosen)
        )

    def import_jsonl(self, source: str | Path | IO[str]) -> ImportResult:
        """Add what the file holds and the store does not; importing twice adds nothing.

        Per conversation, the stored rows must be a prefix of the file's rows (same hashes in
        the same order) or the other way round; anything else is a conflict and raises before
        that conversation is touched.
        """
        from .jsonl import read_jsonl

        data = read_jsonl(source)
        result = ImportResult(torn_tail=data.torn_tail)
        plans: list[tuple[str, list[StoredMessage]]] = []
        for cid, rows in data.conversations.items():
            have = [r.hash for r in self.records(cid)]
            want = [r.hash for r in rows]
            n = min(len(have), len(want))
            if have[:n] != want[:n]:
                first = next(i for i in range(n) if have[i] != want[i])
                raise StoreError(
                    f"{self!r}: cannot import conversation {cid!r}: stored message seq={first + 1} "
                    f"differs from the file's; import it under another id or delete the stored one"
                )
            plans.append((cid, rows[n:]))
            result.already_present[cid] = n
        for cid, rows in plans:
            for r in rows:
                self._append(cid, r.json, r.hash, r.created_at)
            result.added[cid] = len(rows)
        for cid, meta in data.meta.items():
            current = self.get_meta(cid)
            fill = {k: getattr(meta, k) for k in _META_FIELDS if not getattr(current, k) and getattr(meta, k)}
            if fill:
                self.set_meta(cid, **fill)
        return result

    # ---- lifecycle

    def __enter__(self) -> BaseStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self.closed:
            raise StoreError(f"{self!r} is closed; open a new store object")

    # ---- primitives (subclasses)

    def _append(
        self, conversation_id: str, text: str, digest: str, created_at: datetime | None
    ) -> SavedMessage:
        raise NotImplementedError

    def records(self, conversation_id: str) -> list[StoredMessage]:
        raise NotImplementedError

    def conversations(self) -> list[ConversationInfo]:
        raise NotImplementedError

    def _delete(self, conversation_id: str) -> int:
        raise NotImplementedError

    def _read_meta(self, conversation_id: str) -> ConversationMeta | None:
        raise NotImplementedError

    def _write_meta(self, conversation_id: str, changes: dict[str, Any]) -> ConversationMeta:
        raise NotImplementedError

    def _ensure_session_id(self, conversation_id: str, candidate: str) -> str:
        raise NotImplementedError

    def _add_lost_turn(self, conversation_id: str, body: str, error: str) -> int:
        raise NotImplementedError

    def _lost_turns(self, conversation_id: str) -> Sequence[tuple[int, str, str, datetime]]:
        raise NotImplementedError

    def close(self) -> None:
        self.closed = True


def merge_meta(current: ConversationMeta | None, changes: dict[str, Any]) -> ConversationMeta:
    """Apply ``set_meta`` changes to what is stored (shared by every store)."""
    meta = ConversationMeta() if current is None else ConversationMeta(**current.to_dict())
    for k, v in changes.items():
        setattr(meta, k, list(v) if k == "tags" else v)
    return meta


def newest_first(infos: list[ConversationInfo]) -> list[ConversationInfo]:
    """Most recently updated first; ties (and never-updated) by id, so the order is stable."""
    infos.sort(key=lambda c: c.id)
    infos.sort(key=lambda c: c.updated_at.timestamp() if c.updated_at else float("-inf"), reverse=True)
    return infos
