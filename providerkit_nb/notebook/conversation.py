"""The Conversation a notebook user gets as ``pk.Conversation``: the facade plus its faces.

The facade itself (``providerkit_nb.conversation``) runs headless: text in a terminal, a prompt
on stdin. Here it draws each send as HTML in place (the turns, each call and its result),
asks for approval through a widget, and shows the history before and after repair with
``view()``. Outside a kernel each of these falls back to the terminal's, so one class serves
every place a user types.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..conversation import facade as conversation
from ..conversation.console import Live
from ..core.messages import ToolCall

if TYPE_CHECKING:
    from ..conversation.approval import Decision
    from .widgets import HistoryView

__all__ = ["Conversation"]


class Conversation(conversation.Conversation):
    __doc__ = conversation.Conversation.__doc__

    # Where the history view's Resume draws the send (an ipywidgets HTML), instead of under a
    # running cell: a button's callback has no cell to draw under.
    live_into: Any = None

    def _live_display(self) -> Live:
        from .live import live_display

        return live_display(self.display, into=self.live_into)

    def _ask(self, call: ToolCall) -> Decision:
        """approve="ask": in a notebook the widget (blocking on its clicks), else stdin; both
        show the tool's MCP hints."""
        from ..conversation.approval import hints_of
        from .approval import ask_interactive

        self._live.question(call)  # the box goes where the call is, not below the whole send
        return ask_interactive(call, hints=hints_of(self.tools, call.name), check=self.approval.check(call))

    def view(self) -> HistoryView:
        """A widget: the history before and after repair, and the interrupted calls."""
        from .widgets import HistoryView

        return HistoryView(self)
