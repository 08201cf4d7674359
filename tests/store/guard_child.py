"""A child process that holds one conversation's guard until it is killed."""

from __future__ import annotations

import time
from typing import Any

import providerkit_nb as pk
from providerkit_nb.store import PostgresStore


def hold_conversation(kind: str, target: str, schema: str | None, cid: str, ready: Any) -> None:
    store: Any
    if kind == "postgres":
        store = PostgresStore(target, schema=schema)
    elif kind == "jsonl":
        from providerkit_nb.store.jsonl_store import JsonlStore

        store = JsonlStore(target)
    else:
        store = pk.NotebookStore(target)
    with store.hold(cid):
        ready.set()
        time.sleep(600)
