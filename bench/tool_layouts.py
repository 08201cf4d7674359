"""The HTML report of a long coding-agent session with and without the per-tool layouts.

A 15,000-message history of the calls a coding agent makes (Claude Code's Edit with a 40-line
old/new pair, Read returning 80 numbered lines, Bash with a 60-line output and an exit code,
TodoWrite, Write of a 100-line file, and a tool no layout knows) is built in memory; each round
builds the whole report (``build_page`` and ``report_html``: every card, as the HTML file carries
them) once with the layouts and once with them switched off (every call the generic card),
interleaved, CPU seconds, medians. The floor is the generic report. The history is the worst case
(every message a call some layout takes, every edit diffed, every read and write numbered; a
session's prose and unknown tools cost the same either way): the target keeps it under 2x of the
floor (measured 1.35x to 1.52x on a shared 2-core machine). A Bash-only session measures about
1.1x to 1.2x.

Run: ``python -m bench.tool_layouts`` (``--rounds N``, ``--size N``).
"""

from __future__ import annotations

import gc
import json
import statistics
import time
from typing import Any

from bench.harness import cli, row

LIMIT = 2.0


def make_history(size: int) -> list[dict[str, Any]]:
    """``size`` messages: a user turn, then calls and their results, round after round."""
    old = "\n".join(f"    value_{k} = compute({k})" for k in range(40))
    new = old.replace("compute(7)", "compute(7, fast=True)").replace("value_30", "renamed_30")
    read = "\n".join(f"{k + 1:>6}\u2192line {k} of the module" for k in range(80))
    out = "\n".join(f"test_{k} PASSED" for k in range(60)) + "\nExit code 1"
    calls = [
        ("Edit", {"file_path": "/repo/src/app.py", "old_string": old, "new_string": new}, "The file has been updated."),
        ("Read", {"file_path": "/repo/src/app.py", "offset": 1, "limit": 80}, read),
        ("Bash", {"command": "pytest -q tests", "description": "Run the tests"}, out),
        ("TodoWrite", {"todos": [{"content": f"step {k}", "status": "pending", "activeForm": "x"} for k in range(6)]}, "ok"),
        ("Write", {"file_path": "/repo/NOTES.md", "content": "\n".join(f"note {k}" for k in range(100))}, "ok"),
        ("mcp__docs__lookup", {"query": "the cache"}, '{"status": "ok"}'),
    ]
    msgs: list[dict[str, Any]] = []
    k = 0
    while len(msgs) < size:
        msgs.append({"role": "user", "content": f"round {k}: go on"})
        for name, args, result in calls:
            cid = f"toolu_{k:06d}_{name}"
            msgs.append({"role": "assistant", "content": "", "tool_calls": [
                {"id": cid, "name": name, "arguments": json.dumps(args)}]})
            msgs.append({"role": "tool", "tool_call_id": cid, "name": name, "content": result})
        k += 1
    while msgs[size - 1]["role"] == "assistant":  # never end on a call without its result
        size -= 1
    return msgs[:size]


def run(rounds: int = 5, size: int = 15_000) -> list[dict[str, Any]]:
    """Rows {name, ours, floor_or_peer, ratio, target, ok}."""
    from providerkit_nb.core.messages import ensure_messages
    from providerkit_nb.viewer import build_page, report_html, tools

    msgs = ensure_messages(make_history(size))
    real = tools.layout
    took: dict[str, list[float]] = {"layouts": [], "generic": []}
    sizes: dict[str, int] = {}

    def off(*args: Any, **kw: Any) -> None:
        return None

    try:
        for _ in range(rounds):
            for name in took:
                tools.layout = real if name == "layouts" else off  # type: ignore[assignment]
                gc.collect()
                started = time.process_time()
                html = report_html(build_page(msgs))
                took[name].append(time.process_time() - started)
                sizes[name] = len(html.encode())
    finally:
        tools.layout = real
    n = f"{len(msgs) // 1000}k"
    return [
        row(f"report with tool layouts, {n} messages, vs generic cards", statistics.median(took["layouts"]),
            statistics.median(took["generic"]), target=f"< {LIMIT}x", limit=LIMIT),
        row(f"report size with tool layouts, {n}, vs generic cards", sizes["layouts"], sizes["generic"],
            target="info", unit="B"),
    ]


def main(argv: list[str] | None = None) -> int:
    return cli(run, "python -m bench.tool_layouts", argv, rounds=5, size=15_000)


if __name__ == "__main__":
    raise SystemExit(main())
