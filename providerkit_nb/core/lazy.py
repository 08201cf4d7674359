"""Names a package exports but imports only on first use, so importing it stays cheap."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, table: Mapping[str, str], modules: frozenset[str] = frozenset()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for a package whose ``table`` maps a name to the module
    defining it; a name in ``modules`` is that module itself."""
    namespace = importlib.import_module(package).__dict__

    def getattr_(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        mod = importlib.import_module(module)
        value = mod if name in modules else getattr(mod, name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted(table)

    return getattr_, dir_
