"""Store append latency and load, against the floor: the canonical encoding and a bare INSERT.

For each store, one message per ``save`` (about 2 KB of canonical JSON, the shape of an agent
transcript) is timed individually; p50 and p99 are taken over all samples. The floor is what
every store must do for a durable save: the canonical encoding of the message (``dump_message``)
and an autocommit ``INSERT`` of that text into a one-table database with the same durability
(SQLite: WAL and the same ``synchronous`` on the same file system; PostgreSQL: the same server
and database). Ours also hashes, assigns the seq under the write lock and notes a duplicate.
Rounds are interleaved (ours, floor, ..., the order rotated each round) so a noisy neighbour
hits all alike. Target: p50 within 1.5x of the floor. Two more contenders show where the time
goes: the bare INSERT of already encoded text, and our store's own statement given pre-encoded
text (seq, indexes); encode_message alone is timed too.

Duplicate detection keeps a map of a conversation's hashes per store object (complete after a
load); a store object that saves without a load looks a hash it has not seen up in the index,
and after two such lookups reads the index's map of the conversation whole. The first save to
a 2,000-message conversation from a new object against a later one (its fifth) is a row of its
own (target: within 10x).

Load: ``load()`` of a 10,000-message conversation (rows decoded to message objects) against
the floor of selecting the same bodies and ``json.loads`` of each (informational).

Run: ``python -m bench.store`` (``--rounds N --batch N --dir PATH``); PostgreSQL rows run when
PROVIDERKIT_PG_DSN is set. The peers' stores are in ``bench/store_peers.py``.
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
from bench.harness import HOW_PG, print_rows, row
from providerkit_nb.core.messages import dump_message
from providerkit_nb.store import PostgresStore
from providerkit_nb.store.base import encode_message

TARGET = 1.5
DUP_LIMIT = 10.0
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
    breakdown: bool = False,
) -> list[dict[str, Any]]:
    """Saves timed one by one, the contenders taking turns batch by batch (order rotated each
    round): ours and the floor (canonical encoding + INSERT). With ``breakdown``, two more take
    part, to show where our time goes: the bare INSERT of pre-encoded text, and our store's own
    statement given an already encoded text and hash (``_append``: seq, duplicate map, index)."""
    texts = [dump_message(m) for m in msgs]
    encoded = [encode_message(m) for m in msgs]
    clock = time.perf_counter
    cid, cid2 = f"bench-{uuid.uuid4().hex[:8]}", f"bench-sql-{uuid.uuid4().hex[:8]}"
    ways: dict[str, Callable[[int], Any]] = {
        "ours": lambda j: store.save(cid, msgs[j]),
        "floor": lambda j: floor.append(dump_message(msgs[j])),
    }
    if breakdown:
        ways["insert"] = lambda j: floor.append(texts[j])
        ways["statement"] = lambda j: store._append(cid2, encoded[j][0], encoded[j][1], None)
    samples: dict[str, list[float]] = {k: [] for k in ways}
    names = list(ways)
    k = 0
    for r in range(rounds):
        for n in names[r % len(names):] + names[: r % len(names)]:
            fn, sink = ways[n], samples[n]
            for j in range(k, k + batch):
                j %= len(msgs)
                t0 = clock()
                fn(j)
                sink.append(clock() - t0)
        k += batch
    med = {n: statistics.median(v) for n, v in samples.items()}
    p50, p50f = med["ours"], med["floor"]
    rows = [
        row(f"{name} append p50 vs encode + INSERT", p50, p50f,
            target=f"< {target}x floor" if target else "info", limit=target,
            note="the floor: dump_message + one autocommit INSERT at the same durability"),
        row(f"{name} append p99 vs encode + INSERT", _pct(samples["ours"], 0.99), _pct(samples["floor"], 0.99)),
    ]
    if breakdown:
        rows.append(row(f"{name} append p50 vs bare INSERT of encoded text", p50, med["insert"]))
        rows.append(row(f"{name} our statement alone (pre-encoded) vs INSERT", med["statement"], med["insert"],
                        note="seq under the write lock, duplicate map, RETURNING"))
    return rows


def dup_row(name: str, make: Callable[[], Any], msgs: list[pk.Message], size: int = 2000) -> dict[str, Any]:
    """The first save to an existing conversation from a new store object (two index lookups:
    the last seq, the latest row with the same hash) against a later save."""
    cid = f"dup-{uuid.uuid4().hex[:8]}"
    store = make()
    for m in msgs[:size]:
        store.save(cid, m)
    store.close()
    # Another connection keeps the -wal file in place: when the last connection to a file
    # closes, SQLite checkpoints and deletes it, and the next first write of any connection
    # re-creates it (a few ms of file creation, whatever the store does); this row measures
    # what a save does itself, so that cost stays out of both figures.
    keeper = sqlite3.connect(store.path)
    keeper.execute("SELECT count(*) FROM conversations").fetchone()
    firsts, laters = [], []
    for i in range(5):
        store = make()
        t0 = time.perf_counter()
        store.save(cid, msgs[i])
        firsts.append(time.perf_counter() - t0)
        for j in range(1, 4):  # the next saves: the index answers, then its map is read once
            store.save(cid, msgs[i + j])
        t0 = time.perf_counter()
        store.save(cid, msgs[i + 4])
        laters.append(time.perf_counter() - t0)
        store.close()
    keeper.close()
    return row(f"{name} first save to a {size:,}-message conversation vs a later save",
               statistics.median(firsts), statistics.median(laters), target=f"< {DUP_LIMIT:g}x later save",
               limit=DUP_LIMIT, note="a new store object, no load(): the seq and the hash are looked up in the index, "
               "the later save is its fifth (the index's map read whole after two lookups); the -wal "
               "file kept by another connection (its re-creation after every connection closed is not the save's)")


def encode_row(msgs: list[pk.Message], n: int = 2000) -> dict[str, Any]:
    """What every store pays before its first byte is written: canonical JSON + sha256."""
    xs = []
    for j in range(n):
        m = msgs[j % len(msgs)]
        t0 = time.perf_counter()
        encode_message(m)
        xs.append(time.perf_counter() - t0)
    return row("encode_message p50 (canonical JSON + sha256, ~2 KB)", statistics.median(xs), None)


def _load_row(name: str, store: Any, floor: Any, msgs: list[pk.Message], rounds: int, size: int) -> dict[str, Any]:
    cid = f"load-{uuid.uuid4().hex[:8]}"
    texts = [dump_message(m) for m in msgs[:size]]
    for m in msgs[:size]:
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
    assert len(got) == size
    return row(f"{name} load {size} messages", statistics.median(ours), statistics.median(base),
               note="floor: SELECT the bodies + json.loads of each")


def run(
    rounds: int = 20, batch: int = 100, directory: str | None = None, load_size: int = LOAD_SIZE
) -> list[dict[str, Any]]:
    """Rows {name, ours, floor_or_peer, ratio, target, ok}; times in seconds."""
    msgs = make_messages(max(load_size, rounds * batch))
    rows: list[dict[str, Any]] = []
    tmp = Path(tempfile.mkdtemp(prefix="pk-bench-store-", dir=directory))
    try:
        rows.append(encode_row(msgs))
        for sync in ("NORMAL", "FULL"):
            store = pk.NotebookStore(tmp / f"ours-{sync}.sqlite", synchronous=sync)
            floor = _SqliteFloor(tmp / f"floor-{sync}.sqlite", sync)
            try:
                name = f"sqlite WAL {sync}"
                rows += _append_rows(name, store, floor, msgs, rounds, batch, TARGET, True)
                if sync == "NORMAL":
                    rows.append(_load_row(name, store, floor, msgs, rounds, load_size))
            finally:
                store.close()
                floor.close()
            if sync == "NORMAL":
                rows.append(dup_row(f"sqlite WAL {sync}",
                                    lambda: pk.NotebookStore(tmp / "dup.sqlite", synchronous="NORMAL"), msgs))
        mem = pk.MemoryStore()
        mem_floor = _ListFloor()
        rows += _append_rows("memory (vs encode + list.append)", mem, mem_floor, msgs, rounds, batch, None)
        dsn = os.environ.get("PROVIDERKIT_PG_DSN")
        if not dsn:
            rows.append(row("postgres append p50 (not measured: PROVIDERKIT_PG_DSN is not set)", None, None,
                            target=f"< {TARGET}x floor",
                            note=HOW_PG))
        else:
            schema = f"pk_bench_{uuid.uuid4().hex[:8]}"
            store = PostgresStore(dsn, schema=schema)
            pg_floor = _PgFloor(dsn, f"{schema}.floor")
            try:
                rows += _append_rows("postgres", store, pg_floor, msgs, rounds, batch, TARGET, True)
                rows.append(_load_row("postgres", store, pg_floor, msgs, rounds, load_size))
            finally:
                pg_floor.close()
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.store")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--dir", default=None, help="folder for the SQLite files (default: temp)")
    args = parser.parse_args(argv)
    rows = run(args.rounds, args.batch, args.dir)
    print_rows(rows)
    return 0 if all(r["ok"] is not False for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
