"""Shared helpers for the transcript tests: where the fixtures are (one folder: files written by
the real tools and libraries, each labelled in ``fixtures/VERSIONS.json``), raw JSONL reading
(independent of the code under test), cutting lines out of a copy, and the interop gate.

Expectations are derived in each test from the raw file (its JSON, its SQLite rows), never from
what the importer returned before.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
REPO = Path(__file__).resolve().parents[2]
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def raw_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of a JSONL file that parses (the tests' own reading, not the library's)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def cut(src: Path, dst: Path, drop: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    """Copy a JSONL file leaving out the lines ``drop`` picks (the rest byte for byte);
    returns the lines left out."""
    kept: list[str] = []
    dropped: list[dict[str, Any]] = []
    for line in src.read_text(encoding="utf-8").splitlines(keepends=True):
        try:
            obj = json.loads(line)
        except ValueError:
            kept.append(line)
            continue
        if isinstance(obj, dict) and drop(obj):
            dropped.append(obj)
        else:
            kept.append(line)
    dst.write_text("".join(kept), encoding="utf-8")
    assert dropped, "the cut removed nothing: the sample changed"
    return dropped


def need(module: str) -> None:
    """The interop tests need the real framework: skip locally without it, fail under CI."""
    if importlib.util.find_spec(module) is None:
        reason = f"{module} is not installed (pip install -e '.[interop]')"
        if IN_CI:
            pytest.fail(f"CI=true but {reason}", pytrace=False)
        pytest.skip(reason)


def pg_dsn() -> str:
    from tests.store.conftest import (
        require_pg,  # the suite's one PostgreSQL gate (skip locally, fail in CI)
    )

    return require_pg()


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture
def fixture_copy(tmp_path: Path) -> Any:
    """A copy of a fixture in tmp_path, for variants cut in the test."""

    def copy(name: str) -> Path:
        dst = tmp_path / name
        shutil.copy(FIXTURES / name, dst)
        return dst

    return copy
