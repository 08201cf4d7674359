"""pk.NotebookStore without a path: next to the notebook the kernel runs (JupyterLab, VS Code),
else the working directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from providerkit_nb.notebook.store import NotebookStore

REPO = Path(__file__).resolve().parents[2]


def test_default_path_in_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    with NotebookStore() as s:
        assert s.path == tmp_path / "providerkit.sqlite"
        assert str(s.path) in repr(s)
        assert "working directory" in s.path_source
    assert (tmp_path / "providerkit.sqlite").exists()


def test_default_path_next_to_jupyterlab_notebook(tmp_path, monkeypatch):
    nbdir = tmp_path / "work"
    nbdir.mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JPY_SESSION_NAME", str(nbdir / "analysis.ipynb"))
    with NotebookStore() as s:
        assert s.path == nbdir / "analysis.providerkit.sqlite"
        assert "JPY_SESSION_NAME" in s.path_source
        assert str(s.path) in repr(s)


def test_default_path_relative_session_name_uses_kernel_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JPY_SESSION_NAME", "sub/dir/Report 1.ipynb")
    with NotebookStore() as s:
        assert s.path == tmp_path / "Report 1.providerkit.sqlite"


def test_default_path_next_to_vscode_notebook(tmp_path):
    """A real IPython shell in a child process, with the global VS Code sets."""
    nb = tmp_path / "deep" / "vs.ipynb"
    nb.parent.mkdir()
    code = (
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "sh = InteractiveShell.instance()\n"
        f"sh.user_ns['__vsc_ipynb_file__'] = {str(nb)!r}\n"
        "from providerkit_nb.notebook.store import NotebookStore\n"
        "s = NotebookStore(); print(s.path); print(s.path_source); s.close()\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "JPY_SESSION_NAME"}
    env["PYTHONPATH"] = str(REPO)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    path, how = out.stdout.splitlines()
    assert path == str(nb.parent / "vs.providerkit.sqlite")
    assert "VS Code" in how
