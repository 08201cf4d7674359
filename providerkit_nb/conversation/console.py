"""Plain-text live display of a turn while it streams: what a terminal (or a worker) shows.

The notebook layer draws the same turn as HTML in place (``notebook/live.py``); both take
``show(assembler, final)``, so the facade never needs to know which one it has.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from ..core.turn import TurnAssembler

__all__ = ["Show", "TerminalLive", "no_display", "terminal_display"]

Show = Callable[[TurnAssembler, bool], None]


def no_display(asm: TurnAssembler, final: bool) -> None:
    return None


def terminal_display(mode: bool | str = "auto") -> Show:
    """The display of a Conversation with no notebook behind it: text, or nothing."""
    return no_display if mode is False else TerminalLive()


class TerminalLive:
    """The new text printed as it arrives, then the calls once the turn ends."""

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
