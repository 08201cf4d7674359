"""Putting an object in the cell's output: IPython's ``display``, typed (IPython ships no types)
and imported only when something is shown."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["display"]


def display(obj: Any, **options: Any) -> Any:
    """``IPython.display.display(obj, **options)`` (``raw=True`` for a mime bundle)."""
    from IPython.display import display as ipython_display

    show: Callable[..., Any] = ipython_display
    return show(obj, **options)
