"""``canonical``: our own messages, as a JSON array or as a JSONL export (one conversation per
``conversation_id``; ``thread=`` picks one when the file holds several). No wire: only the
generic rules apply."""

from __future__ import annotations

import warnings
from typing import Any

from ..core.messages import message_from_dict
from .base import MultipleThreads, Source, Transcript, TranscriptError
from .provider_dialects import detect_format

_ROLES = frozenset({"system", "user", "assistant", "tool"})


def _is_jsonl(source: Source) -> bool:
    if source.path is None:
        return False
    lines = source.first_json_lines(3)
    if not lines:
        return source.path.suffix == ".jsonl" and source.head().strip() == b""
    return all(_line(x) for x in lines)


def _line(x: Any) -> bool:
    """A line of our JSONL export: a bare message, or a record with conversation_id."""
    if not isinstance(x, dict):
        return False
    if "conversation_id" in x:
        return "message" in x or "meta" in x
    return x.get("role") in _ROLES


def detect(source: Source, name: str) -> bool:
    data = source.json()
    if isinstance(data, list):
        if not all(isinstance(x, dict) and x.get("role") in _ROLES for x in data):
            return False
        try:
            return detect_format(data) == "canonical"
        except ValueError:
            return False
    if isinstance(data, dict):  # a one-line JSONL file
        return _line(data)
    return _is_jsonl(source)


def load(source: Source, name: str, *, thread: str | None = None) -> Transcript:
    data = source.json()
    if isinstance(data, list):
        try:
            messages = [message_from_dict(d, i) for i, d in enumerate(data)]
        except ValueError as exc:
            raise TranscriptError(f"{source.name}: {exc}") from exc
        return Transcript(source.name, name, messages)
    if source.path is None:
        raise TranscriptError(f"{source.name}: expected a list of canonical messages or a JSONL file")
    from ..store.jsonl import read_jsonl

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            export = read_jsonl(source.path)
        except (ValueError, OSError) as exc:
            raise TranscriptError(str(exc) if str(source.path) in str(exc) else f"{source.name}: {exc}") from exc
    convs = export.conversations
    if thread is None:
        if len(convs) > 1:
            raise MultipleThreads(source.name, list(convs))
        if not convs:
            raise TranscriptError(f"{source.name}: holds no conversation")
        thread = next(iter(convs))
    elif thread not in convs:
        raise TranscriptError(f"{source.name}: no conversation {thread!r}; it has {', '.join(convs)}")
    t = Transcript(source.name, name, [r.message for r in convs[thread]], thread=thread)
    t.warnings.extend(str(w.message) for w in caught)
    if export.torn_tail:
        t.skip("torn_last_line")
    return t
