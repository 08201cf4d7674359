"""Many conversations beyond one process: Dask workers, one PostgresGate, the stub provider.

- ``(a) throughput``: conversations x turns through ``resume_many`` on a Dask ``LocalCluster``
  (2 process workers, 127.0.0.1, no dashboard), every call through one ``PostgresGate`` of N
  slots, against the ideal ``calls x delay / N`` (the floor: N slots busy all the time; it counts
  the tail, when fewer than N conversations are left, against us). Target: within 10%. The stub
  (``tests/conversation/many/stub.py``) answers every call after ``delay`` seconds (1 s by default, as for a
  provider; ``--quick`` uses 0.1 s, where the per-call cost of the stack dominates).
- ``(b) throughput with a SIGKILL``: the same with one worker process killed mid-run (Dask
  restarts it and re-runs its tasks; the gate keeps the dead worker's slots for the quarantine).
  Target: within 20% of the ideal.
- ``slot back in use after SIGKILL``: a process holds every slot and is killed; how long until a
  waiter in this process gets one. Target: ``quarantine + 0.5 s``.
- ``PostgresGate acquire+release``: uncontended, one thread, p50. Target: under 5 ms.

Needs ``PROVIDERKIT_PG_DSN`` (``scripts/pg-test-server.sh start``) and the ``dask`` extra; the
rows say "not measured" without them. Run: ``python -m bench.scale [--quick]``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from bench.harness import HOW_PG, print_rows, row

ROOT = Path(__file__).resolve().parent.parent


def _stub() -> Any:
    sys.path.insert(0, str(ROOT))
    from tests.conversation.many import (
        stub,  # the test suite's stub provider and step tool (one copy)
    )

    return stub


def _case(client: Any, stub_mod: Any, server: Any, dsn: str, conversations: int, turns: int,
          limit: int, delay: float, quarantine: float, kill_after: float | None) -> tuple[float, float, int]:
    import psycopg

    import providerkit_nb as pk
    from providerkit_nb.conversation import ConversationMaker
    from providerkit_nb.core.messages import UserMessage
    from providerkit_nb.store import PostgresStore

    schema = f"pk_bench_{uuid.uuid4().hex[:8]}"
    server.reset(delay, turns)
    gate = {"dsn": dsn, "name": f"bench-{uuid.uuid4().hex[:8]}", "quarantine": quarantine, "poll": 0.05}
    make = ConversationMaker(store=dsn, schema=schema,
                                registry=stub_mod.registry_config(server.url, limit, gate),
                                model="stub/m", tools=f"{stub_mod.__name__}:TOOLS", max_steps=turns + 2)
    store = PostgresStore(dsn, schema=schema)
    ids = [f"b{i:05d}" for i in range(conversations)]
    for cid in ids:
        store.save(cid, UserMessage(f"cid={cid}"))

    def kill() -> None:
        pid = next(iter(client.run(os.getpid).values()))
        os.kill(pid, signal.SIGKILL)

    timer = threading.Timer(kill_after, kill) if kill_after else None
    try:
        t0 = time.monotonic()
        if timer:
            timer.start()
        frame = pk.resume_many(ids, make, executor=client.get_executor(pure=False), progress=False)
        wall = time.monotonic() - t0
        left = len(store.unfinished())
    finally:
        if timer:
            timer.cancel()
        store.close()
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    not_done = int((frame["outcome"] != "answered").sum()) + left
    return wall, conversations * turns * delay / limit, not_done


def _slot_back(dsn: str, quarantine: float) -> float:
    from providerkit_nb.wrappers import PostgresGate
    from tests.wrappers.pg_gate_workers import hold_slots

    name = f"bench-{uuid.uuid4().hex[:8]}"
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    holder = ctx.Process(target=hold_slots, args=(dsn, name, 2, quarantine, 2, ready))
    holder.start()
    try:
        if not ready.wait(60):
            raise RuntimeError("the holder process never took its slots")
        gate = PostgresGate(dsn, name, 2, quarantine=quarantine, poll=0.05)
        slot = gate.slot()
        got: list[float] = []

        def wait() -> None:
            slot.acquire()
            got.append(time.monotonic())

        t = threading.Thread(target=wait)
        t.start()
        time.sleep(0.3)
        os.kill(holder.pid or 0, signal.SIGKILL)
        killed = time.monotonic()
        t.join(30)
        slot.release()
        return got[0] - killed
    finally:
        if holder.is_alive():
            holder.kill()
        holder.join(5)


def _acquire_p50(dsn: str, n: int) -> tuple[float, float]:
    from providerkit_nb.wrappers import PostgresGate

    gate = PostgresGate(dsn, f"bench-{uuid.uuid4().hex[:8]}", 4)
    gate.status()  # connect first
    times = []
    for _ in range(n):
        t = time.perf_counter()
        s = gate.slot()
        s.acquire()
        s.release()
        times.append(time.perf_counter() - t)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99) - 1]


def run(conversations: int = 200, turns: int = 3, slots: int = 16, delay: float = 1.0,
        kill_slots: int = 8, kill_delay: float = 0.2, quarantine: float = 0.3,
        acquires: int = 500) -> list[dict[str, Any]]:
    dsn = os.environ.get("PROVIDERKIT_PG_DSN")
    if not dsn:
        return [row("scale (not measured: PROVIDERKIT_PG_DSN is not set)", None, None, target="info",
                    note=HOW_PG)]
    rows: list[dict[str, Any]] = []
    p50, p99 = _acquire_p50(dsn, acquires)
    rows.append(row("PostgresGate acquire+release, uncontended, p50", p50, None, target="< 5 ms",
                    limit=0.005, on="ours", note=f"p99 {p99 * 1000:.1f} ms"))
    back = _slot_back(dsn, quarantine)
    rows.append(row(f"slot back in use after SIGKILL (quarantine {quarantine} s)", back, quarantine,
                    target="<= quarantine + 0.5 s", limit=quarantine + 0.5, on="ours"))
    try:
        import distributed
    except ImportError:
        rows.append(row("scale (a)/(b) (not measured: pip install 'providerkit_nb[dask]')", None, None))
        return rows
    stub_mod = _stub()
    server = stub_mod.StubProvider()
    os.environ[stub_mod.URL_ENV] = server.url
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=max(16, slots), processes=True,
                                       host="127.0.0.1", dashboard_address=None, silence_logs=50)
    client = distributed.Client(cluster)
    try:
        client.run(lambda: __import__(stub_mod.__name__))
        _case(client, stub_mod, server, dsn, 2 * slots, 1, slots, 0.01, quarantine, None)  # warm up
        wall, ideal, bad = _case(client, stub_mod, server, dsn, conversations, turns, slots, delay,
                                 quarantine, None)
        rows.append(row(f"(a) {conversations} conv x {turns} turns, N={slots}, {delay} s calls: wall vs ideal",
                        wall, ideal, target="within 10%", limit=1.10,
                        note=f"max in flight {server.max_in_flight}; not done {bad}"))
        wall, ideal, bad = _case(client, stub_mod, server, dsn, conversations, turns, kill_slots,
                                 kill_delay, max(quarantine, kill_delay), 0.25 * conversations * turns * kill_delay / kill_slots)
        rows.append(row(f"(b) same, N={kill_slots}, {kill_delay} s calls, 1 worker SIGKILLed: wall vs ideal",
                        wall, ideal, target="within 20%", limit=1.20,
                        note=f"max in flight {server.max_in_flight}; not done {bad}"))
    finally:
        client.close()
        cluster.close()
        server.close()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    kw: dict[str, Any] = dict(conversations=48, slots=8, delay=0.1, acquires=200) if args.quick else {}
    print_rows(run(**kw))


if __name__ == "__main__":
    main()
