"""Retries with full-jitter backoff (tenacity), only while nothing has reached the caller.

The first chunk is pulled inside the retry: opening a stream does no I/O, so a 429 or a silent
server only shows up on the first read. Once a chunk has been handed over, a failure
propagates: nothing is ever sent to the caller twice. Each failed attempt is closed before the
next one opens, so no second live stream stacks up on the same rate limit.

A server's wait (Retry-After, or the reset of the binding limit) is honoured exactly; when it
is longer than ``max_wait`` the wrapper gives up at once, so a fallback can act instead of a
thread sleeping for hours.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import tenacity

from ..core.errors import ProviderError, is_retryable
from ..core.messages import Message
from ..core.tools import ToolDefinition
from ..core.turn import Chunk, Turn
from ..providers.base import ChunkStream, Provider
from ..wire.options import CallOptions
from ._base import Ask, Policy, RelayStream, Wrapper, constructor, read_head, relay

__all__ = ["with_retry", "RetryProvider", "server_wait"]


def server_wait(err: BaseException, now: Callable[[], float] = time.time) -> float | None:
    """Seconds the server asked us to wait (Retry-After, or the binding limit's reset)."""
    if not isinstance(err, ProviderError):
        return None
    waits = []
    if err.retry_after is not None:
        waits.append(float(err.retry_after))
    if err.reset_at is not None:
        waits.append(max(0.0, float(err.reset_at) - now()))
    return max(waits) if waits else None


class _RetryStream(RelayStream):
    """Hanging up also cuts a backoff sleep short (the last failure is then raised)."""

    def __init__(self, body: Callable[[RelayStream], Iterator[Chunk]], provider: str = "") -> None:
        self.stop = threading.Event()
        super().__init__(body, provider)

    def abort(self) -> None:
        self.stop.set()
        super().abort()


class RetryProvider(Wrapper, Policy):
    def __init__(
        self,
        provider: Provider,
        attempts: int = 3,
        base: float = 1.0,
        cap: float = 30.0,
        max_wait: float | None = None,
        *,
        sleep: Callable[[float], None] | None = None,
        on_retry: Callable[[dict[str, Any]], None] | None = None,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(provider)
        if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
            raise ValueError(f"with_retry: attempts counts the first try too, so it must be >= 1; got {attempts!r}")
        for name, v in (("base", base), ("cap", cap)):
            if isinstance(v, bool) or not isinstance(v, int | float) or v < 0:
                raise ValueError(f"with_retry: {name} must be a number of seconds >= 0; got {v!r}")
        self.attempts = attempts
        self.base = float(base)
        self.cap = float(cap)
        self.max_wait = float(cap if max_wait is None else max_wait)
        self._sleep = sleep
        self.on_retry = on_retry
        self._rng = rng or random.Random()
        self._clock = clock
        self._tls = threading.local()  # the current call's hang-up event, for the sleep
        self._retrying = self._make_retrying()  # one per provider: tenacity keeps its state per thread

    # policy --------------------------------------------------------------------

    def should_retry(self, err: BaseException) -> bool:
        if not is_retryable(err, max_wait=float("inf")):
            return False
        wait = server_wait(err, self._clock)
        return wait is None or wait <= self.max_wait  # a longer wait belongs to a fallback

    def delay(self, err: BaseException, attempt: int) -> float:
        """The wait before the next attempt: the server's, else full jitter."""
        wait = server_wait(err, self._clock)
        if wait is not None:
            return wait
        return self._rng.random() * min(self.cap, self.base * 2.0 ** (attempt - 1))

    def _sleep_now(self, seconds: float) -> None:
        if self._sleep is not None:
            self._sleep(seconds)
            return
        stop = getattr(self._tls, "stop", None)
        if stop is None:
            time.sleep(seconds)
        elif stop.wait(seconds):
            raise _Stopped

    def _call(self, fn: Callable[..., Any], *args: Any, stop: threading.Event | None = None, **kw: Any) -> Any:
        tls = self._tls
        prev = getattr(tls, "stop", None)
        tls.stop = stop
        try:
            return self._retrying(fn, *args, **kw)
        finally:
            tls.stop = prev

    def _make_retrying(self) -> tenacity.Retrying:
        def wait(state: tenacity.RetryCallState) -> float:
            assert state.outcome is not None
            error = state.outcome.exception()
            assert error is not None  # tenacity waits only after an attempt that raised
            return self.delay(error, state.attempt_number)

        def before_sleep(state: tenacity.RetryCallState) -> None:
            if self.on_retry is not None:
                assert state.outcome is not None
                self.on_retry(
                    {"error": state.outcome.exception(), "attempt": state.attempt_number,
                     "delay": state.upcoming_sleep}
                )

        return tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.attempts),
            wait=wait,
            retry=tenacity.retry_if_exception(self.should_retry),
            sleep=self._sleep_now,
            before_sleep=before_sleep,
            reraise=True,
        )

    # calls -----------------------------------------------------------------------

    def _open(self, messages: list[Message], tools: list[ToolDefinition] | None, opts: CallOptions) -> ChunkStream:
        inner_provider = self.inner

        def body(stream: RelayStream) -> Iterator[Chunk]:
            assert isinstance(stream, _RetryStream)
            attempts = 0
            last: list[BaseException] = []

            def attempt() -> tuple[ChunkStream, list[Chunk]]:
                nonlocal attempts
                if stream.stop.is_set() and last:
                    raise _Stopped
                attempts += 1
                stream.info["attempts"] = attempts
                s = inner_provider.open_stream(messages, tools, opts)
                stream.inner = s
                try:
                    return s, read_head(s)
                except BaseException as exc:
                    s.close()  # the abandoned attempt hangs up before the next one opens
                    last[:] = [exc]
                    raise

            try:
                s, head = self._call(attempt, stop=stream.stop)
            except _Stopped:
                err = last[0]
                err.__suppress_context__ = True
                raise err  # noqa: B904 - the failure itself, not the hang-up that cut the wait
            yield from relay(head, s)

        stream = _RetryStream(body, provider=getattr(self.inner, "id", ""))
        return stream

    def whole(self, ask: Ask, opts: CallOptions) -> Turn:
        turn: Turn = self._call(ask, self.inner)
        return turn

    def __repr__(self) -> str:
        return f"<RetryProvider attempts={self.attempts} base={self.base:g} cap={self.cap:g} {self.inner!r}>"


class _Stopped(BaseException):
    """The stream was hung up during a backoff sleep."""


with_retry = constructor(RetryProvider, "with_retry", """Retry transient failures (timeout, network,
overload, rate) before the first chunk.

``attempts`` counts the first try. Backoff is full jitter: a random wait below
``min(cap, base * 2**(n-1))``. A server's own wait is used as given, unless it exceeds
``max_wait`` (default: ``cap``), in which case the error is raised at once.
""")
