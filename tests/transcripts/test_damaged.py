"""Damaged files: fields replaced by values of the wrong type, keys dropped, lines torn. Loading
one either works or raises this library's ``TranscriptError`` naming the file, never a raw
KeyError/TypeError; and whatever loads is well-typed enough to validate, repair and render."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

import providerkit_nb as pk
from providerkit_nb.transcripts import TranscriptError

from .conftest import FIXTURES

JUNK: list[Any] = [None, 0, -1.5, True, "", "x", [], [1], {}, {"type": None}, {"type": "text"}]
TEXT_FIXTURES = sorted(p for p in FIXTURES.iterdir() if p.suffix in (".json", ".jsonl") and p.name != "VERSIONS.json")
FORMAT = {"claude": "claude_code", "codex": "codex", "vercel": "vercel_ui", "langchain": "langchain", "pydantic": "pydantic_ai"}


def _mutate(o: Any, rng: random.Random, p: float) -> Any:
    if isinstance(o, dict):
        return {k: (rng.choice(JUNK) if rng.random() < p else _mutate(v, rng, p))
                for k, v in o.items() if rng.random() > p / 3}
    if isinstance(o, list):
        return [rng.choice(JUNK) if rng.random() < p else _mutate(v, rng, p) for v in o]
    return o


def _damage(src: Path, dst: Path, seed: int) -> None:
    rng = random.Random(seed)
    if src.suffix == ".jsonl":
        lines = [json.loads(x) for x in src.read_text().splitlines()]
        text = "".join(json.dumps(_mutate(x, rng, 0.08)) + "\n" for x in lines)
        if seed % 3 == 0:  # and tear the last line, as a crash mid-write does
            text = text[: len(text) - rng.randint(2, 40)]
        dst.write_text(text)
    else:
        dst.write_text(json.dumps(_mutate(json.loads(src.read_text()), rng, 0.08)))


@pytest.mark.parametrize("src", TEXT_FIXTURES, ids=lambda p: p.name)
def test_a_damaged_file_loads_or_says_what_is_wrong(tmp_path, src):
    fmt = FORMAT[src.name.split("_")[0]]
    loaded = refused = 0
    for seed in range(25):
        path = tmp_path / f"{seed}-{src.name}"
        _damage(src, path, seed)
        try:
            report = pk.inspect(path, format=fmt)
        except TranscriptError as exc:
            assert str(path) in str(exc)
            refused += 1
            continue
        report.to_json()
        repr(report)
        assert report.report_html().count("<script") == 1  # the page's own renderer only (its rows are in the page)
        assert pk.validate_history(report.repaired.messages) == [] or report.pending_approval
        loaded += 1
    assert loaded + refused == 25
