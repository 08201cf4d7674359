"""The box of notebook 02 that shows what a lost call's model is told: all three texts, each named
with when it is used (the notebook's prose names the same three)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from providerkit_nb.viewer.timeline import repair_texts_html

# the exact texts, pinned here (not imported from the code under test)
READ_ONLY = "This call was interrupted before it returned. It changed nothing, so it is safe to call again."
MAY_HAVE_RUN = ("This call was interrupted before it returned. It may have partly run, so check its effect "
                "before calling it again.")
STOPPED = ("The user stopped this call while it was running, before it returned. What it did up to "
           "that moment is done and the rest did not run, so check its effect before calling it again.")
NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "02-crash-and-resume.ipynb"


def test_the_box_shows_the_three_texts_each_with_when() -> None:
    page = repair_texts_html()
    text = html.unescape(re.sub(r"<[^>]+>", " ", page.split("</style>")[-1]))
    text = " ".join(text.split())
    for told in (READ_ONLY, MAY_HAVE_RUN, STOPPED):
        assert told in text
    for name in ("read-only", "may have partly run", "stopped by the user"):
        assert name in text
    assert page.count('class="pk-told"') == 3


def test_notebook_02_names_the_three_texts() -> None:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    prose = " ".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "one of two texts" not in prose
    assert "one of three texts" in prose
    for name in ("**read-only**", "**may have partly run**", "**stopped by the user**"):
        assert name in prose
