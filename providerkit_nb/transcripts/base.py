"""The seam every foreign transcript format plugs into: a ``Source`` to read, a ``Transcript`` back.

A format module exposes ``detect(source, name) -> bool`` (cheap: the first bytes, a table name)
and ``load(source, name, *, thread=None) -> Transcript``; ``name`` is the format asked for, so
one module can serve several closely related formats. The Transcript's ``wire`` says whose rules
its messages are checked against (None: the generic rules only). Loading is read-only: files are opened for
reading and SQLite databases with ``mode=ro``; nothing from a source is executed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import (  # noqa: F401 (defined at the bottom, kept importable here)
    Error,
    MultipleThreads,
    TranscriptError,
    TranscriptNotFound,
    TranscriptTruncated,
)
from ..core.json_input import JsonInputError, read_json
from ..core.messages import Message, ToolMessage

__all__ = [
    "Source",
    "Transcript",
    "Marker",
    "Nested",
    "TranscriptError",
    "TranscriptNotFound",
    "MultipleThreads",
    "TranscriptTruncated",
    "jsonl_records",
]

_HEAD_BYTES = 64 * 1024
_LINES_BYTES = 16 * 1024 * 1024


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
class Nested:
    """A conversation held inside another: a sub-agent the model started with a call (Claude
    Code's Agent or Task), or a branch of the session its tool did not resume (a rewind, the lines
    left off by a resume, the history before a compaction)."""

    kind: str  # "subagent" | "branch"
    label: str
    transcript: Transcript
    call_id: str | None = None  # the call that started it (a sub-agent)
    index: int | None = None  # the parent's message it forked after (a branch; None: before the first)


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
    # tools the source itself knows change nothing (so an interrupted call is safe to repeat)
    read_only_tools: frozenset[str] = frozenset()
    # calls the tool's own resume hides or answers with its placeholder (resume_findings.AbandonedCall)
    abandoned: list[Any] = field(default_factory=list)
    # call id -> the result the tool itself recorded that the model never saw (repair offers it)
    recorded_results: dict[str, str] = field(default_factory=dict)
    # call id -> what the model is told instead of the generic interrupted text (repair's notes=;
    # our own store's call marks: the stopped text for a call Stop landed in)
    notes: dict[str, str] = field(default_factory=dict)
    # what the source says about single messages, by canonical index: "time", "model", "tokens"
    details: dict[int, dict[str, Any]] = field(default_factory=dict)
    # the sub-agents and the branches not resumed that the source holds (shown nested, each inspected)
    nested: list[Nested] = field(default_factory=list)

    def skip(self, what: str, n: int = 1) -> None:
        self.skipped[what] = self.skipped.get(what, 0) + n

    def failed(self, call_id: str) -> None:
        """The result of call ``call_id`` is one the source marks as an error (Claude Code's
        ``is_error``, a non-zero exit code, a tool part in error...). Not a problem of the history
        (the model read the error); the viewer marks the result and counts it."""
        self.meta.setdefault("error_results", []).append(call_id)

    def mark_error_results(self) -> None:
        """``details[i]["error"] = True`` on each result ``failed`` named (every format reader's
        results go through here, once the messages are in place)."""
        ids = self.meta.get("error_results")
        if not ids:
            return
        wanted = set(ids)
        for i, m in enumerate(self.messages):
            if isinstance(m, ToolMessage) and m.tool_call_id in wanted:
                self.details[i] = {**self.details.get(i, {}), "error": True}


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
        self._lines: list[Any] = []
        self._lines_done = False
        self._json_read = False
        self.json_error: JsonInputError | None = None  # why json() is None for a JSON-looking file

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
        """Up to n parsed lines from the start of a JSONL file (lines that do not parse skipped).

        Read line by line, not from the 64 KiB head: a session's first line can be a long
        pasted prompt. At most the first 32 lines or 16 MiB are looked at."""
        if self.path is None or not self.path.is_file() or self.is_sqlite():
            return []
        if not self.head().lstrip()[:1].startswith(b"{"):
            return []  # JSONL lines are objects: anything else is not worth reading on
        if len(self._lines) < n and not self._lines_done:
            self._lines = []
            read = 0
            with open(self.path, "rb") as f:
                for k, raw in enumerate(f):
                    read += len(raw)
                    if k >= 32 or read > _LINES_BYTES:
                        break
                    raw = raw.strip()
                    if not raw:
                        continue
                    try:
                        self._lines.append(read_json(raw))
                    except ValueError:
                        continue
                    if len(self._lines) >= n:
                        break
                else:
                    self._lines_done = True
        return self._lines[:n]

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
                        self._json = read_json(self.path.read_text(encoding="utf-8"))
                    except JsonInputError as exc:  # kept: a cut or too deep a file is said so
                        self.json_error = exc
                    except UnicodeDecodeError:
                        self._json = None
        return self._json

    def connect_sqlite(self) -> Any:
        """A read-only connection: inspecting never writes to the database or beside it.

        ``mode=ro`` alone is not enough for a WAL database: a reader creates the ``-shm`` and
        ``-wal`` files beside it, and writes to the ``-shm`` (the WAL index) it finds. When no
        ``-wal`` file is there, everything is in the main file and it is opened ``immutable`` (no
        lock, nothing created). When one is there (the database is open elsewhere now, or its
        process was killed), it may hold committed rows that are not in the main file yet, so it
        is read through, with the ``-shm`` opened read-only (``readonly_shm``: SQLite then builds
        the index it needs in its own memory); without a ``-shm`` file, the two files are read
        from a private copy (removed when the connection closes)."""
        import sqlite3

        assert self.path is not None
        path = self.path.resolve()
        uri = f"{path.as_uri()}?mode=ro"
        wal_mode = self.head()[18:20] == b"\x02\x02"
        wal = Path(f"{path}-wal")
        try:
            if wal_mode and not wal.exists():
                return sqlite3.connect(uri + "&immutable=1", uri=True)
            if not wal.exists() or Path(f"{path}-shm").exists():
                return sqlite3.connect(uri + "&readonly_shm=1", uri=True)
            return _PrivateCopy.open(path, wal)
        except sqlite3.Error as exc:
            raise TranscriptError(f"{self.name}: cannot open as SQLite read-only ({exc})") from exc
        except OSError as exc:
            raise TranscriptError(f"{self.name}: cannot read ({exc.strerror or exc})") from exc


class _PrivateCopy:
    """A WAL database with a ``-wal`` but no ``-shm`` file (SQLite cannot read it without
    creating one): the two files copied to a private folder, removed when the connection closes."""

    @staticmethod
    def open(path: Path, wal: Path) -> Any:
        import shutil
        import sqlite3
        import tempfile

        class Connection(sqlite3.Connection):
            folder: str = ""

            def close(self) -> None:
                super().close()
                shutil.rmtree(self.folder, ignore_errors=True)

        folder = tempfile.mkdtemp(prefix="providerkit-read-")
        try:
            copy = Path(folder) / path.name
            shutil.copyfile(path, copy)
            shutil.copyfile(wal, f"{copy}-wal")
            conn = sqlite3.connect(copy, factory=Connection)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        conn.folder = folder
        return conn


def _json_loads() -> Any:
    """orjson's parser when it is installed (the ``fast-json`` extra: large session files load
    about 1.5x faster), else the library's safe reader; both raise ValueError on a bad line, one
    nested too deeply included. A line orjson refuses is read again by the safe reader
    (``jsonl_records``); an integer beyond 64 bits is the one value orjson reads differently (as
    a float): ``core.fastjson``'s guard against that costs as much as the parse on such files."""
    try:
        import orjson
    except ImportError:
        return read_json
    return orjson.loads


def jsonl_records(source: Source, t: Transcript) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each JSON-object line of a JSONL file, read in a streaming way.

    A line that does not parse is counted in ``skipped["malformed_line"]`` and named in
    ``t.warnings`` (a crash can tear the last line; one bad line must not hide the rest)."""
    if source.path is None:
        raise TranscriptError(f"{source.name}: this format is read from a file path")
    loads = _json_loads()
    try:
        # a 64 KiB buffer: with the default one, each line longer than it (a tool result of a
        # few KiB) is put together from several reads; half the time of going through the lines
        f = open(source.path, "rb", buffering=1 << 16)
    except OSError as exc:
        raise TranscriptError(f"{source.name}: cannot read ({exc.strerror or exc})") from exc
    with f:
        for n, raw in enumerate(f, 1):
            if raw.isspace():  # a blank line (no copy of the line, unlike strip())
                continue
            try:
                obj = loads(raw)
            except ValueError:
                try:  # what orjson refuses and json reads (NaN, 1e400, a lone surrogate) is read as without it
                    obj = read_json(raw)
                except ValueError as exc:  # and a bad line is named in the same words either way
                    t.skip("malformed_line")
                    t.warnings.append(f"{source.name}: line {n} is not valid JSON ({exc}); skipped")
                    continue
            if not isinstance(obj, dict):
                t.skip("malformed_line")
                t.warnings.append(f"{source.name}: line {n} is not a JSON object; skipped")
                continue
            yield n, obj


def _redact_dsn(dsn: str) -> str:
    """A DSN without its password, for messages and reprs."""
    import re

    return re.sub(r"(://[^:/@]+:)[^@]*@", r"\1***@", dsn)
