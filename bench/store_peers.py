"""Our stores against the persistence a user would pick instead: the one of their framework.

Each store records the same growing agent conversation (user, assistant with a tool call, tool
result, answer; ``bench/store_peers_kinds.py``) through its own public API, every message
durable as it happens, in a worker process of its own:

- openai-agents ``SQLiteSession.add_items`` (WAL, synchronous FULL: SQLite's default);
- simonw/llm ``Response.log_to_db`` with the llm-echo model (rollback journal, FULL), one
  record per exchange of two messages, its time split over both;
- LangGraph ``MessagesState`` + ``SqliteSaver`` (WAL, FULL), one ``invoke`` per message;
- ours, ``NotebookStore.save`` at WAL NORMAL (our default) and WAL FULL (the peers'
  durability: every commit synced, as with their FULL);
- on PostgreSQL (when ``PROVIDERKIT_PG_DSN`` is set): ``PostgresStore.save``, LangGraph's
  ``PostgresSaver`` and the floor, the canonical encoding plus one bare autocommit INSERT.

Figures: append p50 of the last 100 messages at N = 200, 1,000 and 2,000 (one run to 2,000
gives all three), the total for N, the growth (p50 of each window of 100 messages, from the
first to the last), then in a fresh process the open of the existing store and the load of
all N messages (each call timed alone, after the imports), and the file size (with -wal).
The contenders of a group record side by side in lockstep, message by message, the order
rotated each message, so the disk's and the CPU's weather (other processes' fsyncs) hits all
alike; medians over the rounds. Each record of llm's and LangGraph's costs more as N grows
(LangGraph rewrites the whole state at every step): they run one round, to N = 1,000 (SQLite)
and 400 (PostgreSQL), against ours recording the same messages beside them.

Rows: ours against each peer at equal durability and equal N (ours at WAL FULL against the
SQLite peers, PostgresStore against the PostgreSQL ones), ratio ours/peer, target < 1 (ahead),
and <= 0.8 for the load and for each open of an existing store (again in the same process, and
the first in a fresh process for the SQLite ones);
our open of an existing store < 2 ms; our p50 at the last N over our p50 at N=200 < 1.3 (flat).

Run: ``python -m bench.store_peers`` (``--quick``; ``--markdown`` prints the README table from
``bench/results.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

from bench.harness import HOW_PG, fmt, print_rows, row
from bench.store_peers_kinds import KINDS, worker_command

__all__ = ["run", "markdown"]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WINDOW = 100
OPEN_BUDGET = 0.002
FLAT = 1.3
MARGIN = 0.8  # load and re-open: ahead of each peer by a margin the noise cannot erase

SQLITE = ["ours-normal", "ours-full", "agents", "llm", "langgraph"]
POSTGRES = ["ours-pg", "langgraph-pg", "bare-pg"]
# whom each peer is measured against: ours at the same durability
AGAINST = {"agents": "ours-full", "llm": "ours-full", "langgraph": "ours-full",
           "langgraph-pg": "ours-pg", "bare-pg": "ours-pg"}
# each record of theirs costs more as N grows (a run to 2,000 takes minutes): fewer rounds, smaller N
SLOW = {"llm", "langgraph", "langgraph-pg"}
FLOORS = {"bare-pg"}  # not a peer: what any PostgreSQL store must do (see bench/store.py)
FLOOR = 1.5
SLOW_SQLITE = ["llm", "langgraph"]


def _worker(kind: str, step: str, target: str, n: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(worker_command(kind, step, target, n), capture_output=True, cwd=ROOT,
                          env=env, timeout=900, check=False)
    if done.returncode != 0:
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-3:]
        raise RuntimeError(f"{kind} {step} failed: {' | '.join(tail)}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _p50(xs: list[float]) -> float:
    return statistics.median(xs)


class _Recorder:
    """One ``serve`` worker: records message i when asked, answers with the seconds it took."""

    def __init__(self, kind: str, target: str, n: int) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        self.kind = kind
        self.proc = subprocess.Popen(worker_command(kind, "serve", target, n), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     cwd=ROOT, env=env)

    def _line(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            err = self.proc.stderr.read() if self.proc.stderr else ""
            raise RuntimeError(f"{self.kind} worker failed: {' | '.join(err.strip().splitlines()[-3:])}")
        return line

    def ready(self) -> None:
        if self._line().strip() != "ready":
            raise RuntimeError(f"{self.kind} worker did not start")

    def record(self, i: int) -> float:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{i}\n")
        self.proc.stdin.flush()
        return float(self._line())

    def finish(self) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write("-1\n")
        self.proc.stdin.flush()
        out: dict[str, Any] = json.loads(self._line())
        self.proc.wait(60)
        return out


def _measure(kinds: list[str], targets: dict[str, Any], n: int, rounds: int, slow_rounds: int,
             loads: int) -> dict[str, dict[str, Any]]:
    """Per kind: medians over its rounds of the p50 of each window of 100 messages, the total,
    the file size, and of the open and load of ``loads`` fresh processes per round. In a round
    the kinds record side by side, message by message, the order rotated each message."""
    times: dict[str, list[list[float]]] = {k: [] for k in kinds}
    ends: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
    opens: dict[str, list[float]] = {k: [] for k in kinds}
    reopens: dict[str, list[float]] = {k: [] for k in kinds}
    reads: dict[str, list[float]] = {k: [] for k in kinds}
    for r in range(rounds):
        now = [k for k in kinds if k not in SLOW or r < slow_rounds]
        where = {k: targets[k](r) for k in now}
        workers = {k: _Recorder(k, where[k], n) for k in now}
        try:
            for w in workers.values():
                w.ready()
            got: dict[str, list[float]] = {k: [] for k in now}
            for i in range(n):
                j = i % len(now)
                for k in now[j:] + now[:j]:
                    got[k].append(workers[k].record(i))
            for k in now:
                ends[k].append(workers[k].finish())
                times[k].append(got[k])
        finally:
            for w in workers.values():
                if w.proc.poll() is None:
                    w.proc.kill()
                    w.proc.wait()
        for _ in range(loads):
            for k in now[r % len(now):] + now[: r % len(now)]:  # a slow peer too, in its one round
                loaded = _worker(k, "load", where[k], n)
                opens[k].append(loaded["open"])
                reopens[k].append(loaded["reopen"])
                reads[k].append(loaded["load"])
        print(f"  [N={n:,}, round {r + 1}: " + ", ".join(f"{KINDS[k]('').label} {sum(got[k]):.2f} s" for k in now)
              + "]", file=sys.stderr, flush=True)
    out: dict[str, dict[str, Any]] = {}
    for k in kinds:
        windows = [[_p50(x[i: i + WINDOW]) for i in range(0, n, WINDOW)] for x in times[k]]
        growth = [statistics.median(w[j] for w in windows) for j in range(len(windows[0]))]
        sizes = [x["size"] for x in ends[k] if x["size"] is not None]
        out[k] = {
            "label": KINDS[k]("").label,
            "durability": KINDS[k]("").durability,
            "versions": ends[k][0]["versions"],
            "rounds": len(times[k]),
            "n": n,
            "growth": growth,
            "total": statistics.median(sum(x) for x in times[k]),
            "open": statistics.median(opens[k]),
            "reopen": statistics.median(reopens[k]),
            "load": statistics.median(reads[k]),
            "size": statistics.median(sizes) if sizes else None,
        }
    return out


def _at(fig: dict[str, Any], n: int) -> float:
    """p50 of the last window of 100 records before N = n."""
    g: list[float] = fig["growth"]
    return g[max(0, n // WINDOW - 1)]


def _rows(figs: dict[str, dict[str, Any]], ours_rows: bool = True) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []

    def add(r: dict[str, Any], store: str, metric: str, k: str) -> None:
        r.update(store=store, metric=metric, durability=figs[k]["durability"],
                 versions=figs[k]["versions"], rounds=figs[k]["rounds"], n=figs[k]["n"])
        if k in SLOW:
            r["note"] = (f"measured to N={figs[k]['n']:,}, {figs[k]['rounds']} round(s): each record "
                         "rewrites the whole state, so its cost grows with N")
        rows.append(r)

    for k, fig in figs.items():
        label, n = fig["label"], fig["n"]
        ns = [m for m in (200, 1000, 2000) if m <= n] or [n]
        if k.startswith("ours"):
            if not ours_rows:
                continue
            for m in ns:
                add(row(f"{label}: append p50 at N={m:,}", _at(fig, m), None), label, f"append@{m}", k)
            add(row(f"{label}: total for {n:,}", fig["total"], None), label, "total", k)
            add(row(f"{label}: load {n:,} (fresh process)", fig["load"], None), label, "load", k)
            if k == "ours-pg":
                add(row(f"{label}: open (connect + schema check)", fig["open"], None), label, "open", k)
                add(row(f"{label}: open again in the same process (the connection its close kept)",
                        fig["reopen"], None), label, "reopen", k)
            else:
                add(row(f"{label}: open of an existing store (fresh process)", fig["open"], None,
                        target=f"< {OPEN_BUDGET * 1e3:g} ms", limit=OPEN_BUDGET, on="ours"),
                    label, "open", k)
                add(row(f"{label}: open again in the same process", fig["reopen"], None), label, "reopen", k)
                add(row(f"{label}: file at {n:,}", fig["size"], None, unit="B"), label, "size", k)
            flat = _at(fig, n) / _at(fig, ns[0])
            add(row(f"{label}: flat in N (p50 at {n:,} / at {ns[0]:,})", _at(fig, n), _at(fig, ns[0]),
                    target=f"< {FLAT}x", limit=FLAT, ratio=flat), label, "flat", k)
            rows[-1]["growth"] = fig["growth"]
            continue
        ours = figs[AGAINST[k]]
        vs = f"{ours['label']} vs {label} ({fig['durability']})"
        # a peer must be beaten; the floor (encode + bare INSERT) is approached: 1.5x on the save
        aim, lim, other = ("< 1x (ahead)", 1.0, 1.0) if k not in FLOORS else (f"< {FLOOR}x floor", FLOOR, None)
        for m in ns:
            add(row(f"append p50 at N={m:,}: {vs}", _at(ours, m), _at(fig, m), target=aim, limit=lim),
                label, f"append@{m}", k)
        aim = aim if other else "info"
        add(row(f"total for {n:,}: {vs}", ours["total"], fig["total"], target=aim, limit=other),
            label, "total", k)
        ahead, margin = (f"<= {MARGIN}x (ahead by a margin)", MARGIN) if other else ("info", None)
        add(row(f"load {n:,}, fresh process: {vs}", ours["load"], fig["load"], target=ahead, limit=margin),
            label, "load", k)
        # a SQLite store's first open is file work, ours by a margin; a PostgreSQL one is mostly
        # the new connection both sides open, so there it only has to lead
        first, first_limit = (ahead, margin) if k in SQLITE else (aim, other)
        add(row(f"open existing, first in a fresh process: {vs}", ours["open"], fig["open"], target=first,
                limit=first_limit), label, "open", k)
        add(row(f"open existing again in the same process: {vs}", ours["reopen"], fig["reopen"],
                target=ahead, limit=margin,
                note="ours checks a file once per process (identity, schema, journal mode)"),
            label, "reopen", k)
        if fig["size"] is not None:
            add(row(f"file at {n:,}: {vs}", ours["size"], fig["size"], unit="B"), label, "size", k)
        g = fig["growth"]
        add(row(f"{label}: growth, p50 of the last 100 / of the first 100", g[-1], g[0]),
            label, "growth", k)
        rows[-1]["growth"] = g
    return rows


def run(n: int = 2000, rounds: int = 3, slow_n: int = 1000, slow_rounds: int = 1, loads: int = 3,
        pg_slow_n: int = 400, directory: str | None = None) -> list[dict[str, Any]]:
    """Rows for ``bench/__main__.py``; times in seconds. The slow peers (llm's logs and
    LangGraph's SqliteSaver) run to ``slow_n``, LangGraph's PostgresSaver to ``pg_slow_n``,
    each against ours at the same N in the same lockstep."""
    tmp = Path(tempfile.mkdtemp(prefix="pk-bench-peers-", dir=directory))
    rows: list[dict[str, Any]] = []
    try:
        def file_of(k: str) -> Any:
            return lambda r: str(tmp / f"{k}-{r}-{uuid.uuid4().hex[:6]}.sqlite")

        files = {k: file_of(k) for k in SQLITE}
        fast = [k for k in SQLITE if k not in SLOW_SQLITE]
        rows += _rows(_measure(fast, files, n, rounds, slow_rounds, loads))
        rows += _rows(_measure(["ours-full", *SLOW_SQLITE], files, slow_n, rounds, slow_rounds, loads),
                      ours_rows=False)
        dsn = os.environ.get("PROVIDERKIT_PG_DSN")
        if not dsn:
            rows.append(row("postgres peers (not measured: PROVIDERKIT_PG_DSN is not set)", None, None,
                            target="< 1x (ahead)",
                            note=HOW_PG))
        else:
            rows += _postgres(dsn, n, rounds, pg_slow_n, slow_rounds, loads)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows


def _postgres(dsn: str, n: int, rounds: int, slow_n: int, slow_rounds: int, loads: int) -> list[dict[str, Any]]:
    import psycopg

    made: list[str] = []

    def schema_of(k: str) -> Any:
        def make(r: int) -> str:
            name = f"pk_bench_{k.replace('-', '_')}_{r}_{uuid.uuid4().hex[:6]}"
            with psycopg.connect(dsn, autocommit=True) as c:
                c.execute(f'CREATE SCHEMA "{name}"')
            made.append(name)
            return f"{dsn}|{name}"
        return make

    schemas = {k: schema_of(k) for k in POSTGRES}
    try:
        rows = _rows(_measure(["ours-pg", "bare-pg"], schemas, n, rounds, slow_rounds, loads))
        rows += _rows(_measure(["ours-pg", "langgraph-pg"], schemas, slow_n, rounds, slow_rounds, loads),
                      ours_rows=False)
    finally:
        with psycopg.connect(dsn, autocommit=True) as c:
            for name in made:
                c.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
    return rows


def markdown(path: Path = HERE / "results.json") -> str:
    """The README's comparison table, from the saved rows."""
    data = json.loads(path.read_text(encoding="utf-8"))
    rows = [r for r in data["rows"] if r.get("bench") == "store_peers" and "metric" in r]
    table: dict[str, dict[str, Any]] = {}
    for r in rows:
        store = r["store"]
        t = table.setdefault(store, {"durability": r["durability"], "versions": r["versions"], "n": r["n"]})
        m = r["metric"]
        if store.startswith("ours"):
            t[m] = r["ours"]
        elif m != "growth":
            t[m] = r["floor_or_peer"]
        if m in ("flat", "growth"):
            g = r["growth"]
            t["growth"] = f"{fmt(g[0], 's')} → {fmt(g[-1], 's')}"
    ns = sorted({int(m.split("@")[1]) for r in rows for m in [r["metric"]] if m.startswith("append@")})
    head = ["store (durability)", "N"] + [f"append p50 at {m:,}" for m in ns] + [
        "growth (p50, first → last 100)", "total for N", "load N (fresh process)", "open (fresh process)",
        "open again (same process)", "file at N"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for store, t in table.items():
        name = store if t["durability"] in store else f"{store} ({t['durability']})"
        cells = [name, f"{t['n']:,}"] + [
            fmt(t.get(f"append@{m}"), "s") for m in ns] + [
            t.get("growth", "-"), fmt(t.get("total"), "s"), fmt(t.get("load"), "s"), fmt(t.get("open"), "s"),
            fmt(t.get("reopen"), "s"), fmt(t.get("size"), "B") if t.get("size") else "-"]
        lines.append("| " + " | ".join(cells) + " |")
    versions = sorted({f"{d} {v}" for t in table.values() for d, v in t["versions"].items()})
    lines.append("")
    lines.append(f"Versions: {', '.join(versions)}; {data['created']}, {data['cpus']} CPUs, "
                 f"load average {data['load_average'][0]:.1f}.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.store_peers")
    ap.add_argument("--quick", action="store_true", help="N=1,000, one round")
    ap.add_argument("--markdown", action="store_true", help="print the README table from results.json")
    ap.add_argument("--dir", default=None, help="folder for the SQLite files (default: temp)")
    a = ap.parse_args(argv)
    if a.markdown:
        print(markdown())
        return 0
    rows = run(1000, 1, 200, 1, 1, 200, a.dir) if a.quick else run(directory=a.dir)
    print_rows(rows)
    return 0 if all(r["ok"] is not False for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
