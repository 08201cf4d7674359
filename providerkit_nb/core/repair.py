"""repair_history: make a history that was cut off mid-turn valid to send again.

PLACEHOLDER: returns the history unchanged until the real rules land.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .messages import Message

INTERRUPTED_READ_ONLY = (
    "This call was interrupted before it returned. It changed nothing, so it is safe to call again."
)
INTERRUPTED_MAY_HAVE_RUN = (
    "This call was interrupted before it returned. It may have partly run, so check its effect "
    "before calling it again."
)


@dataclass(slots=True)
class Repaired:
    messages: list[Message]
    interrupted: list[Any] = field(default_factory=list)
    changes: list[Any] = field(default_factory=list)


def repair_history(
    messages: Sequence[Message], is_read_only: Callable[[str], bool] | None = None
) -> Repaired:
    return Repaired(list(messages))
