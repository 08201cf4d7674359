"""Clocks on a stream, so a silent server costs a bounded wait instead of a hung notebook.

Three clocks, all armed when the stream is first read (so behind a gate they start with the
slot, not while the call waits in line):

- first_byte: from the request until the response shows life (headers or a byte);
- idle: since the last parsed chunk (SSE keep-alive comments and pings parse to nothing, so
  they do not reset it), paused while the caller holds a chunk: a slow consumer is not a
  silent server;
- total: the whole turn (off unless asked for: a long answer may stream for many minutes).

One shared monitor thread watches every live stream. A clock that fires hangs up the
connection (``ChunkStream.abort()`` wakes the blocked read, even before the headers) and the
reader gets ``ProviderError`` kind ``timeout``, which is transient, so a retry around the
watchdog may try again. A caller's own KeyboardInterrupt stays a KeyboardInterrupt.

With ``require_content`` (the default) chunks are held back until something streams (text,
tool calls or reasoning), so a failure before that is still retryable; a turn that finishes
with no text and no tool calls is an error: ``invalid`` when the output cap ran out, else
``overload`` (transient), except after a tool result when the model simply stopped.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Iterator

from ..core.errors import ErrorKind, ProviderError
from ..core.messages import Message
from ..core.tools import ToolDefinition
from ..core.turn import (
    Chunk,
    Finish,
    ReasoningDelta,
    ReasoningDetailsDelta,
    ReasoningItemsDelta,
    TextDelta,
    ToolCallDelta,
    Usage,
    UsageUpdate,
)
from ..providers.base import ChunkStream, Provider
from ..wire.options import CallOptions
from ._base import RelayStream, Wrapper, constructor, shows

__all__ = ["with_watchdog", "WatchdogProvider", "STREAM_IDLE", "STREAM_PROGRESS"]

STREAM_IDLE = 60.0  # seconds without a parsed chunk
STREAM_PROGRESS = 300.0  # seconds for the first sign of life


def _check_clock(name: str, value: float | None, *, optional: bool) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        what = "a positive number of seconds" + (" or None" if optional else "")
        raise ValueError(f"with_watchdog: {name} must be {what}, got {value!r}")
    return float(value)


class _Watch:
    """The clocks of one stream; the monitor thread reads them, the reading thread moves them."""

    __slots__ = (
        "stream", "provider", "first_byte", "idle", "total", "t0", "life_at", "last_chunk_at",
        "reading", "fired", "done",
    )

    def __init__(self, stream: ChunkStream, provider: str, first_byte: float, idle: float, total: float | None) -> None:
        self.stream = stream
        self.provider = provider
        self.first_byte = first_byte
        self.idle = idle
        self.total = total
        self.t0 = time.monotonic()
        self.life_at: float | None = None
        self.last_chunk_at: float | None = None
        self.reading = True
        self.fired: str | None = None
        self.done = False

    def check(self, now: float) -> float | None:
        """Fire if a clock ran out; else the next time to look (None: nothing to watch)."""
        if self.done or self.fired:
            return None
        nxt = float("inf")
        if self.total is not None:
            end = self.t0 + self.total
            if now >= end:
                self._fire("total")
                return None
            nxt = end
        if self.life_at is None:
            s = self.stream
            fb = s.first_byte_at
            if fb is not None:
                self.life_at = fb
            elif s.response is not None:
                self.life_at = now  # headers came since the last look
        if self.life_at is None:
            end = self.t0 + self.first_byte
            if now >= end:
                self._fire("first_byte")
                return None
            # Look again soon: once life shows, the idle clock may end before first_byte would.
            return min(nxt, end, now + min(self.idle, self.first_byte) / 4)
        if not self.reading:  # the caller holds a chunk: the server is not being waited on
            return min(nxt, now + self.idle)
        since = self.life_at if self.last_chunk_at is None else max(self.life_at, self.last_chunk_at)
        end = since + self.idle
        if now >= end:
            self._fire("idle")
            return None
        return min(nxt, end)

    def _fire(self, clock: str) -> None:
        self.fired = clock
        try:
            self.stream.abort()
        except Exception:  # pragma: no cover - an abort must never kill the monitor
            pass
        return None

    def error(self, cause: BaseException) -> ProviderError:
        p = self.provider
        if self.fired == "first_byte":
            msg = f"{p}: no response within {self.first_byte:g}s of the request (watchdog first_byte)"
        elif self.fired == "idle":
            msg = f"{p}: the stream went {self.idle:g}s without a chunk (watchdog idle)"
        else:
            msg = f"{p}: the turn took longer than {self.total:g}s (watchdog total)"
        err = ProviderError(p, ErrorKind.TIMEOUT, msg, cause=cause)
        err.code = f"watchdog_{self.fired}"
        return err


class _Monitor:
    """One daemon thread for every watched stream; it exits when nothing is watched."""

    def __init__(self) -> None:
        self._cv = threading.Condition(threading.Lock())
        self._heap: list[tuple[float, int, _Watch]] = []
        self._seq = itertools.count()
        self._live = 0
        self._thread: threading.Thread | None = None

    def add(self, w: _Watch) -> None:
        with self._cv:
            self._live += 1
            first = w.check(w.t0)
            if first is None:
                return
            heap = self._heap
            sooner = not heap or first < heap[0][0]
            heapq.heappush(heap, (first, next(self._seq), w))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="providerkit-watchdog", daemon=True)
                self._thread.start()
            elif sooner:  # wake the monitor only if it now has to look earlier
                self._cv.notify()

    def remove(self, w: _Watch) -> None:
        with self._cv:
            if w.done:
                return
            w.done = True
            self._live -= 1
            if self._live == 0:
                self._heap.clear()
                self._cv.notify()

    def _run(self) -> None:
        cv = self._cv
        with cv:
            while True:
                if not self._heap:
                    cv.wait(0.2)
                    if not self._heap:
                        self._thread = None
                        return
                    continue
                at, _, w = self._heap[0]
                now = time.monotonic()
                if at > now:
                    cv.wait(at - now)
                    continue
                heapq.heappop(self._heap)
                nxt = w.check(now)
                if nxt is not None:
                    heapq.heappush(self._heap, (nxt, next(self._seq), w))


_monitor = _Monitor()

# Chunks that mean the model is producing something (a bare model name is not progress).
_PROGRESS = (TextDelta, ReasoningDelta, ToolCallDelta, ReasoningDetailsDelta, ReasoningItemsDelta, UsageUpdate, Finish)


def _answers(chunk: Chunk) -> bool:
    """An answer: text or tool calls. Reasoning alone is not one."""
    if isinstance(chunk, TextDelta):
        return bool(chunk.text)
    return isinstance(chunk, ToolCallDelta)


def _empty_turn(provider: str, finish: str | None, usage: Usage | None, after_tool_result: bool) -> ProviderError | None:
    if after_tool_result and finish == "stop":
        return None  # an agent whose answer was the tool call it just made
    if finish == "length":
        r = usage.reasoning_tokens if usage else 0
        o = usage.output_tokens if usage else 0
        return ProviderError(
            provider,
            ErrorKind.INVALID,
            f"{provider}: the output cap ran out before any answer ({r} of {o} output tokens went "
            "to reasoning). Raise max_tokens or lower effort.",
        )
    return ProviderError(provider, ErrorKind.OVERLOAD, f"{provider}: the turn completed with no content")


class WatchdogProvider(Wrapper):
    def __init__(
        self,
        provider: Provider,
        first_byte: float = STREAM_PROGRESS,
        idle: float = STREAM_IDLE,
        total: float | None = None,
        require_content: bool = True,
    ) -> None:
        super().__init__(provider)
        self.first_byte = _check_clock("first_byte", first_byte, optional=False)
        self.idle = _check_clock("idle", idle, optional=False)
        self.total = _check_clock("total", total, optional=True)
        self.require_content = bool(require_content)

    def _open(self, messages: list[Message], tools: list[ToolDefinition] | None, opts: CallOptions) -> ChunkStream:
        inner = self.inner.open_stream(messages, tools, opts)
        after_tool_result = bool(messages) and getattr(messages[-1], "role", None) == "tool"
        provider = inner.provider or self.id

        def body(stream: RelayStream) -> Iterator[Chunk]:
            watch = _Watch(inner, provider, self.first_byte, self.idle, self.total)  # type: ignore[arg-type]  # the stream the wrapped provider opened
            stream.info["watchdog"] = watch
            _monitor.add(watch)
            hold: list[Chunk] | None = [] if self.require_content else None
            answered = not self.require_content
            finish: str | None = None
            usage: Usage | None = None
            clock = time.monotonic
            try:
                for chunk in inner:
                    if isinstance(chunk, _PROGRESS):
                        watch.last_chunk_at = clock()
                    if isinstance(chunk, Finish):
                        finish = chunk.reason
                    elif isinstance(chunk, UsageUpdate):
                        usage = chunk.usage
                    if not answered and _answers(chunk):
                        answered = True
                    if hold is not None:
                        if not shows(chunk):
                            hold.append(chunk)
                            continue
                        held, hold = hold, None
                        for h in held:
                            yield from self._hand(watch, h)
                    # self._hand(watch, chunk) written out: no generator made per chunk
                    watch.reading = False
                    yield chunk
                    watch.last_chunk_at = clock()
                    watch.reading = True
                if not answered:
                    err = _empty_turn(provider, finish, usage, after_tool_result)
                    if err is not None:
                        raise err
                if hold:
                    for h in hold:
                        yield from self._hand(watch, h)
            except Exception as exc:
                if watch.fired and not (isinstance(exc, ProviderError) and exc.code and exc.code.startswith("watchdog_")):
                    raise watch.error(exc) from exc
                raise
            finally:
                _monitor.remove(watch)
                inner.close()

        stream = RelayStream(body, provider=inner.provider)
        stream.inner = inner
        return stream

    @staticmethod
    def _hand(watch: _Watch, chunk: Chunk) -> Iterator[Chunk]:
        """Give the caller a chunk; the idle clock waits while they hold it."""
        watch.reading = False
        yield chunk
        watch.last_chunk_at = time.monotonic()
        watch.reading = True

    def __repr__(self) -> str:
        return (
            f"<WatchdogProvider first_byte={self.first_byte:g} idle={self.idle:g} "
            f"total={self.total if self.total is None else format(self.total, 'g')} {self.inner!r}>"
        )


with_watchdog = constructor(WatchdogProvider, "with_watchdog", """Bound the wait for a first byte, the
silence between chunks and (if set) the whole turn.

Put it inside ``with_gate`` (clocks start with the slot) and inside ``with_retry`` (each
attempt gets fresh clocks, and a fired clock is a transient ``timeout``).
""")
