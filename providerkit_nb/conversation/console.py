"""Plain-text live display of a send while it runs: what a terminal (or a worker) shows.

The notebook layer draws the same as HTML in place (``notebook/live.py``); both are a ``Live``:
``turn(assembler, final)`` while a turn streams, ``tool(call, status, result)`` as each call
starts and ends, ``stopped(asm)`` when Stop lands in a stream, ``note(text)`` for what a person
must know now (a tool that cannot be stopped), ``question(call)`` just before a person is asked
about a call. The facade never needs to know which one it has.
"""

from __future__ import annotations

import sys
from typing import Any

from ..core.messages import ToolCall
from ..core.turn import TurnAssembler

__all__ = ["Live", "TerminalLive", "no_display", "terminal_display", "RESULT_PREVIEW"]

RESULT_PREVIEW = 300  # characters of a tool's result a live display shows


class Live:
    """The faces of one send: every method does nothing here (``display=False``)."""

    def turn(self, asm: TurnAssembler, final: bool) -> None:
        return None

    def stopped(self, asm: TurnAssembler) -> None:
        """Stop landed while the turn streamed: what was shown is not saved."""
        return None

    def tool(self, call: ToolCall, status: str, result: str | None = None, *, traceback: str | None = None) -> None:
        """A call's status: "running", then how it ended ("done", "failed", "timeout", "late",
        "denied", "stopped") with its result text, and the tool's own traceback when it raised."""
        return None

    def note(self, text: str) -> None:
        return None

    def question(self, call: ToolCall) -> None:
        """A person is about to be asked about ``call`` (approve="ask"): the question is shown
        next, so what the display draws afterwards must come after it, where the call is."""
        return None


no_display = Live()


def terminal_display(mode: bool | str = "auto") -> Live:
    """The display of a Conversation with no notebook behind it: text, or nothing."""
    return no_display if mode is False else TerminalLive()


def preview(text: str, limit: int = RESULT_PREVIEW) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


class TerminalLive(Live):
    """The new text printed as it arrives, then the calls and their results."""

    def __init__(self, out: Any = None) -> None:
        self._out = out or sys.stdout
        self._text = 0
        self._reasoning = 0
        self._calls = 0

    def turn(self, asm: TurnAssembler, final: bool) -> None:
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
            for n in snap.notices:  # what the reader must know: a forced call not made, the JSON form
                write(f"\n[{n.text}]")
            write("\n")
            self._text = self._reasoning = self._calls = 0  # the next turn starts afresh
        self._out.flush()

    def stopped(self, asm: TurnAssembler) -> None:
        self._out.write("\n[stopped: not saved]\n")
        self._out.flush()

    def tool(self, call: ToolCall, status: str, result: str | None = None, *, traceback: str | None = None) -> None:
        if status == "running":
            return
        line = f"<- {call.name}: {status}"
        if result:
            line += f": {preview(result)}"
        if traceback:
            line += "\n" + "".join(f"   {t}\n" for t in traceback.rstrip().splitlines()).rstrip()
        self._out.write(line + "\n")
        self._out.flush()

    def note(self, text: str) -> None:
        self._out.write(f"[{text}]\n")
        self._out.flush()
