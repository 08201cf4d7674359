"""The writes a conversation makes, for the disk-full tests, and a child that makes them under a
file size limit: ``python -m tests.store.disk_child KIND PATH K FILE``.

The child opens the store and applies ``OPS[:K]``, printing ``ack i`` after each; then it sets
RLIMIT_FSIZE to one byte more than FILE (the file op K grows) holds now, with SIGXFSZ ignored so
a write past it fails with EFBIG instead of killing the process, and applies op K: it prints
``error <type> <message>`` when the store raises its own error, ``ack K`` if the write found
room. Anything else is a failure (exit 1, traceback on stderr).
"""

from __future__ import annotations

import os
import resource
import signal
import sys
from collections.abc import Iterator
from typing import Any

import providerkit_nb as pk
from providerkit_nb.core.turn import Turn, Usage
from providerkit_nb.store.base import StoreError

Op = tuple[str, Any, Any]


def ops() -> Iterator[Op]:
    """What a conversation writes, in the shapes it writes them: one message, a step of a
    message with its marks, a decision with its result, a compaction's summary and copies, a
    mark alone, usage, metadata and a lost turn."""
    yield ("session", None, None)
    yield ("save", pk.SystemMessage("You edit files."), None)
    for r in range(4):
        a, b = f"call_{r}_read", f"call_{r}_write"
        yield ("save", pk.UserMessage(f"round {r}: " + "Grüße aus Köln, 日本語 ✓ " * (20 + 30 * r)), None)
        calling = pk.AssistantMessage(f"Reading and writing, round {r}.", reasoning="Two calls.",
                                      tool_calls=[pk.ToolCall(a, "read_file", '{"path": "README.md"}'),
                                                  pk.ToolCall(b, "write_file", '{"path": "N.md", "content": "x"}')])
        yield ("step", [calling], [(b, "asking", None)])
        yield ("usage", {"usage": {"input_tokens": 100 * r, "output_tokens": 20}, "step": r}, None)
        yield ("mark", a, "started")
        yield ("step", [pk.ToolMessage(a, "read_file", "# Hello ✓\n" * (60 + 200 * r))], [(a, "finished", {"kind": "ok"})])
        yield ("step", [pk.ToolMessage(b, "write_file", "The user declined this call.")],
               [(b, "denied", {"decision": "denied"})])
        if r == 1:
            yield ("lost", Turn(pk.AssistantMessage("half an answ"), Usage(input_tokens=10)), "cut")
        yield ("step", [pk.UserMessage(f"[Earlier conversation, summarized]\n\nRound {r} 🎉"), calling,
                        pk.ToolMessage(a, "read_file", "ok"), pk.ToolMessage(b, "write_file", "no")], [])
        yield ("save", pk.AssistantMessage(f"Done with round {r}. ✓"), None)


OPS = list(ops())
CID = "full"


def apply(store: Any, op: Op) -> None:
    what, x, y = op
    if what == "session":
        store.session_id(CID)
    elif what == "save":
        store.save(CID, x)
    elif what == "step":
        store.save_step(CID, x, marks=y)
    elif what == "mark":
        store.mark_call(CID, x, y)
    elif what == "usage":
        store.save_turn_usage(CID, x)
    elif what == "lost":
        store.save_lost_turn(CID, x, y)


def open_store(kind: str, path: str) -> Any:
    if kind == "jsonl":
        from providerkit_nb.store.jsonl_store import JsonlStore

        return JsonlStore(path)
    return pk.NotebookStore(path, synchronous=kind.split("-")[1].upper())


def main() -> None:
    kind, path, k, grows = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    store = open_store(kind, path)
    for i, op in enumerate(OPS[:k]):
        apply(store, op)
        print(f"ack {i}", flush=True)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    limit = (os.path.getsize(grows) if os.path.exists(grows) else 0) + 1
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
    try:
        apply(store, OPS[k])
        print(f"ack {k}", flush=True)
    except StoreError as exc:
        print(f"error {type(exc).__name__} {exc}".replace("\n", " "), flush=True)


if __name__ == "__main__":
    main()
