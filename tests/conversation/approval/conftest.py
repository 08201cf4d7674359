"""Approval and settle tests: a real store per test (in memory and a SQLite file), and tools
that record what they were asked to do, so a test can tell a call that ran from one that did not.

The provider is simulate.ScriptedProvider (the project's deterministic teaching provider): these
tests are about who decides and what is saved, not about a wire. The wire-level version runs in a
real kernel against a real HTTP server (tests/notebook/test_kernel.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import providerkit_nb as pk

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    s = pk.MemoryStore() if request.param == "memory" else pk.NotebookStore(tmp_path / "a.providerkit.sqlite")
    yield s
    s.close()


class Workspace:
    """Tools whose effects a test can read: ``ran`` lists (tool, arguments) in order."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, dict[str, Any]]] = []

    def registry(self) -> Any:
        def read_file(args: dict[str, Any]) -> str:
            self.ran.append(("read_file", args))
            return f"contents of {args['path']}"

        def write_file(args: dict[str, Any]) -> str:
            self.ran.append(("write_file", args))
            return f"wrote {args['path']}"

        return pk.ToolRegistry(
            [
                pk.define_tool("read_file", "Read a file.", SCHEMA, read_file, read_only=True),
                pk.define_tool("write_file", "Write a file.", SCHEMA, write_file),
            ]
        )


@pytest.fixture
def ws() -> Workspace:
    return Workspace()
