"""A NotebookStore opened without a path: beside the notebook the kernel runs (JupyterLab, VS
Code), else the working directory. One class, whichever name it is reached by."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from providerkit_nb.store import NotebookStore

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
        "from providerkit_nb.store import NotebookStore\n"
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


def test_one_notebook_store_class_by_every_name():
    """The store layer's class is the one ``pk`` hands out; the old notebook spelling is the same."""
    import providerkit_nb as pk
    import providerkit_nb.notebook.store as old_home
    import providerkit_nb.store as store

    assert store.NotebookStore is pk.NotebookStore
    assert old_home.NotebookStore is pk.NotebookStore
    assert pk.NotebookStore.__module__ == "providerkit_nb.store"


def test_a_script_opens_in_the_working_directory_by_the_store_layer_name(tmp_path):
    """No kernel, no notebook variables: the working directory, with the reason in path_source."""
    env = {k: v for k, v in os.environ.items() if k != "JPY_SESSION_NAME"}
    env["PYTHONPATH"] = str(REPO)
    code = "from providerkit_nb.store import NotebookStore\ns = NotebookStore(); print(s.path); print(s.path_source); s.close()\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    path, how = out.stdout.splitlines()
    assert Path(path) == tmp_path / "providerkit.sqlite"
    assert "working directory" in how


def test_a_call_whose_arguments_are_not_json_text_is_refused_before_it_is_saved(tmp_path):
    """Saved, a dict of arguments would come back as a corrupt row, and the conversation could
    not be loaded again; the save refuses it and says what to pass."""
    from providerkit_nb.errors import MessageFormatError
    from providerkit_nb.messages import AssistantMessage, ToolCall

    with NotebookStore(tmp_path / "s.sqlite") as store:
        with pytest.raises(MessageFormatError, match=r"json\.dumps"):
            store.save("c", AssistantMessage("", tool_calls=[ToolCall("a", "t", {"x": 1})]))  # type: ignore[arg-type]  # the mistake under test
        assert store.load("c") == []
