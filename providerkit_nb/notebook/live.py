"""Live display of a turn while it streams.

In a notebook the turn is drawn once and then updated in place through an IPython display
handle, at most ten times a second (redrawing on every chunk would make long turns quadratic).
In a terminal the new text is printed as it arrives. Either way the caller only calls
``show(assembler, final)``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from ..core.turn import TurnAssembler

Show = Callable[[TurnAssembler, bool], None]

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
        return _noop
    if mode == "auto":
        return _NotebookLive() if in_notebook() else _TerminalLive()
    if mode == "notebook":
        return _NotebookLive()
    return _TerminalLive()


def _noop(asm: TurnAssembler, final: bool) -> None:
    return None


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


class _TerminalLive:
    def __init__(self, out: Any = None) -> None:
        self._out = out or sys.stdout
        self._text = 0
        self._reasoning = 0
        self._calls = 0

    def __call__(self, asm: TurnAssembler, final: bool) -> None:
        write = self._out.write
        pieces = asm.reasoning_pieces
        if len(pieces) > self._reasoning:
            if self._reasoning == 0:
                write("[thinking] ")
            write("".join(pieces[self._reasoning :]))
            self._reasoning = len(pieces)
        pieces = asm.text_pieces
        if len(pieces) > self._text:
            if self._text == 0 and self._reasoning:
                write("\n")
            write("".join(pieces[self._text :]))
            self._text = len(pieces)
        if final:
            snap = asm.snapshot()
            for c in (snap.message.tool_calls or [])[self._calls :]:
                write(f"\n-> {c.name}({c.arguments})")
            self._calls = len(snap.message.tool_calls or [])
            write("\n")
        self._out.flush()
