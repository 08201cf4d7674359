"""Live display of a turn while it streams.

In a notebook the turn is drawn once and then updated in place through an IPython display
handle, at most ten times a second (redrawing on every chunk would make long turns quadratic).
In a terminal the new text is printed as it arrives. Either way the caller only calls
``show(assembler, final)``.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from ..conversation.console import Show, TerminalLive, no_display
from ..core.turn import TurnAssembler

_MIN_INTERVAL = 0.1


def in_notebook() -> bool:
    ip = sys.modules.get("IPython")
    if ip is None:
        return False
    try:
        shell = ip.get_ipython()
    except Exception:
        return False
    return shell is not None and getattr(shell, "kernel", None) is not None


def live_display(mode: bool | str = "auto") -> Show:
    if mode is False:
        return no_display
    if mode == "auto":
        return _NotebookLive() if in_notebook() else TerminalLive()
    if mode == "notebook":
        return _NotebookLive()
    return TerminalLive()


class _NotebookLive:
    def __init__(self) -> None:
        self._handle: Any = None
        self._last = 0.0

    def __call__(self, asm: TurnAssembler, final: bool) -> None:
        now = time.monotonic()
        if not final and now - self._last < _MIN_INTERVAL:
            return
        self._last = now
        from IPython.display import HTML, display

        from .html import turn_html

        body = HTML(turn_html(asm.snapshot(), live=True))
        if self._handle is None:
            self._handle = display(body, display_id=True)
        else:
            self._handle.update(body)
