"""The Conversation a notebook user gets as ``pk.Conversation``: the facade plus its faces.

The facade itself (``providerkit_nb.conversation``) runs headless: text in a terminal, a prompt
on stdin. Here it draws the turn as HTML in place while it streams, asks for approval through
a widget, and shows the history before and after repair with ``view()``. Outside a kernel each
of these falls back to the terminal's, so one class serves every place a user types.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import conversation
from ..console import Show
from ..core.messages import ToolCall

if TYPE_CHECKING:
    from ..approval import Decision
    from .widgets import HistoryView

__all__ = ["Conversation"]


class Conversation(conversation.Conversation):
    __doc__ = conversation.Conversation.__doc__

    def _live_display(self) -> Show:
        from .live import live_display

        return live_display(self.display)

    def _ask(self, call: ToolCall) -> Decision:
        """approve="ask": in a notebook the widget (blocking on its clicks), else stdin; both
        show the tool's MCP hints."""
        from ..approval import hints_of
        from .approval import ask_interactive

        return ask_interactive(call, hints=hints_of(self.tools, call.name))

    def view(self) -> HistoryView:
        """A widget: the history before and after repair, and the interrupted calls."""
        from .widgets import HistoryView

        return HistoryView(self)
