"""Every Python example of docs/ and README.md runs, in page order, and prints what the page shows.

The examples of one page share a namespace and a fresh working folder, as the cells of a
notebook do; a test of one example first runs the ones above it. An ``output`` fence after an
example is compared with what it printed (``...`` matches any text, whitespace runs count as one
space: doctest's ELLIPSIS and NORMALIZE_WHITESPACE). An example marked ``test="local-model"``
talks to a hosted provider in the docs (it needs a key); here it runs against the real local
model: ``pk.openai`` and the other provider constructors hand back the local server's provider
for the length of the example (the only stand-in; the model, server and HTTP are real). One
marked ``test="postgres"`` needs the server of PROVIDERKIT_PG_DSN. Both skip locally when what
they need is missing and fail under CI=true (tests/conftest.py ``unavailable``).
"""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, load_script, unavailable

examples_mod = load_script(REPO / "docs" / ".hooks" / "examples.py")

PAGES = sorted((REPO / "docs").rglob("*.md")) + [REPO / "README.md"]
EXAMPLES = [ex for page in PAGES for ex in examples_mod.find_examples(page)]
CONSTRUCTORS = ("openai", "responses", "anthropic", "gemini", "preset")


class _Page:
    """One page's namespace and working folder, and how far its examples have run."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.folder = tempfile.TemporaryDirectory(prefix="pk-docs-")
        self.namespace: dict[str, Any] = {"__name__": "__main__"}
        self.done = 0
        self.failed: str | None = None


_pages: dict[Path, _Page] = {}


@pytest.fixture(scope="module", autouse=True)
def _close_pages():
    yield
    for page in _pages.values():
        page.folder.cleanup()
    _pages.clear()


def _local_provider_factory() -> Any:
    from providerkit_nb.local import missing, shared_server

    reason = missing()
    if reason:
        unavailable(reason)
    server = shared_server()

    def make(*args: Any, **kwargs: Any) -> Any:
        return server.provider()

    return make


def _run(example: Any, page: _Page, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run one example in its page's namespace and folder; what it printed."""
    if example.mode == "postgres" and not os.environ.get("PROVIDERKIT_PG_DSN"):
        unavailable("this example needs PostgreSQL: set PROVIDERKIT_PG_DSN (scripts/pg-test-server.sh start)")
    out = io.StringIO()
    with monkeypatch.context() as patch:
        patch.chdir(page.folder.name)
        if example.mode == "local-model":
            import providerkit_nb as pk

            make = _local_provider_factory()
            for name in CONSTRUCTORS:
                patch.setattr(pk, name, make, raising=False)
        code = compile(example.code, f"{example.id(REPO)}", "exec")
        with contextlib.redirect_stdout(out):
            exec(code, page.namespace)
    return out.getvalue()


def _check_output(example: Any, printed: str) -> None:
    checker = doctest.OutputChecker()
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    want = example.output.strip() + "\n"
    got = printed.strip() + "\n"
    if not checker.check_output(want, got, flags):
        pytest.fail(
            f"{example.id(REPO)} printed something else than the page shows:\n"
            + checker.output_difference(doctest.Example("", want), got, flags),
            pytrace=False,
        )


@pytest.mark.parametrize("example", EXAMPLES, ids=[ex.id(REPO) for ex in EXAMPLES])
def test_example_runs_and_prints_what_the_page_shows(example: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    page = _pages.setdefault(example.path, _Page(example.path))
    siblings = [ex for ex in EXAMPLES if ex.path == example.path]
    index = next(i for i, ex in enumerate(siblings) if ex.line == example.line)
    while page.done < index:  # the examples above it, as a reader runs them
        earlier = siblings[page.done]
        if page.failed:
            pytest.fail(f"an earlier example of this page failed: {page.failed}", pytrace=False)
        try:
            _run(earlier, page, monkeypatch)
        except BaseException:
            page.failed = earlier.id(REPO)
            raise
        page.done += 1
    if page.done == index:
        try:
            printed = _run(example, page, monkeypatch)
        except BaseException:
            page.failed = example.id(REPO)
            page.done += 1
            raise
        page.done += 1
        if example.output is not None:
            _check_output(example, printed)


def test_the_examples_are_found():
    """The collector sees the examples the pages hold (a fence it misses is never tested)."""
    fences = sum(page.read_text(encoding="utf-8").count("\n```python") for page in PAGES)
    assert len(EXAMPLES) == fences
    assert len(EXAMPLES) >= 40
