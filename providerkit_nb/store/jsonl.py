"""JSONL export and import: one canonical JSON record per line.

A message line is ``{"conversation_id", "created_at", "hash", "message", "seq"}`` (keys sorted,
compact, the message embedded byte for byte as stored); a metadata line is
``{"conversation_id", "meta"}``. A bare canonical message line (``{"role": ...}``) is accepted
too, so a hand-written list of messages imports. A crash while writing can leave the last line
cut short: the reader ignores such a torn tail and warns; ``write_jsonl(..., append=True)``
truncates it first so the next record is not glued onto the fragment.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from ..core.json_input import JsonInputError, read_json
from ..core.messages import Message, message_from_dict
from .records import ConversationMeta, StoredMessage, encode_message, now_utc

__all__ = ["read_jsonl", "write_jsonl", "JsonlData", "write_records"]

DEFAULT_ID = "default"


def _canon(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(slots=True)
class JsonlData:
    """What a JSONL file holds, per conversation, in file order."""

    conversations: dict[str, list[StoredMessage]] = field(default_factory=dict)
    meta: dict[str, ConversationMeta] = field(default_factory=dict)
    torn_tail: bool = False
    source: str = "<stream>"

    def messages(self, conversation_id: str | None = None) -> list[Message]:
        """The messages of one conversation (the only one, when the file holds just one)."""
        if conversation_id is None:
            if len(self.conversations) != 1:
                raise ValueError(
                    f"{self.source} holds {len(self.conversations)} conversations "
                    f"({sorted(self.conversations)}); pass conversation_id"
                )
            conversation_id = next(iter(self.conversations))
        return [r.message for r in self.conversations.get(conversation_id, [])]


# --------------------------------------------------------------------------- writing


def _message_line(cid: str, r: StoredMessage) -> str:
    # Spliced rather than re-encoded so the stored bytes are carried over verbatim.
    at = f'"created_at":{_canon(r.created_at.isoformat())},' if r.created_at else ""
    return (
        f'{{"conversation_id":{_canon(cid)},{at}"hash":{_canon(r.hash)},'
        f'"message":{r.json},"seq":{int(r.seq)}}}\n'
    )


def _meta_line(cid: str, meta: ConversationMeta) -> str:
    return _canon({"conversation_id": cid, "meta": meta.to_dict()}) + "\n"


def write_records(
    target: str | Path | IO[str],
    conversations: Iterable[tuple[str, ConversationMeta | None, Sequence[StoredMessage]]],
    *,
    append: bool = False,
) -> int:
    """Write (id, meta, rows) triples; returns lines written. A path is fsynced before return."""
    lines = 0

    def emit(f: IO[str]) -> None:
        nonlocal lines
        for cid, meta, rows in conversations:
            if meta is not None and not meta.is_empty:
                f.write(_meta_line(cid, meta))
                lines += 1
            for r in rows:
                f.write(_message_line(cid, r))
                lines += 1

    if isinstance(target, str | Path):
        path = Path(target)
        if append and path.exists():
            _truncate_torn_tail(path)
        with open(path, "a" if append else "w", encoding="utf-8", newline="\n") as f:
            emit(f)
            f.flush()
            os.fsync(f.fileno())
    else:
        emit(target)
        flush = getattr(target, "flush", None)
        if flush is not None:
            flush()
    return lines


def write_jsonl(
    target: str | Path | IO[str],
    data: Sequence[Message | dict] | Mapping[str, Sequence[Message | dict]],
    *,
    conversation_id: str = DEFAULT_ID,
    meta: Mapping[str, ConversationMeta] | None = None,
    append: bool = False,
) -> int:
    """Write messages as canonical JSONL; returns lines written.

    ``data`` is a list of messages (saved under ``conversation_id``) or a mapping of
    conversation id to messages. ``append=True`` adds to an existing file, cutting off a torn
    last line first.
    """
    convos = dict(data) if isinstance(data, Mapping) else {conversation_id: data}
    at = now_utc()

    def triples() -> Iterable[tuple[str, ConversationMeta | None, list[StoredMessage]]]:
        for cid, msgs in convos.items():
            rows = []
            for i, m in enumerate(msgs, 1):
                text, digest = encode_message(m)
                rows.append(StoredMessage(i, digest, at, text))
            yield cid, (meta or {}).get(cid), rows

    return write_records(target, triples(), append=append)


def _truncate_torn_tail(path: Path) -> None:
    with open(path, "rb+") as f:
        size = f.seek(0, os.SEEK_END)
        if size == 0:
            return
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return
        # Find the last newline; everything after it is a fragment of an unfinished record.
        pos = size
        chunk = 65536
        cut = 0
        while pos > 0:
            start = max(0, pos - chunk)
            f.seek(start)
            block = f.read(pos - start)
            i = block.rfind(b"\n")
            if i >= 0:
                cut = start + i + 1
                break
            pos = start
        warnings.warn(
            f"{path}: the last line was cut short ({size - cut} bytes without a newline, likely a "
            f"crash mid-write); truncating it before appending",
            stacklevel=3,
        )
        f.truncate(cut)
        f.flush()
        os.fsync(f.fileno())


# --------------------------------------------------------------------------- reading


def read_jsonl(
    source: str | Path | IO[str], *, conversation_id: str | None = None
) -> JsonlData:
    """Read a JSONL export (or a file of bare canonical messages).

    Bare message lines belong to ``conversation_id`` (default: the file's stem, or "default").
    A malformed line in the middle raises naming its number; a torn last line (no newline,
    does not parse) is ignored with a warning that says so.
    """
    if isinstance(source, str | Path):
        path = Path(source)
        name = str(path)
        default_id = conversation_id or path.name.split(".")[0] or DEFAULT_ID
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
    else:
        name = getattr(source, "name", "<stream>")
        default_id = conversation_id or DEFAULT_ID
        text = source.read()
        if isinstance(text, bytes):
            text = text.decode("utf-8")
    return _parse(io.StringIO(text), str(name), default_id, text.endswith("\n") or not text)


def _parse(f: IO[str], name: str, default_id: str, ends_with_newline: bool) -> JsonlData:
    out = JsonlData(source=name)
    lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    last = len(lines)
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = read_json(line)
        except JsonInputError as exc:
            if n == last and not ends_with_newline:
                out.torn_tail = True
                warnings.warn(
                    f"{name}: ignoring a torn last line {n} ({len(line)} characters, no newline, "
                    f"does not parse: {exc.reason}); it is what a crash mid-write leaves behind",
                    stacklevel=3,
                )
                break
            raise ValueError(f"{name}: line {n} is not valid JSON ({exc}); fix or remove it") from exc
        _take(out, obj, n, name, default_id)
    return out


def _take(out: JsonlData, obj: Any, n: int, name: str, default_id: str) -> None:
    where = f"{name}: line {n}"
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    cid: Any  # a non-empty str once checked
    if "role" in obj:  # a bare canonical message
        cid, msg, created, stated = default_id, obj, None, None
    else:
        cid = obj.get("conversation_id")
        if not isinstance(cid, str) or not cid:
            raise ValueError(f"{where}: missing 'conversation_id' (or a bare message with 'role')")
        if "meta" in obj:
            try:
                out.meta[cid] = ConversationMeta.from_dict(obj["meta"])
            except (ValueError, TypeError) as exc:
                raise ValueError(f"{where}: bad metadata: {exc}") from exc
            out.conversations.setdefault(cid, [])
            return
        extra = set(obj) - {"conversation_id", "created_at", "hash", "message", "seq"}
        if extra or "message" not in obj:
            raise ValueError(
                f"{where}: expected keys conversation_id, message and optionally seq, created_at, "
                f"hash; got {sorted(obj)}"
            )
        msg, created, stated = obj["message"], obj.get("created_at"), obj.get("hash")
    try:
        text, digest = encode_message(message_from_dict(msg))
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from exc
    if stated is not None and stated != hashlib.sha256(text.encode()).hexdigest():
        raise ValueError(
            f"{where}: the message does not match its hash (edited by hand?); remove the "
            f"'hash' field of that line to accept the edit"
        )
    rows = out.conversations.setdefault(cid, [])
    at = datetime.fromisoformat(created) if isinstance(created, str) else None
    rows.append(StoredMessage(len(rows) + 1, digest, at, text))
