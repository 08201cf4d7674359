"""Fixtures of part 2: files written by the real libraries (scripts/make_transcript_fixtures/part2.py).

Expectations are derived in each test from the raw file (its JSON, its SQLite rows), never from
what the importer returned before.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[2]
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def need(module: str) -> None:
    """The interop tests need the real framework: skip locally without it, fail under CI."""
    if importlib.util.find_spec(module) is None:
        reason = f"{module} is not installed (pip install -e '.[interop]')"
        if IN_CI:
            pytest.fail(f"CI=true but {reason}", pytrace=False)
        pytest.skip(reason)


@pytest.fixture
def fixture_copy(tmp_path: Path) -> Any:
    """A copy of a fixture in tmp_path, for variants cut in the test."""

    def copy(name: str) -> Path:
        dst = tmp_path / name
        shutil.copy(FIXTURES / name, dst)
        return dst

    return copy


def pg_dsn() -> str:
    from store.conftest import (
        require_pg,  # the suite's one PostgreSQL gate (skip locally, fail in CI)
    )

    return require_pg()


__all__ = ["FIXTURES", "REPO", "need", "pg_dsn", "os"]
