"""Running many conversations at once, on any ``concurrent.futures.Executor``.

``resume_many(ids, make)`` runs ``make(cid).resume()`` for each id and returns one row per
conversation; ``send_many(prompts, make)`` does the same with a new user message each. The
executor is a thread pool by default; a ``ProcessPoolExecutor`` or Dask's
``client.get_executor(pure=False)`` spread the work over processes and machines. What crosses to
a worker is small and picklable: the conversation id and ``make``, a top-level callable such as
``ConversationMaker`` (a store named by its DSN or path, a registry built from a dict), which opens
its store and registry once per worker process.

Engines may run a task twice (Dask re-runs the tasks of a dead worker). That is safe: ``resume``
leaves a conversation that already ended alone, and the store's per-conversation guard refuses to
run one conversation twice at the same moment (the row says ``busy``). The provider's limit holds
across workers when the registry connection uses a shared ``PostgresGate``.

Nothing here imports dask, and ``tqdm`` is imported only for the progress bar.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from .facade import Conversation

__all__ = ["resume_many", "send_many", "run_one", "ConversationMaker", "close_opened", "OUTCOMES",
           "COLUMNS"]

COLUMNS = ["cid", "outcome", "turns", "error_kind", "error", "seconds", "worker"]
OUTCOMES = {
    "answered": "ran, and the model answered without calls",
    "unchanged": "nothing to do: the conversation had already ended (or was empty)",
    "max_steps": "ran max_steps turns and the model still wanted tools",
    "busy": "another worker held the conversation (ConversationBusy): not run twice",
    "failed": "an error stopped it; the history is saved up to the last step",
}


def run_one(
    make: Callable[[str], Conversation],
    cid: str,
    prompt: str | None = None,
    *,
    busy_wait: float = 0.0,
    rerun_read_only: bool = False,
) -> dict[str, Any]:
    """Resume (or, with ``prompt``, send to) one conversation; a plain dict row, never raises
    for the conversation's own errors (an interrupt still stops it)."""
    from ..store.base import ConversationBusy

    started = time.monotonic()
    row: dict[str, Any] = {"cid": cid, "outcome": "failed", "turns": 0, "error_kind": None,
                           "error": None, "seconds": 0.0, "worker": _worker()}
    conv = None
    before = 0
    try:
        conv = make(cid)
        before = len(conv.records)  # the turns of earlier runs, read back from the store
        conv.busy_wait = busy_wait
        turn = conv.send(prompt) if prompt is not None else conv.resume(rerun_read_only=rerun_read_only)
        if turn is None:
            row["outcome"] = "unchanged"
        elif turn.message.tool_calls:
            row["outcome"] = "max_steps"
        else:
            row["outcome"] = "answered"
    except ConversationBusy as exc:
        row.update(outcome="busy", error_kind="busy", error=str(exc)[:500])
    except Exception as exc:  # noqa: BLE001 - one conversation's failure is its row, not the batch's
        kind = getattr(exc, "kind", None)
        row.update(error_kind=str(getattr(kind, "value", kind) or type(exc).__name__),
                   error=f"{type(exc).__name__}: {exc}"[:500])
    finally:
        if conv is not None:
            row["turns"] = len(conv.records) - before
        row["seconds"] = round(time.monotonic() - started, 4)
    return row


def resume_many(
    conversation_ids: Iterable[str],
    make: Callable[[str], Conversation],
    *,
    executor: Executor | None = None,
    progress: bool = True,
    max_workers: int | None = None,
    busy_wait: float = 0.0,
    rerun_read_only: bool = False,
) -> pd.DataFrame:
    """``make(cid).resume()`` for every id, at once: one row per id, in the order given.

    Columns: cid, outcome (see ``OUTCOMES``), turns (streamed in this run), error_kind, error,
    seconds, worker (host:pid). ``executor`` defaults to a thread pool of ``max_workers``
    threads (32 at most); pass a ``ProcessPoolExecutor`` or ``client.get_executor(pure=False)``
    (Dask: ``pure=False`` or Dask returns a cached result instead of running it). ``busy_wait``
    is how long a worker waits for another holder of the same conversation.
    """
    ids = list(conversation_ids)
    return _run_all([(c, None) for c in ids], make, executor, progress, max_workers,
                    busy_wait, rerun_read_only, "resumed")


def send_many(
    prompts: Mapping[str, str] | Iterable[tuple[str, str]],
    make: Callable[[str], Conversation],
    *,
    executor: Executor | None = None,
    progress: bool = True,
    max_workers: int | None = None,
    busy_wait: float = 0.0,
) -> pd.DataFrame:
    """``make(cid).send(text)`` for every ``{cid: text}`` (or ``(cid, text)`` pairs), at once;
    the same rows as ``resume_many``. A re-run task sends its message again, so give a
    ``Dask`` executor to ``resume_many`` for retries, not to this."""
    pairs = list(prompts.items()) if isinstance(prompts, Mapping) else [tuple(p) for p in prompts]
    for p in pairs:
        if len(p) != 2 or not isinstance(p[1], str):
            raise ValueError(f"send_many takes {{cid: text}} or (cid, text) pairs; got {p!r}")
    return _run_all([(str(c), t) for c, t in pairs], make, executor, progress, max_workers,
                    busy_wait, False, "sent")


def _run_all(
    tasks: Sequence[tuple[str, str | None]],
    make: Callable[[str], Conversation],
    executor: Executor | None,
    progress: bool,
    max_workers: int | None,
    busy_wait: float,
    rerun_read_only: bool,
    what: str,
) -> pd.DataFrame:
    import pandas as pd

    seen: set[str] = set()
    for cid, _ in tasks:
        if not isinstance(cid, str) or not cid:
            raise ValueError(f"conversation ids must be non-empty strings, got {cid!r}")
        if cid in seen:
            raise ValueError(f"conversation {cid!r} is listed twice: it would only run once (the "
                             "second would be busy); list each id once")
        seen.add(cid)
    if not callable(make):
        raise TypeError(f"make must be a callable cid -> Conversation, got {type(make).__name__}")
    rows: list[dict[str, Any] | None] = [None] * len(tasks)
    own = executor is None
    ex = executor or ThreadPoolExecutor(max_workers=max_workers or min(32, max(1, len(tasks))),
                                        thread_name_prefix="providerkit-many")
    bar = _bar(len(tasks), what) if progress and tasks else None
    futures: dict[Future[dict[str, Any]], int] = {}
    failed = 0
    try:
        for i, (cid, prompt) in enumerate(tasks):
            futures[ex.submit(run_one, make, cid, prompt, busy_wait=busy_wait,
                              rerun_read_only=rerun_read_only)] = i
        for f in as_completed(futures):
            i = futures[f]
            row = rows[i] = _row_of(f, tasks[i][0])
            if row["outcome"] in ("failed", "busy"):
                failed += 1
            if bar is not None:
                bar.update(1)
                if failed:
                    bar.set_postfix(not_done=failed, refresh=False)
    except BaseException:
        for f in futures:
            f.cancel()
        raise
    finally:
        if bar is not None:
            bar.close()
        if own:
            ex.shutdown(wait=True, cancel_futures=True)
    return pd.DataFrame([r for r in rows if r is not None], columns=COLUMNS)


def _row_of(f: Future[dict[str, Any]], cid: str) -> dict[str, Any]:
    """The task's row, or a failed row when the engine itself failed (a dead process pool,
    a task that could not be pickled)."""
    try:
        return f.result()
    except Exception as exc:  # noqa: BLE001 - reported in the row
        return {"cid": cid, "outcome": "failed", "turns": 0, "error_kind": type(exc).__name__,
                "error": f"{type(exc).__name__}: {exc}"[:500], "seconds": 0.0, "worker": None}


def _bar(total: int, what: str) -> Any:
    try:
        from tqdm.auto import tqdm
    except ImportError:
        warnings.warn("no progress bar: pip install tqdm (in the 'notebook' extra)", stacklevel=4)
        return None
    return tqdm(total=total, desc=what, unit="conv")


def _worker() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


# --------------------------------------------------------------------------- the factory

_OPENED: dict[tuple[int, str, str], Any] = {}
_OPENED_LOCK = threading.Lock()


def _opened(kind: str, key: str, build: Callable[[], Any]) -> Any:
    """One store or registry per process and recipe, shared by its threads."""
    k = (os.getpid(), kind, key)
    with _OPENED_LOCK:
        obj = _OPENED.get(k)
        if obj is None:
            obj = _OPENED[k] = build()
        return obj


def close_opened() -> None:
    """Close the stores and registries ``ConversationMaker`` opened in this process."""
    with _OPENED_LOCK:
        opened = [v for (pid, _, _), v in _OPENED.items() if pid == os.getpid()]
        _OPENED.clear()
    for obj in opened:
        obj.close()


@dataclass(frozen=True)
class ConversationMaker:
    """A picklable ``make(cid)``: ``ConversationMaker(store, registry, model, ...)``.

    ``store`` is a PostgreSQL DSN (``postgresql://...``; ``schema`` for its tables) or a
    NotebookStore path; ``registry`` the dict a ``pk.Registry`` is built from (give its
    connection a ``gate={"dsn": ..., "name": ...}`` to share the limit across workers);
    ``model`` is ``"connection/model"``; ``tools`` is a ``ToolRegistry`` or ``"module:name"`` of
    one, imported in the worker. Each worker process opens the store and the registry once.
    """

    store: str
    registry: Mapping[str, Any]
    model: str
    tools: Any = None
    system: str | None = None
    schema: str | None = None
    max_steps: int = 8
    options: Mapping[str, Any] = field(default_factory=dict)

    def __call__(self, cid: str) -> Conversation:
        from .facade import Conversation

        return Conversation(self.open_store(), cid, self.open_registry().provider(self.model),
                            self._tools(), self.system, max_steps=self.max_steps, display=False,
                            options=dict(self.options))

    def open_store(self) -> Any:
        def build() -> Any:
            if self.store.startswith(("postgres://", "postgresql://")) or "dbname=" in self.store:
                from ..store.postgres import PostgresStore

                return PostgresStore(self.store, schema=self.schema)
            from ..store.sqlite import NotebookStore

            return NotebookStore(self.store)

        return _opened("store", f"{self.store}\0{self.schema}", build)

    def open_registry(self) -> Any:
        from ..wrappers.registry import Registry

        key = json.dumps(self.registry, sort_keys=True, default=repr)
        return _opened("registry", key, lambda: Registry.from_dict(self.registry))

    def _tools(self) -> Any:
        if not isinstance(self.tools, str):
            return self.tools
        import importlib

        module, _, name = self.tools.partition(":")
        try:
            return getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"tools={self.tools!r}: cannot import it in this worker ({exc}); "
                             "give 'package.module:attribute' of a ToolRegistry") from exc

    def __repr__(self) -> str:  # the store string may be a DSN with a password
        from ..transport.pg import describe_dsn

        where = describe_dsn(self.store) if "://" in self.store or "=" in self.store else self.store
        return f"ConversationMaker(store={where!r}, model={self.model!r})"
