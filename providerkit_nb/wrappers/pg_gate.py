"""PostgresGate: one first-in, first-out limit shared by every process that opens it.

A provider's concurrency limit belongs to the API key, so when conversations run on many worker
processes and machines the gate must live where they all meet: the PostgreSQL server the store
already uses. The design is a ticket table:

- **Arrive.** A waiter inserts a ticket; inserts to one gate are serialized by a transaction
  advisory lock, so ticket ids grow in commit order. Within a process, tickets are inserted in
  the order threads arrived (one FIFO of pending arrivals, drained in order).
- **Grant.** A ticket holds a slot iff it is among the ``limit`` smallest ids of its gate. A newer
  ticket always has a larger id, so a granted ticket stays granted until it leaves: never more
  than ``limit`` holders and FIFO by ticket, both by construction.
- **Liveness.** Each process holds a session advisory lock on a random token and stamps its
  tickets with it; a ticket whose token is no longer locked (visible in ``pg_locks`` to every
  role) belongs to a dead process. Its waiting tickets are dropped at the next check (every
  ``poll`` seconds while anyone waits); its held tickets keep their slot for ``quarantine``
  seconds, because the provider may still be serving the orphaned request, then are dropped.
- **Connections.** Two per process (one to write tickets, one to LISTEN and check), however many
  threads wait and however many gates the process opens on the same server. Both set TCP
  keepalives on the server side, so a machine that vanishes without closing its sockets is
  noticed in about ``idle + interval * count`` seconds instead of the default two hours.

What FIFO across machines means: grants follow the order in which PostgreSQL issued the tickets,
and within one process the order in which threads arrived. Machines share no clock, so "arrived
first" across machines is "its ticket was inserted first".

psycopg 3 is imported when a gate is first used (install the ``postgres`` extra).
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
import time
import warnings
from collections import deque
from typing import Any

from ..core.errors import (
    GateError,  # noqa: F401 (defined at the bottom, kept importable here)
)
from ..transport.pg import connect, describe_dsn, first_line
from .gate import GateCounts

__all__ = ["PostgresGate", "PostgresSlot", "GateError"]

_OWNER_NS = 0x706B6761  # classid of the owner tokens (two-int4 advisory lock form)
_ARRIVE_NS = 0x706B6762  # classid of the per-gate insert lock
_SETUP_LOCK = 0x706B6763  # bigint advisory lock held while creating the tables
_CHANNEL = "providerkit_gate"

_SETUP = (
    """CREATE TABLE IF NOT EXISTS providerkit_gates (
        name TEXT PRIMARY KEY,
        slots INTEGER NOT NULL,
        quarantine DOUBLE PRECISION NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )""",
    # UNLOGGED: no WAL flush per ticket (a gate is live state; after a server crash every
    # holder's session is gone anyway, and PostgreSQL empties the table).
    """CREATE UNLOGGED TABLE IF NOT EXISTS providerkit_gate_tickets (
        id BIGSERIAL PRIMARY KEY,
        gate TEXT NOT NULL,
        owner INTEGER NOT NULL,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        arrived_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        granted_at TIMESTAMPTZ,
        dead_since TIMESTAMPTZ
    )""",
    "CREATE INDEX IF NOT EXISTS providerkit_gate_tickets_by_gate ON providerkit_gate_tickets (gate, id)",
    # Grant: optionally sweep (mark the dead, drop what may go), then grant the caller's
    # tickets among the first `slots` of the gate.
    f"""CREATE OR REPLACE FUNCTION providerkit_gate_grant(p_gate TEXT, p_owner INTEGER,
            p_sweep BOOLEAN)
        RETURNS SETOF BIGINT LANGUAGE plpgsql AS $$
        DECLARE lim INTEGER; q DOUBLE PRECISION; n INTEGER;
        BEGIN
            SELECT slots, quarantine INTO lim, q FROM providerkit_gates WHERE name = p_gate;
            IF p_sweep THEN
                UPDATE providerkit_gate_tickets t SET dead_since = now()
                 WHERE t.gate = p_gate AND t.dead_since IS NULL AND t.owner <> p_owner
                   AND NOT EXISTS (
                       SELECT 1 FROM pg_locks l
                        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
                          AND l.classid = {_OWNER_NS}::oid AND l.objid = t.owner::oid
                          AND l.database = (SELECT oid FROM pg_database
                                             WHERE datname = current_database()));
                DELETE FROM providerkit_gate_tickets t
                 WHERE t.gate = p_gate AND t.dead_since IS NOT NULL
                   AND (t.granted_at IS NULL OR t.dead_since < now() - make_interval(secs => q));
                GET DIAGNOSTICS n = ROW_COUNT;
                IF n > 0 THEN  -- slots (or places) freed: wake the other processes' waiters
                    PERFORM pg_notify('providerkit_gate', p_gate);
                END IF;
            END IF;
            RETURN QUERY UPDATE providerkit_gate_tickets t SET granted_at = clock_timestamp()
             WHERE t.id IN (SELECT s.id FROM providerkit_gate_tickets s WHERE s.gate = p_gate
                             ORDER BY s.id LIMIT coalesce(lim, 1))
               AND t.owner = p_owner AND t.granted_at IS NULL
             RETURNING t.id;
        END $$""",
    # Enter: n tickets for one owner, ids in the order given, serialized per gate, then a grant
    # without a sweep: one round trip for an uncontended acquire.
    f"""CREATE OR REPLACE FUNCTION providerkit_gate_enter(p_gate TEXT, p_owner INTEGER,
            p_host TEXT, p_pid INTEGER, p_n INTEGER)
        RETURNS TABLE(ticket BIGINT, is_new BOOLEAN, is_granted BOOLEAN) LANGUAGE plpgsql AS $$
        DECLARE ids BIGINT[]; got BIGINT[];
        BEGIN
            PERFORM pg_advisory_xact_lock({_ARRIVE_NS}, hashtext(p_gate));
            WITH ins AS (
                INSERT INTO providerkit_gate_tickets (gate, owner, host, pid)
                SELECT p_gate, p_owner, p_host, p_pid FROM generate_series(1, p_n) g ORDER BY g
                RETURNING id)
            SELECT array_agg(id ORDER BY id) INTO ids FROM ins;
            SELECT coalesce(array_agg(g), '{{}}') INTO got
              FROM providerkit_gate_grant(p_gate, p_owner, false) g;
            RETURN QUERY
                SELECT i, true, i = ANY(got) FROM unnest(ids) i
                UNION ALL
                SELECT g, false, true FROM unnest(got) g WHERE NOT g = ANY(ids);
        END $$""",
    """CREATE OR REPLACE FUNCTION providerkit_gate_leave(p_gate TEXT, p_ids BIGINT[])
        RETURNS INTEGER LANGUAGE plpgsql AS $$
        DECLARE n INTEGER;
        BEGIN
            DELETE FROM providerkit_gate_tickets WHERE id = ANY(p_ids);
            GET DIAGNOSTICS n = ROW_COUNT;
            PERFORM pg_notify('providerkit_gate', p_gate);
            RETURN n;
        END $$""",
)


class PostgresSlot:
    """One caller's ticket: new, queued, held, then released (or left the queue).

    Same shape as the in-process gate's ``Slot``: ``acquire(timeout)``, ``release()`` (idempotent,
    safe from any thread), ``wait``, ``arrived`` (the process-local arrival number) and
    ``granted`` (the ticket id, which is the global order).
    """

    __slots__ = ("_gate", "_event", "state", "arrived", "granted", "ticket", "queued_at", "granted_at")

    def __init__(self, gate: PostgresGate) -> None:
        self._gate = gate
        self._event = threading.Event()
        self.state = "new"
        self.arrived = -1
        self.granted = -1
        self.ticket: int | None = None
        self.queued_at: float | None = None
        self.granted_at: float | None = None

    @property
    def wait(self) -> float:
        if self.queued_at is None:
            return 0.0
        end = self.granted_at if self.granted_at is not None else time.monotonic()
        return end - self.queued_at

    def acquire(self, timeout: float | None = None) -> bool:
        """Wait for the slot; False on timeout. An interrupt leaves the queue and re-raises."""
        hub = self._gate._hub()
        hub.arrive(self)
        try:
            got = self._event.wait(timeout)
        except BaseException:
            hub.leave(self, interrupted=True)
            raise
        if self.state == "failed":
            raise GateError(hub.broken or f"{hub.where}: the gate's connection was lost")
        if got and self.state == "held":
            return True
        hub.leave(self, interrupted=False, keep_granted=True)
        return self.state == "held"  # granted just as the timeout expired: keep it

    def release(self) -> None:
        """Give the slot back (or leave the queue). Safe to call more than once."""
        if self.state in ("new", "released", "left", "failed"):
            return
        self._gate._hub().leave(self, interrupted=False)

    def __enter__(self) -> PostgresSlot:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"<PostgresSlot {self.state} ticket={self.ticket} wait={self.wait:.3f}s>"


class _Hub:
    """The two connections of one process to one server, shared by every gate on it."""

    def __init__(self, dsn: str, keepalive: tuple[int, int, int], poll: float) -> None:
        import psycopg

        self._pg = psycopg
        self.where = describe_dsn(dsn)
        self.poll = poll
        self.host = socket.gethostname()[:200]
        self.pid = os.getpid()
        self.broken: str | None = None
        self._local = threading.Lock()  # slots, pending arrivals, counters
        self._wlock = threading.Lock()  # the writing connection
        self._pending: deque[PostgresSlot] = deque()
        self._waiting: dict[int, PostgresSlot] = {}  # ticket -> queued slot
        self._early: set[int] = set()  # granted before its slot was registered
        self._gates: dict[str, PostgresGate] = {}
        kw: dict[str, Any] = dict(
            connect_timeout=5, keepalive=keepalive, settings=[("synchronous_commit", "off")],
            application_name=f"providerkit-gate {self.host[:30]}:{self.pid}",
        )
        try:
            self._w = connect(dsn, **kw)
            self._l = connect(dsn, **kw)
        except psycopg.Error as exc:
            raise GateError(f"{self.where}: cannot connect for the shared gate ({first_line(exc)}). "
                            "Check that the server is running and the DSN is right.") from None
        try:
            with self._w.transaction():
                self._w.execute("SELECT pg_advisory_xact_lock(%s)", (_SETUP_LOCK,))
                for stmt in _SETUP:
                    self._w.execute(stmt)
            # A token no live process holds; tickets a dead owner left under it are now dead.
            while True:
                token = 1 + secrets.randbelow(2**31 - 2)
                row = self._w.execute("SELECT pg_try_advisory_lock(%s::int, %s::int)", (_OWNER_NS, token)).fetchone()
                if row and row[0]:
                    break
            self.token = token
            self._w.execute("UPDATE providerkit_gate_tickets SET dead_since = now() "
                            "WHERE owner = %s::int AND dead_since IS NULL", (token,))
            self._l.execute(f"LISTEN {_CHANNEL}")
        except psycopg.Error as exc:
            self.close()
            raise GateError(f"{self.where}: cannot set up the shared gate's tables ({first_line(exc)})") from None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._listen, name="providerkit-gate-listener", daemon=True)
        self._thread.start()

    # ---- arriving and leaving

    def arrive(self, slot: PostgresSlot) -> None:
        gate = slot._gate
        with self._local:
            if slot.state != "new":
                raise RuntimeError(f"a gate slot is acquired once (this one is {slot.state})")
            if self.broken:
                raise GateError(self.broken)
            slot.state = "pending"
            slot.arrived = gate.counts.arrive()
            slot.queued_at = time.monotonic()
            self._pending.append(slot)
        self._drain()

    def _drain(self) -> None:
        """Insert every pending arrival in arrival order, then check for grants."""
        with self._wlock:
            with self._local:
                batch = list(self._pending)
                self._pending.clear()
            if not batch:
                return
            by_gate: dict[str, list[PostgresSlot]] = {}
            for s in batch:
                by_gate.setdefault(s._gate.name, []).append(s)
            try:
                for name, slots in by_gate.items():
                    rows = self._w.execute(
                        "SELECT * FROM providerkit_gate_enter(%s::text, %s::int, %s::text, %s::int, %s::int)",
                        (name, self.token, self.host, self.pid, len(slots))).fetchall()
                    with self._local:
                        new = sorted(t for t, is_new, _ in rows if is_new)
                        for s, t in zip(slots, new, strict=True):
                            s.ticket = t
                            s.state = "queued"
                            self._waiting[t] = s
                        # The listener may have seen a grant of these before they were known here.
                        early = [t for t in new if t in self._early]
                        self._early.difference_update(early)
                    self._apply([t for t, _, granted in rows if granted] + early)
            except self._pg.Error as exc:
                self._fail(f"{self.where}: the shared gate failed ({first_line(exc)})", batch)
                raise GateError(self.broken) from None
            except BaseException:  # interrupted mid-insert: tickets may exist that no slot knows
                self._fail(f"{self.where}: the shared gate was interrupted while queueing", batch)
                raise

    def _grant(self, conn: Any, gate: str, sweep: bool) -> None:
        for attempt in range(5):
            try:
                ids = [r[0] for r in conn.execute(
                    "SELECT * FROM providerkit_gate_grant(%s::text, %s::int, %s::boolean)",
                    (gate, self.token, sweep)).fetchall()]
                break
            except self._pg.errors.DeadlockDetected:
                if attempt == 4:
                    raise
        self._apply(ids)

    def _apply(self, ids: list[int]) -> None:
        """Wake the local slots the server just granted, oldest ticket first."""
        now = time.monotonic()
        with self._local:
            for t in sorted(ids):
                s = self._waiting.pop(t, None)
                if s is None:  # inserted, not yet handed to its slot (see _drain), or just left
                    self._early.add(t)
                    continue
                if s.state != "queued":
                    continue  # left meanwhile: its leave() deletes the ticket
                s.state = "held"
                s.granted = t
                s.granted_at = now
                s._gate.counts.grant(s.wait)
                s._event.set()

    def leave(self, slot: PostgresSlot, *, interrupted: bool, keep_granted: bool = False) -> None:
        with self._wlock:
            with self._local:
                if slot.state == "pending":  # not inserted yet (only under a failure)
                    self._pending.remove(slot)
                    slot.state = "left"
                    return
                ticket = slot.ticket
                self._early.discard(ticket or -1)
                if slot.state == "queued":
                    self._waiting.pop(ticket or -1, None)
                    slot.state = "left"
                    if not interrupted:
                        slot._gate.counts.time_out()
                elif slot.state == "held" and not keep_granted:
                    slot.state = "released"
                else:
                    return
                if interrupted:
                    slot._gate.counts.interrupt()
            if ticket is None or self.broken:
                return  # a dead connection's tickets are dropped by the others' checks
            try:
                self._w.execute("SELECT providerkit_gate_leave(%s::text, %s::bigint[])", (slot._gate.name, [ticket]))
            except self._pg.Error as exc:
                self._fail(f"{self.where}: the shared gate failed ({first_line(exc)})")

    # ---- the listener: wake-ups on release, and a poll for dead processes

    def _listen(self) -> None:
        conn = self._l
        swept = 0.0
        while not self._stop.is_set():
            try:
                for _ in conn.notifies(timeout=self.poll, stop_after=1):
                    pass  # any release on the server: re-check the gates this process waits on
                if self._stop.is_set():
                    return
                with self._local:
                    gates = {s._gate.name for s in self._waiting.values()}
                sweep = time.monotonic() - swept >= self.poll  # dead owners: once a poll
                if sweep:
                    swept = time.monotonic()
                for name in sorted(gates):
                    self._grant(conn, name, sweep)
            except Exception as exc:  # noqa: BLE001 - reported to every waiter
                if self._stop.is_set():
                    return
                self._fail(f"{self.where}: the shared gate's listener failed ({first_line(exc)})")
                return

    def _fail(self, why: str, batch: list[PostgresSlot] | None = None) -> None:
        with self._local:
            if self.broken is None:
                self.broken = why + "; the next acquire reconnects"
            waiting = list(self._waiting.values()) + list(self._pending) + list(batch or [])
            self._waiting.clear()
            self._pending.clear()
            for s in waiting:
                if s.state in ("pending", "queued"):
                    s.state = "failed"
                    s._event.set()
        with _HUBS_LOCK:
            for k, v in list(_HUBS.items()):
                if v is self:
                    del _HUBS[k]
        # Closing the sessions drops the owner token: the other processes then treat this one's
        # tickets as a dead process's (waiting ones dropped, held ones quarantined), so nothing
        # stays held by a hub nobody uses.
        self.close()

    # ---- views

    def counts(self, gate: str) -> tuple[int, int, int, float]:
        """(held, waiting, quarantined, oldest wait seconds) across every process."""
        with self._wlock:
            row = self._w.execute(
                "SELECT count(*) FILTER (WHERE granted_at IS NOT NULL), "
                "count(*) FILTER (WHERE granted_at IS NULL AND dead_since IS NULL), "
                "count(*) FILTER (WHERE granted_at IS NOT NULL AND dead_since IS NOT NULL), "
                "coalesce(extract(epoch FROM clock_timestamp() - min(arrived_at) "
                "FILTER (WHERE granted_at IS NULL AND dead_since IS NULL)), 0) "
                "FROM providerkit_gate_tickets WHERE gate = %s", (gate,)).fetchone()
        assert row is not None  # an aggregate always returns one row
        return int(row[0]), int(row[1]), int(row[2]), float(row[3])

    def close(self) -> None:
        stop = getattr(self, "_stop", None)
        if stop is not None:
            stop.set()
        for c in (getattr(self, "_w", None), getattr(self, "_l", None)):
            if c is not None:
                try:
                    c.close()
                except Exception:  # noqa: BLE001 - closing is best effort
                    pass


_HUBS: dict[tuple[str, int], _Hub] = {}
_HUBS_LOCK = threading.Lock()


class PostgresGate:
    """``PostgresGate(dsn, name, limit, *, quarantine=5.0)``: at most ``limit`` holders across
    every process that opens the gate ``name`` on the server at ``dsn``; the rest wait in ticket
    order. Same interface as the in-process ``Gate`` (``slot()``, ``acquire``/``release``,
    ``in_use``, ``queued``, ``status()``), so ``pk.with_gate`` and a registry connection take it.

    ``limit`` and ``quarantine`` are stored with the gate on the server: every process checks
    grants against the same values (the last one to open the gate sets them; a different value
    warns). ``poll`` is how often waiters re-check for dead processes; ``keepalive`` is
    ``(idle, interval, count)`` seconds for the server-side TCP keepalives.
    """

    def __init__(
        self,
        dsn: str,
        name: str,
        limit: int,
        *,
        quarantine: float = 5.0,
        poll: float = 0.1,
        keepalive: tuple[int, int, int] = (10, 5, 3),
    ) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"a gate needs a whole number of slots >= 1, got {limit!r}")
        if not name or not isinstance(name, str):
            raise ValueError("a shared gate needs a non-empty name (the same in every process)")
        if quarantine < 0 or poll <= 0:
            raise ValueError("quarantine must be >= 0 and poll > 0 seconds")
        self.name = name
        self._dsn = dsn
        self._limit = limit
        self.quarantine = float(quarantine)
        self.poll = float(poll)
        self.keepalive = keepalive
        self.where = describe_dsn(dsn)
        self._anonymous: deque[PostgresSlot] = deque()
        self.counts = GateCounts()  # this process's arrivals, grants and waits
        self._registered: _Hub | None = None

    def __getstate__(self) -> dict[str, Any]:
        """Only the settings cross to another process; it opens its own connections there."""
        return {"dsn": self._dsn, "name": self.name, "limit": self._limit,
                "quarantine": self.quarantine, "poll": self.poll, "keepalive": self.keepalive}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["dsn"], state["name"], state["limit"],  # type: ignore[misc]  # unpickling: build it again
                      quarantine=state["quarantine"], poll=state["poll"],
                      keepalive=tuple(state["keepalive"]))

    def _hub(self) -> _Hub:
        key = (self._dsn, os.getpid())  # a forked child opens its own connections
        with _HUBS_LOCK:
            hub = _HUBS.get(key)
            if hub is None or hub.broken:
                hub = _HUBS[key] = _Hub(self._dsn, self.keepalive, self.poll)
        if self._registered is not hub:
            self._register(hub)
        return hub

    def _register(self, hub: _Hub) -> None:
        with hub._wlock:
            row = hub._w.execute(
                "INSERT INTO providerkit_gates AS g (name, slots, quarantine) VALUES (%s, %s, %s) "
                "ON CONFLICT (name) DO UPDATE SET slots = excluded.slots, "
                "quarantine = excluded.quarantine, updated_at = now() "
                "RETURNING (SELECT slots FROM providerkit_gates WHERE name = %s)",
                (self.name, self._limit, self.quarantine, self.name)).fetchone()
        before = row[0] if row else None
        if before is not None and before != self._limit:
            warnings.warn(
                f"shared gate {self.name!r} at {self.where} had {before} slots; this process set "
                f"{self._limit}. Give every process the same limit.", stacklevel=4)
        self._registered = hub

    # ---- state

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def in_use(self) -> int:
        """Slots held now across every process (quarantined ones included)."""
        return self._hub().counts(self.name)[0]

    @property
    def queued(self) -> int:
        """Live tickets waiting now across every process."""
        return self._hub().counts(self.name)[1]

    @property
    def connections(self) -> int:
        """Connections this process keeps for its shared gates (2 once any gate was used)."""
        return 2 if self._registered is not None and not self._registered.broken else 0

    def status(self) -> dict[str, Any]:
        """The in-process gate's keys (global counts from the server) plus ``quarantined``."""
        held, waiting, quarantined, oldest = self._hub().counts(self.name)
        counts, recent = self.counts.counts(), list(self.counts.recent)
        return {
            "name": self.name, "limit": self._limit, "in_use": held, "queued": waiting,
            **counts, "longest_wait": oldest, **GateCounts.waits(recent),
            "quarantined": quarantined, "backend": self.where,
        }

    # ---- locking

    def slot(self) -> PostgresSlot:
        return PostgresSlot(self)

    def acquire(self, timeout: float | None = None) -> bool:
        s = PostgresSlot(self)
        if s.acquire(timeout):
            self._anonymous.append(s)
            return True
        return False

    def release(self) -> None:
        """Give back a slot taken with ``acquire()`` (slots are interchangeable)."""
        try:
            s = self._anonymous.popleft()
        except IndexError:
            raise RuntimeError("PostgresGate.release() called more times than acquire()") from None
        s.release()

    def __enter__(self) -> PostgresGate:
        self.acquire()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"<PostgresGate {self.name!r} limit={self._limit} at {self.where}>"


def close_all() -> None:
    """Close this process's gate connections (tests and shutdown; waiters get a GateError)."""
    with _HUBS_LOCK:
        hubs = list(_HUBS.values())
        _HUBS.clear()
    for h in hubs:
        h._fail("the shared gate was closed")
        h.close()
