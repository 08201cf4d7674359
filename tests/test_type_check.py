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


def _strict_errors(tmp_path: Path, source: str) -> list[str]:
    script = tmp_path / "user_dicts.py"
    script.write_text(source, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--follow-imports=silent",
         "--cache-dir", str(tmp_path / "cache"), str(script)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
    )
    assert "Found" in run.stdout or "Success" in run.stdout, run.stdout + run.stderr
    return [line.split(": error: ", 1)[1] for line in run.stdout.splitlines() if ": error: " in line]


def test_message_dicts_a_user_passes_are_typed_as_the_canonical_json(tmp_path: Path) -> None:
    """Where a message is taken, a pasted dict is checked against the canonical JSON of the
    design (a bare ``dict`` once let any misspelling through): right shapes pass ``--strict``,
    a misspelt role or a field of the wrong type is an error that names it."""
    good = (
        "import providerkit_nb as pk\n"
        "store = pk.MemoryStore()\n"
        "store.save('c', {'role': 'user', 'content': 'hi'})\n"
        "store.save('c', {'role': 'assistant', 'content': '', 'tool_calls': "
        "[{'id': 'c1', 'name': 'look', 'arguments': '{}'}]})\n"
        "store.save('c', {'role': 'tool', 'tool_call_id': 'c1', 'name': 'look', 'content': 'ok'})\n"
        "store.save_step('c', [{'role': 'system', 'content': 'terse'}, "
        "{'role': 'user', 'content': [{'type': 'text', 'text': 'this?'}]}])\n"
        "def ask(p: pk.Provider) -> pk.Turn:\n"
        "    return p.complete([{'role': 'user', 'content': 'hi'}])\n"
    )
    assert _strict_errors(tmp_path, good) == []
    bad = (
        "import providerkit_nb as pk\n"
        "store = pk.MemoryStore()\n"
        "store.save('c', {'role': 'usr', 'content': 'hi'})\n"
        "store.save('c', {'role': 'tool', 'tool_call_id': 'c1', 'name': 'look', 'content': 3})\n"
    )
    errors = _strict_errors(tmp_path, bad)
    assert len(errors) == 2, errors
    assert all("arg-type" in e for e in errors), errors
