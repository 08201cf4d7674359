"""Fixtures for running many conversations: the stub provider, PostgreSQL, a Dask cluster.

PostgreSQL comes from PROVIDERKIT_PG_DSN (skipped locally without it, failed under CI=true, as
for the store tests). The Dask cluster is the user's own setup: ``LocalCluster`` with 2 process
workers on 127.0.0.1, no dashboard, module-scoped (it takes a few seconds to start).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.store.conftest import (
    require_pg,  # the suite's one PostgreSQL gate (skip locally, fail in CI)
)

from . import stub as stub_module
from .stub import URL_ENV, StubProvider

REPO = Path(__file__).resolve().parents[3]
THREADS = 16  # per Dask worker: how many conversations one worker runs at once


@pytest.fixture(scope="module")
def stub() -> Iterator[StubProvider]:
    s = StubProvider()
    old = os.environ.get(URL_ENV)
    os.environ[URL_ENV] = s.url  # the step tool reports here, from any worker process
    # Worker processes import the tool registry by name (tests.conversation.many...): give them
    # the repository's path.
    path = os.environ.get("PYTHONPATH", "")
    if str(REPO) not in path.split(os.pathsep):
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), path) if p)
    yield s
    from providerkit_nb.conversation.many import close_opened

    close_opened()  # the stores and registries the factories opened in this process
    s.close()
    if old is None:
        os.environ.pop(URL_ENV, None)
    else:
        os.environ[URL_ENV] = old


@pytest.fixture
def pg_dsn() -> str:
    return require_pg()


@pytest.fixture
def pg_schema(pg_dsn: str) -> Iterator[str]:
    """A fresh schema for one test's store tables, dropped afterwards."""
    import psycopg

    schema = f"pk_many_{uuid.uuid4().hex[:10]}"
    yield schema
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        c.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture
def gate_name() -> str:
    return f"test-{uuid.uuid4().hex[:12]}"


TOOLS_REF = f"{stub_module.__name__}:TOOLS"


@pytest.fixture(scope="module")
def dask_client(stub: StubProvider) -> Iterator[Any]:
    distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=THREADS, processes=True, host="127.0.0.1",
        dashboard_address=None, silence_logs=50,
    )
    client = distributed.Client(cluster)
    # Warm the workers (imports), so the cases measure running, not importing.
    client.run(lambda: __import__("providerkit_nb.conversation.many") and __import__(stub_module.__name__))
    yield client
    client.close()
    cluster.close()
