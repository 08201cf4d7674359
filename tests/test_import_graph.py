"""The import graph of providerkit_nb: no cycle, and every import points down the layers.

Read from the source with ``ast`` (nothing is imported), counting imports inside functions
too: an import made at call time still ties the lower layer to the upper one. ``LAYERS`` is
the one place the layer order lives (bottom first); a new module must be
placed in it, or the coverage test fails and says where.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = "providerkit_nb"
SOURCE = Path(__file__).resolve().parent.parent / PACKAGE

# Bottom first. A module belongs to the first row whose prefix matches it (longest prefix wins);
# a prefix names a module or a package and everything under it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core", ("core",)),
    # each wire's shape on paper: conversion, options, rules (pure: no transport, no network)
    ("wire", ("wire",)),
    ("transport", ("transport",)),
    ("providers", ("providers",)),
    ("wrappers", ("wrappers",)),
    ("store", ("store",)),
    ("mcp", ("mcp",)),
    ("transcripts", ("transcripts",)),
    ("viewer", ("viewer",)),
    # what the notebook's faces need of a conversation: the approval questions, the text display
    ("conversation parts", ("conversation.approval", "conversation.console")),
    ("notebook", ("notebook",)),
    # the one Conversation: it draws itself with the notebook's faces when a kernel runs it
    ("conversation", ("conversation",)),
    ("testing", ("testing",)),
    # a real model on this machine (a server as a child process), or the recordings
    ("local", ("local",)),
    # the curated public homes: each re-exports names from the layers below
    ("api", ("messages", "stream", "errors", "structured", "usage", "compaction", "dialects")),
    # entry points over the whole library; the package __init__ (lazy names) is here
    ("cli", ("cli", "__main__", "")),
]

# Upward imports accepted for now, each with the reason; an entry that no longer occurs fails
# the test, so the list can only shrink.
EXEMPT: dict[tuple[str, str], str] = {}


@dataclass(frozen=True, slots=True)
class Edge:
    source: str  # dotted module names, relative to the package ("" is the package itself)
    target: str
    line: int
    type_only: bool  # under ``if TYPE_CHECKING:`` (never executed)


def modules(root: Path) -> dict[str, Path]:
    """Dotted name (relative to the package) -> file, for every module and package."""
    out: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _join(*parts: str) -> str:
    return ".".join(p for p in parts if p)


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
            if name == "TYPE_CHECKING":
                for stmt in node.body:
                    lines.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    return lines


def edges(root: Path, package: str = PACKAGE) -> Iterator[Edge]:
    """Every import of a module of ``package`` by a module of ``package``."""
    known = modules(root)
    for name, path in known.items():
        is_pkg = path.name == "__init__.py"
        here = name if is_pkg else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        type_only = _type_checking_lines(tree)
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [
                    a.name.removeprefix(package).lstrip(".")
                    for a in node.names
                    if a.name == package or a.name.startswith(package + ".")
                ]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".") if here else []
                    up = node.level - 1
                    if up > len(base):
                        continue
                    mod = _join(*base[: len(base) - up], node.module or "")
                elif node.module == package or (node.module or "").startswith(package + "."):
                    mod = node.module.removeprefix(package).lstrip(".")  # type: ignore[union-attr]
                else:
                    continue
                subs = [_join(mod, a.name) for a in node.names if _join(mod, a.name) in known]
                targets = subs if len(subs) == len(node.names) else [mod, *subs]
            for target in targets:
                if target != name:
                    yield Edge(name, target, node.lineno, node.lineno in type_only)


def layer_of(module: str) -> int | None:
    best: tuple[int, int] | None = None  # (prefix length, layer index)
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or (prefix and module.startswith(prefix + ".")) or prefix == "" == module:
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), index)
    return None if best is None else best[1]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, it = work[-1]
            step = next(it, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = counter
                    counter += 1
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph.get(step, ())))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def problems(root: Path, package: str = PACKAGE) -> tuple[list[str], list[str], list[str]]:
    """(unplaced modules, upward imports, cycles), each as readable lines."""
    all_edges = list(edges(root, package))
    unplaced = [m or package for m in modules(root) if layer_of(m) is None]
    upward: list[str] = []
    for e in all_edges:
        src, dst = layer_of(e.source), layer_of(e.target)
        if src is None or dst is None or dst <= src or (e.source, e.target) in EXEMPT:
            continue
        upward.append(
            f"{package}.{e.source} (layer {LAYERS[src][0]}) imports {package}.{e.target} "
            f"(layer {LAYERS[dst][0]}) at line {e.line}"
        )
    graph: dict[str, set[str]] = {}
    for e in all_edges:
        if not e.type_only:
            graph.setdefault(e.source, set()).add(e.target)
    loops = [" -> ".join(c) for c in cycles(graph)]
    return unplaced, upward, loops


# --------------------------------------------------------------------------- the package


def test_every_module_has_a_layer() -> None:
    unplaced, _, _ = problems(SOURCE)
    assert not unplaced, f"add these modules to LAYERS in {Path(__file__).name}: {unplaced}"


def test_imports_point_down_the_layers() -> None:
    _, upward, _ = problems(SOURCE)
    assert not upward, "imports that point up the layers:\n" + "\n".join(upward)


def test_no_import_cycles() -> None:
    _, _, loops = problems(SOURCE)
    assert not loops, "import cycles (modules that import each other):\n" + "\n".join(loops)


def test_exemptions_still_occur() -> None:
    seen = {(e.source, e.target) for e in edges(SOURCE)}
    stale = [pair for pair in EXEMPT if pair not in seen]
    assert not stale, f"these exemptions no longer occur, remove them from EXEMPT: {stale}"


# --------------------------------------------------------------------------- the tests' layout

TESTS = Path(__file__).resolve().parent


def test_tests_mirror_the_package_folders() -> None:
    """One test folder per package folder, and each package folder is its own layer."""
    packages = sorted(p.name for p in SOURCE.iterdir() if (p / "__init__.py").is_file())
    folders = sorted(p.name for p in TESTS.iterdir() if (p / "__init__.py").is_file())
    assert folders == packages
    for name in packages:
        found = layer_of(name)
        assert found is not None and LAYERS[found][0] == name, f"{name} has no layer row of its own"


# --------------------------------------------------------------------------- the checker itself


def _write(root: Path, files: dict[str, str]) -> Path:
    pkg = root / PACKAGE
    for rel, text in files.items():
        path = pkg / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return pkg


def test_checker_sees_call_time_upward_imports_and_cycles(tmp_path: Path) -> None:
    pkg = _write(
        tmp_path,
        {
            "__init__.py": "from .core import messages\n",
            "core/__init__.py": "",
            "core/messages.py": "def f():\n    from ..providers.wire import x\n    return x\n",
            "providers/__init__.py": "",
            "providers/wire.py": "from ..core.messages import f\nx = 1\n",
            "store/__init__.py": "",
            "store/a.py": "from . import b\n",
            "store/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import C\n"
            "def g():\n    from providerkit_nb.store import a\n",
            "store/c.py": "from .b import g\n",
        },
    )
    unplaced, upward, loops = problems(pkg)
    assert unplaced == []
    assert upward == [
        "providerkit_nb.core.messages (layer core) imports providerkit_nb.providers.wire "
        "(layer providers) at line 2"
    ]
    # a <-> b is a cycle (b imports a at call time); b -> c is type-only, so c -> b is not one
    assert loops == ["core.messages -> providers.wire", "store.a -> store.b"]


def test_checker_reports_a_module_outside_the_table(tmp_path: Path) -> None:
    pkg = _write(tmp_path, {"__init__.py": "", "stray/__init__.py": "", "core/__init__.py": ""})
    assert problems(pkg)[0] == ["stray"]


@pytest.mark.parametrize(
    ("module", "layer"),
    [("wire.anthropic", "wire"), ("store.jsonl", "store"), ("", "cli"), ("notebook", "notebook")],
)
def test_layer_lookup(module: str, layer: str) -> None:
    found = layer_of(module)
    assert found is not None and LAYERS[found][0] == layer
