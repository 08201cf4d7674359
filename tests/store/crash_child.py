"""Fork server for the crash tests: ``python crash_child.py`` reads JSON requests on stdin.

Starting a fresh interpreter per trial costs far more than a trial, so this process imports
everything once and forks one writer process per trial (a real process the test kills with
SIGKILL). Requests, one JSON object per line, each answered with one JSON line:

- ``{"op": "run", "kind", "target", "cid", "seed", "schema", "count", "out", "go"}`` ->
  ``{"pid"}``: the writer opens the store, writes "ready" to ``out``, waits for the file ``go``
  to exist (when given; then it also pauses 0.2 ms after each save), then saves the conversation
  as fast as it can, writing each returned seq to ``out`` with one unbuffered write() after ``save``
  returned; with ``count`` it exits after that many saves, otherwise it runs until killed.
- ``{"op": "wait", "pid"}`` -> ``{"status"}``: reaps the writer; -9 when SIGKILL ended it.

The writer builds its store after the fork, so no connection is shared with this process.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from convo import conversation  # noqa: E402
from fork_server import serve  # noqa: E402

from providerkit_nb.store.jsonl_store import JsonlStore  # noqa: E402
from providerkit_nb.store.postgres import PostgresStore  # noqa: E402
from providerkit_nb.store.sqlite import NotebookStore  # noqa: E402

try:  # imported up front so a forked writer starts at once
    import psycopg  # noqa: F401
except ImportError:  # pragma: no cover
    pass


def writer(req: dict) -> None:
    fd = os.open(req["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    if req["kind"] == "sqlite":
        store = NotebookStore(req["target"])
    elif req["kind"] == "jsonl":
        store = JsonlStore(req["target"])
    else:
        store = PostgresStore(req["target"], schema=req.get("schema"))
    os.write(fd, b"ready\n")
    go = req.get("go")
    while go and not os.path.exists(go):  # a start line, so several writers really overlap
        time.sleep(0.0005)
    count = int(req.get("count") or 0)
    for n, message in enumerate(conversation(int(req["seed"])), 1):
        saved = store.save(req["cid"], message)
        os.write(fd, b"%d\n" % saved.seq)
        if n == count:
            break
        if go:
            # Writers that start together also pause a moment after each save: a save takes
            # tens of microseconds, and SQLite's busy handler makes the other writer sleep a
            # millisecond or more, so without it one writer can run through all its saves
            # while the other sleeps, and the writers never really take turns.
            time.sleep(0.0002)
    store.close()


def child(req: dict) -> int:
    try:
        writer(req)
    except BaseException:
        with open(req["out"] + ".err", "w") as f:
            f.write(traceback.format_exc())
        return 1
    return 0


if __name__ == "__main__":
    serve(child)
