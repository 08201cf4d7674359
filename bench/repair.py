"""repair_history on long histories: linear time, and cheap on the valid history of every send.

Histories are generated deterministically and look like agent transcripts: a system prompt,
then turns of a user message, one to three assistant steps that call one to three tools (results
in any order), and a closing answer. In the broken variant about one step in twenty has each
kind of break: a call whose result never came, a stray result, an empty placeholder assistant
message, or call ids that restart at ``call_0`` (as some OpenAI-compatible servers number them,
so a later turn reuses an id). The worst case, where every turn restarts its ids (half the
calls renamed, about one change per message), is reported for information.

Timed in CPU seconds (the work is single-threaded and does no I/O, so time the process spent
waiting for a core on a shared machine does not count) as the median of several interleaved
rounds (sizes alternate inside each round, so a noisy neighbour hits all of them alike):

- broken 1k / 10k / 100k messages: the 100k time (target < 1 s) and the 100k/10k ratio
  (target < 12x, i.e. linear), next to the same ratio for encoding those histories with
  ``pk_messages.dumps``, a plainly linear floor, which shows what caches and machine load add;
- valid 100k messages (what every adapter pays on every send) against the floor of encoding
  that history once with ``pk_messages.dumps`` (the least a send costs anyway); target < 1x.

Run: ``python -m bench.repair`` (``--rounds N``).
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import providerkit_nb as pk
import providerkit_nb.messages as pk_messages
from bench.harness import print_rows, row

SIZES = (1_000, 10_000, 100_000)
TOOLS = ("read_file", "write_file", "grep", "list_dir", "run_tests")


def make_history(size: int, *, broken: bool, worst: bool = False, seed: int = 7) -> list[pk.Message]:
    rnd = random.Random(seed)
    out: list[pk.Message] = [pk.SystemMessage("You are a careful coding agent.")]
    turn = 0
    while len(out) < size:
        turn += 1
        out.append(pk.UserMessage(f"Step {turn}: please look at module_{turn % 97}.py and fix the bug."))
        restart = worst or (broken and rnd.random() < 0.05)
        next_id = 0
        for _ in range(rnd.randint(1, 3)):
            calls = []
            for _ in range(rnd.randint(1, 3)):
                name = rnd.choice(TOOLS)
                cid = f"call_{next_id}" if restart else f"call_{rnd.getrandbits(64):016x}"
                calls.append(pk.ToolCall(cid, name, f'{{"path": "src/module_{turn % 97}.py", "n": {next_id}}}'))
                next_id += 1
            out.append(pk.AssistantMessage("Let me check.", reasoning="The file may be stale.", tool_calls=calls))
            if broken and rnd.random() < 0.05:
                out.append(pk.AssistantMessage(""))  # a placeholder saved before the tools ran
            order = calls[:]
            rnd.shuffle(order)
            if broken and rnd.random() < 0.05:
                order.pop()  # the process died before this result was saved
            for c in order:
                out.append(pk.ToolMessage(c.id, c.name, f"contents of {c.name} #{c.id}: " + "x" * rnd.randint(20, 400)))
            if broken and rnd.random() < 0.03:
                out.append(pk.ToolMessage(f"call_stray_{turn}", "grep", "a late result"))
        out.append(pk.AssistantMessage(f"Fixed step {turn}."))
    return out[:size]


def _time(fn: Callable[[], Any]) -> float:
    started = time.process_time()
    result = fn()
    elapsed = time.process_time() - started
    del result  # freed after the clock stopped: freeing is not the work being measured
    gc.collect()  # nor is collecting what an earlier sample left behind
    return elapsed


def run(rounds: int = 7) -> list[dict[str, Any]]:
    """Rows {name, ours, floor_or_peer, ratio, target, ok} (times in seconds)."""
    broken = {n: make_history(n, broken=True) for n in SIZES}
    valid = pk.repair_history(make_history(SIZES[-1], broken=False)).messages
    worst = make_history(SIZES[-1], broken=True, worst=True)
    tools = pk.ToolRegistry(
        [pk.define_tool(n, n, {"type": "object"}, run=lambda args: "", read_only=n != "write_file") for n in TOOLS]
    )
    samples: dict[str, list[float]] = {f"broken_{n}": [] for n in SIZES}
    samples["valid"], samples["dumps"], samples["worst"] = [], [], []
    for _ in range(rounds):
        for n in SIZES:
            h = broken[n]
            samples[f"broken_{n}"].append(_time(lambda h=h: pk.repair_history(h, is_read_only=tools.is_read_only)))
        samples["valid"].append(_time(lambda: pk.repair_history(valid)))
        samples["worst"].append(_time(lambda: pk.repair_history(worst, is_read_only=tools.is_read_only)))
        samples["dumps"].append(_time(lambda: pk_messages.dumps(valid)))
        for n in SIZES[1:]:  # the floor's own scaling shows what the machine adds (caches, load)
            h = broken[n]
            samples.setdefault(f"dumps_{n}", []).append(_time(lambda h=h: pk_messages.dumps(h)))
    med = {k: statistics.median(v) for k, v in samples.items()}
    t10k, t100k = med["broken_10000"], med["broken_100000"]
    valid_ratio = med["valid"] / med["dumps"]
    return [
        row("repair 1k messages", med["broken_1000"], None),
        row("repair 10k messages", t10k, None),
        row("repair 100k messages", t100k, None, target="< 1 s", limit=1.0, on="ours"),
        row("repair 100k, ids reused every turn", med["worst"], None),
        row("floor scaling 100k / 10k (pk_messages.dumps)", med["dumps_100000"], med["dumps_10000"],
            note="the same growth for a plainly linear floor: what caches and load add"),
        row("repair scaling 100k / 10k", t100k, t10k, target="< 12x", limit=12),
        row("repair valid 100k vs pk_messages.dumps of it", med["valid"], med["dumps"], target="< 1x", limit=1.0,
            ratio=valid_ratio),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.repair")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    rows = run(args.rounds)
    print_rows(rows)
    return 0 if all(r["ok"] is not False for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
