"""A first-in, first-out gate per connection, and the wrapper that holds a slot per stream.

``threading.Semaphore`` lets a late caller take a freed slot before the thread it woke gets
there, so after a restart the oldest conversations can starve. Here a freed slot is handed
straight to the oldest waiter under one lock; nobody can barge in. A waiter that is interrupted
(a notebook's Stop button is a KeyboardInterrupt) leaves the queue, and if a slot reached it in
the meantime, passes that slot on, so nothing is lost or held for the others.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

from ..core.messages import Message
from ..core.tools import ToolDefinition
from ..core.turn import Chunk, Turn
from ..providers.base import ChunkStream, Provider
from ..wire.options import CallOptions
from ._base import Ask, Policy, RelayStream, Wrapper, constructor

__all__ = ["Gate", "GateCounts", "GateLike", "Slot", "create_gate", "with_gate", "GatedProvider"]

_RECENT = 256  # waits kept for the views


class GateCounts:
    """What a gate counts for its views: arrivals, grants, timeouts, interruptions and the
    recent waits. Not locked itself: a gate calls it under its own lock. The in-process ``Gate``
    and the shared ``PostgresGate`` each keep one."""

    __slots__ = ("arrived", "granted", "timeouts", "interrupted", "max_wait", "recent")

    def __init__(self) -> None:
        self.arrived = 0
        self.granted = 0
        self.timeouts = 0
        self.interrupted = 0
        self.max_wait = 0.0
        self.recent: deque[float] = deque(maxlen=_RECENT)

    def arrive(self) -> int:
        """Count an arrival; its number (arrivals before it)."""
        n = self.arrived
        self.arrived = n + 1
        return n

    def grant(self, wait: float) -> int:
        """Count a grant after ``wait`` seconds in line; its number (grants before it)."""
        n = self.granted
        self.granted = n + 1
        self.recent.append(wait)
        if wait > self.max_wait:
            self.max_wait = wait
        return n

    def time_out(self) -> None:
        self.timeouts += 1

    def interrupt(self) -> None:
        self.interrupted += 1

    def counts(self) -> dict[str, Any]:
        """The counters under their ``status()`` names."""
        return {
            "arrived": self.arrived,
            "granted": self.granted,
            "timeouts": self.timeouts,
            "interrupted": self.interrupted,
            "max_wait": self.max_wait,
        }

    @staticmethod
    def waits(recent: list[float]) -> dict[str, Any]:
        """The recent waits (a copy taken under the gate's lock) and their mean."""
        return {"recent_waits": recent, "mean_wait": sum(recent) / len(recent) if recent else 0.0}


class Slot:
    """One caller's place at a gate: new, queued, held, then released (or left the queue).

    ``release()`` is idempotent and safe from any thread, so it can be a stream's close hook.
    ``arrived`` and ``granted`` are the gate's counters at arrival and at grant: at a FIFO gate
    the grants come in arrival order.
    """

    __slots__ = ("_gate", "_wake", "state", "arrived", "granted", "queued_at", "granted_at")

    def __init__(self, gate: Gate) -> None:
        self._gate = gate
        self._wake: threading.Lock | None = None
        self.state = "new"
        self.arrived = -1
        self.granted = -1
        self.queued_at: float | None = None
        self.granted_at: float | None = None

    @property
    def wait(self) -> float:
        """Seconds spent waiting: so far while queued, final once granted."""
        if self.queued_at is None:  # granted on arrival
            return 0.0
        end = self.granted_at if self.granted_at is not None else time.monotonic()
        return end - self.queued_at

    def acquire(self, timeout: float | None = None) -> bool:
        """Wait for the slot; False on timeout. An interrupt leaves the queue and re-raises."""
        g = self._gate
        with g._lock:
            if self.state != "new":
                raise RuntimeError(f"a gate slot is acquired once (this one is {self.state})")
            self.arrived = g.counts.arrived
            n = g._take_free_locked()
            if n is not None:  # no wait, so no clock reading either
                self.state = "held"
                self.granted = n
                return True
            g.counts.arrive()
            self.queued_at = time.monotonic()
            if timeout is not None and timeout <= 0:
                self.state = "left"
                g.counts.time_out()
                return False
            # A private lock, taken now and released by whoever hands us the slot.
            wake = self._wake = threading.Lock()
            wake.acquire()
            self.state = "queued"
            g._waiters.append(self)
        try:
            wake.acquire(timeout=-1 if timeout is None else timeout)
        except BaseException:
            self._leave(interrupted=True)
            raise
        with g._lock:
            if self.state == "held":  # granted (possibly just as the timeout expired)
                return True
            if self.state == "queued":
                g._waiters.remove(self)
                self.state = "left"
                g.counts.time_out()
            return False

    def _leave(self, *, interrupted: bool) -> None:
        g = self._gate
        with g._lock:
            if self.state == "held":  # the slot arrived as we were interrupted: pass it on
                self.state = "released"
                g._release_locked()
            elif self.state == "queued":
                g._waiters.remove(self)
                self.state = "left"
            else:
                return
            if interrupted:
                g.counts.interrupt()

    def release(self) -> None:
        """Give the slot back (or leave the queue). Safe to call more than once."""
        self._leave(interrupted=False)

    def __enter__(self) -> Slot:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"<Slot {self.state} arrived={self.arrived} wait={self.wait:.3f}s>"


class Gate:
    """At most ``limit`` callers at once; the rest wait in arrival order.

    ``acquire()``/``release()`` and ``with gate:`` work like a lock; ``slot()`` gives a
    :class:`Slot` that remembers its own wait and can be released from any thread.
    """

    def __init__(self, limit: int, name: str = "") -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"a gate needs a whole number of slots >= 1, got {limit!r}")
        self.name = name
        self._limit = limit
        self._lock = threading.Lock()
        self._in_use = 0
        self._waiters: deque[Slot] = deque()
        self.counts = GateCounts()

    # state -------------------------------------------------------------------

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def in_use(self) -> int:
        return self._in_use

    @property
    def queued(self) -> int:
        return len(self._waiters)

    @property
    def longest_wait(self) -> float:
        """How long the oldest waiter has been waiting now (0 when nobody waits)."""
        with self._lock:
            head = self._waiters[0] if self._waiters else None
        return head.wait if head is not None else 0.0

    def status(self) -> dict[str, Any]:
        """A plain dict for the notebook views."""
        with self._lock:
            head = self._waiters[0] if self._waiters else None
            recent = list(self.counts.recent)
            d = {
                "name": self.name,
                "limit": self._limit,
                "in_use": self._in_use,
                "queued": len(self._waiters),
                **self.counts.counts(),
            }
        d["longest_wait"] = head.wait if head is not None else 0.0
        d.update(GateCounts.waits(recent))
        return d

    # locking -----------------------------------------------------------------

    def slot(self) -> Slot:
        """A new place in line (not yet queued: call ``acquire()`` on it)."""
        return Slot(self)

    def acquire(self, timeout: float | None = None) -> bool:
        """Wait for a slot, first come first served; False if ``timeout`` seconds pass."""
        with self._lock:
            if self._take_free_locked() is not None:
                return True
        return Slot(self).acquire(timeout)

    def release(self) -> None:
        """Give back a slot taken with ``acquire()``."""
        with self._lock:
            if self._in_use <= 0:
                raise RuntimeError("Gate.release() called more times than acquire()")
            self._release_locked()

    def __enter__(self) -> Gate:
        self.acquire()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def _take_free_locked(self) -> int | None:
        """A slot at once if one is free and nobody waits (else None): the grant's number."""
        if self._in_use < self._limit and not self._waiters:
            self._in_use += 1
            self.counts.arrive()
            return self.counts.grant(0.0)
        return None

    def _grant_locked(self, slot: Slot) -> None:
        now = time.monotonic()
        slot.state = "held"
        slot.granted_at = now
        slot.granted = self.counts.grant(now - (slot.queued_at or now))

    def _release_locked(self) -> None:
        if self._waiters:  # hand the slot straight to the oldest waiter; in_use is unchanged
            nxt = self._waiters.popleft()
            self._grant_locked(nxt)
            assert nxt._wake is not None
            nxt._wake.release()
        else:
            self._in_use -= 1

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        return f"<Gate{label} {self._in_use}/{self._limit} in use, {len(self._waiters)} queued>"


@runtime_checkable
class GateLike(Protocol):
    """What ``with_gate`` needs: the in-process ``Gate`` and the shared ``PostgresGate``."""

    name: str

    def slot(self) -> Any: ...
    def status(self) -> dict[str, Any]: ...


def create_gate(n: int, name: str = "") -> Gate:
    """One gate per connection, kept for the life of the process."""
    return Gate(n, name)


class GatedProvider(Wrapper, Policy):
    """Takes a slot when the stream is first read; gives it back when the stream ends in any way."""

    def __init__(self, provider: Provider, gate: GateLike) -> None:
        super().__init__(provider)
        if not isinstance(gate, GateLike):
            raise TypeError(
                "with_gate needs a Gate from providerkit_nb.wrappers.create_gate(n) or a pk.PostgresGate; got "
                f"{type(gate).__name__}"
            )
        self.gate = gate

    def _open(self, messages: list[Message], tools: list[ToolDefinition] | None, opts: CallOptions) -> ChunkStream:
        inner = self.inner.open_stream(messages, tools, opts)  # builds the request; no I/O yet
        slot = self.gate.slot()

        def body(stream: RelayStream) -> Iterator[Chunk]:
            slot.acquire()
            stream.info.update(gate_wait=slot.wait, gate_arrived=slot.arrived, gate_granted=slot.granted)
            yield from inner

        stream = RelayStream(body, provider=inner.provider)
        stream.inner = inner  # hooks run in order: hang up first, then free the slot
        stream.on_close(slot.release)
        stream.info["gate"] = self.gate.name
        return stream

    def whole(self, ask: Ask, opts: CallOptions) -> Turn:
        with self.gate.slot() as slot:
            slot.acquire()
            return ask(self.inner)


with_gate = constructor(
    GatedProvider, "with_gate", "Cap the calls in flight on ``gate``'s connection; put it outside ``with_watchdog``."
)
