"""The PostgresGate tests' worker processes: top-level callables a spawned process imports by
name (the FIFO case's waiters, the SIGKILL case's holder)."""

from __future__ import annotations

import os
import socket
import threading
import time
from typing import Any

from providerkit_nb.wrappers import PostgresGate


def fifo_worker(dsn: str, gate_name: str, limit: int, proc: int, procs: int, waiters: int,
                start_at: float, gap: float, hold: float, out: Any) -> None:
    """One process of the FIFO case: ``waiters`` threads arrive ``gap * procs`` apart
    (interleaved with the other processes), hold their slot ``hold`` seconds."""
    import psycopg

    gate = PostgresGate(dsn, gate_name, limit, poll=0.05)
    gate.status()  # connect before the clock starts
    records: list[dict[str, Any]] = []
    lock = threading.Lock()

    def one(i: int) -> None:
        delay = start_at + (i * procs + proc) * gap - time.time()
        if delay > 0:
            time.sleep(delay)
        slot = gate.slot()
        slot.acquire()
        granted = slot.granted_at  # when the hub granted it (system-wide monotonic clock)
        time.sleep(hold)
        released = time.monotonic()
        slot.release()
        with lock:
            records.append({"proc": proc, "arrived": slot.arrived, "ticket": slot.ticket,
                            "granted": granted, "released": released})

    threads = [threading.Thread(target=one, args=(i,)) for i in range(waiters)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with psycopg.connect(dsn, autocommit=True) as c:
        row = c.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s",
                        (f"providerkit-gate {socket.gethostname()[:30]}:{os.getpid()}",)
                        ).fetchone()
    out.put({"proc": proc, "records": records, "connections": row[0] if row else -1})


def hold_slots(dsn: str, gate_name: str, limit: int, quarantine: float, n: int, ready: Any) -> None:
    """Take ``n`` slots and sit on them until killed (the SIGKILL cases)."""
    gate = PostgresGate(dsn, gate_name, limit, quarantine=quarantine, poll=0.05)
    slots = [gate.slot() for _ in range(n)]
    for s in slots:
        s.acquire()
    ready.set()
    time.sleep(600)
