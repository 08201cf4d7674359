"""Suite-wide options and paths. Area fixtures live in each test folder's own conftest."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import pytest

REPO = Path(__file__).resolve().parent.parent
UPSTREAM = Path(os.environ.get("PROVIDERKIT_UPSTREAM_CASSETTES", REPO.parent / "shared" / "cassettes" / "upstream"))
UPSTREAM_TRANSCRIPTS = Path(
    os.environ.get(
        "PROVIDERKIT_UPSTREAM_TRANSCRIPTS", REPO.parent / "shared" / "transcripts" / "upstream"
    )
)
OWN_CASSETTES = REPO / "cassettes"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def load_script(path: Path) -> Any:
    """A script of the repository (scripts/...) as a module, without putting its folder on sys.path."""
    spec = importlib.util.spec_from_file_location(f"script_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def unavailable(reason: str) -> NoReturn:
    """Skip (locally) or fail (under CI=true, where .ci/run installs and starts everything the
    tiers need) when something a test needs is not on this machine; ``reason`` says what to do."""
    if IN_CI:
        pytest.fail(f"{reason} (CI=true: it must be present)", pytrace=False)
    pytest.skip(reason)


def require_dir(path: Path, what: str, variable: str) -> Path:
    """Skip (locally) or fail (under CI=true) when material kept outside the repository is missing."""
    if path.is_dir():
        return path
    unavailable(f"{what} not found at {path}: put them there or set {variable}")


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


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """``@pytest.mark.upstream``: the test reads the upstream recordings; ``local_model``: it
    talks to the real local model (the ``local`` extra). Runs before any other skip (an empty
    parameter set included), so what is missing fails under CI=true."""
    if item.get_closest_marker("upstream") is not None:
        require_dir(UPSTREAM, "upstream recordings", "PROVIDERKIT_UPSTREAM_CASSETTES")
    if item.get_closest_marker("local_model") is not None:
        from providerkit_nb.local import missing

        reason = missing()
        if reason:
            unavailable(reason)


@pytest.fixture(scope="session")
def upstream_dir() -> Path:
    """The real recordings, read in place (never copied into this repository)."""
    return require_dir(UPSTREAM, "upstream recordings", "PROVIDERKIT_UPSTREAM_CASSETTES")


@pytest.fixture(scope="session")
def upstream_transcripts_dir() -> Path:
    """Real transcript files of other tools, read in place (never copied into this repository)."""
    return require_dir(
        UPSTREAM_TRANSCRIPTS, "upstream transcripts", "PROVIDERKIT_UPSTREAM_TRANSCRIPTS"
    )


@pytest.fixture(params=["orjson", "stdlib"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """JSON read with orjson (the ``fast-json`` extra) and without it: what is read, and every
    error, must be the same either way."""
    from providerkit_nb.core import fastjson

    if request.param == "orjson":
        orjson = pytest.importorskip("orjson", reason="the fast-json extra is not installed")
        monkeypatch.setattr(fastjson, "_orjson_loads", orjson.loads)
    else:
        monkeypatch.setattr(fastjson, "_orjson_loads", None)
    return str(request.param)
