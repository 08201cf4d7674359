"""The notebooks run top to bottom with no API key, and their saved outputs are what a run shows.

Each notebook is executed in a real kernel from the recordings (the mode ``make notebooks`` saves
them in: answers identical on every run), with no OPENAI_API_KEY and no IPython profile, and
compared with the notebook as committed through ``comparable`` of scripts/notebook_outputs.py
(the volatile parts masked; its docstring says what). A stale notebook fails with the command
that brings it up to date. The same notebooks with the real local model: tests/local.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import load_script

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))

pytestmark = pytest.mark.timeout(600)


OUTPUTS = load_script(REPO / "scripts" / "notebook_outputs.py")


def test_there_are_six_notebooks_and_the_readme_says_so() -> None:
    assert len(NOTEBOOKS) == 6
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "four notebooks" not in readme.lower() and "six notebooks" in readme.lower()
    for nb in NOTEBOOKS:
        assert f"notebooks/{nb.name}" in readme, f"the README does not name {nb.name}"


@pytest.fixture
def no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel inherits this environment: no key, no profile with a startup file."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("IPYTHONDIR", raising=False)
    monkeypatch.delenv("PK_RECORD_NOTEBOOKS", raising=False)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_a_notebook_runs_without_a_key_and_its_saved_outputs_are_current(path: Path, no_key: None) -> None:
    import nbformat

    saved = nbformat.read(path, as_version=4)
    code = [c for c in saved.cells if c.cell_type == "code"]
    assert code and all(c.get("outputs") or not c.source.strip() for c in code[:1]), (
        f"{path.name} is saved without outputs: run `make notebooks`"
    )
    fresh = OUTPUTS.execute(path)  # raises CellExecutionError when a cell fails
    assert OUTPUTS.comparable(fresh) == OUTPUTS.comparable(saved), (
        f"{path.name}: the saved outputs are not what a run shows now; run `make notebooks`"
    )
    if path.stem in ("01-quickstart", "03-inspect-a-broken-transcript", "04-many-conversations"):
        said = "".join(o.get("text", "") for c in fresh.cells for o in c.get("outputs", []) if o.get("name") == "stdout")
        assert "Model: the answers saved in notebooks.yaml, replayed" in said  # the notebook says what it chose


def test_the_comparison_sees_a_changed_output() -> None:
    """``comparable`` masks what varies between runs and nothing else: a changed word or count fails."""
    import nbformat

    nb = nbformat.read(REPO / "notebooks" / "04-many-conversations.ipynb", as_version=4)
    before = json.dumps(OUTPUTS.comparable(nb))
    cell = next(c for c in nb.cells if c.cell_type == "code" and c.get("outputs"))
    out = cell.outputs[-1]
    text = out.get("text") if "text" in out else out["data"]["text/plain"]
    changed = text.replace("0", "1", 1) if "0" in text else text + "x"
    if "text" in out:
        out["text"] = changed
    else:
        out["data"]["text/plain"] = changed
        out["data"].pop("text/html", None)
    assert json.dumps(OUTPUTS.comparable(nb)) != before
    # and what only says when and where it ran is masked
    assert OUTPUTS.mask("took 0.52 s in /tmp/tmpab12cd34/x.json, pid 4242, id 3f9a0c1e2d") == \
        OUTPUTS.mask("took 1.07 s in /tmp/tmpzz99yy00/x.json, pid 17, id 0a1b2c3d4e")
