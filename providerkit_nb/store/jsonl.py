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
import json
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from ..core.json_input import JsonInputError, read_json
from ..core.messages import Message, MessageInput, message_from_dict
from .records import ConversationMeta, StoredMessage, encode_message, now_utc

__all__ = ["read_jsonl", "write_jsonl", "JsonlData", "write_records", "LineReader", "Record", "whole_record"]

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
    unfinished_steps: int = 0  # steps whose closing line never came (left out)

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
    data: Sequence[MessageInput] | Mapping[str, Sequence[MessageInput]],
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


# --------------------------------------------------------------------------- torn tails


def whole_record(fragment: bytes) -> bool:
    """Is an unterminated last line a whole record that only misses its newline, rather than a
    torn one? Every reader and every appender of these files asks this one question, so they
    agree on what is torn: a whole record is kept by both (an appender writes the missing
    newline first), a torn one is dropped by both (an appender cuts it off first). A line cut
    inside a multi-byte character is torn like any other."""
    try:
        return isinstance(read_json(fragment.decode("utf-8")), dict)
    except (UnicodeDecodeError, JsonInputError):
        return False


def last_line_start(f: IO[bytes], size: int) -> int:
    """The offset just after the last newline of a file open for binary reading (0 if none)."""
    pos = size
    chunk = 65536
    while pos > 0:
        start = max(0, pos - chunk)
        f.seek(start)
        i = f.read(pos - start).rfind(b"\n")
        if i >= 0:
            return start + i + 1
        pos = start
    return 0


def _truncate_torn_tail(path: Path) -> None:
    with open(path, "rb+") as f:
        size = f.seek(0, os.SEEK_END)
        if size == 0:
            return
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return
        cut = last_line_start(f, size)
        f.seek(cut)
        if whole_record(f.read(size - cut)):
            f.seek(size)
            f.write(b"\n")  # a whole record that lost only its newline: kept, as readers keep it
        else:
            warnings.warn(
                f"{path}: the last line was cut short ({size - cut} bytes without a newline, likely "
                f"a crash mid-write); truncating it before appending",
                stacklevel=3,
            )
            f.truncate(cut)
        f.flush()
        os.fsync(f.fileno())


# --------------------------------------------------------------------------- reading

# What a line of these files can be, by the key that names it (keys are sorted in every line):
#   message    {"conversation_id", "created_at"?, "hash"?, "message", "seq"?, "step"?}
#   bare       {"role", ...} (a canonical message on its own)
#   meta       {"conversation_id", "meta"}
#   mark       {"call_id", "conversation_id", "detail", "mark", "step"?, "updated_at"}   (JsonlStore)
#   usage      {"conversation_id", "created_at", "usage"}                               (JsonlStore)
#   lost turn  {"conversation_id", "created_at", "error", "lost_turn"}                  (JsonlStore)
#   done       {"conversation_id", "done", "step"}: the step's lines before it are whole (JsonlStore)
# Lines that carry a "step" count only once their "done" line has been read: a step (a
# compaction's summary and copies, a decision and its result) is seen whole or not at all.
_MESSAGE_KEYS = frozenset({"conversation_id", "created_at", "hash", "message", "seq", "step"})
_MARK_KEYS = frozenset({"call_id", "conversation_id", "detail", "mark", "step", "updated_at"})
_USAGE_KEYS = frozenset({"conversation_id", "created_at", "usage"})
_LOST_KEYS = frozenset({"conversation_id", "created_at", "error", "lost_turn"})
_DONE_KEYS = frozenset({"conversation_id", "done", "step"})
_MESSAGE_AT = '","message":'


@dataclass(slots=True)
class Record:
    """One line, read: ``kind`` is message, meta, mark, usage, lost or done."""

    kind: str
    conversation_id: str
    line: int
    text: str = ""  # message: its canonical text; mark: detail; usage: the record; lost: the turn
    hash: str = ""
    at: datetime | None = None
    meta: ConversationMeta | None = None
    call_id: str = ""
    state: str = ""
    error: str = ""
    step: str | None = None
    count: int = 0


class LineReader:
    """The lines of one JSONL file (an export or a JsonlStore file), read in order into records.

    ``strict`` (an export being read or imported): a line that does not read, or a message that
    is not a canonical message or does not match its stated hash, is an error naming its line.
    Otherwise (a store's own file) the text and stated hash are kept as they are (a line that
    does not read is taken for a damaged message row) and ``load`` judges the row, as it judges
    a row of any store. The lines of a step are held back until its "done" line;
    ``pending`` keeps the unfinished ones (``pending_at``: the byte offset of each one's first
    line, where a store's appender cuts an unfinished step off).
    """

    def __init__(self, name: str, default_id: str = DEFAULT_ID, *, strict: bool = True) -> None:
        self.name = name
        self.default_id = default_id
        self.strict = strict
        self.pending: dict[str, list[Record]] = {}
        self.pending_at: dict[str, int] = {}
        self.held = False  # the last line read was held back (a line of an unfinished step)

    def line(self, raw: bytes, n: int, offset: int = 0) -> list[Record]:
        """The records line ``n`` (starting at byte ``offset``) makes count now."""
        self.held = False
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            if not self.strict:
                return [self._damaged(raw.decode("utf-8", "replace"), n)]
            raise ValueError(f"{self.name}: line {n} is not UTF-8 text ({exc.reason} at byte {exc.start}); "
                             "fix or remove it") from None
        if not text.strip():
            return []
        try:
            obj = read_json(text)
        except JsonInputError as exc:
            if not self.strict:
                return [self._damaged(text, n)]
            raise ValueError(f"{self.name}: line {n} is not valid JSON ({exc}); fix or remove it") from exc
        rec = self._record(obj, n, text)
        if rec.kind == "done":
            assert rec.step is not None
            held = self.pending.pop(rec.step, [])
            self.pending_at.pop(rec.step, None)
            if len(held) != rec.count:
                raise ValueError(
                    f"{self.name}: line {n} closes step {rec.step!r} of {rec.count} lines, but "
                    f"{len(held)} came before it; the file was edited by hand: remove that step's lines"
                )
            return held
        if rec.step is not None:
            self.pending_at.setdefault(rec.step, offset)
            self.pending.setdefault(rec.step, []).append(rec)
            self.held = True
            return []
        return [rec]

    def _damaged(self, text: str, n: int) -> Record:
        """A line of a store's file that does not read (edited by hand, a damaged disk): a
        message row whose body is what the line holds where a message goes, under the hash the
        line states (if any), so ``load`` names it by its seq, or skips it, like a damaged row of
        any store."""
        i, j = text.find(_MESSAGE_AT), text.rfind(',"seq":')
        k = text.find('"hash":"')
        stated = text[k + 8 : k + 72] if k >= 0 else ""
        body = text[i + len(_MESSAGE_AT) : j] if 0 <= i < j else text
        return Record("message", self.default_id, n, body, stated)

    def _record(self, obj: Any, n: int, text: str) -> Record:
        where = f"{self.name}: line {n}"
        if not isinstance(obj, dict):
            raise ValueError(f"{where}: expected a JSON object, got {type(obj).__name__}")
        if "role" in obj:  # a bare canonical message
            body, digest = self._message(obj, None, where, None)
            return Record("message", self.default_id, n, body, digest)
        cid = obj.get("conversation_id")
        if not isinstance(cid, str) or not cid:
            raise ValueError(f"{where}: missing 'conversation_id' (or a bare message with 'role')")
        step = obj.get("step")
        if step is not None and not isinstance(step, str):
            raise ValueError(f"{where}: 'step' must be a string")
        try:
            if "meta" in obj:
                _keys(obj, frozenset({"conversation_id", "meta"}), where)
                return Record("meta", cid, n, meta=ConversationMeta.from_dict(obj["meta"]))
            if "done" in obj:
                _keys(obj, _DONE_KEYS, where)
                if not isinstance(step, str) or type(obj["done"]) is not int:
                    raise ValueError("a 'done' line needs the step's id and its number of lines")
                return Record("done", cid, n, step=step, count=obj["done"])
            if "mark" in obj:
                _keys(obj, _MARK_KEYS, where)
                call, state, detail = obj.get("call_id"), obj["mark"], obj.get("detail", {})
                if not isinstance(call, str) or not isinstance(state, str) or not isinstance(detail, dict):
                    raise ValueError("a mark needs a call_id, a state and a detail object")
                return Record("mark", cid, n, _canon(detail), at=_when(obj.get("updated_at")), call_id=call,
                              state=state, step=step)
            if "usage" in obj:
                _keys(obj, _USAGE_KEYS, where)
                return Record("usage", cid, n, _canon(obj["usage"]), at=_when(obj.get("created_at")))
            if "lost_turn" in obj:
                _keys(obj, _LOST_KEYS, where)
                return Record("lost", cid, n, _canon(obj["lost_turn"]), at=_when(obj.get("created_at")),
                              error=str(obj.get("error", "")))
        except (TypeError, ValueError) as exc:
            if str(exc).startswith(where):
                raise
            raise ValueError(f"{where}: {exc}") from exc
        if (set(obj) - _MESSAGE_KEYS) or "message" not in obj:
            raise ValueError(
                f"{where}: expected keys conversation_id, message and optionally seq, created_at, "
                f"hash; got {sorted(obj)}"
            )
        stated = obj.get("hash")
        body, digest = self._message(obj["message"], stated if isinstance(stated, str) else None, where, text)
        created = obj.get("created_at")
        try:
            at = datetime.fromisoformat(created) if isinstance(created, str) else None
        except ValueError as exc:
            raise ValueError(f"{where}: created_at {created!r} is not a timestamp") from exc
        return Record("message", cid, n, body, digest, at, step=step)

    def _message(self, msg: Any, stated: str | None, where: str, line: str | None) -> tuple[str, str]:
        if not self.strict:
            if stated is not None and line is not None:
                # the message as written, byte for byte: between '"hash":"<hex>","message":' and
                # the ',"seq":' that ends the line (keys are sorted), when it still hashes right
                i, j = line.find(_MESSAGE_AT), line.rfind(',"seq":')
                if 0 <= i < j:
                    body = line[i + len(_MESSAGE_AT) : j]
                    if hashlib.sha256(body.encode()).hexdigest() == stated:
                        return body, stated
            body = _canon(msg)  # load judges it (and names the row) as it judges any stored row
            return body, stated or hashlib.sha256(body.encode()).hexdigest()
        try:
            body, digest = encode_message(message_from_dict(msg))
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from exc
        if stated is not None and stated != digest:
            raise ValueError(
                f"{where}: the message does not match its hash (edited by hand?); remove the "
                f"'hash' field of that line to accept the edit"
            )
        return body, digest


def _keys(obj: dict[str, Any], allowed: frozenset[str], where: str) -> None:
    extra = set(obj) - allowed
    if extra:
        raise ValueError(f"{where}: unexpected field(s) {sorted(extra)}")


def _when(value: Any) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"the timestamp {value!r} is not text")
    return datetime.fromisoformat(value)


def read_jsonl(
    source: str | Path | IO[str], *, conversation_id: str | None = None
) -> JsonlData:
    """Read a JSONL export (or a file of bare canonical messages, or a JsonlStore file).

    Bare message lines belong to ``conversation_id`` (default: the file's stem, or "default").
    A malformed line in the middle raises naming its number; a torn last line (no newline, not
    a whole record, a cut inside a multi-byte character included) is ignored with a warning
    that says so, and so are the lines of a step whose closing line never came.
    """
    if isinstance(source, str | Path):
        path = Path(source)
        name = str(path)
        default_id = conversation_id or path.name.split(".")[0] or DEFAULT_ID
        data = path.read_bytes()
    else:
        name = getattr(source, "name", "<stream>")
        default_id = conversation_id or DEFAULT_ID
        got = source.read()
        data = got.encode("utf-8") if isinstance(got, str) else got
    return _parse(data, str(name), default_id)


def _parse(data: bytes, name: str, default_id: str) -> JsonlData:
    out = JsonlData(source=name)
    reader = LineReader(name, default_id)
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    if tail and whole_record(tail):
        lines.append(tail)  # a whole record that only lost its newline
        tail = b""
    for n, raw in enumerate(lines, 1):
        for rec in reader.line(raw, n):
            _take(out, rec)
    if tail:
        out.torn_tail = True
        warnings.warn(
            f"{name}: ignoring a torn last line {len(lines) + 1} ({len(tail)} bytes, no newline, not a "
            "whole record); it is what a crash mid-write leaves behind",
            stacklevel=3,
        )
    if reader.pending:
        out.unfinished_steps = len(reader.pending)
        warnings.warn(
            f"{name}: ignoring {len(reader.pending)} step(s) whose closing line never came (lines "
            f"{', '.join(str(r[0].line) for r in reader.pending.values())}...): a crash while a step was "
            "written; the rest was read",
            stacklevel=3,
        )
    return out


def _take(out: JsonlData, rec: Record) -> None:
    cid = rec.conversation_id
    if rec.kind == "meta":
        assert rec.meta is not None
        out.meta[cid] = rec.meta
        out.conversations.setdefault(cid, [])
    elif rec.kind == "message":
        rows = out.conversations.setdefault(cid, [])
        rows.append(StoredMessage(len(rows) + 1, rec.hash, rec.at, rec.text))
    # marks, usage and lost turns are a JsonlStore's side tables: not part of an export's history
