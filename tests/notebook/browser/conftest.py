"""Chromium for the browser tests: Debian's, driven by Playwright, one per module."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def _require_browser() -> None:
    missing = []
    if not Path(CHROMIUM).exists():
        missing.append("chromium (apt-get install chromium)")
    try:
        import playwright  # noqa: F401
    except ImportError:
        missing.append("playwright (pip install playwright)")
    if missing:
        reason = "real-browser test needs " + ", ".join(missing)
        if os.environ.get("CI") == "true":
            pytest.fail(reason + "; .ci/run should have installed it")
        pytest.skip(reason)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    _require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield b
        finally:
            b.close()


