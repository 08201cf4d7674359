"""Crash explorer fixtures: one wire server and one fork server per module, and where each
store lives (``backend``)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from .explore import Backend, Forker
from .scenario import SCRIPT
from .wires import WireServer


@pytest.fixture(scope="module")
def server() -> Iterator[WireServer]:
    with WireServer(SCRIPT) as s:
        yield s


@pytest.fixture(scope="module")
def forker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Forker]:
    f = Forker(tmp_path_factory.mktemp("crash-fork"))
    yield f
    f.close()


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
