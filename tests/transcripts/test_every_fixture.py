"""Done-when, over every part-1 fixture and real sample: it loads, each dangling call is reported
under its id and answered by the repair, and the repaired history passes ``validate_history``
for the wire it came from (calls waiting for a person are the one thing left open)."""

from __future__ import annotations

from pathlib import Path

import pytest

import providerkit_nb as pk
from providerkit_nb.core.repair import analyze

from .conftest import FIXTURES

PART1 = ("claude_code", "codex", "openai_agents", "vercel_ui")


def _sources() -> list[tuple[Path, str | None]]:
    """Each part-1 fixture, once per thread it holds."""
    out: list[tuple[Path, str | None]] = []
    for p in sorted(FIXTURES.iterdir()):
        if not p.name.startswith(PART1):
            continue
        report = pk.inspect(p)
        out += [(p, t) for t in report.threads] if report.needs_thread else [(p, None)]
    return out


def _check(path: Path, thread: str | None) -> None:
    report = pk.inspect(path, thread=thread)
    assert report.format in PART1
    a = analyze(report.messages)
    dangling = [report.messages[i].tool_calls[k].id for i, ks in a.dangling.items() for k in ks]  # type: ignore[union-attr,index]
    waiting = set(report.pending_approval)
    assert sorted(r.original_id for r in report.interrupted) == sorted(d for d in dangling if d not in waiting)
    for d in dangling:
        if d not in waiting:
            assert any(d in p.message for p in report.problems if p.rule == "dangling_call")
    left = pk.validate_history(report.repaired.messages, wire=report.wire)
    assert all(any(w in p.message or w in (p.provider_wording or "") for w in waiting) for p in left), left


@pytest.mark.parametrize(("path", "thread"), _sources(), ids=lambda x: getattr(x, "name", str(x)))
def test_every_fixture_repairs_to_valid_for_its_wire(path, thread):
    _check(path, thread)


def test_every_real_sample_repairs_to_valid_for_its_wire(upstream_transcripts_dir):
    files = sorted(upstream_transcripts_dir.glob("*/*.jsonl"))
    assert len(files) >= 4
    for path in files:
        _check(path, None)
