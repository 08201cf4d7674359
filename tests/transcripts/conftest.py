"""Shared helpers for the part-1 transcript tests: where the fixtures are, raw JSONL reading
(independent of the code under test), and cutting lines out of a copy."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"


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


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES
