"""The seam every foreign transcript format plugs into: a ``Source`` to read, a ``Transcript`` back.

A format module exposes ``detect(source, name) -> bool`` (cheap: the first bytes, a table name)
and ``load(source, name, *, thread=None) -> Transcript``; ``name`` is the format asked for, so
one module can serve several closely related formats. The Transcript's ``wire`` says whose rules
its messages are checked against (None: the generic rules only). Loading is read-only: files are opened for
reading and SQLite databases with ``mode=ro``; nothing from a source is executed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.messages import Message

__all__ = ["Source", "Transcript", "Marker", "TranscriptError", "MultipleThreads"]

_HEAD_BYTES = 64 * 1024


class TranscriptError(ValueError):
    """A source could not be read as the format asked for; the message names the source, the
    place (line, row, field) and what to do."""


class MultipleThreads(TranscriptError):
    """The source holds several threads and none was picked; ``threads`` lists them."""

    def __init__(self, source: str, threads: list[str]) -> None:
        self.threads = threads
        shown = ", ".join(threads[:20]) + (" ..." if len(threads) > 20 else "")
        super().__init__(
            f"{source} holds {len(threads)} threads ({shown}); pick one with thread=..."
        )


@dataclass(slots=True)
class Marker:
    """Something the source itself says about how the conversation stopped (a
    ``[Request interrupted by user]`` line, a ``turn_aborted`` event, a tool that raised)."""

    kind: str  # e.g. "user_interrupt", "turn_aborted", "tool_error", "interrupt"
    index: int | None  # the canonical message it sits at or after, when known
    text: str
    ids: list[str] = field(default_factory=list)  # call ids it concerns

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "index": self.index, "text": self.text, "ids": list(self.ids)}


@dataclass(slots=True)
class Transcript:
    """Canonical messages plus what the source says about them."""

    source: str
    format: str
    messages: list[Message]
    wire: str | None = None  # whose rules apply; None: the generic rules only
    thread: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)  # session ids, cwd, model, versions...
    skipped: dict[str, int] = field(default_factory=dict)  # what could not be represented
    markers: list[Marker] = field(default_factory=list)
    pending_approval: list[str] = field(default_factory=list)  # call ids waiting for a human
    warnings: list[str] = field(default_factory=list)  # e.g. one malformed line, not fatal

    def skip(self, what: str, n: int = 1) -> None:
        self.skipped[what] = self.skipped.get(what, 0) + n


class Source:
    """What was handed to ``inspect``: a path, a DSN or an already parsed object. Reads are
    lazy and cached so that detection over every format reads a file's head once."""

    def __init__(self, obj: Any) -> None:
        self.obj = obj
        self.path: Path | None = None
        self.dsn: str | None = None
        if isinstance(obj, str) and obj.startswith(("postgres://", "postgresql://")):
            self.dsn = obj
        elif isinstance(obj, (str, Path)):
            self.path = Path(obj)
        self._head: bytes | None = None
        self._json: Any = None
        self._json_read = False

    @property
    def name(self) -> str:
        if self.path is not None:
            return str(self.path)
        if self.dsn is not None:
            return _redact_dsn(self.dsn)
        return f"<{type(self.obj).__name__}>"

    @property
    def parsed(self) -> Any | None:
        """The object itself when one was passed instead of a path."""
        return None if (self.path is not None or self.dsn is not None) else self.obj

    def head(self) -> bytes:
        """The first 64 KiB of the file (empty for non-files)."""
        if self._head is None:
            self._head = b""
            if self.path is not None and self.path.is_file():
                with open(self.path, "rb") as f:
                    self._head = f.read(_HEAD_BYTES)
        return self._head

    def is_sqlite(self) -> bool:
        return self.head().startswith(b"SQLite format 3\x00")

    def first_json_lines(self, n: int = 5) -> list[Any]:
        """Up to n parsed lines from the head of a JSONL file (lines that do not parse skipped)."""
        out: list[Any] = []
        for raw in self.head().split(b"\n")[:-1] or self.head().split(b"\n"):
            raw = raw.strip()
            if not raw:
                continue
            try:
                out.append(json.loads(raw))
            except ValueError:
                continue
            if len(out) >= n:
                break
        return out

    def json(self) -> Any:
        """The whole source parsed as one JSON document (or the object passed), else None."""
        if not self._json_read:
            self._json_read = True
            if self.parsed is not None:
                self._json = self.parsed
            elif self.path is not None and self.path.is_file() and not self.is_sqlite():
                head = self.head().lstrip()
                if head[:1] in (b"[", b"{"):
                    try:
                        self._json = json.loads(self.path.read_text(encoding="utf-8"))
                    except (ValueError, UnicodeDecodeError):
                        self._json = None
        return self._json

    def connect_sqlite(self) -> Any:
        """A read-only connection (``mode=ro``): inspecting never writes to the file."""
        import sqlite3

        assert self.path is not None
        try:
            return sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True)
        except sqlite3.Error as exc:
            raise TranscriptError(f"{self.name}: cannot open as SQLite read-only ({exc})") from exc


def _redact_dsn(dsn: str) -> str:
    """A DSN without its password, for messages and reprs."""
    import re

    return re.sub(r"(://[^:/@]+:)[^@]*@", r"\1***@", dsn)
