"""Child process for the crash tests: save a conversation as fast as it can, acknowledging each.

    python crash_child.py KIND TARGET CONVERSATION_ID SEED [--schema S] [--count N]

Prints "ready" once the store is open, then the seq of every message after ``save`` returned,
flushed at once, so whatever the parent reads was acknowledged before the kill. With --count it
exits after N saves; otherwise it runs until killed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from convo import conversation  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["sqlite", "postgres"])
    ap.add_argument("target")
    ap.add_argument("cid")
    ap.add_argument("seed", type=int)
    ap.add_argument("--schema")
    ap.add_argument("--count", type=int, default=0)
    a = ap.parse_args()
    if a.kind == "sqlite":
        from providerkit_nb.store.sqlite import NotebookStore

        store = NotebookStore(a.target)
    else:
        from providerkit_nb.store.postgres import PostgresStore

        store = PostgresStore(a.target, schema=a.schema)
    out = sys.stdout
    out.write("ready\n")
    out.flush()
    for n, message in enumerate(conversation(a.seed), 1):
        saved = store.save(a.cid, message)
        out.write(f"{saved.seq}\n")
        out.flush()
        if n == a.count:
            break
    store.close()


if __name__ == "__main__":
    main()
