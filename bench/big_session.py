"""A 500 MB Claude Code session: peak memory and time of ``pk.inspect``, and its HistoryView.

The session is written to a temporary folder by ``bench.transcripts.make_session`` (the CLI's
real line shapes: split assistant messages, progress lines, tool results of a few KiB, one
call left without a result) and deleted afterwards. A fresh child process imports everything,
then times ``pk.inspect`` of the file and reads its own peak resident size (``VmHWM``, see
``bench.memory``); the whole peak, interpreter included, is compared with the file's size.
The same child builds the inspection's HistoryView and measures its widget payload (UTF-8
bytes of every text value, as ``bench.views`` does). The floor is ``json.loads`` of every line
of the same file, in this process, in the same run.

Targets: peak resident size under 3x the file, the inspection under 4x the floor, the view's
payload under 1 MB.

Run: ``python -m bench.big_session`` (``--mb N``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness import print_rows, row
from bench.transcripts import _floor, make_session

ROOT = Path(__file__).resolve().parent.parent
MEMORY_LIMIT = 3.0
TIME_LIMIT = 4.0
PAYLOAD_LIMIT = 1_000_000


def _child(path: str) -> dict[str, Any]:
    """Runs in the measured process: inspect the session once, then build its view."""
    import providerkit_nb as pk
    from bench.memory import _peak
    from providerkit_nb.notebook import widgets

    started = time.perf_counter()
    ins = pk.inspect(path)
    took = time.perf_counter() - started
    peak = _peak()
    view = ins.view
    return {"seconds": took, "peak": peak, "messages": len(ins.messages), "problems": len(ins.problems),
            "payload": widgets.payload_bytes(view.root), "peak_with_view": _peak()}


def measure(path: Path) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "bench.big_session", "--child", str(path)], cwd=ROOT,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])


def run(mb: int = 500) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "session.jsonl"
        lines = make_session(path, mb)
        size = path.stat().st_size
        started = time.perf_counter()
        _floor(path)
        floor = time.perf_counter() - started
        ours = measure(path)
    what = f"{size / 1e6:.0f} MB Claude Code session ({lines:,} lines, {ours['messages']:,} messages)"
    return [
        row(f"big session: pk.inspect of a {what}, peak RSS vs file", ours["peak"], size,
            target=f"< {MEMORY_LIMIT:g}x file", limit=MEMORY_LIMIT, unit="B",
            note="the child's whole peak (VmHWM), interpreter and imports included"),
        row(f"big session: pk.inspect of the {size / 1e6:.0f} MB session vs json.loads of every line",
            ours["seconds"], floor, target=f"<= {TIME_LIMIT:g}x floor", limit=TIME_LIMIT),
        row(f"big session: HistoryView payload of the {size / 1e6:.0f} MB session", ours["payload"] / 1000, None,
            target="< 1 MB", limit=PAYLOAD_LIMIT / 1000, on="ours", unit="kB",
            note=f"peak RSS with the view built {ours['peak_with_view'] / 2**20:.0f} MiB"),
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.big_session", description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=int, default=500)
    ap.add_argument("--child", metavar="PATH", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(_child(a.child)))
        return 0
    rows = run(a.mb)
    print_rows(rows)
    return 0 if all(r["ok"] is not False for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
