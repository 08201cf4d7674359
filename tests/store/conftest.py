"""Store fixtures: one backing per test (a fresh SQLite file, a fresh PostgreSQL schema, a dict).

PostgreSQL tests need a real server: set PROVIDERKIT_PG_DSN (``eval "$(scripts/pg-test-server.sh
start)"`` starts a throwaway one). Without it they skip locally; under CI=true a missing or
unreachable server fails them instead, so CI can never go green without running them.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from providerkit_nb.store.base import BaseStore

PG_ENV = "PROVIDERKIT_PG_DSN"
_pg_state: dict[str, Any] = {}


def _pg_unavailable() -> str | None:
    """None when a server answers at $PROVIDERKIT_PG_DSN, else why not (checked once)."""
    if "reason" not in _pg_state:
        dsn = os.environ.get(PG_ENV)
        if not dsn:
            reason = f"{PG_ENV} is not set (eval \"$(scripts/pg-test-server.sh start)\" starts a local server)"
        else:
            try:
                import psycopg

                psycopg.connect(dsn, connect_timeout=3).close()
                reason = None
            except Exception as exc:  # noqa: BLE001 - any failure means "not reachable"
                reason = f"PostgreSQL at {PG_ENV} is not reachable: {str(exc).splitlines()[0]}"
        _pg_state["reason"] = reason
    return _pg_state["reason"]


def require_pg() -> str:
    reason = _pg_unavailable()
    if reason is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but {reason}: the PostgreSQL store tests must run in CI")
        pytest.skip(reason)
    return os.environ[PG_ENV]


@pytest.fixture
def pg() -> Iterator[tuple[str, str]]:
    """A real server's DSN and a fresh schema name on it, dropped afterwards."""
    import psycopg

    dsn = require_pg()
    schema = f"pk_open_{uuid.uuid4().hex[:8]}"
    yield dsn, schema
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@dataclass
class Backing:
    """Where a store lives; ``open()`` gives a new store object on the same data."""

    kind: str
    open: Callable[..., BaseStore]
    durable: bool
    target: str  # what a child process needs to open it (path or DSN)
    schema: str | None = None
    opened: list[BaseStore] = field(default_factory=list)

    def new(self, **kw: Any) -> BaseStore:
        s = self.open(**kw)
        self.opened.append(s)
        return s


def _memory(tmp_path: Path) -> Iterator[Backing]:
    from providerkit_nb.store.memory import MemoryStore

    one = MemoryStore()
    yield Backing("memory", lambda **kw: one, durable=False, target="")


def _sqlite(tmp_path: Path) -> Iterator[Backing]:
    from providerkit_nb.store.sqlite import NotebookStore

    path = tmp_path / "t.providerkit.sqlite"
    yield Backing("sqlite", lambda **kw: NotebookStore(path, **kw), durable=True, target=str(path))


def _jsonl(tmp_path: Path) -> Iterator[Backing]:
    from providerkit_nb.store.jsonl_store import JsonlStore

    path = tmp_path / "t.providerkit-jsonl"
    yield Backing("jsonl", lambda **kw: JsonlStore(path, **kw), durable=True, target=str(path))


def _postgres(tmp_path: Path) -> Iterator[Backing]:
    dsn = require_pg()
    import psycopg

    from providerkit_nb.store.postgres import PostgresStore

    schema = f"pk_test_{uuid.uuid4().hex[:10]}"
    yield Backing(
        "postgres", lambda **kw: PostgresStore(dsn, schema=schema, **kw), durable=True,
        target=dsn, schema=schema,
    )
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


_KINDS = {"memory": _memory, "sqlite": _sqlite, "jsonl": _jsonl, "postgres": _postgres}


def _backing(kind: str, tmp_path: Path) -> Iterator[Backing]:
    gen = _KINDS[kind](tmp_path)
    b = next(gen)
    try:
        yield b
    finally:
        for s in b.opened:
            s.close()
        for _ in gen:
            pass


_PG = pytest.param("postgres", marks=pytest.mark.postgres)


@pytest.fixture(params=["memory", "sqlite", "jsonl", _PG])
def backing(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backing]:
    yield from _backing(request.param, tmp_path)


@pytest.fixture(params=["sqlite", "jsonl", _PG])
def durable(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backing]:
    yield from _backing(request.param, tmp_path)


@pytest.fixture
def store(backing: Backing) -> BaseStore:
    return backing.new()
