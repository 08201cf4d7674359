"""The reference pages, written from the code at build time, so they follow when names move.

- one page per public home: ``providerkit_nb`` (``pk``) and every top-level module or package
  that declares ``__all__`` (a package without it, like ``testing``, contributes its submodules
  that do); the layers below the homes (``LAYERS``) and the command line are not homes;
- the command line, from its argparse parser;
- the error kinds, from ``ErrorKind`` and its member docstrings, with what ``classify`` and
  ``is_retryable`` do for each;
- the canonical message JSON, from the message classes and their encoder.

Each name is documented once: ``pk`` owns every name in its ``__all__``; a name another home
also exports is linked there, not rendered twice (the object is found by its canonical path, so
two different classes with one name are both documented).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PACKAGE = "providerkit_nb"
# The layers below the public homes (DESIGN.md): not documented as homes. ``cli`` has a page
# of its own (its parser); ``wire`` is the pure conversion layer under the providers.
LAYERS = frozenset({"core", "transport", "providers", "wire", "cli"})


@dataclass
class Home:
    module: str  # "providerkit_nb.store"
    names: list[str]  # its __all__, in its order

    @property
    def slug(self) -> str:
        return "pk" if self.module == PACKAGE else self.module.removeprefix(PACKAGE + ".")

    @property
    def page(self) -> str:
        return f"reference/{self.slug}.md"

    @property
    def title(self) -> str:
        return "pk (providerkit_nb)" if self.module == PACKAGE else self.module


def _module_literals(tree: ast.Module) -> dict[str, Any]:
    """Module-level names bound to a literal (``_NAMES = {...}``)."""
    found: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if isinstance(target, ast.Name):
                try:
                    found[target.id] = ast.literal_eval(node.value)
                except ValueError:
                    continue
    return found


def _all_of(path: Path) -> list[str] | None:
    """A module's ``__all__``, read from its source: a literal, or ``sorted(TABLE)`` /
    ``list(TABLE)`` of a literal table (a lazy-export dict)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    literals = _module_literals(tree)
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if not (isinstance(target, ast.Name) and target.id == "__all__"):
                continue
            if "__all__" in literals:
                return [str(v) for v in literals["__all__"]]
            value = node.value
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id in ("sorted", "list", "tuple")
                and len(value.args) == 1
                and isinstance(value.args[0], ast.Name)
                and value.args[0].id in literals
            ):
                names = [str(v) for v in literals[value.args[0].id]]
                return sorted(names) if value.func.id == "sorted" else names
            raise ValueError(f"{path}: __all__ is not a literal the docs can read; write it as a list")
    return None


def _lazy_home(path: Path, name: str) -> str | None:
    """The module a lazy-export table of ``path`` maps ``name`` to, if it has one."""
    for value in _module_literals(ast.parse(path.read_text(encoding="utf-8"))).values():
        if isinstance(value, dict) and isinstance(value.get(name), str) and value[name].startswith(PACKAGE):
            return str(value[name])
    return None


def homes(root: Path) -> list[Home]:
    """``pk`` first, then every home in name order (read from the source, nothing imported)."""
    pkg = root / PACKAGE
    found = [Home(PACKAGE, _all_of(pkg / "__init__.py") or [])]
    for entry in sorted(pkg.iterdir()):
        name = entry.stem if entry.suffix == ".py" else entry.name
        if name.startswith("_") or name in LAYERS:
            continue
        if entry.suffix == ".py":
            names = _all_of(entry)
            if names is not None:
                found.append(Home(f"{PACKAGE}.{name}", names))
        elif (entry / "__init__.py").is_file():
            names = _all_of(entry / "__init__.py")
            if names is not None:
                found.append(Home(f"{PACKAGE}.{name}", names))
                continue
            for sub in sorted(entry.glob("*.py")):
                if sub.stem.startswith("_"):
                    continue
                sub_names = _all_of(sub)
                if sub_names is not None:
                    found.append(Home(f"{PACKAGE}.{name}.{sub.stem}", sub_names))
    return found


# --------------------------------------------------------------------------- the home pages


def _source_of(root: Path, module: str) -> Path:
    base = root / Path(*module.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def _member(loader_pkg: Any, module: str, name: str) -> Any:
    obj = loader_pkg
    for part in module.split(".")[1:]:
        obj = obj.members[part]
        if obj.is_alias:
            obj = obj.final_target
    return obj.members.get(name)


def _target(root: Path, loader_pkg: Any, module: str, name: str) -> tuple[str, str]:
    """(the path to document it under, the canonical path of the object). A name a home
    exports lazily (no import griffe can see) is documented under its defining module."""
    member = _member(loader_pkg, module, name)
    if member is not None:
        try:
            return f"{module}.{name}", str(member.final_target.path) if member.is_alias else str(member.path)
        except Exception:  # an alias griffe cannot follow (outside the package)
            return f"{module}.{name}", f"{module}.{name}"
    lazy = _lazy_home(_source_of(root, module), name)
    if lazy is None:
        raise ValueError(f"{module}.{name} is in __all__ but neither defined nor imported there")
    defined = _member(loader_pkg, lazy, name)
    canonical = str(defined.final_target.path) if defined is not None and defined.is_alias else f"{lazy}.{name}"
    return canonical, canonical


def _groups_of_pk(root: Path, names: list[str]) -> list[tuple[str, list[str]]]:
    """pk's names in the groups its lazy table's comments give them (one group if none)."""
    source = (root / PACKAGE / "__init__.py").read_text(encoding="utf-8")
    groups: list[tuple[str, list[str]]] = []
    inside = False
    for line in source.splitlines():
        if re.match(r"^_LAZY\b", line):
            inside = True
            continue
        if inside and line.startswith("}"):
            break
        if not inside:
            continue
        comment = re.match(r"^\s*#\s*(.+)$", line)
        key = re.match(r'^\s*"(\w+)"\s*:', line)
        if comment:
            groups.append((comment.group(1).split(":")[0].strip().capitalize(), []))
        elif key and key.group(1) in names:
            if not groups:
                groups.append(("Names", []))
            groups[-1][1].append(key.group(1))
    listed = {n for _, g in groups for n in g}
    rest = [n for n in names if n not in listed]
    if rest:
        groups.append(("Other names" if groups else "Names", rest))
    return [(title, g) for title, g in groups if g]


def _summary(loader_pkg: Any, module: str) -> str:
    obj = loader_pkg
    for part in module.split(".")[1:]:
        obj = obj.members[part]
    doc = obj.docstring.value if obj.docstring else ""
    return doc.strip()


def home_pages(root: Path, found: list[Home]) -> dict[str, str]:
    """``{page path: markdown}`` for every home."""
    import griffe

    loaded = griffe.load(PACKAGE, search_paths=[str(root)], allow_inspection=False)
    targets = {(h.module, n): _target(root, loaded, h.module, n) for h in found for n in h.names}
    owner: dict[str, tuple[Home, str]] = {}  # canonical path -> (home, name) that renders it
    for home in found:
        for name in home.names:
            canonical = targets[(home.module, name)][1]
            current = owner.get(canonical)
            if current is None or (
                current[0].module != PACKAGE
                and canonical.startswith(home.module + ".")
                and not canonical.startswith(current[0].module + ".")
            ):
                owner[canonical] = (home, name)
    rendered = {(h.module, n) for h, n in owner.values()}

    pages: dict[str, str] = {}
    for home in found:
        lines = [f"# {home.title}", ""]
        summary = _summary(loaded, home.module)
        if summary:
            lines += [summary, ""]
        if home.module == PACKAGE:
            lines += [
                "`import providerkit_nb as pk`: what a notebook user types. Every name in "
                "`pk.__all__` is documented on this page; everything else has a named home "
                "(the other reference pages).",
                "",
            ]
        mine = [n for n in home.names if (home.module, n) in rendered]
        if home.module == PACKAGE:
            sections = _groups_of_pk(root, mine)
        else:
            sections = [("Names", mine)] if mine else []
        for title, names in sections:
            lines += [f"## {title}", ""]
            for name in names:
                lines += [f"::: {targets[(home.module, name)][0]}", ""]
        elsewhere = [n for n in home.names if n not in mine]
        if elsewhere:
            lines += ["## Also exported here", "", "Documented where they live:", ""]
            for name in elsewhere:
                other, other_name = owner[targets[(home.module, name)][1]]
                where = targets[(other.module, other_name)][0]
                lines.append(f"- `{home.module}.{name}`: [`{where}`][{where}]")
            lines.append("")
        pages[home.page] = "\n".join(lines)
    return pages


# --------------------------------------------------------------------------- the command line


class _Parser(Exception):
    pass


def cli_page() -> str:
    """``providerkit-nb --help`` and each command's help, from the parser ``main`` builds."""
    import argparse

    from providerkit_nb.cli.main import main

    original = argparse.ArgumentParser.parse_args

    def grab(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        raise _Parser(self)

    argparse.ArgumentParser.parse_args = grab  # type: ignore[method-assign]
    try:
        main([])
    except _Parser as got:
        parser: argparse.ArgumentParser = got.args[0]
    else:
        raise RuntimeError("providerkit_nb.cli.main.main([]) did not parse its arguments")
    finally:
        argparse.ArgumentParser.parse_args = original  # type: ignore[method-assign]
    os.environ.setdefault("COLUMNS", "100")
    parser.prog = "providerkit-nb"
    lines = [
        "# Command line",
        "",
        "`providerkit-nb` (or `python -m providerkit_nb`) is a thin layer over the library: it "
        "parses arguments and calls the functions documented in this reference. This page is "
        "written from its parser when the site is built.",
        "",
        "```text",
        parser.format_help().rstrip(),
        "```",
        "",
    ]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command, sub in action.choices.items():
                sub.prog = f"providerkit-nb {command}"
                lines += [f"## {command}", "", "```text", sub.format_help().rstrip(), "```", ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------- the error kinds

STATUSES = (400, 401, 402, 403, 404, 408, 409, 413, 422, 425, 429, 500, 502, 503, 504, 529)


def errors_page(root: Path) -> str:
    """Each ErrorKind: what it means and what fixes it (its docstring), the HTTP statuses
    ``classify`` gives it on a body that says nothing more, and whether ``with_retry`` retries."""
    import griffe

    from providerkit_nb.errors import ErrorKind, ProviderError, classify, is_retryable

    loaded = griffe.load(PACKAGE, search_paths=[str(root)], allow_inspection=False)
    cls = loaded.members["ErrorKind"].final_target if "ErrorKind" in loaded.members else None
    docs: dict[str, str] = {}
    if cls is not None:
        for name, member in cls.members.items():
            if member.docstring is not None:
                docs[name] = " ".join(member.docstring.value.split())
    by_status: dict[ErrorKind, list[str]] = {}
    for status in STATUSES:
        by_status.setdefault(classify(status, ""), []).append(str(status))
    lines = [
        "# Error kinds",
        "",
        "Every failure talking to a provider is a [`pk.ProviderError`][providerkit_nb.ProviderError] "
        "whose `kind` is an [`ErrorKind`][providerkit_nb.ErrorKind], named for what fixes it. "
        "This table is written from the enum and from `providerkit_nb.errors.classify` and "
        "`is_retryable` when the site is built. The body of the error decides before the status "
        "for client errors (vendors put an exhausted quota behind 400, 402, 403 and 429 alike), so "
        "the statuses below are what a bare status with no telling body gives.",
        "",
        "| kind | what it means and what fixes it | bare HTTP status | retried by `pk.with_retry` |",
        "|---|---|---|---|",
    ]
    for kind in ErrorKind:
        doc = docs.get(kind.name, "")
        if not doc:
            raise ValueError(f"ErrorKind.{kind.name} has no docstring saying what fixes it")
        retried = is_retryable(ProviderError("docs", kind, "docs"))
        statuses = ", ".join(by_status.get(kind, [])) or "-"
        lines.append(f"| `{kind.value}` | {doc} | {statuses} | {'yes' if retried else 'no'} |")
    lines += [
        "",
        "A malformed response (a frame missing its delta, an empty 200, a body that is not JSON) is "
        "`overload` with `code=\"malformed_response\"`: see [Bad input](../howto/bad-input.md).",
        "",
        "## The errors the library raises",
        "",
        "Every one derives from [`pk.Error`][providerkit_nb.Error]; "
        "[`providerkit_nb.errors`](errors.md) lists them all.",
        "",
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------- the message JSON


def _type_text(tp: Any) -> str:
    text = str(tp) if not isinstance(tp, type) else tp.__name__
    text = text.replace("providerkit_nb.core.messages.", "").replace("typing.", "")
    return text


def messages_page() -> str:
    """The canonical message JSON: each message class's fields, and one example of each,
    encoded by the library's own encoder."""
    from providerkit_nb import messages as m

    examples = [
        m.SystemMessage("You are terse."),
        m.UserMessage("What's in notes.txt?"),
        m.UserMessage([m.TextPart("And this picture?"), m.ImagePart("image/png", "iVBORw0KGgo=")]),
        m.AssistantMessage(
            "Reading it.",
            reasoning="The user wants the file.",
            tool_calls=[m.ToolCall("call_1", "read_file", '{"path": "notes.txt"}')],
        ),
        m.ToolMessage("call_1", "read_file", "buy milk"),
        m.AssistantMessage(
            "",
            reasoning_items=m.ReasoningItems("openai-responses", [{"type": "reasoning", "encrypted_content": "gAAA..."}]),
        ),
    ]
    doc = (m.__doc__ or "").strip()
    core_doc = (importlib.import_module(m.dumps.__module__).__doc__ or "").strip()
    lines = [
        "# Canonical message JSON",
        "",
        doc,
        "",
        core_doc,
        "",
        "A history is a JSON array of these objects "
        "([`dumps`][providerkit_nb.messages.dumps] / [`loads`][providerkit_nb.messages.loads]); "
        "a store saves one per row, and `repair` writes them one per line (JSONL). "
        "This page is written from the message classes and the encoder when the site is built.",
        "",
    ]
    for cls in (m.SystemMessage, m.UserMessage, m.AssistantMessage, m.ToolMessage, m.ToolCall,
                m.TextPart, m.ImagePart, m.FilePart, m.ReasoningItems):
        lines += [f"## {cls.__name__}", ""]
        if cls.__doc__ and not cls.__doc__.startswith(cls.__name__ + "("):
            lines += [" ".join(cls.__doc__.split()), ""]
        lines += ["| field | type | when absent |", "|---|---|---|"]
        for f in dataclasses.fields(cls):
            if f.default is not dataclasses.MISSING and not f.init:
                lines.append(f"| `{f.name}` | always `\"{f.default}\"` | - |")
                continue
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            absent = "required" if required else f"left out (default `{f.default!r}`)"
            lines.append(f"| `{f.name}` | `{_type_text(f.type)}` | {absent} |")
        lines.append("")
    lines += ["## Examples", "", "Each line is one message in the canonical encoding:", "", "```json"]
    lines += [m.dumps([x])[1:-1] for x in examples]  # one message, as a store row holds it
    lines += ["```", ""]
    return "\n".join(lines)


def reference_index(found: list[Home]) -> str:
    lines = [
        "# Reference",
        "",
        "Written from the code when the site is built: every public name from its docstring, one "
        "page per public home.",
        "",
    ]
    for home in found:
        lines.append(f"- [{home.title}]({home.slug}.md): {len(home.names)} names")
    lines += [
        "",
        "Also: [the command line](cli.md), [the error kinds](error-kinds.md) and "
        "[the canonical message JSON](message-json.md).",
        "",
    ]
    return "\n".join(lines)

