"""Fork server for the crash tests: ``python crash_child.py`` reads JSON requests on stdin.

Starting a fresh interpreter per trial costs far more than a trial, so this process imports
everything once and forks one writer process per trial (a real process the test kills with
SIGKILL). Requests, one JSON object per line, each answered with one JSON line:

- ``{"op": "run", "kind", "target", "cid", "seed", "schema", "count", "out", "go", "peer",
  "lead"}`` -> ``{"pid"}``: the writer opens the store, writes "ready" to ``out``, waits for
  the file ``go`` to exist (when given), then saves the conversation as fast as
  it can, writing each returned seq to ``out`` with one unbuffered write() after ``save``
  returned; with ``count`` it exits after that many saves, otherwise it runs until killed.
  With ``peer`` (another writer's ``out``) it never gets more than ``lead`` saves ahead of that
  writer: it waits, holding no lock, until the other catches up (see ``_keep_pace``).
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
    peer, lead = req.get("peer"), int(req.get("lead") or 0)
    for n, message in enumerate(conversation(int(req["seed"])), 1):
        saved = store.save(req["cid"], message)
        os.write(fd, b"%d\n" % saved.seq)
        if n == count:
            break
        if peer:
            _keep_pace(n, peer, lead, count)
    store.close()


def _keep_pace(done: int, peer: str, lead: int, count: int) -> None:
    """Wait while this writer is more than ``lead`` saves ahead of the one writing ``peer``.

    A start line alone does not make two writers overlap: on a loaded machine one of them can
    be descheduled, or asleep in SQLite's busy handler (which backs off 1, 2, 5, 10, 15, 20,
    25 ms... between tries), while the other makes all its saves; then they hardly interleave
    and the test proves nothing. Within ``lead`` saves of each other they still race for the
    lock freely. Bounded: a writer whose peer died goes on after 30 s (and the test says why)."""
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline:
        try:
            with open(peer, "rb") as f:
                theirs = f.read().count(b"\n") - 1  # the lines after "ready"
        except FileNotFoundError:
            theirs = 0
        if done - theirs <= lead or theirs >= count:
            return
        time.sleep(0.0002)


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
