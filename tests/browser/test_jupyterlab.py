"""A real browser: JupyterLab on 127.0.0.1, Debian's Chromium driven by Playwright.

It opens the crash-and-resume notebook, runs every cell, clicks Repair in the HistoryView,
waits for the repaired rows and saves a screenshot under ``test-output/``. Without Chromium the
test skips locally with the reason; under CI (CI=true) a missing browser is a failure, since
``.ci/run`` installs it.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
OUTPUT = REPO / "test-output"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def _require_browser() -> None:
    missing = []
    if not Path(CHROMIUM).exists():
        missing.append("chromium (apt-get install chromium)")
    for mod in ("playwright", "jupyterlab"):
        try:
            __import__(mod)
        except ImportError:
            missing.append(f"{mod} (pip install {mod})")
    if missing:
        reason = "real-browser test needs " + ", ".join(missing)
        if os.environ.get("CI") == "true":
            pytest.fail(reason + "; .ci/run should have installed it")
        pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    _require_browser()
    root = tmp_path / "nb"
    root.mkdir()
    # a copy, so autosave never writes outputs into the repository's notebooks
    shutil.copy(REPO / "notebooks" / "02-crash-and-resume.ipynb", root)
    config = tmp_path / "jupyter-config"
    (config / "labconfig").mkdir(parents=True)
    (config / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}})
    )
    port = _free_port()
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config), IPYTHONDIR=str(tmp_path / "ipython"))
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
            f"--port={port}", f"--ServerApp.root_dir={root}", "--IdentityProvider.token=",
            "--ServerApp.password=", "--LabApp.expose_app_in_browser=True",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("JupyterLab did not start") from None
                time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_repair_in_jupyterlab(lab, tmp_path):
    from playwright.sync_api import sync_playwright

    OUTPUT.mkdir(exist_ok=True)
    shot = OUTPUT / "crash-and-resume-repaired.png"
    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
            ],
            viewport={"width": 1400, "height": 1000},
        )
        try:
            page = ctx.new_page()
            page.goto(f"{lab}/lab/tree/02-crash-and-resume.ipynb")
            page.wait_for_function(
                "window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel?.connectionStatus === 'connected'",
                timeout=120_000,
            )
            page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
            repair = page.locator(".widget-button", has_text="Repair")
            repair.wait_for(timeout=120_000)
            repair.scroll_into_view_if_needed()
            repair.click()
            rows = page.locator("table.pk-history tr.pk-row[data-change]")
            rows.first.wait_for(timeout=60_000)
            kinds = sorted({rows.nth(i).get_attribute("data-change") for i in range(rows.count())})
            # the buttons at the top of the picture, the tables and the highlighted row under them
            repair.evaluate("el => el.scrollIntoView({block: 'start'})")
            page.wait_for_timeout(300)
            page.screenshot(path=str(shot), full_page=False)
        finally:
            ctx.close()
    assert kinds == ["added_interrupted_result"], kinds
    assert shot.exists() and shot.stat().st_size > 10_000
