"""Fork server of the crash explorer: ``python -m tests.conversation.crash.child`` (the loop of
tests/store/fork_server.py).

An interpreter costs far more to start than a run of the conversation, so this process imports
everything once and forks one child per run (a real process that SIGKILLs itself at its crash
point). ``{"op": "run", "wire", "store", "cid", "crash_at", "listing", "log", "root"}``: the
child opens the store (``store``: {"kind": "sqlite", "path", "sync"} | {"kind": "postgres",
"dsn", "schema"} | {"kind": "jsonl", "path"}), runs the scenario's conversation against the wire
server at ``root`` and writes its log (see scenario.Hooks) to ``log``.

The child builds its store and provider after the fork, so nothing is shared with this process.
"""

from __future__ import annotations

import os
import traceback
from typing import Any

from providerkit_nb.store.postgres import PostgresStore
from providerkit_nb.store.sqlite import NotebookStore

from ...store.fork_server import serve
from . import scenario as sc
from .wires import provider_for

try:  # imported up front so a forked child starts at once
    import httpx  # noqa: F401
    import psycopg  # noqa: F401

    import providerkit_nb.providers.anthropic  # noqa: F401
    import providerkit_nb.providers.gemini  # noqa: F401
    import providerkit_nb.providers.openai_chat  # noqa: F401
    import providerkit_nb.providers.openai_responses  # noqa: F401
except ImportError:  # pragma: no cover
    pass


def open_store(spec: dict[str, Any]) -> Any:
    if spec["kind"] == "sqlite":
        return NotebookStore(spec["path"], synchronous=spec["sync"])
    if spec["kind"] == "postgres":
        return PostgresStore(spec["dsn"], schema=spec["schema"])
    from providerkit_nb.store.jsonl_store import JsonlStore

    return JsonlStore(spec["path"])


def run(req: dict[str, Any]) -> int:
    fd = os.open(req["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    hooks = sc.Hooks(req.get("crash_at"), fd, listing=bool(req.get("listing")))
    try:
        store = open_store(req["store"])
        counted = sc.instrument(store, hooks)
        provider = sc.Counting(provider_for(req["wire"], req["root"]), hooks)
        convo = sc.conversation(counted, req["cid"], provider, hooks, sc.workspace())
        convo.send(sc.U1)
        convo.send(sc.U2)
        hooks.note("DONE")
    except BaseException:
        hooks.note("X " + traceback.format_exc().replace("\n", "\\n"))
        return 1
    return 0


if __name__ == "__main__":
    serve(run)
