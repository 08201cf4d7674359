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

The HTML report of a 20 MB session of the same shape (``report_mb``): the time from nothing to
its rows on screen in Chromium (``pk.inspect``, ``write_html``, then the page loaded until its
first rows are drawn; medians of three) must stay under 1.5 s, shown next to the floor of
``json.loads`` of every line; and the file it writes must stay smaller than the session (rows the
repair leaves alone carry one card, not two). Without Chromium and Playwright that row says so.

Run: ``python -m bench.big_session`` (``--mb N``, ``--report-mb N``).
"""

from __future__ import annotations

import argparse
import json
import statistics
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


OPEN_LIMIT = 1.5  # seconds from the session file to its report's rows on screen
CHROMIUM = "/usr/bin/chromium"


def _open_in_chromium(page: Path, rounds: int = 3) -> float | None:
    """Median seconds from loading the report to its first rows drawn, in a fresh page each round."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not Path(CHROMIUM).exists():
        return None
    times = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            for _ in range(rounds + 1):  # the first warms the browser's caches, as a second open would
                tab = browser.new_page(viewport={"width": 1400, "height": 900})
                started = time.perf_counter()
                tab.goto(page.as_uri(), wait_until="load")
                tab.wait_for_function("window.pkViewer && window.pkViewer.rendered() > 0")
                times.append(time.perf_counter() - started)
                tab.close()
        finally:
            browser.close()
    return statistics.median(times[1:])


def report_rows(mb: int = 20, rounds: int = 3) -> list[dict[str, Any]]:
    """The report of a ``mb`` MB session: seconds to its rows on screen, and its size."""
    import providerkit_nb as pk

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "session.jsonl"
        make_session(path, mb)
        size = path.stat().st_size
        floor, build = [], []
        page = Path(d) / "report.html"
        for _ in range(rounds):
            started = time.perf_counter()
            _floor(path)
            floor.append(time.perf_counter() - started)
            started = time.perf_counter()
            pk.inspect(path).write_html(page)
            build.append(time.perf_counter() - started)
        opened = _open_in_chromium(page, rounds)
        weight = page.stat().st_size
    what = f"{size / 1e6:.0f} MB Claude Code session"
    built = statistics.median(build)
    rows = [row(f"report: the {what}'s HTML file vs the session file", weight, size, target="< 1x the session",
                limit=1.0, unit="B", note="a row sent as stored is one card, not two")]
    if opened is None:
        rows.append(row(f"report: the {what} to its rows on screen (needs Chromium and Playwright)", None, None,
                        target=f"< {OPEN_LIMIT:g} s"))
    else:
        rows.append(row(f"report: the {what} to its rows on screen in Chromium (inspect, write, load) "
                        "vs json.loads of every line", built + opened, statistics.median(floor),
                        target=f"< {OPEN_LIMIT:g} s", limit=OPEN_LIMIT, on="ours",
                        note=f"inspect and write {built:.2f} s, the page's load to its first rows {opened:.2f} s"))
    return rows


def run(mb: int = 500, report_mb: int = 20) -> list[dict[str, Any]]:
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
        *report_rows(report_mb),
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.big_session", description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=int, default=500)
    ap.add_argument("--report-mb", type=int, default=20)
    ap.add_argument("--child", metavar="PATH", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(_child(a.child)))
        return 0
    rows = run(a.mb, a.report_mb)
    print_rows(rows)
    return 0 if all(r["ok"] is not False for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
