"""Deterministic faults, for showing (and teaching) what survives a crash.

Each fault breaks a conversation the way real ones break: a stream cut after n chunks, a tool
that raises, a Stop between a tool's start and its saved result, a process killed with SIGKILL
mid-tool, a stream that stalls until the watchdog hangs up. ``lesson(name)`` runs one of them
end to end on a store and reports what was saved, what repair changes and what the model is
told. ``ScriptedProvider`` streams turns you wrote, so lessons run offline and the same way
every time; the faults also wrap any real provider.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..core.errors import ErrorKind, ProviderError
from ..core.messages import Message, ToolMessage
from ..core.repair import (
    INTERRUPTED_MAY_HAVE_RUN,
    INTERRUPTED_READ_ONLY,
    RESULT_TO_NOTE,
    Repaired,
    repair_history,
)
from ..core.tools import Tool, ToolDefinition, ToolRegistry, define_tool
from ..core.turn import (
    Chunk,
    Finish,
    ModelInfo,
    TextDelta,
    ToolCallDelta,
    Usage,
    UsageUpdate,
)
from ..providers.base import ChunkStream, Provider
from ..wire.options import CallOptions

if TYPE_CHECKING:
    from ..store.base import Store

__all__ = [
    "ScriptedProvider",
    "text_turn",
    "call_turn",
    "cut_stream",
    "stalled_stream",
    "raise_in_tool",
    "stop_in_tool",
    "kill_process",
    "lesson",
    "Lesson",
    "LESSONS",
    "demo_tools",
]


# --------------------------------------------------------------------------- scripted turns


def text_turn(text: str, *, pieces: int = 4, model: str = "scripted-1") -> list[Chunk]:
    """The chunks of an answer without calls, cut into ``pieces`` deltas."""
    size = max(1, -(-len(text) // max(1, pieces)))
    chunks: list[Chunk] = [ModelInfo(model)]
    chunks += [TextDelta(text[i : i + size]) for i in range(0, len(text), size)]
    chunks += [UsageUpdate(Usage(input_tokens=100, output_tokens=len(text) // 4 + 1)), Finish("stop")]
    return chunks


def call_turn(
    calls: Sequence[tuple[str, dict[str, Any]]], *, text: str = "", id_prefix: str = "call_", model: str = "scripted-1"
) -> list[Chunk]:
    """The chunks of a turn that calls tools; arguments arrive in two fragments each."""
    chunks: list[Chunk] = [ModelInfo(model)]
    if text:
        chunks.append(TextDelta(text))
    for i, (name, args) in enumerate(calls):
        raw = json.dumps(args)
        half = len(raw) // 2
        chunks.append(ToolCallDelta(i, f"{id_prefix}{i + 1}", name, raw[:half]))
        chunks.append(ToolCallDelta(i, None, None, raw[half:]))
    chunks += [UsageUpdate(Usage(input_tokens=120, output_tokens=30)), Finish("tool_calls")]
    return chunks


class _FakeResponse:
    """Lets ``ChunkStream.abort()`` wake a stalled scripted stream, as it wakes a socket read."""

    def __init__(self) -> None:
        self.aborted = threading.Event()

    def abort(self) -> None:
        self.aborted.set()

    def close(self) -> None:
        self.aborted.set()


class ScriptedProvider(Provider):
    """Streams the scripted turns one call after another (offline, deterministic).

    ``requests`` records the messages of every call, so a lesson can show what the model was
    sent. ``delay`` sleeps between chunks, for a visible live display.
    """

    def __init__(self, turns: Sequence[Sequence[Chunk]], *, id: str = "scripted", model: str = "scripted-1", delay: float = 0.0) -> None:
        self.id = id
        self.model = model
        self.instance_session_id = str(uuid.uuid4())
        self._turns = [list(t) for t in turns]
        self._next = 0
        self._lock = threading.Lock()
        self.delay = delay
        self.requests: list[list[Message]] = []
        self.session_ids: list[str] = []

    @property
    def remaining(self) -> int:
        return len(self._turns) - self._next

    def _open(self, messages: list[Message], tools: list[ToolDefinition] | None, opts: CallOptions) -> ChunkStream:
        with self._lock:
            if self._next >= len(self._turns):
                raise ProviderError(
                    self.id, ErrorKind.INVALID, f"{self.id}: the script has no turn {self._next + 1}"
                )
            chunks = self._turns[self._next]
            self._next += 1
        self.requests.append(list(messages))
        self.session_ids.append(opts.session_id or self.instance_session_id)
        delay = self.delay

        def run(stream: ChunkStream) -> Iterator[Chunk]:
            stream.opened_at = stream.first_byte_at = time.monotonic()
            for c in chunks:
                if delay:
                    time.sleep(delay)
                stream.last_byte_at = time.monotonic()
                yield c

        return ChunkStream(run, provider=self.id)


# --------------------------------------------------------------------------- stream faults


class _Faulty(Provider):
    def __init__(self, inner: Provider, body: Callable[[ChunkStream, ChunkStream], Iterator[Chunk]]) -> None:
        self.inner = inner
        self.id = inner.id
        self.model = inner.model
        self.instance_session_id = inner.instance_session_id
        self._body = body

    def _open(self, messages: list[Message], tools: list[ToolDefinition] | None, opts: CallOptions) -> ChunkStream:
        inner = self.inner.open_stream(messages, tools, opts)

        def run(stream: ChunkStream) -> Iterator[Chunk]:
            try:
                yield from self._body(stream, inner)
            finally:
                inner.close()

        return ChunkStream(run, provider=self.id)


def cut_stream(provider: Provider, after: int) -> Provider:
    """The connection drops after ``after`` chunks: the reader gets a ``network`` error."""
    if after < 0:
        raise ValueError("after must be >= 0")

    def body(stream: ChunkStream, inner: ChunkStream) -> Iterator[Chunk]:
        for n, chunk in enumerate(inner):
            if n >= after:
                raise ProviderError(
                    provider.id,
                    ErrorKind.NETWORK,
                    f"{provider.id}: simulated: the connection was cut after {after} chunks",
                )
            yield chunk
        raise ProviderError(provider.id, ErrorKind.NETWORK, f"{provider.id}: simulated cut came after the end")

    return _Faulty(provider, body)


def stalled_stream(provider: Provider, after: int, *, limit: float = 600.0) -> Provider:
    """After ``after`` chunks the server goes silent until someone hangs up (the watchdog's
    ``abort()``), or ``limit`` seconds pass. Hanging up surfaces as a ``network`` error."""

    def body(stream: ChunkStream, inner: ChunkStream) -> Iterator[Chunk]:
        fake = _FakeResponse()
        stream.response = fake  # type: ignore[assignment]  # a stand-in with what the views read of a response
        stream.opened_at = time.monotonic()
        for n, chunk in enumerate(inner):
            if n >= after:
                if fake.aborted.wait(limit):
                    raise ProviderError(provider.id, ErrorKind.NETWORK, f"{provider.id}: the connection was hung up")
                raise ProviderError(provider.id, ErrorKind.TIMEOUT, f"{provider.id}: simulated stall ran out")
            now = time.monotonic()
            if stream.first_byte_at is None:
                stream.first_byte_at = now
            stream.last_byte_at = now
            yield chunk

    return _Faulty(provider, body)


# --------------------------------------------------------------------------- tool faults


def raise_in_tool(t: Tool, error: BaseException | None = None) -> Tool:
    """The tool raises; ``ToolRegistry.run`` turns that into a tool message saying so."""
    exc = error or RuntimeError(f"simulated failure inside {t.name}")

    def run(arguments: dict[str, Any]) -> Any:
        raise exc

    return define_tool(t.name, t.description, t.input_schema, run, read_only=t.read_only, timeout=t.timeout)


def stop_in_tool(t: Tool, *, effect: Callable[[dict[str, Any]], Any] | None = None) -> Tool:
    """The tool starts (and may do its effect), then the Stop button lands before its result is
    saved: KeyboardInterrupt, exactly as Jupyter delivers it."""

    def run(arguments: dict[str, Any]) -> Any:
        if effect is not None:
            effect(arguments)
        else:
            t.run(arguments)
        raise KeyboardInterrupt

    return define_tool(t.name, t.description, t.input_schema, run, read_only=t.read_only, timeout=t.timeout)


# --------------------------------------------------------------------------- a tiny workspace


def demo_tools(
    files: dict[str, str] | None = None, *, before_write: Callable[[dict[str, Any]], None] | None = None
) -> tuple[ToolRegistry, dict[str, str]]:
    """``read_file`` (read-only) and ``write_file`` (changes the workspace) over a dict.

    ``before_write(arguments)`` runs when write_file starts, before it writes (the crash
    stories block there until they are killed)."""
    workspace = files if files is not None else {"README.md": "# Hello\nThis project streams turns."}

    def read_file(arguments: dict[str, Any]) -> str:
        path = arguments["path"]
        if path not in workspace:
            return f"no such file: {path}"
        return workspace[path]

    def write_file(arguments: dict[str, Any]) -> str:
        if before_write is not None:
            before_write(arguments)
        workspace[arguments["path"]] = arguments["content"]
        return f"wrote {len(arguments['content'])} characters to {arguments['path']}"

    schema_read = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    schema_write = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
    }
    return (
        ToolRegistry(
            [
                define_tool("read_file", "Read a file of the workspace.", schema_read, read_file, read_only=True),
                define_tool("write_file", "Write a file of the workspace.", schema_write, write_file),
            ]
        ),
        workspace,
    )


# --------------------------------------------------------------------------- process kill


@dataclass
class KillReport:
    path: str
    conversation_id: str
    killed_at: str
    reported_saved: int  # messages the child said were durable before it died
    returncode: int | None


TOOL_STARTED = "TOOL_STARTED"  # what a child prints when the tool it will be killed in starts


def block_until_killed(arguments: object = None) -> None:
    """Say the tool has started, then wait for the parent's SIGKILL."""
    print(TOOL_STARTED, flush=True)
    time.sleep(60)


class _Announcing:
    def __init__(self, store: Store) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def save(self, conversation_id: str, message: Message) -> Any:
        saved = self._store.save(conversation_id, message)
        print(f"SAVED {message.role}", flush=True)
        return saved

    def save_step(self, conversation_id: str, messages: Sequence[Message], **kw: Any) -> Any:
        saved = self._store.save_step(conversation_id, messages, **kw)
        for message in messages:  # durable together: the step returned
            print(f"SAVED {message.role}", flush=True)
        return saved


def announcing(store: Store) -> Store:
    """``store``, printing ``SAVED <role>`` once each save (or each message of a step) is
    durable, so the parent that will kill this process knows what must survive."""
    return cast("Store", _Announcing(store))


@dataclass
class ChildRun:
    saved: int  # SAVED lines the child printed before it died
    returncode: int | None
    stderr: str


def kill_when_tool_starts(
    argv: list[str], *, timeout: float = 30.0, echo: Callable[[str], object] | None = None
) -> ChildRun:
    """Run ``argv`` and SIGKILL it as soon as it prints ``TOOL_STARTED``.

    Raises when the child ends before a tool started (its stderr is in the message)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    saved = 0
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    stderr = ""
    try:
        for line in proc.stdout:
            if echo is not None:
                echo(line)
            if line.startswith("SAVED"):
                saved += 1
            if line.startswith(TOOL_STARTED):
                os.kill(proc.pid, signal.SIGKILL)
                break
            if time.monotonic() > deadline:
                break
        else:
            stderr = proc.stderr.read() if proc.stderr else ""
            raise RuntimeError(f"the child process ended before its tool started:\n{stderr[-2000:]}")
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        for f in (proc.stdout, proc.stderr):
            if f is not None:
                f.close()
    return ChildRun(saved, proc.returncode, stderr)


_CHILD = r"""
import sys
import providerkit_nb as pk
from providerkit_nb.testing import simulate

path, cid = sys.argv[1], sys.argv[2]

def write_half_then_block(arguments):
    import os
    target = os.path.join(os.path.dirname(os.path.abspath(path)), arguments["path"])
    content = arguments["content"]
    with open(target, "w") as f:   # the side effect: half the file is on disk...
        f.write(content[: len(content) // 2])
        f.flush()
        simulate.block_until_killed()   # ...when the parent kills us here

tools, _ = simulate.demo_tools(before_write=write_half_then_block)
provider = simulate.ScriptedProvider([
    simulate.call_turn([("read_file", {"path": "README.md"}), ("write_file", {"path": "NOTES.md", "content": "# Notes\nThe README says hello.\n"})]),
])
store = simulate.announcing(pk.NotebookStore(path))
convo = pk.Conversation(store, cid, provider, tools, system="You edit files.", display=False)
convo.send("Read README.md, then write NOTES.md.")
"""


def kill_process(path: str | Path, conversation_id: str = "killed", *, timeout: float = 30.0) -> KillReport:
    """Run a real conversation in a child process and SIGKILL it while a tool is running.

    The store file at ``path`` then holds what the child saved before it died; load it and
    repair it to see what a restarted kernel would send.
    """
    run = kill_when_tool_starts([sys.executable, "-c", _CHILD, str(path), conversation_id], timeout=timeout)
    return KillReport(str(path), conversation_id, "inside write_file", run.saved, run.returncode)


# --------------------------------------------------------------------------- lessons


@dataclass
class Lesson:
    """What one fault did: the error seen, what the store kept, what repair changes, and what
    the model is told when the conversation is sent again."""

    name: str
    summary: str
    error: str | None
    saved: list[Message]
    repaired: Repaired
    told: list[str] = field(default_factory=list)
    after_resume: list[Message] | None = None
    steps: list[tuple[str, str]] = field(default_factory=list)  # the turn, left to right (viewer.timeline)
    lost: dict[str, str] = field(default_factory=dict)  # what the break took, with its exact text

    def frames(self) -> dict[str, Any]:
        from ..notebook import frames

        return {
            "saved": frames.history_frame(self.saved),
            "repaired": frames.history_frame(self.repaired.messages),
            "changes": frames.changes_frame(self.repaired),
            "interrupted": frames.interrupted_frame(self.repaired),
        }

    def view(self) -> Any:
        from ..notebook.widgets import HistoryView

        return HistoryView(self.saved, is_read_only=_READ_ONLY, title=f"lesson: {self.name}")

    def __str__(self) -> str:
        lines = [f"== {self.name}: {self.summary}"]
        if self.error:
            lines.append(f"   error seen: {self.error}")
        lines.append(f"   saved: {len(self.saved)} messages; repair made {len(self.repaired.changes)} change(s)")
        for t in self.told:
            lines.append(f"   model is told: {t}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """The lesson's picture: where the break struck, what was lost, and the same before/after
        cards every view shows."""
        from ..core.html import esc
        from ..viewer import build_page, static_html
        from ..viewer.timeline import lost_html, timeline_html
        from ..wire.validate import validate_history

        error = f" \u00b7 error seen: <code>{esc(self.error)}</code>" if self.error else ""
        page = build_page(self.saved, self.repaired, validate_history(self.saved), title=f"lesson {self.name}",
                          anchor=f"{self.name}-")
        return (
            f"<div><b>{esc(self.name)}</b>: {esc(self.summary)}{error}</div>"
            + timeline_html(self.steps, title="the turn, left to right")
            + '<div style="font-size:12px;color:#57606a">what was lost</div>'
            + lost_html(self.lost)
            + static_html(page)
        )


def _READ_ONLY(name: str) -> bool:
    return name == "read_file"


def _told(repaired: Repaired) -> list[str]:
    out = []
    for m in repaired.messages:
        if isinstance(m, ToolMessage) and m.content in (INTERRUPTED_READ_ONLY, INTERRUPTED_MAY_HAVE_RUN):
            out.append(f"{m.name} [{m.tool_call_id}]: {m.content}")
    for c in repaired.changes:
        if c.kind == RESULT_TO_NOTE:
            out.append(f"(a result without its call became a user note) {getattr(c, 'detail', '')}")
    return out


LESSONS = ("cut_stream", "tool_error", "stop_in_tool", "kill_process", "stalled_stream")


def lesson(name: str, store: Any = None, *, workdir: str | Path | None = None) -> Lesson:
    """Break a conversation one way and report what survived. ``name`` is one of LESSONS."""
    from ..conversation.facade import Conversation
    from ..store.memory import MemoryStore

    if name not in LESSONS:
        raise ValueError(f"unknown lesson {name!r}; choose one of {', '.join(LESSONS)}")
    cid = f"lesson-{name}"
    tools, workspace = demo_tools()
    ask = "Read README.md, then write NOTES.md with a summary."
    two_calls = call_turn(
        [("read_file", {"path": "README.md"}), ("write_file", {"path": "NOTES.md", "content": "A summary."})]
    )
    error: str | None = None

    if name == "kill_process":
        folder = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="pk-lesson-"))
        path = folder / "killed.providerkit.sqlite"
        report = kill_process(path, cid)
        from ..store.sqlite import NotebookStore

        with NotebookStore(path) as killed:
            saved = killed.load(cid)
        repaired = repair_history(saved, is_read_only=_READ_ONLY)
        on_disk = folder / "NOTES.md"
        half = {"NOTES.md on disk, half written by the killed tool": on_disk.read_text()} if on_disk.exists() else {}
        return Lesson(
            name,
            f"the process was killed with SIGKILL inside write_file (exit {report.returncode}); "
            f"it had reported {report.reported_saved} saves",
            "SIGKILL",
            saved,
            repaired,
            _told(repaired),
            steps=[("save", "user message"), ("stream", "two calls"), ("save", "the calls"),
                   ("tool", "read_file ran"), ("save", "its result"), ("tool", "write_file started writing"),
                   ("crash", "SIGKILL"), ("lost", "write_file's result"),
                   ("survived", f"{len(saved)} messages; NOTES.md half written")],
            lost=half,
        )

    store = store if store is not None else MemoryStore()
    steps: list[tuple[str, str]] = []
    lost: dict[str, str] = {}
    if name == "cut_stream":
        answer = text_turn("The README says hello and describes streaming.")
        provider: Provider = cut_stream(ScriptedProvider([answer]), after=2)
        summary = "the connection dropped after 2 chunks of the answer: nothing of it was saved"
        partial = "".join(c.text for c in answer[:2] if isinstance(c, TextDelta))  # what had arrived
        lost = {"the partial answer (streamed, never saved)": partial}
        steps = [("save", "system and user message"), ("stream", f"\u201c{partial}\u2026\u201d"),
                 ("crash", "connection cut"), ("lost", "the partial answer"), ("survived", "the question, unanswered")]
    elif name == "tool_error":
        tools = ToolRegistry([tools.get("read_file"), raise_in_tool(tools.get("write_file"))])
        provider = ScriptedProvider([two_calls, text_turn("Writing failed; I will tell the user.")])
        summary = "write_file raised: the error became its result and the turn went on"
        steps = [("save", "user message"), ("stream", "two calls"), ("save", "the calls"), ("tool", "read_file ran"),
                 ("tool", "write_file raised"), ("save", "both results (the error is one)"),
                 ("stream", "the answer"), ("survived", "everything: nothing to repair")]
    elif name == "stop_in_tool":
        tools = ToolRegistry([tools.get("read_file"), stop_in_tool(tools.get("write_file"))])
        provider = ScriptedProvider([two_calls])
        summary = "Stop was pressed inside write_file after it wrote: its result was never saved"
        steps = [("save", "user message"), ("stream", "two calls"), ("save", "the calls"), ("tool", "read_file ran"),
                 ("save", "its result"), ("tool", "write_file wrote NOTES.md"), ("crash", "Stop (KeyboardInterrupt)"),
                 ("lost", "write_file's result"), ("survived", "the calls, one result; NOTES.md written")]
    else:  # stalled_stream
        from ..wrappers.watchdog import with_watchdog

        answer = text_turn("This answer will stall.")
        provider = with_watchdog(stalled_stream(ScriptedProvider([answer]), after=2), idle=0.5)
        lost = {"the partial answer (streamed, never saved)": "".join(
            c.text for c in answer[:2] if isinstance(c, TextDelta))}
        summary = "the stream went silent after 2 chunks; the watchdog hung up after 0.5 s idle"
        steps = [("save", "system and user message"), ("stream", "2 chunks, then silence"),
                 ("crash", "watchdog hangs up (0.5 s idle)"), ("lost", "the partial answer"),
                 ("survived", "the question, unanswered")]

    convo = Conversation(store, cid, provider, tools, system="You edit files.", display=False)
    try:
        convo.send(ask)
    except KeyboardInterrupt:
        error = "KeyboardInterrupt (the Stop button)"
    except ProviderError as exc:
        error = f"ProviderError({exc.kind.value}): {exc}"
    saved = store.load(cid)
    repaired = repair_history(saved, is_read_only=_READ_ONLY)
    if name == "stop_in_tool" and "NOTES.md" in workspace:
        lost = {"NOTES.md in the workspace: the tool's effect stayed, its result was lost": workspace["NOTES.md"]}
    return Lesson(name, summary, error, saved, repaired, _told(repaired), steps=steps, lost=lost)
