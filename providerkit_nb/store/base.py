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
import threading
import uuid
import warnings
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import IO, Any, Protocol, runtime_checkable

from ..core.errors import (  # noqa: F401 (defined at the bottom, kept importable here)
    ConversationBusy,
    Error,
    NotAStoreError,
    StoreCorruptError,
    StoreError,
    StoreLockedError,
    StoreReadOnlyError,
    StoreVersionError,
)
from ..core.fastjson import loads as fast_loads
from ..core.fastjson import loads_utf8
from ..core.json_input import read_json
from ..core.messages import Message, MessageInput, message_from_dict
from ..core.turn import Turn
from .call_marks import CallMark, decode_mark, encode_mark
from .corrupt import LoadedMessages, SkippedRow, StoreCorruptWarning, check_on_corrupt, skipped_note
from .jsonl import read_jsonl, write_records
from .records import (
    ConversationInfo,
    ConversationMeta,
    ImportResult,
    LostTurn,
    SavedMessage,
    StoredMessage,
    encode_message,
    now_utc,
)

__all__ = [
    "Store",
    "BaseStore",
    "SavedMessage",
    "StoredMessage",
    "ConversationInfo",
    "ConversationMeta",
    "LostTurn",
    "CallMark",
    "ImportResult",
    "StoreError",
    "NotAStoreError",
    "StoreCorruptError",
    "StoreLockedError",
    "StoreReadOnlyError",
    "StoreVersionError",
    "ConversationBusy",
    "ends_unanswered",
    "encode_message",
    "now_utc",
]


# --------------------------------------------------------------------------- errors


@runtime_checkable
class Store(Protocol):
    """What every store offers. ``save`` is durable when it returns."""

    def save(self, conversation_id: str, message: MessageInput) -> SavedMessage: ...
    def save_step(
        self, conversation_id: str, messages: Sequence[MessageInput], *,
        marks: Iterable[tuple[str, str] | tuple[str, str, dict[str, Any] | None]] = (),
    ) -> list[SavedMessage]: ...
    def load(self, conversation_id: str, *, on_corrupt: str = "raise") -> list[Message]: ...
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
    def mark_call(
        self, conversation_id: str, call_id: str, state: str, detail: dict[str, Any] | None = None
    ) -> None: ...
    def call_marks(self, conversation_id: str) -> dict[str, CallMark]: ...
    def save_turn_usage(self, conversation_id: str, record: dict[str, Any]) -> None: ...
    def turn_usage(self, conversation_id: str) -> list[dict[str, Any]]: ...
    def hold(self, conversation_id: str, *, wait: float = 0.0) -> AbstractContextManager[None]: ...
    def export_jsonl(self, target: str | Path | IO[str], ids: Iterable[str] | None = None) -> int: ...
    def import_jsonl(self, source: str | Path | IO[str]) -> ImportResult: ...
    def close(self) -> None: ...


# --------------------------------------------------------------------------- shared logic

_META_FIELDS = ("session_id", "title", "model", "tags")
_UNSET: Any = object()


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
    ``_lost_turns`` and ``close``; ``_bodies`` (what ``load`` reads) comes from ``records``
    unless a store can hand over less.
    """

    closed: bool = False

    # ---- messages

    def save(self, conversation_id: str, message: MessageInput) -> SavedMessage:
        """Append one message; durable when this returns. Never skips a duplicate (see
        ``SavedMessage.duplicate_of``)."""
        text, digest = encode_message(message)
        return self._append(_check_id(conversation_id), text, digest, None)

    def save_step(
        self,
        conversation_id: str,
        messages: Sequence[MessageInput],
        *,
        marks: Iterable[tuple[str, str] | tuple[str, str, dict[str, Any] | None]] = (),
    ) -> list[SavedMessage]:
        """Save what one step of a conversation writes, seen whole or not at all after a crash:
        ``messages`` in order, then ``marks`` ((call id, state) or (call id, state, detail), as
        ``mark_call`` takes them). One transaction where the store has them (SQLite,
        PostgreSQL); a JsonlStore closes the step with a line of its own, and its readers count
        the step only once that line is there. Durable when this returns."""
        cid = _check_id(conversation_id)
        rows = [encode_message(m) for m in messages]
        mark_rows: list[tuple[str, str, str]] = []
        for mark in marks:
            call_id, state, *rest = mark
            mark_rows.append((call_id, state, encode_mark(call_id, state, rest[0] if rest else None)))
        if not rows and not mark_rows:
            return []
        return self._append_step(cid, rows, mark_rows)

    def load(self, conversation_id: str, *, on_corrupt: str = "raise") -> LoadedMessages:
        """The conversation's messages in save order ([] for an unknown id).

        A row that does not decode raises StoreCorruptError naming the store, the conversation
        and the seq; ``on_corrupt="skip"`` loads the rest, warns, and lists the rows it left
        out on the result's ``skipped``.
        """
        skip = check_on_corrupt(on_corrupt) == "skip"
        out = LoadedMessages()
        append = out.append
        for seq, digest, body in self._bodies(conversation_id):
            message = _sound(body, digest, seq - 1) if type(seq) is int else None
            if message is None:  # not the common case: the exact reading, and its error
                try:
                    message = self._decode(conversation_id, seq, digest, body)
                except StoreCorruptError as exc:
                    if not skip:
                        raise
                    out.skipped.append(SkippedRow(repr(self), conversation_id, seq, str(exc.__cause__)))
                    continue
            append(message)
        if out.skipped:
            warnings.warn(skipped_note(out.skipped), StoreCorruptWarning, stacklevel=2)
        return out

    def _bodies(self, conversation_id: str) -> Sequence[tuple[int, str, str | bytes]]:
        """(seq, hash, body) of each row in save order, for ``load``: the body as saved, as
        text or as its UTF-8 bytes (a store that can hand over the bytes spares a copy)."""
        return [(r.seq, r.hash, r.json) for r in self.records(conversation_id)]

    def _decode(self, conversation_id: str, seq: int, digest: str, body: object) -> Message:
        """One row, read exactly and validated field by field: the message, or StoreCorruptError
        naming the row and why (``__cause__``)."""
        try:
            if type(seq) is not int:  # a row edited by hand
                raise ValueError(f"its seq is {seq!r}, not a whole number")
            text = body.decode() if isinstance(body, bytes) else body
            if not isinstance(text, str):
                raise ValueError(f"its body is {type(text).__name__}, not text")
            if hashlib.sha256(text.encode()).hexdigest() != digest:
                raise ValueError("its content no longer matches its hash")
            return message_from_dict(read_json(text), seq - 1)
        except ValueError as exc:  # JsonInputError, MessageFormatError and UnicodeError too
            raise StoreCorruptError(
                f"{self!r}: conversation {conversation_id!r} row seq={seq} does not decode as a "
                f"canonical message ({exc}); load(..., on_corrupt='skip') loads the rest, and "
                "records() shows the row to fix by hand"
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
        out = []
        for i, body, err, at in self._lost_turns(_check_id(conversation_id)):
            try:
                turn = Turn.from_dict(read_json(body))
            except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
                raise StoreCorruptError(
                    f"{self!r}: conversation {conversation_id!r} lost turn {i} does not decode "
                    f"({type(exc).__name__}: {str(exc)[:200]}); delete it or fix the row by hand"
                ) from exc
            out.append(LostTurn(i, conversation_id, turn, err, at))
        return out

    # ---- call marks

    def mark_call(
        self, conversation_id: str, call_id: str, state: str, detail: dict[str, Any] | None = None
    ) -> None:
        """Record the latest state of one call beside the history (see ``call_marks``): durable
        when this returns; the messages are not touched."""
        text = encode_mark(call_id, state, detail)
        self._put_mark(_check_id(conversation_id), call_id, state, text)

    def call_marks(self, conversation_id: str) -> dict[str, CallMark]:
        """call id -> its latest mark, for the calls of this conversation that have one."""
        marks: dict[str, CallMark] = {}
        for call_id, state, detail, at in self._marks(_check_id(conversation_id)):
            try:
                marks[call_id] = decode_mark(call_id, state, detail, at)
            except ValueError as exc:
                raise StoreCorruptError(
                    f"{self!r}: the mark of call {call_id!r} in conversation {conversation_id!r} "
                    f"does not decode ({exc}); delete that row of the call marks to forget it"
                ) from exc
        return marks

    # ---- usage per turn

    def save_turn_usage(self, conversation_id: str, record: dict[str, Any]) -> None:
        """Keep one streamed turn's usage and timings (plain JSON data) beside the history, so
        ``turns_frame`` and ``usage_frame`` cover the conversation after a restart too."""
        if not isinstance(record, dict):
            raise TypeError(f"save_turn_usage takes a dict, got {type(record).__name__}")
        text = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        self._add_usage(_check_id(conversation_id), text)

    def turn_usage(self, conversation_id: str) -> list[dict[str, Any]]:
        """The saved usage rows of a conversation, oldest first."""
        out = []
        for i, text in self._usages(_check_id(conversation_id)):
            try:
                row = json.loads(text)
                if not isinstance(row, dict):
                    raise ValueError("not a JSON object")
            except ValueError as exc:
                raise StoreCorruptError(
                    f"{self!r}: usage row {i} of conversation {conversation_id!r} does not decode "
                    f"({exc}); delete that row of the turn usage to forget it"
                ) from exc
            out.append(row)
        return out

    # ---- JSONL

    def export_jsonl(
        self, target: str | Path | IO[str], ids: Iterable[str] | None = None
    ) -> int:
        """Write conversations (all, or ``ids``) as canonical JSONL; returns lines written."""
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

    # ---- running: the per-conversation guard, and what is left to resume

    def hold(self, conversation_id: str, *, wait: float = 0.0) -> AbstractContextManager[None]:
        """Hold the conversation while the ``with`` body runs; a second holder (another thread
        or process) gets ``ConversationBusy`` after ``wait`` seconds. See ``store/guard.py``."""
        from . import guard

        cid = _check_id(conversation_id)

        def busy(waited: float) -> Exception:
            how = f"after waiting {waited:g} s" if waited > 0 else "now"
            return ConversationBusy(
                f"{self!r}: conversation {cid!r} is being sent or resumed by another worker "
                f"{how}; wait for it to finish (or pass a wait timeout) rather than run it twice",
                cid,
            )

        return guard.hold(cid, lambda: self._claim(cid), lambda: self._unclaim(cid), busy, wait)

    def _claim(self, cid: str) -> bool:
        with _HELD_LOCK:
            held: set[str] = self.__dict__.setdefault("_held_conversations", set())
            if cid in held:
                return False
            held.add(cid)
        try:
            if self._lock_conversation(cid):
                return True
        except BaseException:
            self._unclaim_local(cid)
            raise
        self._unclaim_local(cid)
        return False

    def _unclaim(self, cid: str) -> None:
        try:
            self._unlock_conversation(cid)
        finally:
            self._unclaim_local(cid)

    def _unclaim_local(self, cid: str) -> None:
        with _HELD_LOCK:
            self.__dict__.get("_held_conversations", set()).discard(cid)

    def _lock_conversation(self, conversation_id: str) -> bool:
        """The store's cross-process lock (none for a store only one process can open)."""
        return True

    def _unlock_conversation(self, conversation_id: str) -> None:
        return None

    def unfinished(self) -> list[str]:
        """Ids of the conversations whose stored history ends unanswered (a user message with no
        answer, tool calls without results, results the model has not seen), read from the
        history itself. Not crash detection: a conversation running right now is listed too.
        A conversation with a row that does not decode is listed as well (it needs a person, and
        its own ``load`` names the row), so one damaged row does not hide the others."""
        return sorted(info.id for info in self.conversations() if self._unanswered(info.id))

    def _unanswered(self, conversation_id: str) -> bool:
        try:
            return ends_unanswered(self.load(conversation_id))
        except StoreCorruptError:
            return True

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

    def _append_step(
        self, conversation_id: str, rows: Sequence[tuple[str, str]], marks: Sequence[tuple[str, str, str]]
    ) -> list[SavedMessage]:
        """Rows (text, hash) and marks (call id, state, detail text) as one step. This default,
        for a store with no transaction of its own, writes them one after another."""
        saved = [self._append(conversation_id, text, digest, None) for text, digest in rows]
        for call_id, state, detail in marks:
            self._put_mark(conversation_id, call_id, state, detail)
        return saved

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

    def _put_mark(self, conversation_id: str, call_id: str, state: str, detail: str) -> None:
        raise NotImplementedError

    def _marks(self, conversation_id: str) -> Sequence[tuple[str, str, str, datetime]]:
        raise NotImplementedError

    def _add_usage(self, conversation_id: str, record: str) -> None:
        raise NotImplementedError

    def _usages(self, conversation_id: str) -> Sequence[tuple[int, str]]:
        raise NotImplementedError

    def close(self) -> None:
        self.closed = True


_sha256 = hashlib.sha256


def _sound(body: object, digest: str, index: int) -> Message | None:
    """The message of a row whose bytes still hash to its stored hash, read by the fast JSON
    parser (``fast-json``) and built by ``message_from_dict``; None for anything else, which
    ``_decode`` then reads exactly and refuses or accepts (so what ``load`` returns or raises
    does not depend on this path). orjson differs from ``json`` only on integers beyond 64 bits,
    and a valid message holds numbers only inside its reasoning payloads: a row with one of
    those is parsed again by ``fastjson.loads``, which is exact."""
    try:
        raw = body if type(body) is bytes else body.encode()  # type: ignore[attr-defined]  # a str, or it raises and the row takes the checked path
        if _sha256(raw).hexdigest() != digest:
            return None
        d = loads_utf8(raw)
        if type(d) is not dict:
            return None
        if "reasoning_details" in d or "reasoning_items" in d:
            d = fast_loads(raw.decode())
        return message_from_dict(d, index)
    except (ValueError, TypeError, AttributeError, RecursionError):
        return None


_HELD_LOCK = threading.Lock()


def ends_unanswered(messages: Sequence[Message]) -> bool:
    """True when the last message that is not a system message still wants a model turn."""
    from ..core.messages import AssistantMessage, SystemMessage

    last = next((m for m in reversed(messages) if not isinstance(m, SystemMessage)), None)
    if last is None:
        return False
    return not (isinstance(last, AssistantMessage) and not last.tool_calls)


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
