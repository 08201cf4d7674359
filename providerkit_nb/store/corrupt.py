"""Rows that do not decode: what ``load(..., on_corrupt="skip")`` left out, and its warning.

A store row whose body is no longer canonical message JSON (a file edited by hand, a damaged
disk) stops ``load`` with ``StoreCorruptError`` by default, naming the store, the conversation
and the row's seq. With ``on_corrupt="skip"`` the other rows load, the result's ``skipped``
lists what was left out, and a ``StoreCorruptWarning`` says so once, so a notebook shows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.errors import StoreCorruptWarning  # noqa: F401 (defined at the bottom, kept importable here)
from ..core.messages import Message

__all__ = ["ON_CORRUPT", "SkippedRow", "LoadedMessages", "StoreCorruptWarning", "check_on_corrupt", "skipped_note"]

ON_CORRUPT = ("raise", "skip")


@dataclass(slots=True, frozen=True)
class SkippedRow:
    """One row ``load`` left out: where it is and why it did not decode."""

    store: str
    conversation_id: str
    seq: int
    reason: str


class LoadedMessages(list[Message]):
    """The messages ``load`` returns (a plain list), plus the rows it skipped (if asked to)."""

    def __init__(self, messages: Any = (), skipped: list[SkippedRow] | None = None) -> None:
        super().__init__(messages)
        self.skipped: list[SkippedRow] = skipped if skipped is not None else []


def check_on_corrupt(value: str) -> str:
    if value not in ON_CORRUPT:
        raise ValueError(f"on_corrupt must be one of {ON_CORRUPT}, got {value!r}")
    return value


def skipped_note(rows: list[SkippedRow]) -> str:
    first = rows[0]
    seqs = ", ".join(str(r.seq) for r in rows[:20]) + (" ..." if len(rows) > 20 else "")
    return (
        f"{first.store}: conversation {first.conversation_id!r}: skipped {len(rows)} row(s) that do not "
        f"decode (seq {seqs}); the rest loaded. records() shows each row to fix by hand."
    )
