"""The approval box in a real JupyterLab (Debian's Chromium driven by Playwright): a person edits
the arguments, gets them wrong twice (not JSON, then not fitting the tool's schema), fixes them,
and the call runs with the fixed ones. Each wrong edit is refused in the box, never run."""

from __future__ import annotations

import pytest

from tests.notebook.browser.test_jupyterlab import (
    _RUN_CELL,
    OUTPUT,
    _notebook,
    _open_notebook,
    lab,  # noqa: F401  (a fixture)
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def _status_says(page, words: str) -> None:
    page.wait_for_function(
        "(w) => document.querySelector('.pk-approval .pk-approval-status').textContent.includes(w)",
        arg=words,
        timeout=30_000,
    )


def test_a_bad_edit_is_refused_in_the_box_and_the_fixed_one_runs(lab, tmp_path):  # noqa: F811
    from playwright.sync_api import sync_playwright

    _notebook(tmp_path / "nb" / "box.ipynb")  # cell 0 sets up write_file, cell 2 asks about a call of it
    OUTPUT.mkdir(exist_ok=True)
    shot = OUTPUT / "approval-box-refuses-a-bad-edit.png"
    with sync_playwright() as p:
        ctx, page = _open_notebook(p, tmp_path, lab, "box.ipynb")
        try:
            page.evaluate(_RUN_CELL, 0)
            page.wait_for_function(
                "window.jupyterapp.shell.currentWidget.content.widgets[0].model.executionCount !== null",
                timeout=120_000,
            )
            page.evaluate(_RUN_CELL, 2)
            box = page.locator(".pk-approval")
            box.locator(".widget-button", has_text="Edit arguments").click()
            editor = box.locator("textarea")
            run = box.locator(".widget-button", has_text="Run with these arguments")

            editor.fill('{"path": "c.txt"')  # not JSON
            run.click()
            _status_says(page, "not JSON")

            editor.fill('{"path": 5}')  # JSON, but not what write_file takes
            run.click()
            _status_says(page, "do not fit the input schema of write_file")
            problems = box.locator(".pk-approval-edit-problems").inner_text()
            box.scroll_into_view_if_needed()
            page.screenshot(path=str(shot), full_page=False)

            editor.fill('{"path": "c.txt"}')  # fixed: the third edit runs
            run.click()
            result = page.locator(".jp-OutputArea-output", has_text="RESULT:")
            result.wait_for(timeout=60_000)
            printed = result.inner_text()
        finally:
            ctx.close()
    assert "$.path: expected string, got integer" in problems, problems
    # the fixed edit ran (and only it: the model never read a refusal it did not cause)
    assert "wrote c.txt" in printed and "done" in printed, printed
    assert "invalid arguments" not in printed and "b.txt" in printed  # the model's own arguments, kept
    assert shot.exists() and shot.stat().st_size > 10_000
