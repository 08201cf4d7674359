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


def claim_home(namespace: Mapping[str, Any], names: list[str], within: str | None = None) -> None:
    """Set ``__module__`` of each public class and function in ``names`` to the package that
    exports it, as tracebacks, reprs and the docs then show it (httpx does the same).

    ``within``: only objects defined under that package are claimed (a home that also re-exports
    another home's names leaves those alone)."""
    home = str(namespace["__name__"])
    for name in names:
        obj = namespace[name]
        module = getattr(obj, "__module__", None)
        if not isinstance(obj, type) and not callable(obj):
            continue
        if module is None or (within is not None and not module.startswith(within + ".")):
            continue
        obj.__module__ = home
