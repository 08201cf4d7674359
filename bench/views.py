"""HistoryView on long histories: build time and what goes to the browser.

The history is bench.repair's broken 10,000-message agent transcript. Timed in CPU seconds
(median of interleaved rounds, as bench.repair does):

- building the view (targets < 0.5 s), next to the floor of one ``history_frame`` of the whole
  history (what showing every row as a DataFrame costs anyway);
- pressing Repair on it (< 0.5 s);
- the widget payload (UTF-8 bytes of every text value in the widget tree) built, repaired, and
  on the last page of "every message" (each < 1 MB), next to the cards of every row, which is
  what a view that renders the whole history would send.

Run: ``python -m bench.views`` (``--rounds N``, ``--size N``).
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

import providerkit_nb as pk
from bench.harness import cli, row
from bench.repair import TOOLS, make_history

MB = 1_000_000
KB = 1_000


def _cpu(fn: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    started = time.process_time()
    result = fn()
    return time.process_time() - started, result


def run(rounds: int = 5, size: int = 10_000) -> list[dict[str, Any]]:
    """Rows {name, ours, floor_or_peer, ratio, target, ok}."""
    from providerkit_nb.notebook import frames, widgets
    from providerkit_nb.viewer import rows_html

    history = make_history(size, broken=True)
    tools = pk.ToolRegistry(
        [pk.define_tool(n, n, {"type": "object"}, run=lambda args: "", read_only=n != "write_file") for n in TOOLS]
    )
    build: list[float] = []
    repair: list[float] = []
    floor: list[float] = []
    view: Any = None
    for _ in range(rounds):
        t, view = _cpu(lambda: widgets.HistoryView(history, is_read_only=tools.is_read_only))
        build.append(t)
        t, _ = _cpu(view.repair)
        repair.append(t)
        t, _ = _cpu(lambda: frames.history_frame(history))
        floor.append(t)
    fresh = widgets.HistoryView(history, is_read_only=tools.is_read_only)
    built = widgets.payload_bytes(fresh.root)
    fresh.repair()
    repaired = widgets.payload_bytes(fresh.root)
    fresh.show.value = "all"
    fresh.go_to(fresh.pages - 1)
    last_page = widgets.payload_bytes(fresh.root)
    page = fresh.cards_page()
    whole = len(rows_html(page, range(len(page.rows))).encode())
    n = f"{size // 1000}k"
    return [
        row(f"HistoryView build, {n} messages, vs history_frame of all", statistics.median(build),
            statistics.median(floor), target="< 0.5 s", limit=0.5, on="ours"),
        row(f"HistoryView Repair, {n} messages", statistics.median(repair), None, target="< 0.5 s",
            limit=0.5, on="ours"),
        row(f"payload built, {n}, vs every row", built / KB, whole / KB, target="< 1 MB", limit=MB / KB,
            on="ours", unit="kB"),
        row(f"payload repaired, {n}, vs every row", repaired / KB, whole / KB, target="< 1 MB",
            limit=MB / KB, on="ours", unit="kB"),
        row(f"payload 'every message', last page, {n}", last_page / KB, None, target="< 1 MB",
            limit=MB / KB, on="ours", unit="kB"),
    ]


def main(argv: list[str] | None = None) -> int:
    return cli(run, "python -m bench.views", argv, rounds=5, size=10_000)


if __name__ == "__main__":
    raise SystemExit(main())
