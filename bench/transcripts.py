"""Transcripts: load a 50 MB Claude Code session, against the floor of parsing its lines.

The session is generated here in the CLI's line format: turns of a user prompt, an assistant
API message split over three lines (thinking with a signature, text, tool_use) that share
``message.id``, progress lines between them (most lines of a real session are progress), and
a tool_result line of a few KiB, all chained by ``parentUuid``; the last call has no result
(the process was killed). Ours: ``pk.transcripts.load`` (parse, walk the chain, group the split
messages, convert) and ``pk.inspect`` (that, plus validate and repair). The floor:
``json.loads`` (the standard library's) of every line and nothing else; ours parses with orjson
when the ``fast-json`` extra is there (same values; the row says which). The ratio is of wall
time; the note gives the CPU-time ratio too (steadier on a busy machine). Target: the load at
most 1.5x the floor (and, as an absolute bar, under 5 s); the inspection's ratio is information.

Run: ``python -m bench.transcripts`` (``--mb N``).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from bench.harness import interleave, print_rows, row

LIMIT_S = 5.0
FLOOR_LIMIT = 1.5


def make_session(path: Path, mb: int) -> int:
    """Write a Claude Code session of about ``mb`` MB; returns the number of lines."""
    target = mb * 1_000_000
    sid = "bench-0000-4000-8000-000000000000"
    size = lines = 0
    parent: str | None = None
    n = 0
    output = ("line of tool output " * 150)[:3000]

    with open(path, "w", encoding="utf-8") as f:

        def emit(obj: dict[str, Any]) -> None:
            nonlocal size, lines, parent, n
            text = json.dumps(obj, separators=(",", ":")) + "\n"
            f.write(text)
            size += len(text)
            lines += 1
            parent = obj.get("uuid", parent)

        def uid() -> str:
            nonlocal n
            n += 1
            return f"00000000-0000-4000-8000-{n:012d}"

        def base(kind: str) -> dict[str, Any]:
            return {"type": kind, "uuid": uid(), "parentUuid": parent, "sessionId": sid, "version": "2.1.38",
                    "cwd": "/home/user/project", "isSidechain": False, "timestamp": "2026-02-01T10:00:00Z"}

        turn = 0
        while size < target:
            turn += 1
            emit({**base("user"), "message": {"role": "user", "content": f"Step {turn}: run the next check."}})
            mid = f"msg_{turn:08d}"
            for block in (
                {"type": "thinking", "thinking": "Think about the step. " * 20, "signature": "Eq" + "A" * 300},
                {"type": "text", "text": f"Running check {turn}."},
                {"type": "tool_use", "id": f"toolu_{turn:08d}", "name": "Bash", "input": {"command": f"check {turn}"}},
            ):
                emit({**base("assistant"), "message": {"id": mid, "role": "assistant", "content": [block],
                                                        "stop_reason": None}})
            call_line = parent
            for k in range(6):
                emit({**base("progress"), "data": {"type": "bash_progress", "output": f"progress {k} " * 30}})
            if size < target:
                parent = call_line
                emit({**base("user"), "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{turn:08d}", "content": output, "is_error": False}]},
                    "toolUseResult": {"stdout": output[:200]}})
    return lines


def _floor(path: Path) -> int:
    n = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            json.loads(line)
            n += 1
    return n


def run(mb: int = 50, rounds: int = 3) -> list[dict[str, Any]]:
    import providerkit_nb as pk
    from providerkit_nb import transcripts

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "session.jsonl"
        lines = make_session(path, mb)
        size = path.stat().st_size
        loaded = transcripts.load(path)
        assert loaded.format == "claude_code" and loaded.messages, "the generated session did not load"
        t = interleave(
            {
                "load": lambda: transcripts.load(path),
                "inspect": lambda: pk.inspect(path),
                "floor": lambda: _floor(path),
            },
            rounds,
            warm=0,
        )
    from providerkit_nb.core.json_input import read_json
    from providerkit_nb.transcripts.base import _json_loads

    parser = "json (stdlib)" if _json_loads() is read_json else "orjson"  # without orjson: the safe reader
    what = f"{size / 1e6:.0f} MB Claude Code session, {lines:,} lines, {len(loaded.messages):,} messages"
    return [
        row(f"transcripts: load a {what} ({parser} vs the floor's stdlib json)", t["load"].wall, t["floor"].wall,
            target=f"<= {FLOOR_LIMIT}x floor", limit=FLOOR_LIMIT,
            note=f"ours parses lines with {parser}, the floor with json (stdlib); "
                 f"CPU time {t['load'].cpu / t['floor'].cpu:.2f}x"),
        row(f"transcripts: load a {size / 1e6:.0f} MB Claude Code session, absolute", t["load"].wall, None,
            target=f"under {LIMIT_S:.0f} s", limit=LIMIT_S, on="ours"),
        row("transcripts: pk.inspect of the same (load + validate + repair)", t["inspect"].wall, t["floor"].wall),
    ]


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    print_rows(run(a.mb, a.rounds))
