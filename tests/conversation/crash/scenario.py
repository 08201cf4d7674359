"""The conversation the crash explorer kills at every point, and the test-side hooks that number
those points (nothing in the product knows about them).

The conversation: a system prompt; the user asks to read README.md and write NOTES.md; the
model answers with reasoning, text and two parallel calls (``read_file``, read-only, and
``write_file``, which a person approves); then it calls ``delete_file``, which the person denies;
then it answers with a prompt so large that the next send compacts the history (a summary and
the copies of the recent messages); the user asks a second question and the model answers.

Points are numbered in the order they are reached: after each chunk a provider stream yields;
before and after each store call that writes, and each write statement, commit and file write
inside it (a JSONL store's file write: before it, with half of it written, after it and its
fsync); inside each tool (entered, its effect half done, returning); at the approval (asked,
answered). ``Hooks.hit`` counts them and, in a child asked to die at point k, SIGKILLs its own
process there. What the child had acknowledged (every store write that returned, each tool
effect, each decision) goes to its log with one unbuffered ``write`` each, so the parent knows
what must have survived.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from typing import Any

from providerkit_nb.conversation.facade import Conversation
from providerkit_nb.core.tools import ToolRegistry, define_tool
from providerkit_nb.providers.base import CallOptions, ChunkStream, Provider

from .wires import Say, Script

SYSTEM = "You edit files in a small workspace."
U1 = "[[u1]] Read README.md, write NOTES.md from it, then delete OLD.md."
U2 = "[[u2]] Now tell me what changed, in one line."
PROBE = "Anything else to add?"
WINDOW = 40_000  # with CONTEXT_RESERVE 32k: a prompt of 8k tokens or more asks for compaction

README = "# Hello\n" + "".join(
    f"Line {i}: this project streams turns and keeps them. Über café 日本語 ✓\n" for i in range(420)
)
NOTES = "Notes: the README says hello, 420 lines. ü"

READ_ONLY = {"read_file"}
DENIED_TOOLS = {"delete_file"}  # what the person at the approval says no to

TURN_A = Say(
    text=("Reading README.md ", "and writing NOTES.md. [[ta]]"),
    reasoning="Two calls at once: one reads, one writes.",
    calls=(("call_read", "read_file", {"path": "README.md"}),
           ("call_write", "write_file", {"path": "NOTES.md", "content": NOTES})),
)
TURN_B = Say(text=("Now OLD.md goes. [[tb]]",), calls=(("call_delete", "delete_file", {"path": "OLD.md"}),))
TURN_C = Say(text=("Done: NOTES.md written; ", "OLD.md kept, as you declined. [[tc]]"), input_tokens=9000)
TURN_D = Say(text=("NOTES.md now holds the summary; ", "OLD.md is unchanged. [[td]]"))
SUMMARY = Say(text=("The user asked to read README.md and write NOTES.md from it. [[sum]]",))
DONE = Say(text=("Nothing else. [[tz]]",))

SCRIPT = Script(
    steps=[("[[td]]", DONE), ("[[tz]]", DONE), ("[[u2]]", TURN_D), ("[[tc]]", DONE), ("[[tb]]", TURN_C),
           ("[[ta]]", TURN_B), ("[[u1]]", TURN_A)],
    summary=SUMMARY,
    fallback=DONE,
)
CALL_OF_TOOL = {c[1]: c[0] for t in (TURN_A, TURN_B) for c in t.calls}  # each tool is called once


class Hooks:
    """Numbered crash points and the acknowledgement log of one run.

    ``crash_at`` None: run to the end, listing every point (``P n kind what``). Otherwise die by
    SIGKILL at point ``crash_at`` (after logging ``K n kind what``). ``log`` is a file
    descriptor (the child) or None (the parent, which keeps ``lines`` in memory)."""

    def __init__(self, crash_at: int | None = None, log: int | None = None, *, listing: bool = False) -> None:
        self.crash_at = crash_at
        self.log = log
        self.listing = listing
        self.n = 0
        self.lines: list[str] = []

    def note(self, line: str) -> None:
        if self.log is None:
            self.lines.append(line)
        else:
            os.write(self.log, (line + "\n").encode())

    def hit(self, kind: str, what: str) -> None:
        if self.log is None:
            return
        self.n += 1
        if self.listing:
            self.note(f"P {self.n} {kind} {what}")
        if self.n == self.crash_at:
            self.note(f"K {self.n} {kind} {what}")
            os.kill(os.getpid(), signal.SIGKILL)


# --------------------------------------------------------------------------- tools and approval


def tools(hooks: Hooks, workspace: dict[str, str]) -> ToolRegistry:
    def effect(name: str, change: Callable[[], str]) -> str:
        hooks.hit("tool", f"{name} entered")
        hooks.note(f"E start {name}")
        hooks.hit("tool", f"{name} mid-effect")
        out = change()
        hooks.note(f"E end {name}")
        hooks.hit("tool", f"{name} returning")
        return out

    def read_file(a: dict[str, Any]) -> str:
        return effect("read_file", lambda: workspace.get(a["path"], f"no such file: {a['path']}"))

    def write_file(a: dict[str, Any]) -> str:
        def change() -> str:
            workspace[a["path"]] = a["content"]
            return f"wrote {len(a['content'])} characters to {a['path']}"

        return effect("write_file", change)

    def delete_file(a: dict[str, Any]) -> str:
        return effect("delete_file", lambda: f"deleted {a['path']}" if workspace.pop(a["path"], None) else "none")

    path = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    write = {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
             "required": ["path", "content"]}
    return ToolRegistry([
        define_tool("read_file", "Read a file.", path, read_file, read_only=True),
        define_tool("write_file", "Write a file.", write, write_file),
        define_tool("delete_file", "Delete a file.", path, delete_file),
    ])


def approver(hooks: Hooks) -> Callable[[Any], bool]:
    def approve(call: Any) -> bool:
        hooks.hit("approval", f"asked {call.id}")
        yes = call.name not in DENIED_TOOLS
        hooks.note(f"D {call.id} {'approve' if yes else 'deny'}")
        hooks.hit("approval", f"answered {call.id}")
        return yes

    return approve


def workspace() -> dict[str, str]:
    return {"README.md": README, "OLD.md": "old notes"}


# --------------------------------------------------------------------------- the provider's chunks


class Counting(Provider):
    """A provider whose every chunk is a crash point (and ``on_open`` is told each request)."""

    def __init__(self, inner: Provider, hooks: Hooks, on_open: Callable[[], None] | None = None) -> None:
        self.inner = inner
        self.id = inner.id
        self.model = inner.model
        self.instance_session_id = inner.instance_session_id
        self.hooks = hooks
        self.on_open = on_open

    def _open(self, messages: list[Any], tools: list[Any] | None, opts: CallOptions) -> ChunkStream:
        if self.on_open is not None:
            self.on_open()
        inner = self.inner.open_stream(messages, tools, opts)
        hooks = self.hooks

        def run(stream: ChunkStream) -> Iterator[Any]:
            try:
                for chunk in inner:
                    hooks.hit("chunk", type(chunk).__name__)
                    yield chunk
            finally:
                inner.close()

        return ChunkStream(run, provider=self.id)


# --------------------------------------------------------------------------- the store's writes


_WRITES = ("save", "save_step", "mark_call", "save_turn_usage", "session_id", "set_meta", "save_lost_turn")


class CountingStore:
    """The store, with a crash point before and after each call that writes, and its
    acknowledgements logged as they return."""

    def __init__(self, store: Any, hooks: Hooks) -> None:
        self._store = store
        self._hooks = hooks

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._store, name)
        if name not in _WRITES:
            return attr
        hooks = self._hooks

        def call(*args: Any, **kw: Any) -> Any:
            what = _describe(name, args, kw)
            for line in _tries(name, args, kw):
                hooks.note(line)
            hooks.hit("store-before", what)
            out = attr(*args, **kw)
            for line in _acks(name, args, kw, out):
                hooks.note(line)
            hooks.hit("store-after", what)
            return out

        return call


def _describe(name: str, args: tuple[Any, ...], kw: dict[str, Any]) -> str:
    if name == "save":
        return f"save {args[1].role}"
    if name == "mark_call":
        return f"mark {args[1]} {args[2]}"
    if name == "save_step":
        msgs = args[1] if len(args) > 1 else kw["messages"]
        marks = kw.get("marks") or (args[2] if len(args) > 2 else ())
        told = f"step {'+'.join(m.role for m in msgs)}"
        return told + (f" marks {'+'.join(f'{c}:{s}' for c, s, *_ in marks)}" if marks else "")
    return name


def _tries(name: str, args: tuple[Any, ...], kw: dict[str, Any]) -> list[str]:
    if name == "mark_call":
        return [f"T mark {args[1]} {args[2]}"]
    if name == "save_step":
        marks = kw.get("marks") or (args[2] if len(args) > 2 else ())
        return [f"T mark {c} {s}" for c, s, *_ in marks]
    return []


def _acks(name: str, args: tuple[Any, ...], kw: dict[str, Any], out: Any) -> list[str]:
    if name == "save":
        return [f"A save {out.seq} {out.hash}"]
    if name == "mark_call":
        return [f"A mark {args[1]} {args[2]}"]
    if name == "save_step":
        marks = kw.get("marks") or (args[2] if len(args) > 2 else ())
        return [f"A save {s.seq} {s.hash}" for s in out] + [f"A mark {c} {s}" for c, s, *_ in marks]
    return []


class CountingSqlite:
    """A sqlite3 connection whose write statements are crash points (before and after each;
    after a COMMIT or an autocommit statement is after its commit)."""

    def __init__(self, conn: Any, hooks: Hooks) -> None:
        self._conn = conn
        self._hooks = hooks

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def execute(self, sql: str, *params: Any) -> Any:
        verb = sql.lstrip().split(None, 1)[0].upper()
        if verb in ("SELECT", "PRAGMA", "WITH"):
            return self._conn.execute(sql, *params)
        self._hooks.hit("sql-before", verb)
        out = self._conn.execute(sql, *params)
        self._hooks.hit("sql-after", verb)
        return out


class CountingPg:
    """A psycopg connection whose write statements and commits are crash points."""

    def __init__(self, conn: Any, hooks: Hooks) -> None:
        self._conn = conn
        self._hooks = hooks

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def cursor(self, *a: Any, **kw: Any) -> Any:
        return _PgCursor(self._conn.cursor(*a, **kw), self._hooks)

    def transaction(self, *a: Any, **kw: Any) -> Any:
        return _PgTransaction(self._conn.transaction(*a, **kw), self._hooks)


class _PgCursor:
    def __init__(self, cur: Any, hooks: Hooks) -> None:
        self._cur = cur
        self._hooks = hooks

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cur, name)

    def __enter__(self) -> _PgCursor:
        self._cur.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._cur.__exit__(*exc)

    def execute(self, sql: Any, *params: Any, **kw: Any) -> Any:
        verb = str(sql).lstrip().split(None, 1)[0].upper() if isinstance(sql, str) else "SQL"
        if verb == "SELECT":
            return self._cur.execute(sql, *params, **kw)
        self._hooks.hit("sql-before", verb)
        out = self._cur.execute(sql, *params, **kw)
        self._hooks.hit("sql-after", verb)
        return out


class _PgTransaction:
    def __init__(self, tx: Any, hooks: Hooks) -> None:
        self._tx = tx
        self._hooks = hooks

    def __enter__(self) -> Any:
        return self._tx.__enter__()

    def __exit__(self, *exc: Any) -> Any:
        if exc[0] is None:
            self._hooks.hit("commit-before", "COMMIT")
        out = self._tx.__exit__(*exc)
        if exc[0] is None:
            self._hooks.hit("commit-after", "COMMIT")
        return out


def instrument(store: Any, hooks: Hooks) -> CountingStore:
    """Crash points inside the store too: its connection (SQLite, PostgreSQL) or its file
    writes (JSONL)."""
    kind = type(store).__name__
    if kind == "NotebookStore":
        store._conn = CountingSqlite(store._conn, hooks)
    elif kind == "PostgresStore":
        store._conn = CountingPg(store._conn, hooks)
    elif kind == "JsonlStore":
        write = store._write

        def counted(fd: int, data: bytes) -> None:
            hooks.hit("file-before", "write")
            if hooks.n + 1 == hooks.crash_at:  # dying at the next point: with half of it written
                os.write(fd, data[: len(data) // 2])
            hooks.hit("file-torn", "half written")
            write(fd, data)
            hooks.hit("file-after", "write+fsync")

        store._write = counted
    return CountingStore(store, hooks)


def conversation(store: Any, cid: str, provider: Provider, hooks: Hooks, space: dict[str, str]) -> Conversation:
    return Conversation(
        store, cid, provider, tools(hooks, space), system=SYSTEM, display=False, approve=approver(hooks),
        compact=True, context_window=WINDOW,
    )
