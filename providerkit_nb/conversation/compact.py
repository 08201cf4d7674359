"""Compaction for a stored conversation: which part of an append-only history is live, and
how a conversation summarises its older part with its own provider.

The store keeps everything (it is the record); compacting appends the summary as a user turn
(``[Earlier conversation, summarized]`` then the text) followed by copies of the kept recent
messages. From then on the live history is the system messages plus everything from the
newest summary on, so a reload or another process sees the same compacted history.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.compaction import SUMMARY_PREFIX, summary_request
from ..core.errors import ErrorKind, ProviderError
from ..core.messages import Message, SystemMessage, UserMessage
from ..core.turn import Turn, collect_turn

__all__ = ["is_summary", "active_history", "compaction_messages", "summarize"]

# per-call options that make no sense for the summary request
_NOT_FOR_SUMMARY = frozenset({"json", "json_with_tools", "tool_choice", "parallel_tool_calls", "on_activity"})


def is_summary(m: Message) -> bool:
    return isinstance(m, UserMessage) and isinstance(m.content, str) and m.content.startswith(SUMMARY_PREFIX)


def active_history(messages: Sequence[Message]) -> list[Message]:
    """The system messages and everything from the newest summary on (all of it if none)."""
    last = next((i for i in range(len(messages) - 1, -1, -1) if is_summary(messages[i])), None)
    if last is None:
        return list(messages)
    return [m for m in messages[:last] if isinstance(m, SystemMessage)] + list(messages[last:])


def compaction_messages(messages: Sequence[Message], cut: int, summary: str) -> list[Message]:
    """What to append to the store: the summary turn, then the kept tail (non-system)."""
    return [UserMessage(SUMMARY_PREFIX + summary), *(m for m in messages[cut:] if not isinstance(m, SystemMessage))]


def summarize(provider: Any, older: Sequence[Message], options: dict[str, Any]) -> Turn:
    """Ask ``provider`` to summarise ``older``; the turn (with its usage) is returned."""
    opts = {k: v for k, v in options.items() if k not in _NOT_FOR_SUMMARY}
    turn = collect_turn(provider.create_stream(summary_request(older), None, **opts))
    if not turn.message.content.strip():
        raise ProviderError(
            getattr(provider, "id", "provider"), ErrorKind.OVERLOAD,
            "compaction: the summary came back empty; nothing was changed (try again, or compact=False)",
        )
    return turn
