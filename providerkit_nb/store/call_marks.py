"""Call marks: what a store knows about a tool call beyond the messages.

The canonical history says only that a call was made and, later, what it returned. When a
person approves calls, the store must also know whether a call was still waiting for that
person when the process died (then it never started, and the next ``resume`` asks again) or
whether it had started (then it may have partly run), and how a started call ended. A mark is
kept beside the history, one per (conversation, call id), the latest state winning; the message
JSON never changes.

A call's life: ``asking`` (only under ``approve=``) -> ``started`` -> ``finished`` (its result
is saved; ``detail["kind"]`` says ok, failed, timeout or late), or ``denied`` (a person said no:
it never ran), ``stopped`` (the Stop button landed inside it: what it did before is done, the
rest never ran, and no result was saved), ``lost`` (it had started when the process ended: the
next sender found it without a result). ``answered`` is a result saved without running it
(a call left unanswered by a new message, settled by hand, or still open when the conversation
went on: then the text the model read is its result and ``detail`` is
``{"settled": "model", "by": "library", "was": <stopped, lost...>}``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..core.json_input import read_json
from ..core.repair import DENIED_TEXT, INTERRUPTED_STOPPED

__all__ = [
    "CallMark",
    "ASKING",
    "STARTED",
    "FINISHED",
    "DENIED",
    "STOPPED",
    "LOST",
    "ANSWERED",
    "CALL_STATES",
    "OPEN_STATES",
    "encode_mark",
]

ASKING = "asking"  # saved, and a person is being asked: it has not started
STARTED = "started"  # about to run (approved, or edited: ``detail`` says how), or running
FINISHED = "finished"  # it ran and its result is saved
DENIED = "denied"  # a person declined it: it never ran
STOPPED = "stopped"  # Stop landed inside it while it ran; no result saved
LOST = "lost"  # it had started when its process ended; no result saved
ANSWERED = "answered"  # a result was saved without running it (not answered, settled, told on going on)
CALL_STATES = (ASKING, STARTED, FINISHED, DENIED, STOPPED, LOST, ANSWERED)
OPEN_STATES = (STARTED, STOPPED, LOST)  # ran (or began to) and has no result yet


@dataclass(slots=True, frozen=True)
class CallMark:
    """The latest state of one call, with what was decided (``detail``, plain JSON data)."""

    call_id: str
    state: str
    updated_at: datetime
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "call_id": self.call_id,
            "state": self.state,
            "updated_at": self.updated_at.isoformat(),
            "detail": dict(self.detail),
        }


def encode_mark(call_id: str, state: str, detail: dict[str, Any] | None) -> str:
    """Check a mark and return its detail as compact JSON text (what every store keeps)."""
    if not isinstance(call_id, str) or not call_id:
        raise ValueError(f"call_id must be a non-empty string, got {call_id!r}")
    if state not in CALL_STATES:
        raise ValueError(f"call state must be one of {CALL_STATES}, got {state!r}")
    if detail is not None and not isinstance(detail, dict):
        raise ValueError(f"call mark detail must be a dict, got {type(detail).__name__}")
    return json.dumps(detail or {}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def decode_mark(call_id: str, state: str, detail: str, at: datetime) -> CallMark:
    """A stored row back into a mark; ValueError when its detail is not a JSON object."""
    data = read_json(detail) if detail else {}
    if not isinstance(data, dict):
        raise ValueError("its detail is not a JSON object")
    return CallMark(call_id, state, at, data)


# What the model reads for a call that has no result, where its mark says more than
# "interrupted". One rule for the Conversation and for a reader of the store's file.
TOLD_BY_STATE = {STOPPED: INTERRUPTED_STOPPED, DENIED: DENIED_TEXT}


def told_by_marks(marks: Mapping[str, CallMark]) -> dict[str, str]:
    """Call id -> what the model is told instead of the missing result, from the calls' marks."""
    return {cid: TOLD_BY_STATE[m.state] for cid, m in marks.items() if m.state in TOLD_BY_STATE}
