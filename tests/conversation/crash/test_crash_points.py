"""Crash at every point: the explorer of explore.py on each wire and each store.

The default run explores a deterministic sample of each combination's points (spread over the
run and over every kind of point, a different slice for each combination); ``--soak`` explores
every point. Each test prints its counts; a violation fails it, named with its point.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest

from .explore import Explorer, Report, choose
from .wires import WIRES

SAMPLE = 14  # points per combination in the default run (16 combinations)
STORES = ("sqlite-normal", "sqlite-full", "jsonl", pytest.param("postgres", marks=pytest.mark.postgres))


COMBOS = list(itertools.product(WIRES, ["sqlite-normal", "sqlite-full", "jsonl", "postgres"]))


def _explore(wire: str, kind: str, budget: int | None, explorer: Callable[[str, str], Explorer]) -> Report:
    ex = explorer(wire, kind)
    report = ex.explore(choose(ex.points, budget, COMBOS.index((wire, kind))))
    print("\n" + report.line())
    return report


@pytest.mark.parametrize("kind", STORES)
@pytest.mark.parametrize("wire", WIRES)
def test_every_crash_point_sampled(wire: str, kind: str, explorer: Callable[[str, str], Explorer]) -> None:
    report = _explore(wire, kind, SAMPLE, explorer)
    assert report.explored >= SAMPLE - 2
    assert report.violations == [], "\n".join(report.violations)


@pytest.mark.soak
@pytest.mark.parametrize("kind", STORES)
@pytest.mark.parametrize("wire", WIRES)
def test_every_crash_point(wire: str, kind: str, explorer: Callable[[str, str], Explorer]) -> None:
    report = _explore(wire, kind, None, explorer)
    assert report.explored == report.points
    assert report.violations == [], "\n".join(report.violations)
