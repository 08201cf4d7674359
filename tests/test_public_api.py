"""The public surface: what ``pk`` holds, what a type checker sees of it, and one error base."""

from __future__ import annotations

import ast
import importlib
import os
import pkgutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

import providerkit_nb as pk

ROOT = Path(__file__).resolve().parent.parent
INIT = ROOT / "providerkit_nb" / "__init__.py"


def _literal(tree: ast.Module, name: str) -> object:
    for node in tree.body:
        if isinstance(node, ast.AnnAssign | ast.Assign):
            target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0]
            if isinstance(target, ast.Name) and target.id == name and node.value is not None:
                return ast.literal_eval(node.value)
    raise AssertionError(f"{name} not found in {INIT}")


def _type_checking_names(tree: ast.Module) -> set[str]:
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            return {a.asname or a.name for stmt in node.body if isinstance(stmt, ast.ImportFrom) for a in stmt.names}
    raise AssertionError("no TYPE_CHECKING block")


def test_the_lazy_table_all_and_the_type_checking_imports_name_the_same_things():
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    lazy = _literal(tree, "_LAZY")
    assert isinstance(lazy, dict)
    assert sorted(lazy) == _literal(tree, "__all__") == sorted(pk.__all__)
    assert _type_checking_names(tree) == set(lazy)
    assert sorted(dir(pk)) == sorted(lazy)


def test_pk_is_short_and_every_name_resolves():
    assert 50 <= len(pk.__all__) <= 66
    for name in pk.__all__:
        assert getattr(pk, name) is not None, name
    assert pk.simulate.__name__ == "providerkit_nb.testing.simulate"
    assert callable(pk.export) and callable(pk.inspect)


@pytest.mark.parametrize(
    ("old", "home"),
    [
        ("dumps", "providerkit_nb.messages"),
        ("apply_compaction", "providerkit_nb.compaction"),
        ("Rate", "providerkit_nb.usage"),
        ("parse_json_answer", "providerkit_nb.structured"),
        ("TextDelta", "providerkit_nb.stream"),
        ("PostgresGate", "providerkit_nb.wrappers"),
        ("ConversationMaker", "providerkit_nb.conversation"),
        ("gate_frame", "providerkit_nb.notebook"),
        ("StoreCorruptError", "providerkit_nb.errors"),
    ],
)
def test_a_name_that_left_pk_still_resolves_with_a_warning_naming_its_home(old, home):
    with pytest.warns(DeprecationWarning, match=rf"pk\.{old} moved to {home}\.{old}"):
        value = getattr(pk, old)
    assert value is getattr(importlib.import_module(home), old)
    assert old not in pk.__all__


def test_every_error_the_library_defines_derives_from_pk_error():
    errors: list[type[BaseException]] = []
    for info in pkgutil.walk_packages([str(ROOT / "providerkit_nb")], "providerkit_nb."):
        if info.name.endswith("__main__"):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                module = importlib.import_module(info.name)
            except ImportError as exc:  # an optional extra that is not installed
                if "providerkit_nb" in str(exc):
                    raise
                continue
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Exception)
                and not issubclass(value, Warning)
                and value.__module__ == module.__name__
                and not value.__name__.startswith("_")
            ):
                errors.append(value)
    assert len(errors) >= 20
    outside = sorted(e.__qualname__ for e in errors if not issubclass(e, pk.Error))
    assert outside == []
    from providerkit_nb import errors as public

    exported = {getattr(public, n) for n in public.__all__ if isinstance(getattr(public, n), type)}
    internal = {"FrameError"}  # turned into ProviderError inside the wire's guard; never reaches a caller
    assert sorted(e.__qualname__ for e in set(errors) - exported if e.__name__ not in internal) == []


USER_SCRIPT = '''
import providerkit_nb as pk
from providerkit_nb.wrappers import create_gate


class Person:
    name: str

    @classmethod
    def model_json_schema(cls) -> dict[str, object]:
        return {"type": "object", "properties": {"name": {"type": "string"}}}


@pk.tool(read_only=True)
def read_file(path: str) -> str:
    """Read a file."""
    return path


provider = pk.openai(model="gpt-4o-mini", api_key="sk-test")
reveal_type(provider)
guarded = pk.with_retry(pk.with_watchdog(provider))
reveal_type(guarded)
reveal_type(create_gate(4))
tools = pk.ToolRegistry([read_file])
reveal_type(read_file)
store = pk.MemoryStore()
convo = pk.Conversation(store, "c", guarded, tools)
reveal_type(convo.send("hi"))
reveal_type(convo.send("hi", json=Person))
reveal_type(convo.send("hi", json=Person).value)
reveal_type(convo.interrupted)
reveal_type(pk.repair_history(store.load("c")))
reveal_type(pk.validate_history(store.load("c"), wire="anthropic"))
reveal_type(pk.inspect("session.jsonl"))
try:
    convo.resume()
except pk.Error as exc:
    reveal_type(exc)
'''


def test_a_user_script_under_mypy_strict_sees_no_any_from_the_library(tmp_path):
    """What a notebook user's script sees under ``mypy --strict --disallow-any-expr``: every
    name typed, no ``Any`` (before 1.0 every line below revealed ``Any``)."""
    script = tmp_path / "user_script.py"
    script.write_text(textwrap.dedent(USER_SCRIPT), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--disallow-any-expr", "--no-incremental",
         "--follow-imports=silent", "--cache-dir", str(tmp_path / "cache"), str(script)],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600,
    )
    notes = [line.split(": note: ", 1)[1] for line in out.stdout.splitlines() if ": note: " in line]
    assert notes == [
        'Revealed type is "providerkit_nb.providers.base.WireProvider"',
        'Revealed type is "providerkit_nb.providers.base.Provider"',
        'Revealed type is "providerkit_nb.wrappers.gate.Gate"',
        'Revealed type is "providerkit_nb.core.tools.Tool"',
        'Revealed type is "providerkit_nb.core.turn.Turn"',
        'Revealed type is "providerkit_nb.core.structured.JsonReply[user_script.Person]"',
        'Revealed type is "user_script.Person | None"',
        'Revealed type is "list[providerkit_nb.core.repair.InterruptedCall]"',
        'Revealed type is "providerkit_nb.core.repair.Repaired"',
        'Revealed type is "list[providerkit_nb.core.errors.Problem]"',
        'Revealed type is "providerkit_nb.notebook.inspection.Inspection"',
        'Revealed type is "providerkit_nb.core.errors.Error"',
    ], out.stdout + out.stderr
    errors = [line for line in out.stdout.splitlines() if ": error: " in line]
    assert errors == []


# --------------------------------------------------------------------------- the 1.0 renames still work


def _warns_once(match: str):
    return pytest.warns(DeprecationWarning, match=match)


def test_define_tool_is_read_only_still_works_with_a_warning_naming_read_only():
    with _warns_once(r"define_tool\(is_read_only=\) was renamed to define_tool\(read_only=\) in 1\.0"):
        t = pk.define_tool("look", "Look.", {"type": "object"}, lambda args: "seen", is_read_only=True)
    assert t.read_only is True
    with _warns_once(r"Tool\.is_read_only was renamed to Tool\.read_only"):
        assert t.is_read_only is True
    with pytest.raises(TypeError, match="both"):
        pk.define_tool("look", "Look.", {"type": "object"}, lambda args: "", is_read_only=True, read_only=False)
    with pytest.raises(TypeError, match="unexpected keyword argument 'read_olny'"):
        pk.define_tool("look", "Look.", {"type": "object"}, lambda args: "", read_olny=True)  # type: ignore[call-arg]


def test_usage_tracker_old_spellings_still_work_with_warnings():
    from providerkit_nb.usage import UsageTracker

    with _warns_once(r"UsageTracker\(max_usd=\) was renamed to UsageTracker\(budget_usd=\)"):
        tracker = UsageTracker(rate={"input": 1.0, "output": 2.0}, max_usd=0.5)
    assert tracker.budget_usd == 0.5
    tracker.add(_usage(1_000_000, 0))
    assert tracker.cost_usd == 1.0 and tracker.is_over_budget()
    with _warns_once(r"tracker\.cost_usd\(\) is a number since 1\.0: write tracker\.cost_usd"):
        assert tracker.cost_usd() == 1.0  # was "float is not callable"
    with _warns_once(r"UsageTracker\.cost was renamed to UsageTracker\.cost_usd"):
        assert tracker.cost == 1.0
    with _warns_once(r"UsageTracker\.savings was renamed to UsageTracker\.savings_usd"):
        assert tracker.savings == 0.0
    with _warns_once(r"UsageTracker\.cache_savings_usd\(\) was renamed to UsageTracker\.savings_usd"):
        assert tracker.cache_savings_usd() == 0.0
    with _warns_once(r"UsageTracker\.max_usd was renamed to UsageTracker\.budget_usd"):
        assert tracker.max_usd == 0.5
    with _warns_once(r"is_over_budget\(max_usd=\) was renamed to .*is_over_budget\(budget_usd=\)"):
        assert tracker.is_over_budget(max_usd=2.0) is False
    # still a number everywhere a number goes
    assert f"{tracker.cost_usd:.2f}" == "1.00" and tracker.cost_usd + 1 == 2.0
    assert tracker.to_dict()["cost_usd"] == 1.0 and isinstance(tracker.to_dict()["cost_usd"], float)


def _usage(input_tokens: int, output_tokens: int):
    from providerkit_nb.stream import Usage

    return Usage(input_tokens=input_tokens, output_tokens=output_tokens)


def test_pk_is_transient_still_works_with_a_warning_naming_err_is_transient():
    err = pk.ProviderError("p", "rate", "slow down")
    with _warns_once(r"pk\.is_transient\(x\) was replaced in 1\.0 by err\.is_transient"):
        is_transient = pk.is_transient
    assert is_transient(err) is True and is_transient("overload") is True
    assert is_transient(pk.ErrorKind.AUTH) is False
    assert "is_transient" not in pk.__all__


def test_the_version_is_the_changelogs_current_release():
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    first = next(line for line in changelog.splitlines() if line.startswith("## "))
    # "## 1.0.0 (unreleased)" -> a development release of 1.0.0
    number, _, state = first[3:].partition(" ")
    assert pk.__version__ == (f"{number}.dev0" if state == "(unreleased)" else number), (first, pk.__version__)


def test_every_pk_name_the_changelog_promises_exists():
    """A name written ``pk.X`` in CHANGELOG.md's current section resolves (now, or as a moved
    name with its warning), or is one of the old spellings the changelog says are gone."""
    import re

    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    current = changelog.split("\n## ")[1]
    named = set(re.findall(r"`pk\.([A-Za-z_]\w*)", current))
    gone = {"is_backup_eligible"}  # "is gone (with_backup_models(kinds=) decides)"
    named.discard("NAME")  # "the old `pk.NAME` still resolves": a placeholder
    missing = []
    for name in sorted(named - gone):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            if not hasattr(pk, name):
                missing.append(name)
    assert missing == []


def _modules_loaded_by(code: str) -> list[str]:
    """The library's modules a fresh interpreter has loaded after running ``code``."""
    probe = code + "\nimport sys\nprint('\\n'.join(m for m in sys.modules if m.split('.')[0] == 'providerkit_nb'))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_importing_the_errors_loads_at_most_ten_of_the_librarys_modules():
    """Catching a library error must not pull in stores, readers or HTTP clients."""
    loaded = _modules_loaded_by("import providerkit_nb.errors")
    assert len(loaded) <= 10, loaded
    assert not [m for m in loaded if m.startswith(("providerkit_nb.store", "providerkit_nb.transport", "providerkit_nb.transcripts"))]
    assert len(_modules_loaded_by("import providerkit_nb as pk\npk.Error")) <= 5


def test_classify_is_still_named_by_the_errors_home():
    import providerkit_nb.errors as errors
    from providerkit_nb.transport.classify import classify

    assert errors.classify is classify


def test_one_class_per_concept_whatever_name_reaches_it():
    """The store layer's, the conversation layer's and pk's names are the same objects."""
    import providerkit_nb.conversation as conversation
    import providerkit_nb.errors as errors
    import providerkit_nb.store as store
    from providerkit_nb.conversation.facade import Conversation

    assert conversation.Conversation is pk.Conversation is Conversation
    assert store.NotebookStore is pk.NotebookStore
    assert errors.StoreError is store.StoreError
    assert errors.StoreError.__module__ == "providerkit_nb.errors"
    assert pk.Conversation.__module__ == "providerkit_nb.conversation"
    assert callable(pk.Conversation.view)  # the notebook's view is the one class's method
