"""The package's type check passes whichever optional extras are installed.

mypy runs with ``--no-site-packages``: every installed library is hidden, as on a machine with
none of the extras (fast-json's orjson, postgres' psycopg, the notebook's IPython...). What may
then be missing is only what the package itself depends on; an optional library that mypy
cannot find must not be an error (the pyproject overrides say so)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the runtime dependencies in pyproject.toml and what they import themselves
RUNTIME = {"httpx", "httpcore", "requests", "urllib3", "tenacity", "msgpack", "markdown_it", "pygments"}
_MISSING = re.compile(r'error: (?:Cannot find implementation or library stub for module named|'
                      r'Library stubs not installed for) "([^"]+)"')


def test_mypy_needs_no_optional_extra(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-site-packages", "--cache-dir", str(tmp_path / "cache")],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    out = run.stdout + run.stderr
    assert "Found" in out or "Success" in out, out[-2000:]
    missing = {m.split(".")[0] for m in _MISSING.findall(out)}
    assert missing, "mypy found every library with site-packages hidden: the test no longer tests"
    assert missing <= RUNTIME, f"optional libraries missing for mypy: {sorted(missing - RUNTIME)}"


def test_mypy_reports_a_misspelt_pk_name(tmp_path: Path) -> None:
    """``pk``'s module ``__getattr__`` (the lazy names and the moved ones) is hidden from a type
    checker, so a typo is an error under mypy, not an ``Any`` that passes ``--strict``."""
    script = tmp_path / "typo.py"
    script.write_text(
        "import providerkit_nb as pk\n"
        "convo = pk.Conversaton\n"  # the typo
        "ok = pk.Conversation\n"
        "moved = pk.FilePart\n",  # moved in 1.0: it works, with a warning, but a checker says so
        encoding="utf-8",
    )
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--follow-imports=silent",
         "--cache-dir", str(tmp_path / "cache"), str(script)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
    )
    errors = [line.split(": error: ", 1)[1] for line in run.stdout.splitlines() if ": error: " in line]
    assert errors == [
        'Module has no attribute "Conversaton"; maybe "Conversation"?  [attr-defined]',
        'Module has no attribute "FilePart"  [attr-defined]',
    ], run.stdout + run.stderr
