"""Many conversations on a Dask cluster of 2 worker processes, one PostgresGate, one stub provider.

Scale cases (full sizes behind ``--soak``; the default run uses smaller ones so the module
stays around a minute on two busy cores):
(a) conversations x 3 turns, no faults; (b) the same with one worker SIGKILLed mid-run and a
quarantine at least the stub's delay; (d) many 1-turn conversations; (e) two workers given the
same conversation. (c), FIFO across processes, is in ``tests/wrappers/test_pg_gate.py``.

Checked against the stub's own counts: never more than N requests in flight; every conversation
ends with exactly one final answer in the store; no (conversation, turn) called twice without a
kill, and after a kill at most one repeated call per conversation the dead worker was running (in
flight, or streamed and not yet saved); no tool ran twice.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import dataclass
from typing import Any

import pytest

import providerkit_nb as pk
from providerkit_nb.conversation import ConversationMaker
from providerkit_nb.conversation.many import run_one
from providerkit_nb.core.messages import AssistantMessage, UserMessage
from providerkit_nb.store import PostgresStore

from .conftest import THREADS, TOOLS_REF
from .stub import StubProvider, registry_config


@dataclass
class Run:
    ids: list[str]
    frame: Any
    wall: float
    ideal: float
    in_flight_at_kill: int | None = None


def run_case(
    client: Any, stub: StubProvider, dsn: str, schema: str, gate_name: str, *, conversations: int,
    turns: int, limit: int, delay: float, quarantine: float, kill_after: float | None = None,
) -> Run:
    stub.reset(delay, turns)
    gate = {"dsn": dsn, "name": gate_name, "quarantine": quarantine, "poll": 0.05}
    make = ConversationMaker(store=dsn, schema=schema, registry=registry_config(stub.url, limit, gate),
                                model="stub/stub-model", tools=TOOLS_REF, max_steps=turns + 2)
    store = PostgresStore(dsn, schema=schema)
    ids = [f"c{i:04d}" for i in range(conversations)]
    for cid in ids:
        store.save(cid, UserMessage(f"cid={cid}"))
    store.close()
    killed: dict[str, int] = {}

    def kill() -> None:
        pid = next(iter(client.run(os.getpid).values()))
        with stub.lock:
            killed["in_flight"] = stub.in_flight
        os.kill(pid, signal.SIGKILL)

    timer = threading.Timer(kill_after, kill) if kill_after is not None else None
    t0 = time.monotonic()
    if timer is not None:
        timer.start()
    try:
        frame = pk.resume_many(ids, make, executor=client.get_executor(pure=False), progress=False)
    finally:
        if timer is not None:
            timer.cancel()
    wall = time.monotonic() - t0
    return Run(ids, frame, wall, conversations * turns * delay / limit, killed.get("in_flight"))


def check_complete(dsn: str, schema: str, ids: list[str], turns: int) -> None:
    """Every conversation ends with exactly one final answer, after ``turns`` model turns."""
    store = PostgresStore(dsn, schema=schema)
    try:
        assert store.unfinished() == []
        for cid in ids:
            msgs = store.load(cid)
            answers = [m for m in msgs if isinstance(m, AssistantMessage) and not m.tool_calls]
            assistants = [m for m in msgs if isinstance(m, AssistantMessage)]
            assert len(answers) == 1 and msgs[-1] is answers[0], (cid, [m.role for m in msgs])
            assert answers[0].content == f"done {cid}"
            assert len(assistants) == turns, (cid, [m.role for m in msgs])
    finally:
        store.close()


def _sizes(request: pytest.FixtureRequest, small: dict[str, Any], full: dict[str, Any]) -> dict[str, Any]:
    return full if request.config.getoption("--soak") else small


@pytest.mark.postgres
def test_a_many_conversations_no_faults(request: pytest.FixtureRequest, dask_client: Any, stub: StubProvider,
                                        pg_dsn: str, pg_schema: str, gate_name: str) -> None:
    size = _sizes(request, dict(conversations=48, turns=3, limit=8, delay=0.1),
                  dict(conversations=200, turns=3, limit=16, delay=1.0))
    run = run_case(dask_client, stub, pg_dsn, pg_schema, gate_name, quarantine=1.0, **size)
    print(f"\n(a) {size}: wall {run.wall:.2f} s, ideal {run.ideal:.2f} s, "
          f"max in flight {stub.max_in_flight}")
    assert list(run.frame["outcome"]) == ["answered"] * len(run.ids), run.frame[run.frame.outcome != "answered"]
    assert stub.max_in_flight <= size["limit"]
    assert stub.max_in_flight >= min(size["limit"], 4), "the gate never let calls overlap"
    assert set(stub.calls.values()) == {1}
    assert len(stub.calls) == len(run.ids) * size["turns"]
    assert set(stub.tool_runs.values()) == {1}
    assert run.frame["worker"].nunique() == 2  # both processes took work
    check_complete(pg_dsn, pg_schema, run.ids, size["turns"])


@pytest.mark.postgres
def test_b_worker_sigkilled_mid_run(request: pytest.FixtureRequest, dask_client: Any, stub: StubProvider,
                                    pg_dsn: str, pg_schema: str, gate_name: str) -> None:
    size = _sizes(request, dict(conversations=48, turns=3, limit=8, delay=0.2),
                  dict(conversations=200, turns=3, limit=8, delay=0.2))
    run = run_case(dask_client, stub, pg_dsn, pg_schema, gate_name, quarantine=0.3,
                   kill_after=1.5, **size)
    repeats = sum(n - 1 for n in stub.calls.values())
    print(f"\n(b) {size}: wall {run.wall:.2f} s, ideal {run.ideal:.2f} s, max in flight "
          f"{stub.max_in_flight}, in flight at kill {run.in_flight_at_kill}, repeated calls {repeats}")
    assert run.in_flight_at_kill is not None, "the kill did not happen"
    assert list(run.frame["outcome"]) == ["answered"] * len(run.ids), run.frame[run.frame.outcome != "answered"]
    assert stub.max_in_flight <= size["limit"]  # orphans kept their slots for the quarantine
    # Repeats are the dead worker's calls whose answers it had not saved: those in flight at the
    # provider (at most N, its slots) and those that had streamed to the end but were not saved yet
    # (the slot is free again then; on a loaded machine that window is not short). Each conversation
    # the worker was running loses at most its one unsaved call, once: so every repeat is a
    # different conversation, called twice, and there are no more than the worker's threads.
    repeated = {key: n for key, n in stub.calls.items() if n > 1}
    assert set(repeated.values()) <= {2}, repeated
    assert len({cid for cid, _turn in repeated}) == len(repeated) == repeats <= THREADS, repeated
    assert all(n == 1 for n in stub.tool_runs.values()), "a tool ran twice"
    check_complete(pg_dsn, pg_schema, run.ids, size["turns"])


@pytest.mark.postgres
def test_d_many_one_turn_conversations(request: pytest.FixtureRequest, dask_client: Any, stub: StubProvider,
                                       pg_dsn: str, pg_schema: str, gate_name: str) -> None:
    size = _sizes(request, dict(conversations=200, turns=1, limit=8, delay=0.05),
                  dict(conversations=1000, turns=1, limit=8, delay=0.05))
    run = run_case(dask_client, stub, pg_dsn, pg_schema, gate_name, quarantine=0.5, **size)
    print(f"\n(d) {size}: wall {run.wall:.2f} s, ideal {run.ideal:.2f} s")
    assert (run.frame["outcome"] == "answered").all()
    assert stub.max_in_flight <= size["limit"]
    assert set(stub.calls.values()) == {1} and len(stub.calls) == len(run.ids)
    check_complete(pg_dsn, pg_schema, run.ids, 1)
    import psycopg

    pids = set(dask_client.run(os.getpid).values())
    with psycopg.connect(pg_dsn, autocommit=True) as c:  # 2 gate connections per worker process
        rows = c.execute("SELECT application_name, count(*) FROM pg_stat_activity "
                         "WHERE application_name LIKE 'providerkit-gate %' GROUP BY 1").fetchall()
    workers = {name: n for name, n in rows if int(name.rsplit(":", 1)[1]) in pids}
    assert len(workers) == len(pids) == 2 and set(workers.values()) == {2}, rows


@pytest.mark.postgres
def test_e_two_workers_given_the_same_conversation(dask_client: Any, stub: StubProvider, pg_dsn: str,
                                                   pg_schema: str, gate_name: str) -> None:
    stub.reset(0.4, 3)
    gate = {"dsn": pg_dsn, "name": gate_name, "quarantine": 0.5}
    make = ConversationMaker(store=pg_dsn, schema=pg_schema, registry=registry_config(stub.url, 4, gate),
                                model="stub/stub-model", tools=TOOLS_REF)
    store = PostgresStore(pg_dsn, schema=pg_schema)
    store.save("same", UserMessage("cid=same"))
    workers = list(dask_client.scheduler_info()["workers"])
    assert len(workers) == 2
    futures = [dask_client.get_executor(pure=False, workers=[w]).submit(run_one, make, "same")
               for w in workers]
    rows = [f.result(timeout=60) for f in futures]
    assert sorted(r["outcome"] for r in rows) == ["answered", "busy"], rows
    busy = next(r for r in rows if r["outcome"] == "busy")
    assert "'same'" in busy["error"] and busy["worker"] != next(r for r in rows if r is not busy)["worker"]
    assert dict(stub.calls) == {("same", 0): 1, ("same", 1): 1, ("same", 2): 1}
    # A re-run after it ended (Dask re-running a finished task) leaves it alone.
    again = dask_client.get_executor(pure=False).submit(run_one, make, "same").result(timeout=60)
    assert again["outcome"] == "unchanged" and again["turns"] == 0
    # Waiting instead of refusing: the second one waits, then finds it ended.
    store.save("wait", UserMessage("cid=wait"))
    futures = [dask_client.get_executor(pure=False, workers=[w]).submit(run_one, make, "wait", busy_wait=30)
               for w in workers]
    rows = [f.result(timeout=60) for f in futures]
    assert sorted(r["outcome"] for r in rows) == ["answered", "unchanged"], rows
    assert sum(1 for k in stub.calls if k[0] == "wait") == 3 and set(stub.calls.values()) == {1}
    assert len(store.load("same")) == 6
    store.close()
