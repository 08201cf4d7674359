"""Real crashes: a child process saves a conversation and is killed with SIGKILL at a seeded
random moment (sometimes while it is still opening or migrating the store); then the store is
reopened and must hold exactly what the child acknowledged, at most one more complete message,
nothing torn, and a history that repair_history makes valid.

The conversation comes from ``convo.py`` (canonical messages with reasoning, signed items and
tool calls; tool results saved one by one).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from providerkit_nb.core.repair import repair_history
from providerkit_nb.core.validate import validate_history

from .conftest import Backing
from .convo import first

CHILD = Path(__file__).with_name("crash_child.py")
REPO = Path(__file__).resolve().parents[2]
TRIALS = 50
SOAK_TRIALS = 500
TWO_WRITER_TRIALS = 10
STEADY = 120  # saves by the writer that is not killed
PACE = 8  # two writers of one conversation stay within this many saves of each other


def _canon(m) -> str:
    return json.dumps(m.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _pairing_problems(msgs) -> list[str]:
    """Independent check that every tool call is answered right after its turn, and every
    result answers a call of the turn before it."""
    problems, pending = [], set()
    for i, m in enumerate(msgs):
        if m.role == "tool":
            if m.tool_call_id not in pending:
                problems.append(f"{i}: result {m.tool_call_id} answers no open call")
            pending.discard(m.tool_call_id)
            continue
        if pending:
            problems.append(f"{i}: calls {sorted(pending)} unanswered before a {m.role} message")
        pending = {c.id for c in (m.tool_calls or [])} if m.role == "assistant" else set()
    if pending:
        problems.append(f"end: calls {sorted(pending)} unanswered")
    return problems


class Forker:
    """The fork server of crash_child.py: one interpreter, a forked writer process per trial."""

    def __init__(self, workdir: Path):
        env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.proc = subprocess.Popen(
            [sys.executable, str(CHILD)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True, env=env, cwd=workdir,
        )
        self.workdir = workdir

    def ask(self, **req) -> dict:
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"fork server died (exit {self.proc.poll()})"
        return json.loads(line)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(30)


@pytest.fixture
def forker(tmp_path):
    f = Forker(tmp_path)
    yield f
    f.close()


class Child:
    def __init__(self, forker: Forker, backing: Backing, cid: str, seed: int, count: int = 0,
                 go: Path | None = None, peer: Path | None = None, lead: int = 0):
        self.forker = forker
        self.backing = backing
        self.out = self.out_of(forker, cid, seed)
        self.err = Path(str(self.out) + ".err")
        self.pid = forker.ask(op="run", kind=backing.kind, target=backing.target, cid=cid,
                              seed=seed, schema=backing.schema, count=count, out=str(self.out),
                              go=str(go) if go else None, peer=str(peer) if peer else None,
                              lead=lead)["pid"]
        self.status: int | None = None

    @staticmethod
    def out_of(forker: Forker, cid: str, seed: int) -> Path:
        return forker.workdir / f"{cid}-{seed}.out"

    def text(self) -> str:
        return self.out.read_text() if self.out.exists() else ""

    def errors(self) -> str:
        return self.err.read_text() if self.err.exists() else ""

    def wait_ready(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while not self.text().startswith("ready\n"):
            assert not self.errors(), f"writer failed: {self.errors()}"
            assert time.monotonic() < deadline, "writer did not open the store in time"
            time.sleep(0.001)

    def kill(self) -> None:
        os.kill(self.pid, signal.SIGKILL)
        self.wait()
        if self.backing.kind == "postgres":
            _server_done_with_the_dead(self.backing.target)

    def wait(self) -> int:
        if self.status is None:
            self.status = self.forker.ask(op="wait", pid=self.pid)["status"]
        return self.status

    def acked(self) -> list[int]:
        lines = self.text().split("\n")[:-1]  # complete lines only
        if not lines:
            return []
        assert lines[0] == "ready", lines[:3]
        return [int(x) for x in lines[1:]]


def _check_conversation(
    store, cid: str, seed: int, acked: list[int], *, exact: bool = False
) -> tuple[int, bool]:
    """Returns (messages stored, whether the stored history needed repair)."""
    where = f"conversation {cid} (seed {seed})"
    assert acked == list(range(1, len(acked) + 1)), f"{where}: acks out of order: {acked[-5:]}"
    rows = store.records(cid)
    n = len(rows)
    assert [r.seq for r in rows] == list(range(1, n + 1)), f"{where}: seqs not contiguous"
    lo, hi = len(acked), len(acked) if exact else len(acked) + 1
    assert lo <= n <= hi, f"{where}: {n} stored but {len(acked)} acknowledged"
    expected = first(seed, n)
    for r, m in zip(rows, expected, strict=True):
        assert r.json == _canon(m), f"{where}: row {r.seq} differs from what was saved"
        assert r.hash == hashlib.sha256(r.json.encode()).hexdigest(), f"{where}: row {r.seq} hash"
    loaded = store.load(cid)
    repaired = repair_history(loaded)
    assert validate_history(repaired.messages) == [], f"{where}: repaired history invalid"
    assert _pairing_problems(repaired.messages) == [], f"{where}: {_pairing_problems(repaired.messages)}"
    return n, bool(_pairing_problems(loaded))


def _server_done_with_the_dead(dsn: str, limit: float = 10.0) -> None:
    """A statement a killed client had already sent still runs (and commits) on the server;
    what survived is only known once no other backend of this database is busy."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as db:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            busy = db.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND backend_type = 'client backend' "
                "AND state IN ('active', 'idle in transaction', 'idle in transaction (aborted)')"
            ).fetchone()
            if busy is not None and busy[0] == 0:
                return
            time.sleep(0.01)


def _sqlite_integrity(path: str) -> None:
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        conn.close()


def _trials(backing: Backing, forker: Forker, seeds: range) -> None:
    survived: dict[str, tuple[int, int]] = {}
    cut_mid_turn = 0
    for seed in seeds:
        rng = random.Random(seed)
        cid = f"crash-{seed}"
        child = Child(forker, backing, cid, seed)
        if rng.random() < 0.2:
            time.sleep(rng.uniform(0.0, 0.01))  # often lands while opening or migrating
        else:
            child.wait_ready()
            time.sleep(rng.uniform(0.0, 0.05))
        child.kill()
        assert child.status == -signal.SIGKILL, child.errors()
        if backing.kind == "sqlite":
            if Path(backing.target).exists():
                _sqlite_integrity(backing.target)
        store = backing.new()
        try:
            n, broken = _check_conversation(store, cid, seed, child.acked())
            survived[cid] = (seed, n)
            cut_mid_turn += broken
            if backing.kind == "sqlite":
                assert store.check() == ["ok"]
        finally:
            store.close()
    # earlier conversations in the same file/database are untouched by later kills
    with backing.new() as store:
        for cid, (seed, n) in survived.items():
            assert len(store.records(cid)) == n
            assert [r.json for r in store.records(cid)] == [_canon(m) for m in first(seed, n)]
    saved_any = sum(1 for _, n in survived.values() if n)
    assert saved_any >= len(seeds) // 2, f"only {saved_any} trials got as far as saving"
    # the kills must often land between a turn and its last tool result (what repair is for)
    assert cut_mid_turn >= len(seeds) // 5, f"only {cut_mid_turn} trials cut a turn open"


def test_kill9_during_save_loop(durable, forker):
    _trials(durable, forker, range(TRIALS))


@pytest.mark.soak
def test_kill9_during_save_loop_soak(durable, forker):
    _trials(durable, forker, range(1000, 1000 + SOAK_TRIALS))


def _two_writers(backing: Backing, forker: Forker, seeds: range) -> None:
    for seed in seeds:
        rng = random.Random(seed)
        victim = Child(forker, backing, f"victim-{seed}", seed)
        steady = Child(forker, backing, f"steady-{seed}", seed + 10_000, count=STEADY)
        victim.wait_ready()
        steady.wait_ready()
        time.sleep(rng.uniform(0.0, 0.05))
        victim.kill()
        assert steady.wait() == 0, steady.errors()
        if backing.kind == "sqlite":
            _sqlite_integrity(backing.target)
        with backing.new() as store:
            _check_conversation(store, f"victim-{seed}", seed, victim.acked())
            acked = steady.acked()
            assert len(acked) == STEADY
            _check_conversation(store, f"steady-{seed}", seed + 10_000, acked, exact=True)


def test_two_processes_one_killed(durable, forker):
    _two_writers(durable, forker, range(TWO_WRITER_TRIALS))


@pytest.mark.soak
def test_two_processes_one_killed_soak(durable, forker):
    _two_writers(durable, forker, range(2000, 2000 + SOAK_TRIALS // 5))


def test_two_processes_one_conversation(durable, forker):
    """Two live writers on the same conversation at once: every save gets its own seq, none
    fails, and each writer's messages appear in the order it saved them.

    Each keeps within PACE saves of the other (crash_child's ``_keep_pace``): a start line
    alone left the overlap to the scheduler, and on a loaded machine one writer sometimes made
    nearly all its saves while the other was descheduled or asleep in SQLite's busy handler."""
    go = forker.workdir / "go"
    a_out, b_out = Child.out_of(forker, "shared", 1), Child.out_of(forker, "shared", 2)
    a = Child(forker, durable, "shared", 1, count=STEADY, go=go, peer=b_out, lead=PACE)
    b = Child(forker, durable, "shared", 2, count=STEADY, go=go, peer=a_out, lead=PACE)
    a.wait_ready()
    b.wait_ready()
    go.touch()
    assert a.wait() == 0, a.errors()
    assert b.wait() == 0, b.errors()
    if durable.kind == "sqlite":
        _sqlite_integrity(durable.target)
    with durable.new() as store:
        rows = store.records("shared")
        assert [r.seq for r in rows] == list(range(1, 2 * STEADY + 1))
        by_seq = {r.seq: r.json for r in rows}
        for child, seed in ((a, 1), (b, 2)):
            acked = child.acked()
            assert len(acked) == STEADY and acked == sorted(acked)
            assert [by_seq[s] for s in acked] == [_canon(m) for m in first(seed, STEADY)]
        assert {s for c in (a, b) for s in c.acked()} == set(by_seq)
        owner = ["a" if s in set(a.acked()) else "b" for s in sorted(by_seq)]
        switches = sum(1 for x, y in zip(owner, owner[1:], strict=False) if x != y)
        assert switches >= 4, f"the writers hardly overlapped ({switches} switches); nothing was tested"
