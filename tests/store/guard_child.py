"""A child process that holds one conversation's guard until it is killed."""

from __future__ import annotations

import time
from typing import Any

import providerkit_nb as pk


def hold_conversation(kind: str, target: str, schema: str | None, cid: str, ready: Any) -> None:
    store: Any = pk.PostgresStore(target, schema=schema) if kind == "postgres" else pk.NotebookStore(target)
    with store.hold(cid):
        ready.set()
        time.sleep(600)
