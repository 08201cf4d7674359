"""Store append latency and 10k-message load, against a bare driver doing the same durable write.

For each store, one message per ``save`` (about 2 KB of canonical JSON, the shape of an agent
transcript) is timed individually; p50 and p99 are taken over all samples. The floor is a bare
autocommit ``INSERT`` of the already-encoded text into a one-table database with the same
durability (SQLite: WAL and the same ``synchronous`` on the same file system; PostgreSQL: the
same server and database). Ours also encodes, hashes, assigns the seq and checks for a duplicate
inside its transaction. Rounds are interleaved (ours, floor, ours, floor, ...) so a noisy
neighbour hits both alike. Target: p50 within 1.5x of the floor.

Load: ``load()`` of a 10,000-message conversation (rows decoded to message objects) against
the floor of selecting the same bodies and ``json.loads`` of each (informational).

Run: ``python -m bench.store`` (``--rounds N --batch N --dir PATH``); PostgreSQL rows run when
PROVIDERKIT_PG_DSN is set.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import providerkit_nb as pk
from providerkit_nb.core.messages import dump_message

TARGET = 1.5
LOAD_SIZE = 10_000


def make_messages(n: int, seed: int = 3) -> list[pk.Message]:
    """Agent-transcript-like messages of about 2 KB each (1.5 to 2.5 KB of JSON)."""
    import random

    rnd = random.Random(seed)
    words = "the file lists tools für Übersicht data rows notebook kernel café cache".split()
    out: list[pk.Message] = []
    i = 0
    while len(out) < n:
        i += 1

        def text(lo: int, hi: int) -> str:
            size = rnd.randint(lo, hi)
            s = ""
            while len(s) < size:
                s += rnd.choice(words) + " "
            return s[:size]

        call = pk.ToolCall(f"toolu_{i}", "read_file", json.dumps({"path": f"src/m{i}.py"}))
        out.append(pk.AssistantMessage(text(400, 900), reasoning=text(300, 700), tool_calls=[call]))
        out.append(pk.ToolMessage(call.id, call.name, text(1500, 2400)))
    return out[:n]


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


# --------------------------------------------------------------------------- contenders


class _SqliteFloor:
    def __init__(self, path: Path, synchronous: str) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute(f"PRAGMA synchronous={synchronous}")
        self.conn.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")

    def append(self, text: str) -> None:
        self.conn.execute("INSERT INTO t (body) VALUES (?)", (text,))

    def load(self) -> list[Any]:
        return [json.loads(b) for (b,) in self.conn.execute("SELECT body FROM t ORDER BY id")]

    def close(self) -> None:
        self.conn.close()


class _PgFloor:
    def __init__(self, dsn: str, table: str) -> None:
        import psycopg

        self.conn = psycopg.connect(dsn, autocommit=True)
        self.table = table
        self.conn.execute(f"CREATE TABLE {table} (id BIGSERIAL PRIMARY KEY, body TEXT NOT NULL)")
        self.sql = f"INSERT INTO {table} (body) VALUES (%s)"

    def append(self, text: str) -> None:
        self.conn.execute(self.sql, (text,))

    def load(self) -> list[Any]:
        rows = self.conn.execute(f"SELECT body FROM {self.table} ORDER BY id").fetchall()
        return [json.loads(b) for (b,) in rows]

    def close(self) -> None:
        self.conn.execute(f"DROP TABLE {self.table}")
        self.conn.close()


def _append_rows(
    name: str,
    store: Any,
    floor: Any,
    msgs: list[pk.Message],
    rounds: int,
    batch: int,
    target: float | None,
    encoded_floor: bool | None = None,
) -> list[dict[str, Any]]:
    texts = [dump_message(m) for m in msgs]
    ours: list[float] = []
    base: list[float] = []
    clock = time.perf_counter
    cid = f"bench-{uuid.uuid4().hex[:8]}"
    k = 0
    for r in range(rounds):
        order: list[tuple[list[float], Callable[[int], Any]]] = [
            (ours, lambda j: store.save(cid, msgs[j])),
            (base, lambda j: floor.append(texts[j])),
        ]
        if r % 2:
            order.reverse()
        for sink, fn in order:
            for j in range(k, k + batch):
                j %= len(msgs)
                t0 = clock()
                fn(j)
                sink.append(clock() - t0)
        k += batch
    if encoded_floor is not None:
        # informational: the floor plus the one step nobody can skip, encoding the message
        enc: list[float] = []
        for j in range(rounds * batch // 4):
            m = msgs[j % len(msgs)]
            t0 = clock()
            floor.append(json.dumps(m.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False))
            enc.append(clock() - t0)
    p50, p50f = statistics.median(ours), statistics.median(base)
    p99, p99f = _pct(ours, 0.99), _pct(base, 0.99)
    ratio = p50 / p50f
    rows = [
        {"name": f"{name} append p50 (s)", "ours": p50, "floor_or_peer": p50f, "ratio": ratio,
         "target": f"< {target}x" if target else "info", "ok": ratio < target if target else True},
        {"name": f"{name} append p99 (s)", "ours": p99, "floor_or_peer": p99f,
         "ratio": p99 / p99f, "target": "info", "ok": True},
    ]
    if encoded_floor is not None:
        e50 = statistics.median(enc)
        rows.append({"name": f"{name} append p50 vs json.dumps+INSERT", "ours": p50,
                     "floor_or_peer": e50, "ratio": p50 / e50, "target": "info", "ok": True})
    return rows


def _load_row(name: str, store: Any, floor: Any, msgs: list[pk.Message], rounds: int) -> dict[str, Any]:
    cid = f"load-{uuid.uuid4().hex[:8]}"
    texts = [dump_message(m) for m in msgs[:LOAD_SIZE]]
    for m in msgs[:LOAD_SIZE]:
        store.save(cid, m)
    for t in texts:
        floor.append(t)
    ours, base = [], []
    for _ in range(max(3, rounds // 4)):
        t0 = time.perf_counter()
        got = store.load(cid)
        ours.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        floor.load()
        base.append(time.perf_counter() - t0)
    assert len(got) == LOAD_SIZE
    o, f = statistics.median(ours), statistics.median(base)
    return {"name": f"{name} load {LOAD_SIZE} messages (s)", "ours": o, "floor_or_peer": f,
            "ratio": o / f, "target": "info", "ok": True}


def run(rounds: int = 20, batch: int = 100, directory: str | None = None) -> list[dict[str, Any]]:
    """Rows {name, ours, floor_or_peer, ratio, target, ok}; times in seconds."""
    msgs = make_messages(max(LOAD_SIZE, rounds * batch))
    rows: list[dict[str, Any]] = []
    tmp = Path(tempfile.mkdtemp(prefix="pk-bench-store-", dir=directory))
    try:
        for sync in ("NORMAL", "FULL"):
            store = pk.NotebookStore(tmp / f"ours-{sync}.sqlite", synchronous=sync)
            floor = _SqliteFloor(tmp / f"floor-{sync}.sqlite", sync)
            try:
                name = f"sqlite WAL {sync}"
                rows += _append_rows(name, store, floor, msgs, rounds, batch, TARGET, True)
                if sync == "NORMAL":
                    rows.append(_load_row(name, store, floor, msgs, rounds))
            finally:
                store.close()
                floor.close()
        mem = pk.MemoryStore()
        mem_floor = _ListFloor()
        rows += _append_rows("memory (vs list.append)", mem, mem_floor, msgs, rounds, batch, None)
        dsn = os.environ.get("PROVIDERKIT_PG_DSN")
        if dsn:
            schema = f"pk_bench_{uuid.uuid4().hex[:8]}"
            store = pk.PostgresStore(dsn, schema=schema)
            floor = _PgFloor(dsn, f"{schema}.floor")
            try:
                rows += _append_rows("postgres", store, floor, msgs, rounds, batch, TARGET, True)
                rows.append(_load_row("postgres", store, floor, msgs, rounds))
            finally:
                floor.close()
                store._conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
                store.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows


class _ListFloor:
    def __init__(self) -> None:
        self.rows: list[str] = []

    def append(self, text: str) -> None:
        self.rows.append(text)


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x * 1e3:.3f}ms" if x < 1 else f"{x:.2f}s"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.store")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--dir", default=None, help="folder for the SQLite files (default: temp)")
    args = parser.parse_args(argv)
    rows = run(args.rounds, args.batch, args.dir)
    print(f"{'benchmark':<42} {'ours':>10} {'floor':>10} {'ratio':>7}  {'target':<7} ok")
    for r in rows:
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        print(f"{r['name']:<42} {_fmt(r['ours']):>10} {_fmt(r['floor_or_peer']):>10} {ratio:>7}  "
              f"{r['target']:<7} {'yes' if r['ok'] else 'NO'}")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
