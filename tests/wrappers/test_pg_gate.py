"""PostgresGate against the real server: the limit, FIFO (case (c)), dead processes, the views.

FIFO is checked as promised: within a process, grants follow arrival exactly; across processes,
grants follow ticket order, up to the wake-up race among tickets that became eligible together
(so no grant is displaced by more than N places), and never more than N holders at once.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import threading
import time
import uuid
import warnings
from typing import Any

import pytest

import providerkit_nb as pk
from providerkit_nb.notebook import gate_frame
from providerkit_nb.wrappers.pg_gate import PostgresGate
from tests.store.conftest import require_pg

from .pg_gate_workers import fifo_worker, hold_slots

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg_dsn() -> str:
    return require_pg()


@pytest.fixture
def gate_name() -> str:
    return f"test-{uuid.uuid4().hex[:12]}"


def _max_overlap(intervals: list[tuple[float, float]]) -> int:
    events = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals])
    now = peak = 0
    for _, d in events:
        now += d
        peak = max(peak, now)
    return peak


def test_limit_and_fifo_within_one_process(pg_dsn: str, gate_name: str) -> None:
    gate = PostgresGate(pg_dsn, gate_name, 3, poll=0.05)
    lock = threading.Lock()
    grants: list[tuple[int, int, float]] = []  # (arrival, ticket, when the hub granted it)
    intervals: list[tuple[float, float]] = []
    first = [gate.slot() for _ in range(3)]
    assert all(s.acquire() for s in first)  # hold every slot so that everyone below queues

    def one(i: int) -> None:
        time.sleep(i * 0.01)
        with gate.slot() as s:
            s.acquire()
            t = time.monotonic()
            with lock:
                grants.append((s.arrived, s.granted, s.granted_at or 0.0))
            time.sleep(0.03)
            intervals.append((t, time.monotonic()))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(24)]
    for t in threads:
        t.start()
    time.sleep(0.4)
    assert gate.queued >= 20 and gate.in_use == 3
    for s in first:
        s.release()
    for t in threads:
        t.join(30)
    grants.sort()  # by arrival: tickets and grant times follow (one check may grant several)
    assert [t for _, t, _ in grants] == sorted(t for _, t, _ in grants)
    assert [g for _, _, g in grants] == sorted(g for _, _, g in grants)
    assert _max_overlap(intervals) <= 3
    st = gate.status()
    assert st["in_use"] == 0 and st["queued"] == 0 and st["granted"] == 27
    assert gate.connections == 2


def test_c_fifo_across_four_processes(pg_dsn: str, gate_name: str) -> None:
    procs, waiters, limit = 4, 16, 4
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    start_at = time.time() + 4.0  # spawned interpreters import first
    ps = [ctx.Process(target=fifo_worker, args=(pg_dsn, gate_name, limit, p, procs, waiters,
                                                start_at, 0.005, 0.04, out)) for p in range(procs)]
    for p in ps:
        p.start()
    results = [out.get(timeout=90) for _ in ps]
    for p in ps:
        p.join(10)
    records = [r for res in results for r in res["records"]]
    assert len(records) == procs * waiters
    assert all(res["connections"] == 2 for res in results), [r["connections"] for r in results]
    for p in range(procs):  # within a process: grants in arrival order, tickets in arrival order
        mine = sorted((r for r in records if r["proc"] == p), key=lambda r: r["arrived"])
        assert [r["ticket"] for r in mine] == sorted(r["ticket"] for r in mine)
        times = [r["granted"] for r in mine]  # several may be granted by one check: ties allowed
        assert times == sorted(times), "a later arrival was granted before an earlier one"
    by_grant = sorted(records, key=lambda r: (r["granted"], r["ticket"]))
    rank = {r["ticket"]: i for i, r in enumerate(sorted(records, key=lambda r: r["ticket"]))}
    displacement = max(abs(i - rank[r["ticket"]]) for i, r in enumerate(by_grant))
    inversions = sum(1 for i, a in enumerate(by_grant) for b in by_grant[i + 1:] if b["ticket"] < a["ticket"])
    print(f"\n(c) max displacement {displacement}, pairwise inversions {inversions} (by grant time)")
    # A ticket is eligible the moment it is among the first N; its process applies the grant at
    # its next check (a notify away), so eligible tickets of different processes may be applied in
    # either order: a small displacement, bounded by N plus that lag. A gate that is not FIFO
    # displaces by tens of places here.
    assert displacement <= 2 * limit
    assert _max_overlap([(r["granted"], r["released"]) for r in records]) <= limit


def test_a_dead_process_waiting_ticket_goes_at_once_and_its_held_slots_after_the_quarantine(
    pg_dsn: str, gate_name: str
) -> None:
    limit, quarantine = 2, 0.6
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    holder = ctx.Process(target=hold_slots, args=(pg_dsn, gate_name, limit, quarantine, limit, ready))
    holder.start()
    try:
        assert ready.wait(60)
        gate = PostgresGate(pg_dsn, gate_name, limit, quarantine=quarantine, poll=0.05)
        assert gate.in_use == limit
        assert not gate.slot().acquire(timeout=0.2)  # full: a timeout, and the ticket leaves
        assert gate.queued == 0 and gate.status()["timeouts"] == 1
        waiter = gate.slot()
        got: list[float] = []
        t = threading.Thread(target=lambda: (waiter.acquire(), got.append(time.monotonic())))
        t.start()
        time.sleep(0.3)
        os.kill(holder.pid or 0, signal.SIGKILL)
        killed = time.monotonic()
        holder.join(10)
        time.sleep(0.25)
        st = gate.status()
        assert st["quarantined"] == limit and st["queued"] == 1  # held slots kept, for now
        t.join(10)
        back = got[0] - killed
        print(f"\nslot back in use {back:.3f} s after SIGKILL (quarantine {quarantine} s)")
        assert quarantine <= back < quarantine + 0.5
        waiter.release()
        assert gate.in_use == 0
    finally:
        if holder.is_alive():
            holder.kill()
        holder.join(5)


def test_interrupt_leaves_the_queue(pg_dsn: str, gate_name: str) -> None:
    gate = PostgresGate(pg_dsn, gate_name, 1, poll=0.05)
    held = gate.slot()
    held.acquire()
    waiter = gate.slot()
    errors: list[BaseException] = []

    def wait() -> None:
        try:
            waiter._event.wait = _raise_interrupt  # type: ignore[method-assign]
            waiter.acquire()
        except KeyboardInterrupt as exc:
            errors.append(exc)

    t = threading.Thread(target=wait)
    t.start()
    t.join(10)
    assert errors and waiter.state == "left"
    assert gate.queued == 0 and gate.status()["interrupted"] == 1
    held.release()
    held.release()  # idempotent
    assert gate.in_use == 0


def _raise_interrupt(timeout: float | None = None) -> bool:
    raise KeyboardInterrupt


def test_settings_pickle_and_no_secret_in_views(pg_dsn: str, gate_name: str) -> None:
    secret_dsn = "postgresql://user:hunter2@127.0.0.1:1/db"
    g = PostgresGate(secret_dsn, "x", 3, quarantine=2.0)
    assert "hunter2" not in repr(g)
    g2 = pickle.loads(pickle.dumps(g))
    assert (g2.name, g2.limit, g2.quarantine) == ("x", 3, 2.0)
    with pytest.raises(pk.wrappers.pg_gate.GateError, match="cannot connect") as info:
        g.acquire(timeout=1)
    assert "hunter2" not in str(info.value)
    gate = PostgresGate(pg_dsn, gate_name, 2)
    assert gate.status()["limit"] == 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        other = PostgresGate(pg_dsn, gate_name, 5)
        other.status()
    assert any("had 2 slots" in str(w.message) for w in caught)


def test_registry_connection_shares_a_postgres_gate(pg_dsn: str, gate_name: str) -> None:
    config: dict[str, Any] = {"c": {"preset": "openai", "base_url": "http://127.0.0.1:9", "api_key": "k",
                                    "max_concurrent": 3, "gate": {"dsn_env": "PK_TEST_GATE_DSN",
                                                                  "name": gate_name, "quarantine": 1}}}
    reg = pk.Registry(config, environ={"PK_TEST_GATE_DSN": pg_dsn})
    gate = reg.gate("c")
    assert isinstance(gate, PostgresGate) and gate.limit == 3 and gate.quarantine == 1.0
    assert reg.provider("c/m").gate is gate  # type: ignore[attr-defined]
    st = reg.status()["c"]
    assert st["in_use"] == 0 and st["backend"].startswith("postgresql://")
    frame = gate_frame(reg)
    assert list(frame["connection"]) == ["c"]
    with pytest.raises(ValueError, match="dsn"):
        pk.Registry({"c": {"preset": "openai", "gate": {"name": "x"}}})


def test_a_grant_seen_before_its_ticket_is_registered_is_not_lost(pg_dsn: str, gate_name: str) -> None:
    """An arriving thread may be descheduled between its ticket's insert and handing the ticket to
    its slot; the listener (polling fast here) may grant the ticket in that window. The grant must
    still reach the slot. The window is widened by a pause after each insert, as a loaded
    machine does, while a second owner releases into it; the gate's code is unchanged. (A hang
    of this kind was seen once in the benchmark under heavy load; this test did not reproduce it
    on the code before the fix, so it guards the handoff rather than proving that cause.)"""
    from psycopg.conninfo import make_conninfo

    gate = PostgresGate(pg_dsn, gate_name, 4, poll=0.005)
    # The same gate through a second hub (another DSN spelling): another owner, like another
    # process, whose releases land while the first hub is inside its window.
    other = PostgresGate(make_conninfo(pg_dsn, application_name="other"), gate_name, 4, poll=0.005)
    hub = gate._hub()
    assert other._hub() is not hub
    execute = hub._w.execute

    def slow_after_insert(query: Any, *args: Any, **kwargs: Any) -> Any:
        cursor = execute(query, *args, **kwargs)
        if "providerkit_gate_enter" in str(query):
            time.sleep(0.02)  # committed, not yet registered
        return cursor

    hub._w.execute = slow_after_insert  # type: ignore[method-assign]
    done: list[int] = []
    stuck: list[int] = []

    def cycle(i: int) -> None:
        for _ in range(5):
            s = (gate if i % 2 else other).slot()
            if not s.acquire(timeout=15):
                stuck.append(i)
                return
            time.sleep(0.005)
            s.release()
        done.append(i)

    threads = [threading.Thread(target=cycle, args=(i,)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    hub._w.execute = execute  # type: ignore[method-assign]
    assert not stuck and len(done) == 10
    st = gate.status()
    assert st["in_use"] == 0 and st["queued"] == 0
    assert st["granted"] + other.status()["granted"] == 50
    other._hub()._fail("closed by the test")  # not this process's pair of connections
