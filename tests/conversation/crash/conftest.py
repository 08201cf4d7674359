"""Crash explorer fixtures: one wire server and one fork server per module, and where each
store lives (``backend``)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from .explore import Backend, Explorer, Forker
from .scenario import SCRIPT
from .wires import WireServer


@pytest.fixture(scope="session")
def server() -> Iterator[WireServer]:
    with WireServer(SCRIPT) as s:
        yield s


@pytest.fixture(scope="session")
def forker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Forker]:
    f = Forker(tmp_path_factory.mktemp("crash-fork"))
    yield f
    f.close()


@pytest.fixture(scope="session")
def explorer(
    server: WireServer, forker: Forker, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[[str, str], Explorer]]:
    """``explorer(wire, kind)``: one store and one numbered run per combination for the whole
    session (the sampled test and the window tests of a combination share them)."""
    made: dict[tuple[str, str], Explorer] = {}
    with ExitStack() as stack:

        def get(wire: str, kind: str) -> Explorer:
            if (wire, kind) not in made:
                folder = tmp_path_factory.mktemp(f"crash-{wire}-{kind}")
                ex = Explorer(forker, server, wire, stack.enter_context(backend(kind, folder)), folder)
                ex.number()
                made[wire, kind] = ex
            return made[wire, kind]

        yield get


@contextmanager
def backend(kind: str, folder: Path) -> Iterator[Backend]:
    """A fresh store of ``kind`` (sqlite-normal, sqlite-full, jsonl, postgres), made before the
    runs so every child opens an existing one."""
    if kind.startswith("sqlite"):
        from providerkit_nb.store.sqlite import NotebookStore

        sync = kind.split("-")[1].upper()
        path = str(folder / "crash.sqlite")
        NotebookStore(path, synchronous=sync).close()
        yield Backend(kind, {"kind": "sqlite", "path": path, "sync": sync},
                      lambda: NotebookStore(path, synchronous=sync))
    elif kind == "jsonl":
        from providerkit_nb.store.jsonl_store import JsonlStore

        path = str(folder / "crash-jsonl")
        JsonlStore(path).close()
        yield Backend(kind, {"kind": "jsonl", "path": path}, lambda: JsonlStore(path))
    else:
        import psycopg

        from providerkit_nb.store.postgres import PostgresStore

        from ...store.conftest import require_pg
        from ...store.test_crash import _server_done_with_the_dead

        dsn = require_pg()
        schema = f"pk_crash_{uuid.uuid4().hex[:10]}"
        PostgresStore(dsn, schema=schema).close()
        yield Backend(kind, {"kind": "postgres", "dsn": dsn, "schema": schema},
                      lambda: PostgresStore(dsn, schema=schema), lambda: _server_done_with_the_dead(dsn))
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
