"""Processes that open the same new store file at the same moment all get a store.

One of them creates the schema; the others must see either no schema yet (and wait for the
write lock) or all of it, never tables without the store's id. Real processes, released
together by a file appearing, many rounds."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

OPENER = """
import os, sys, time
from pathlib import Path
go = Path(sys.argv[2])
while not go.exists():
    time.sleep(0.0005)
import providerkit_nb as pk
try:
    with pk.NotebookStore(sys.argv[1]) as s:
        s.save("c", {"role": "user", "content": "hi"})
except Exception as exc:
    print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
    sys.exit(1)
"""

ROUNDS = 10
OPENERS = 6


def test_processes_opening_one_new_store_at_once_all_succeed(tmp_path: Path) -> None:
    failures: list[str] = []
    for r in range(ROUNDS):
        target = tmp_path / f"race-{r}.providerkit.sqlite"
        go = tmp_path / f"go-{r}"
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", OPENER, str(target), str(go)],
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(OPENERS)
        ]
        time.sleep(0.6)  # let every opener import the package and wait on the file
        go.touch()
        for p in procs:
            _, err = p.communicate(timeout=60)
            if p.returncode != 0:
                failures.append(f"round {r}: {err.strip()}")
        if not failures:
            import providerkit_nb as pk

            with pk.NotebookStore(target) as s:
                assert len(s.load("c")) == OPENERS
    assert not failures, "\n".join(failures[:5])
