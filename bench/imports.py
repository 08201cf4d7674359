"""Import time: ``python -c "import providerkit_nb"`` in a fresh process, vs the peers.

Each sample is the wall time of a whole new interpreter running ``import X`` (what a user waits
for in a fresh kernel or script), for providerkit_nb and for ``openai``, ``anthropic`` and
``litellm``; a bare ``python -c pass`` is measured alongside, so the import's own share is
visible. The contenders are interleaved round by round (order rotated) and the medians reported;
the peers, far slower, run in fewer of the rounds.

Every contender runs once before the timed rounds, which compiles its bytecode into a cache
folder that all of them share (``-X pycache_prefix``, kept in ``bench/__pycache__`` between
runs), so no one pays for compiling and nothing is written next to the installed sources, even
where ``PYTHONDONTWRITEBYTECODE`` is set. litellm is told to use its bundled model
price list (``LITELLM_LOCAL_MODEL_COST_MAP``) so importing it does not reach the internet.

Targets: providerkit_nb under 150 ms, and faster than each peer.
Run: ``python -m bench.imports`` (``--rounds N``; ``--profile`` prints ``-X importtime`` for us).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.harness import HOW_BENCH, interleave, print_rows, row

OURS = "providerkit_nb"
PEERS = ("openai", "anthropic", "litellm")
LIMIT = 0.150
CACHE = Path(__file__).resolve().parent / "__pycache__" / "imports-bench"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # no network fetch at import
    return env


def _cmd(code: str, cache: str, *extra: str) -> list[str]:
    return [sys.executable, "-X", f"pycache_prefix={cache}", *extra, "-c", code]


def _runner(code: str, cache: str, env: dict[str, str]) -> Callable[[], None]:
    cmd = _cmd(code, cache)

    def once() -> None:
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    return once


def profile(module: str = OURS, top: int = 15) -> str:
    """The heaviest modules of ``import module`` by cumulative time (``-X importtime``)."""
    cache = str(CACHE)
    env = _env()
    subprocess.run(_cmd(f"import {module}", cache), env=env, check=True)  # compile first
    err = subprocess.run(_cmd(f"import {module}", cache, "-X", "importtime"), env=env, check=True,
                         capture_output=True, text=True).stderr
    rows = []
    for line in err.splitlines()[1:]:
        parts = line.split("|")
        if len(parts) == 3:
            rows.append((int(parts[1]), int(parts[0].split(":")[1]), parts[2].rstrip()))
    rows.sort(reverse=True)
    return "\n".join(f"{c / 1e3:8.1f} ms cumulative {s / 1e3:7.1f} ms self  {name}" for c, s, name in rows[:top])


def run(rounds: int = 9, peer_rounds: int = 3) -> list[dict[str, Any]]:
    """Rows: our cold import against the limit and against each installed peer (wall seconds,
    medians; the peers, ten to a hundred times slower, take part in ``peer_rounds`` rounds)."""
    peers = [p for p in PEERS if importlib.util.find_spec(p) is not None]
    codes = {"python -c pass": "pass", OURS: f"import {OURS}", **{p: f"import {p}" for p in peers}}
    CACHE.mkdir(parents=True, exist_ok=True)
    env = _env()
    # the warm-up round compiles every contender into the shared cache (if not already there)
    timed = interleave({n: _runner(c, str(CACHE), env) for n, c in codes.items()}, rounds,
                       fewer={p: peer_rounds for p in peers})
    med = {n: t.wall for n, t in timed.items()}
    ours, bare = med[OURS], med["python -c pass"]
    out = [
        row(f"import {OURS}, fresh process (python -c)", ours, bare, target="< 150 ms", limit=LIMIT, on="ours",
            note=f"peer column: the interpreter alone (python -c pass); the import itself {(ours - bare) * 1e3:.0f} ms"),
    ]
    for p in PEERS:
        if p in med:
            out.append(row(f"import {OURS} vs import {p}, fresh process", ours, med[p], target="< 1x peer", limit=1.0,
                           note=f"the imports alone (minus python -c pass): {(ours - bare) * 1e3:.0f} ms vs "
                                f"{(med[p] - bare) * 1e3:.0f} ms"))
        else:
            out.append(row(f"import {OURS} vs import {p} (not installed)", ours, None, target="< 1x peer",
                           note=HOW_BENCH))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.imports", description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--peer-rounds", type=int, default=3)
    ap.add_argument("--profile", action="store_true", help="print where our import spends its time")
    a = ap.parse_args(argv)
    if a.profile:
        print(profile())
        return
    print_rows(run(a.rounds, a.peer_rounds))


if __name__ == "__main__":
    main()
