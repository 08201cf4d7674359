"""Suite-wide options and paths. Area fixtures live in each test folder's own conftest."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
UPSTREAM = Path(os.environ.get("PROVIDERKIT_UPSTREAM_CASSETTES", REPO.parent / "shared" / "cassettes" / "upstream"))
OWN_CASSETTES = REPO / "cassettes"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--soak", action="store_true", help="run the long crash and load soaks")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "soak: long-running trials, enabled with --soak")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--soak"):
        return
    skip = pytest.mark.skip(reason="long soak: run with --soak")
    for item in items:
        if "soak" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def upstream_dir() -> Path:
    """The real recordings, read in place (never copied into this repository)."""
    if not UPSTREAM.is_dir():
        pytest.skip(f"upstream recordings not found at {UPSTREAM} (set PROVIDERKIT_UPSTREAM_CASSETTES)")
    return UPSTREAM
