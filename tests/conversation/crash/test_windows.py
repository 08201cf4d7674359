"""The windows the crash explorer found, each explored at every one of its points.

A window is a stretch of the run where a step that several writes make up was seen in part
after a crash, and the resumed model was told something the store knew to be false:

1. the person's denial: its mark was committed before the result that says so; a crash in
   between told the model "may have partly run" for a call that never started;
2. the compaction: its summary and the copies it carries were saved one by one; a crash after
   the summary left calls in the live history without the results saved before it, and the
   model was told they were interrupted (read-only) or "may have partly run";
3. the "asking" marks of a calling message were committed before the message itself.

Each is now one step (``store.save_step``: one transaction, or a closing line in a JsonlStore).
These tests run every point of each window on the stores that write steps differently; each
failed before the fix.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from .explore import Explorer, Point

KINDS = ("sqlite-normal", "jsonl", pytest.param("postgres", marks=pytest.mark.postgres))


def _chunk_runs(points: list[Point]) -> list[tuple[int, int]]:
    """(first, last) point number of each run of stream chunks, one run per request."""
    runs: list[tuple[int, int]] = []
    for p in points:
        if p.kind == "chunk" and runs and runs[-1][1] == p.n - 1:
            runs[-1] = (runs[-1][0], p.n)
        elif p.kind == "chunk":
            runs.append((p.n, p.n))
    return runs


def _window(points: list[Point], start: int, stop: int) -> list[int]:
    chosen = [p.n for p in points if start <= p.n < stop and p.kind != "chunk"]
    assert chosen, f"no points between #{start} and #{stop}"
    return chosen


def _explore(kind: str, explorer: Callable[[str, str], Explorer], pick: Callable[[list[Point]], list[int]]) -> None:
    ex = explorer("openai_chat", kind)
    report = ex.explore(pick(ex.points))
    print("\n" + report.line())
    assert report.violations == [], "\n".join(report.violations)


@pytest.mark.parametrize("kind", KINDS)
def test_a_denial_is_saved_with_its_result(kind: str, explorer: Callable[[str, str], Explorer]) -> None:
    def pick(points: list[Point]) -> list[int]:
        answered = next(p.n for p in points if p.what == "answered call_delete")
        end = next(p.n for p in points if p.n > answered and p.kind == "store-after")
        return _window(points, answered + 1, end + 1)

    _explore(kind, explorer, pick)


@pytest.mark.parametrize("kind", KINDS)
def test_a_compaction_is_seen_whole_or_not_at_all(kind: str, explorer: Callable[[str, str], Explorer]) -> None:
    def pick(points: list[Point]) -> list[int]:
        runs = _chunk_runs(points)  # turn A, turn B, turn C, the summary, turn D
        assert len(runs) == 5, runs
        return _window(points, runs[3][1] + 1, runs[4][0])

    _explore(kind, explorer, pick)


@pytest.mark.parametrize("kind", KINDS)
def test_calls_waiting_for_approval_are_saved_with_their_message(
    kind: str, explorer: Callable[[str, str], Explorer]
) -> None:
    def pick(points: list[Point]) -> list[int]:
        runs = _chunk_runs(points)
        asked = next(p.n for p in points if p.what == "asked call_delete")
        return _window(points, runs[1][1] + 1, asked)

    _explore(kind, explorer, pick)
