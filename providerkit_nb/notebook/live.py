"""Live display of a send in a notebook: the turn as it streams, each tool call with its result.

One display per send: the turn is drawn once and then updated in place through an IPython
display handle, at most ten times a second (redrawing on every chunk would make long turns
quadratic), and the calls that follow are added to the same display, each status line ending in
what happened (done, failed, timeout, late, denied, stopped). In a terminal the new text is
printed as it arrives (``console.TerminalLive``).
"""

from __future__ import annotations

import html
import time
from typing import Any

from ..conversation.console import Live, TerminalLive, no_display, preview
from ..core.kernel import in_kernel
from ..core.messages import ToolCall
from ..core.turn import TurnAssembler

_MIN_INTERVAL = 0.1

_COLOURS = {"running": "#6c757d", "done": "#198754", "stopped": "#b02a37", "denied": "#b02a37", "interrupted": "#997404",
            "failed": "#b02a37", "timeout": "#b02a37", "late": "#997404"}


# Approval widgets answered and not yet told how their call ended (call id -> widget): the live
# display ends their status line in what happened ("approved: done").
ANSWERED: dict[str, Any] = {}


def _ended(call_id: str, status: str) -> None:
    widget = ANSWERED.get(call_id) if status == "running" else ANSWERED.pop(call_id, None)
    if widget is not None and widget.decision is not None:
        said = "approved" if widget.decision.action == "approve" else "edited"
        widget.finished(f"{said}: {status}")


def live_display(mode: bool | str = "auto", into: Any = None) -> Live:
    """``into``: an ipywidgets HTML widget to draw in (the history view's own area) instead of
    a display under the running cell."""
    if mode is False:
        return no_display
    if into is not None:
        return NotebookLive(into)
    if mode == "auto":
        return NotebookLive() if in_kernel() else TerminalLive()
    if mode == "notebook":
        return NotebookLive()
    return TerminalLive()


class NotebookLive(Live):
    """Every turn and call of one send, as HTML in one place."""

    def __init__(self, into: Any = None) -> None:
        self._into = into
        self._handle: Any = None
        self._last = 0.0
        self._done: list[str] = []  # HTML of the finished turns and calls, in order
        self._current = ""  # the turn streaming now, or the call running now
        self._notes: list[str] = []

    def turn(self, asm: TurnAssembler, final: bool) -> None:
        now = time.monotonic()
        if not final and now - self._last < _MIN_INTERVAL:
            return
        self._last = now
        from ..core.html import turn_html

        snap = asm.snapshot()
        body = turn_html(snap, live=not final)
        if final:
            self._done.append(body)
            self._current = ""
        else:
            self._current = body
        self._draw()

    def stopped(self, asm: TurnAssembler) -> None:
        from ..core.html import turn_html

        self._done.append(
            '<div class="pk-stopped" style="opacity:.6">'
            + turn_html(asm.snapshot(), live=False)
            + '<div style="color:#b02a37"><b>stopped: not saved</b> (the answer above is partial and '
            "is not in the history)</div></div>"
        )
        self._current = ""
        self._draw()

    def tool(self, call: ToolCall, status: str, result: str | None = None, *, traceback: str | None = None) -> None:
        colour = _COLOURS.get(status, "#6c757d")
        line = (
            f'<div class="pk-tool" data-status="{html.escape(status)}" style="margin:2px 0">'
            f"<code>{html.escape(call.name)}</code> "
            f'<span class="pk-tool-status" style="color:{colour}"><b>{html.escape(status)}</b></span>'
        )
        if result is not None:
            line += (
                '<pre class="pk-tool-result" style="margin:2px 0 2px 1em;white-space:pre-wrap;'
                f'font-size:90%">{html.escape(preview(result))}</pre>'
            )
        if traceback:  # the tool raised: its own traceback, for the person (the model reads the line above)
            line += (
                '<details class="pk-tool-traceback" open style="margin:0 0 2px 1em">'
                "<summary><small>traceback of the tool</small></summary>"
                '<pre style="margin:2px 0;white-space:pre-wrap;font-size:85%;color:#b02a37">'
                f"{html.escape(traceback)}</pre></details>"
            )
        line += "</div>"
        if status == "running":
            self._current = line
        else:
            self._done.append(line)
            self._current = ""
        _ended(call.id, status)
        self._draw()

    def note(self, text: str) -> None:
        self._notes.append(f'<div class="pk-note" style="color:#997404">{html.escape(text)}</div>')
        self._draw()

    def question(self, call: ToolCall) -> None:
        """The approval box is displayed next, under this display: what is drawn so far (the
        turn that made the call) stays above it, and the call's status lines and everything
        after are drawn in a new display below it, so the box sits where the call is. In a
        view's own area (``into``) the box is shown by the view itself: nothing to split."""
        if self._into is not None or self._handle is None:
            return
        self._current = ""  # a half-drawn line is drawn again in the part below
        self._draw()
        self._handle = None
        self._done, self._notes = [], []

    def _draw(self) -> None:
        body = "".join(self._done) + self._current + "".join(self._notes)
        if self._into is not None:
            self._into.value = body
            return
        from IPython.display import HTML, display

        if self._handle is None:
            self._handle = display(HTML(body), display_id=True)
        else:
            self._handle.update(HTML(body))
