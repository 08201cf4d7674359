"""Saved notebooks show the findings without a kernel: the notebooks are executed in a real kernel
(nbconvert), exported to HTML, and opened from disk in Chromium with every network request
refused. The views' rich display carries static HTML next to the widget, so the exported page
shows the findings and the cards; ``show_frame`` brings itables' script from the package, so
its table turns interactive offline. Screenshots go to ``test-output/``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from .test_viewer_report import OUTPUT, REPO

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

NOTEBOOKS = REPO / "notebooks"


def _run(nb: Any, cwd: Path, *, widget_state: bool = False) -> Any:
    """Execute in a real kernel. Without the widget state, as JupyterLab saves a notebook by
    default ("Save Widget State Automatically" is off): a viewer without a kernel then has the
    static representations only."""
    from nbconvert.preprocessors import ExecutePreprocessor

    # the notebooks pick their model themselves (the local one, or the recordings): no key needed
    ExecutePreprocessor(timeout=300, kernel_name="python3", store_widget_state=widget_state).preprocess(
        nb, {"metadata": {"path": str(cwd)}}
    )
    return nb


def _export(nb: Any, out: Path) -> Path:
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_notebook_node(nb)
    out.write_text(body, encoding="utf-8")
    return out


def _open_offline(chromium: Any, path: Path) -> Any:
    pg = chromium.new_page(viewport={"width": 1400, "height": 900})
    refused: list[str] = []

    def deny(route: Any) -> None:
        refused.append(route.request.url)
        route.abort()

    pg.route("http://**/*", deny)
    pg.route("https://**/*", deny)
    pg.goto(path.as_uri())
    pg.wait_for_timeout(1500)
    pg.refused = refused
    return pg


@pytest.mark.parametrize("name", ["03-inspect-a-broken-transcript", "05-inspect-agent-transcripts"])
def test_an_exported_notebook_shows_the_findings(chromium: Any, tmp_path: Path, name: str) -> None:
    import nbformat

    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    page = _open_offline(chromium, _export(_run(nb, NOTEBOOKS), tmp_path / f"{name}.html"))
    try:
        # the HistoryView outputs (report.view) left their static cards in the file
        assert page.locator(".pk-findings").count() >= 1
        lost = page.locator(".pk-lostbox")
        assert lost.count() >= 1
        text = lost.first.inner_text()
        assert "lost: no result was stored for this call" in text
        assert "the model will read instead" in text
        assert page.evaluate("document.documentElement.scrollWidth") <= 1400
        lost.first.scroll_into_view_if_needed()
        OUTPUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUTPUT / f"exported-{name}.png"))
    finally:
        page.close()


def test_show_frame_works_offline_in_an_exported_notebook(chromium: Any, tmp_path: Path) -> None:
    import nbformat

    pytest.importorskip("itables", reason="show_frame's interactive table needs itables (the notebook extra)")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import pandas as pd\nimport providerkit_nb as pk\n"
            "df = pd.DataFrame({'tool': ['read_file', 'write_file'] * 30, 'n': range(60)})\npk.show_frame(df)"
        )
    ]
    page = _open_offline(chromium, _export(_run(nb, tmp_path), tmp_path / "frame.html"))
    try:
        page.wait_for_selector("table.dataTable", timeout=10_000)
        assert page.locator(".dt-search input, .dataTables_filter input").count() >= 1  # interactive
        OUTPUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUTPUT / "exported-show-frame.png"))
        # nbconvert's own template asks for require.js and MathJax (refused, harmless); the table
        # asked for nothing
        assert not [u for u in page.refused if "itables" in u or "unpkg" in u], page.refused
    finally:
        page.close()


def test_the_crash_lessons_show_what_was_lost(chromium: Any, tmp_path: Path) -> None:
    """Notebook 02, exported: each break drawn as a timeline, what it lost with its exact text (the
    cut stream's partial answer, the file the killed tool had half written, read back from disk),
    and the two repair texts side by side."""
    import nbformat

    nb = nbformat.read(NOTEBOOKS / "02-crash-and-resume.ipynb", as_version=4)
    page = _open_offline(chromium, _export(_run(nb, NOTEBOOKS), tmp_path / "02.html"))
    try:
        assert page.locator(".pk-tl").count() >= 5  # one timeline per lesson
        assert page.locator(".pk-s-crash").count() >= 4
        text = page.inner_text("body")
        # the child wrote the first half of "# Notes\nThe README says hello.\n" before SIGKILL
        assert "half written by the killed tool" in text and "# Notes\nThe REA\n" in text + "\n"
        assert "The README s" in text  # the cut stream's first two chunks, never saved
        texts = page.locator(".pk-texts")
        assert texts.count() == 1
        both = texts.inner_text()
        assert "safe to call again" in both and "may have partly run" in both
        assert page.evaluate("document.documentElement.scrollWidth") <= 1400
        kill = page.locator(".pk-tl").nth(3)
        kill.scroll_into_view_if_needed()
        OUTPUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUTPUT / "exported-02-crash-and-resume.png"))
    finally:
        page.close()


def test_nbconvert_with_its_default_settings_shows_the_findings_offline(chromium: Any, tmp_path: Path) -> None:
    """``jupyter nbconvert --execute --to html`` as a person types it: the widget state is saved
    (nbconvert's default), so its page renders each widget through a script from a CDN, which
    offline never comes. The view's static cards are their own output next to the widget, so
    they show anyway (and the widget hides them where it does render)."""
    import shutil
    import subprocess
    import sys

    work = tmp_path / "nb"
    shutil.copytree(NOTEBOOKS / "transcripts", work / "transcripts")
    (tmp_path / "cassettes").mkdir()  # the notebook replays its answers from ../cassettes/notebooks.yaml
    shutil.copy(REPO / "cassettes" / "notebooks.yaml", tmp_path / "cassettes")
    shutil.copy(NOTEBOOKS / "03-inspect-a-broken-transcript.ipynb", work / "03.ipynb")
    jupyter = Path(sys.executable).with_name("jupyter")
    done = subprocess.run(
        [str(jupyter), "nbconvert", "--execute", "--to", "html", "03.ipynb"],
        cwd=work, capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "application/vnd.jupyter.widget-state+json" in (work / "03.html").read_text(encoding="utf-8")
    page = _open_offline(chromium, work / "03.html")
    try:
        lost = page.locator(".pk-lostbox")
        assert lost.count() >= 1
        assert lost.first.is_visible()
        text = lost.first.inner_text()
        assert "lost: no result was stored for this call" in text
        assert "the model will read instead" in text
        lost.first.scroll_into_view_if_needed()
        OUTPUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUTPUT / "exported-default-nbconvert-03.png"))
    finally:
        page.close()
