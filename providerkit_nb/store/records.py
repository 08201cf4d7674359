"""The plain records every store shares, and how a message becomes a stored row.

They sit below both ``base`` (the stores) and ``jsonl`` (the export format), so each of those
imports them from here and neither imports the other's caller: the import graph stays acyclic.
``base`` re-exports every name, so ``from providerkit_nb.store.base import StoredMessage`` holds.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..core.errors import MessageFormatError
from ..core.json_input import read_json
from ..core.messages import Message, MessageInput, dump_message, message_from_dict
from ..core.turn import Turn

__all__ = [
    "SavedMessage",
    "StoredMessage",
    "ConversationInfo",
    "ConversationMeta",
    "LostTurn",
    "ImportResult",
    "encode_message",
    "now_utc",
]


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
        return message_from_dict(read_json(self.json), self.seq - 1)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "hash": self.hash,
            "created_at": self.created_at.isoformat() if self.created_at else None,
            "message": read_json(self.json),
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


def encode_message(message: MessageInput) -> tuple[str, str]:
    """(canonical JSON text, sha256 hex) of one message; a dict is validated first."""
    if isinstance(message, dict):
        message = message_from_dict(message)
    for j, call in enumerate(getattr(message, "tool_calls", None) or ()):
        if not isinstance(call.arguments, str):  # saved, it would load as a corrupt row
            raise MessageFormatError(
                f"tool_calls[{j}].arguments of call {call.id!r} is a {type(call.arguments).__name__}; "
                "a call's arguments are its JSON text: pass json.dumps(arguments). Nothing was saved.",
                f".tool_calls[{j}].arguments",
            )
    try:
        text = dump_message(message)
    except AttributeError:
        raise TypeError(
            f"a store saves canonical messages (SystemMessage, UserMessage, AssistantMessage, "
            f"ToolMessage or their dicts), got {type(message).__name__}"
        ) from None
    return text, hashlib.sha256(text.encode()).hexdigest()
