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
reveal_type(pk.create_gate(4))
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
        'Revealed type is "list[providerkit_nb.core.validate.Problem]"',
        'Revealed type is "providerkit_nb.notebook.inspection.Inspection"',
        'Revealed type is "providerkit_nb.core.errors.Error"',
    ], out.stdout + out.stderr
    errors = [line for line in out.stdout.splitlines() if ": error: " in line]
    assert errors == []
