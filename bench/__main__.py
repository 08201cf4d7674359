"""``python -m bench`` (``make bench``): every benchmark, one table, a JSON file and a chart.

Each benchmark runs in a fresh interpreter of its own and measures ours against a floor or a
peer in the same run, interleaved, several rounds, medians (see each module's docstring for what
exactly). The table lists what was
measured, our figure, the floor's or peer's, the ratio, the target and pass/miss; the same rows
go to ``bench/results.json`` and, as a chart of each checked figure against its target, to
``bench/results.png`` (matplotlib, a bench-only dependency).

Options: ``--quick`` (fewer rounds and shorter streams: a smoke run of a minute or two),
``--markdown`` (print the README's table from the saved ``results.json``),
``--only NAME`` (repeatable: imports, stream, repair, store, store_peers, gate, memory, scale, views, report,
transcripts, big_session, transcripts_part2, mcp, tool_layouts, local_model). The exit status is
1 when a target was missed or a benchmark failed.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.harness import fmt, print_rows, row, verdict

HERE = Path(__file__).resolve().parent

# name -> (module, arguments for a full run, arguments for --quick)
BENCHES: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "imports": ("bench.imports", {"rounds": 9, "peer_rounds": 3}, {"rounds": 3, "peer_rounds": 1}),
    "stream": ("bench.stream", {"chunks": 20000, "rounds": 7, "peer_rounds": 3},
               {"chunks": 5000, "rounds": 9, "peer_rounds": 1}),
    "repair": ("bench.repair", {"rounds": 7}, {"rounds": 2}),
    "store": ("bench.store", {"rounds": 20, "batch": 100}, {"rounds": 6, "batch": 50, "load_size": 2000}),
    "store_peers": ("bench.store_peers", {"n": 2000, "rounds": 3, "slow_n": 1000, "slow_rounds": 1, "loads": 3,
                                          "pg_slow_n": 400},
                    {"n": 1000, "rounds": 1, "slow_n": 200, "slow_rounds": 1, "loads": 1, "pg_slow_n": 200}),
    "gate": ("bench.gate", {"conversations": 200, "rounds": 3}, {"conversations": 80, "rounds": 1}),
    "memory": ("bench.memory", {"mb": 50}, {"mb": 20}),
    "views": ("bench.views", {"rounds": 5}, {"rounds": 2}),
    "report": ("bench.report", {"rounds": 3}, {"rounds": 1, "size": 5000}),
    "scale": ("bench.scale", {}, {"conversations": 48, "slots": 8, "delay": 0.1, "acquires": 200}),
    "transcripts": ("bench.transcripts", {"mb": 50, "rounds": 5}, {"mb": 20, "rounds": 1}),
    "big_session": ("bench.big_session", {"mb": 500}, {"mb": 100}),
    "transcripts_part2": ("bench.transcripts_part2", {"turns": 3000, "rounds": 5}, {"turns": 1000, "rounds": 1}),
    "mcp": ("bench.mcp", {"rounds": 5, "calls": 300, "starts": 3}, {"rounds": 2, "calls": 100, "starts": 1}),
    "tool_layouts": ("bench.tool_layouts", {"rounds": 5}, {"rounds": 1, "size": 5000}),
    "local_model": ("bench.local_model", {"rounds": 7, "tokens": 200}, {"rounds": 2, "tokens": 50}),
}


def run_one(name: str, quick: bool) -> list[dict[str, Any]]:
    """One benchmark in this process (the child's side of ``run_isolated``)."""
    module, full, short = BENCHES[name]
    fn: Callable[..., list[dict[str, Any]]] = importlib.import_module(module).run
    try:
        return fn(**(short if quick else full))
    except Exception as exc:  # one broken benchmark must not hide the others
        traceback.print_exc()
        return [_failed(name, f"{type(exc).__name__}: {str(exc)[:120]}")]


def _failed(name: str, why: str) -> dict[str, Any]:
    r = row(f"{name}: failed ({why})", None, None, target="runs")
    r["ok"] = False
    return r


def run_isolated(name: str, quick: bool) -> list[dict[str, Any]]:
    """One benchmark in a fresh interpreter, as pyperf runs its workers.

    In one long process a benchmark inherits what the earlier ones left: a heap of hundreds of
    MB after the 500 MB session, threads of the gate benchmarks, warm or cold caches. That
    taxes the contender that allocates more and moved the LangGraph thread row from 0.75x to
    3.56x between two runs; a child per benchmark gives each the same start.
    """
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pk-bench-") as tmp:
        out = Path(tmp) / "rows.json"
        cmd = [sys.executable, "-m", "bench", "--child", name, "--child-out", str(out)]
        proc = subprocess.run(cmd + (["--quick"] if quick else []), check=False)
        try:
            rows: list[dict[str, Any]] = json.loads(out.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            rows = [_failed(name, f"its process exited with {proc.returncode} and wrote no rows")]
    took = time.perf_counter() - started
    for r in rows:
        r["bench"] = name
    print(f"[{name}: {len(rows)} rows in {took:.0f} s]", file=sys.stderr, flush=True)
    return rows


def _checked(r: dict[str, Any]) -> tuple[float, float] | None:
    """(figure, target) on a scale where below the target passes, for the chart."""
    if r.get("limit") is None:
        return None
    value = r["ratio"] if r.get("on", "ratio") == "ratio" else r["ours"]
    if value is None or value <= 0:
        return None
    if r.get("on") == "ours":  # an absolute budget: show the share of it used
        value, limit = value / r["limit"], 1.0
    else:
        limit = r["limit"]
    if r.get("better") == "higher":  # e.g. throughput: show how far below the target we fall
        value, limit = 1 / value, 1 / limit
    return value, limit


def chart(rows: list[dict[str, Any]], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [(r, c) for r in rows if (c := _checked(r)) is not None]
    if not shown:
        return
    fig, ax = plt.subplots(figsize=(13, 0.42 * len(shown) + 1.8))
    ys = range(len(shown))[::-1]
    for y, (r, (value, limit)) in zip(ys, shown, strict=True):
        color = "#2e7d32" if r["ok"] else "#c62828"
        ax.barh(y, value, color=color, alpha=0.8, height=0.6)
        ax.plot([limit, limit], [y - 0.4, y + 0.4], color="black", linewidth=2)
        ax.text(value * 1.05, y, f"{value:.2g}", va="center", fontsize=7)
    ax.set_yticks(list(ys))
    ax.set_yticklabels([f"[{r['bench']}] {r['name']}"[:95] for r, _ in shown], fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("ours / floor or peer, log scale; black tick: the target, left of it passes\n"
                  "(absolute budgets shown as the share used, throughputs as ideal / ours)", fontsize=8)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _merge(path: Path, rows: list[dict[str, Any]], names: list[str]) -> list[dict[str, Any]]:
    """With --only, the new rows replace those benchmarks' rows in the saved results; the other
    benchmarks' rows are kept (each row says which run it came from)."""
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return rows
    kept = [r for r in old.get("rows", []) if r.get("bench") not in names]
    order = list(BENCHES)
    return sorted(kept + rows, key=lambda r: order.index(r["bench"]) if r.get("bench") in order else len(order))


def markdown(path: Path) -> str:
    """The README's table: every row with a target, from one saved run (``results.json``)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out = ["| benchmark | measured | ours | floor or peer | ratio | target | result |", "|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        if r.get("limit") is None and r.get("ok") is not False:
            continue  # information only
        unit = r.get("unit", "s")
        ratio = "-" if r.get("ratio") is None else f"{r['ratio']:.2f}x"
        name = r["name"].replace("|", "/")
        out.append(f"| {r['bench']} | {name} | {fmt(r['ours'], unit)} | {fmt(r['floor_or_peer'], unit)} | {ratio} "
                   f"| {r['target']} | {verdict(r['ok'])} |")
    load = data.get("load_average") or [0.0]
    out.append("")
    out.append(f"One run{' (--quick)' if data.get('quick') else ''} of {data['seconds']:,.0f} s on "
               f"{data['created']}, Python {data['python']}, {data['cpus']} CPUs, load average "
               f"{load[0]:.1f} at the end.")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds, shorter streams (a smoke run)")
    ap.add_argument("--only", action="append", choices=list(BENCHES), metavar="NAME",
                    help=f"run only this benchmark (repeatable): {', '.join(BENCHES)}")
    ap.add_argument("--out", type=Path, default=HERE, help="folder for results.json and results.png")
    ap.add_argument("--markdown", action="store_true", help="print the README table from the saved results.json")
    ap.add_argument("--child", choices=list(BENCHES), help=argparse.SUPPRESS)
    ap.add_argument("--child-out", type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:  # one benchmark, in the fresh process run_isolated started
        a.child_out.write_text(json.dumps(run_one(a.child, a.quick)), encoding="utf-8")
        return 0
    if a.markdown:
        print(markdown(a.out / "results.json"))
        return 0
    names = a.only or list(BENCHES)
    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    for name in names:
        rows += run_isolated(name, a.quick)
    took = time.perf_counter() - started

    print()
    current = None
    for r in rows:
        if r["bench"] != current:
            current = r["bench"]
            print(f"\n== {current}")
            print_rows([x for x in rows if x["bench"] == current])
    missed = [r for r in rows if r["ok"] is False]
    print(f"\n{len(rows)} rows, {sum(r['ok'] is True for r in rows)} pass, {len(missed)} miss, "
          f"{sum(r['ok'] is None for r in rows)} info; {took:.0f} s{' (--quick)' if a.quick else ''}")
    for r in missed:
        print(f"  MISS [{r['bench']}] {r['name']}: {verdict(r['ok'])} {r.get('note', '')}")

    meta = {
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "quick": a.quick,
        "only": a.only,
        "seconds": round(took, 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
    }
    for r in rows:
        r["run"] = meta["created"]
    a.out.mkdir(parents=True, exist_ok=True)
    saved = _merge(a.out / "results.json", rows, names) if a.only else rows
    (a.out / "results.json").write_text(json.dumps({**meta, "rows": saved}, indent=1) + "\n", encoding="utf-8")
    try:
        chart(saved, a.out / "results.png",
              f"providerkit_nb benchmarks, {meta['created']}{' (quick)' if a.quick else ''}, "
              f"{meta['cpus']} CPUs, load {meta['load_average'][0]:.1f}")
    except ImportError:
        print("matplotlib is not installed: no chart (pip install matplotlib)", file=sys.stderr)
    print(f"wrote {a.out / 'results.json'} and {a.out / 'results.png'}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
