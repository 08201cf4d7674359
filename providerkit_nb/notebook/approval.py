"""The approval widget: a call and its arguments, with Approve / Deny / Edit arguments.

Under a running cell (``convo.send`` with ``approve="ask"``), the cell cannot receive widget
clicks, so ``wait`` blocks with jupyter-ui-poll, which lets the kernel handle the widget's
messages (and only those) while the cell waits. The Stop button raises KeyboardInterrupt inside
that wait like anywhere else: the widget says so, disables itself, and the call stays "asking"
in the store for the next ``resume``.

From a button's callback (the history view's Resume) nothing may wait: the widget is shown in
the view and answers through ``on_decide``, its own button callback, which carries on.
"""

from __future__ import annotations

import html
import json
import time
from collections.abc import Callable
from typing import Any

import ipywidgets as w

from ..conversation.approval import Check, Decision, ask_stdin, pretty_arguments
from ..core.kernel import in_kernel
from ..core.messages import ToolCall
from .show import display

__all__ = ["ApprovalWidget", "ask_widget", "ask_interactive"]

_HIDDEN = "none"


class ApprovalWidget:
    """One question about one call. Drive it from Python (``approve()``, ``deny()``,
    ``edit()`` then ``editor.value = ...`` and ``submit_edit()``) or by clicking.

    ``check`` names what is wrong with edited arguments (the tool's input schema): an edit that
    is not a JSON object, or does not fit, is refused in the box with the reason shown under
    the editor, and the question stays open until it is fixed (or denied)."""

    def __init__(
        self,
        call: ToolCall,
        on_decide: Callable[[Decision], Any] | None = None,
        hints: str = "",
        check: Check | None = None,
    ) -> None:
        self.call = call
        self.decision: Decision | None = None
        self.on_decide = on_decide
        self.check = check
        pretty = pretty_arguments(call.arguments)
        self.header = w.HTML(
            value=(
                f"<b>Approve this call?</b> <code>{html.escape(call.name)}</code> "
                f"<small>(call id {html.escape(call.id)})</small>"
            )
        )
        marked = html.escape(hints).replace(
            "DESTRUCTIVE",
            '<b class="pk-destructive" style="color:#fff;background:#c9302c;padding:0 4px;'
            'border-radius:3px">DESTRUCTIVE</b>',
        )
        self.hints_html = w.HTML(value=f'<div class="pk-approval-hints"><small>{marked}</small></div>')
        self.arguments_html = w.HTML(
            value=f'<pre class="pk-approval-args" style="margin:2px 0">{html.escape(pretty)}</pre>'
        )
        self.approve_button = w.Button(description="Approve", button_style="success", icon="check")
        self.deny_button = w.Button(description="Deny", button_style="danger", icon="times")
        self.edit_button = w.Button(description="Edit arguments", icon="edit")
        self.editor = w.Textarea(value=pretty, layout=w.Layout(width="95%", height="8em", display=_HIDDEN))
        self.run_edited_button = w.Button(
            description="Run with these arguments", button_style="warning",
            layout=w.Layout(display=_HIDDEN, width="fit-content"),
        )
        self.edit_problems = w.HTML(value="")  # why the last edit was refused, under the editor
        self.edit_problems.add_class("pk-approval-edit-problems")
        self.status = w.Label(value="waiting for your answer")
        self.status.add_class("pk-approval-status")
        self.root = w.VBox(
            [
                self.header,
                *([self.hints_html] if hints else []),
                self.arguments_html,
                w.HBox([self.approve_button, self.deny_button, self.edit_button]),
                self.editor,
                self.edit_problems,
                self.run_edited_button,
                self.status,
            ],
            layout=w.Layout(border="1px solid #f0ad4e", padding="4px"),
        )
        self.root.add_class("pk-approval")
        self.approve_button.on_click(lambda _b: self.approve())
        self.deny_button.on_click(lambda _b: self.deny())
        self.edit_button.on_click(lambda _b: self.edit())
        self.run_edited_button.on_click(lambda _b: self.submit_edit())

    @property
    def buttons(self) -> list[w.Button]:
        return [self.approve_button, self.deny_button, self.edit_button, self.run_edited_button]

    # answers ---------------------------------------------------------------

    def approve(self) -> None:
        self._decide(Decision("approve"), "approved")

    def deny(self) -> None:
        self._decide(Decision("deny"), "denied: the model is told it did not run")

    def finished(self, text: str) -> None:
        """How the call ended, once it has: the status line ends in what happened."""
        self.status.value = text

    def edit(self) -> None:
        """Show the arguments as editable JSON."""
        if self.decision is None:
            self.editor.layout.display = None
            self.run_edited_button.layout.display = None

    def submit_edit(self) -> None:
        """Run with the edited arguments if they are a JSON object that fits the tool's schema;
        else say what is wrong and keep the question open."""
        try:
            value = json.loads(self.editor.value)
        except ValueError as exc:
            self._refuse(f"not JSON ({exc})", [])
            return
        if not isinstance(value, dict):
            self._refuse(f"the arguments must be a JSON object, not {type(value).__name__}", [])
            return
        problems = self.check(value) if self.check is not None else []
        if problems:
            self._refuse(f"these arguments do not fit the input schema of {self.call.name}", problems)
            return
        self.edit_problems.value = ""
        self._decide(Decision("edit", value), "edited")

    def _refuse(self, why: str, problems: list[str]) -> None:
        if self.decision is not None:
            return  # answered already: nothing to fix
        items = "".join(f"<li><code>{html.escape(p)}</code></li>" for p in problems)
        self.edit_problems.value = (
            f'<div style="color:#b02a37"><b>Not run:</b> {html.escape(why)}'
            + (f'<ul style="margin:2px 0">{items}</ul>' if items else "")
            + "</div>"
        )
        self.status.value = f"{why}: fix the arguments and press the button again"

    def _decide(self, decision: Decision, text: str) -> None:
        if self.decision is not None:
            return  # the first answer counts
        self.decision = decision
        self.status.value = text
        self._close()
        if self.on_decide is not None:
            self.on_decide(decision)

    def _close(self) -> None:
        for b in self.buttons:
            b.disabled = True
        self.editor.disabled = True

    # waiting ---------------------------------------------------------------

    def wait(self, *, poll: Callable[[], Any] | None = None, interval: float = 0.05) -> Decision:
        """Block until answered. ``poll`` replaces jupyter-ui-poll's event pump (tests)."""
        try:
            if poll is not None:
                while self.decision is None:
                    poll()
                    time.sleep(interval)
            elif self.decision is None:
                from jupyter_ui_poll import ui_events

                _supply_kernel_iteration()
                with ui_events() as ui_poll:
                    while self.decision is None:
                        ui_poll(10)
                        time.sleep(interval)
        except KeyboardInterrupt:
            self.status.value = "stopped: the call did not run; resume() asks again"
            self._close()
            raise
        assert self.decision is not None
        return self.decision

    def _ipython_display_(self) -> None:
        display(self.root)


def _supply_kernel_iteration() -> None:
    """jupyter-ui-poll (1.1) pumps widget messages with ``Kernel.do_one_iteration``, which
    ipykernel 7.4 no longer has; its failure is swallowed, so clicks would never arrive. On such
    a kernel, give it the one step it needs: handle the next message waiting for the main shell
    (the poll's own handler keeps any execute request for after the cell, as it always does)."""
    from IPython import get_ipython

    kernel = getattr(get_ipython(), "kernel", None)
    if kernel is None or hasattr(kernel, "do_one_iteration"):
        return
    thread = getattr(kernel, "shell_channel_thread", None)
    if thread is not None:
        socket = thread.manager._shell_channel_to_main.to_socket
    else:
        socket = kernel.shell_stream.socket
    import zmq

    async def do_one_iteration() -> None:
        try:
            msg = socket.recv_multipart(zmq.NOBLOCK, copy=False)
        except zmq.Again:
            return
        # Not ``concurrent=True``: that skips the busy/idle status of the message, and the
        # browser's widget manager sends a model's next state update only once the kernel said
        # idle for its last one. Without it, the editor's first change arrived and every later
        # one waited forever: a fixed edit was never seen, and the box stopped answering.
        cell = kernel.get_parent("shell")
        await kernel.dispatch_shell(msg, subshell_id=None)
        kernel._publish_status("busy", "shell", parent=cell)  # the cell itself still runs

    kernel.do_one_iteration = do_one_iteration


def ask_widget(call: ToolCall, hints: str = "", check: Check | None = None) -> Decision:
    """Show the question under the running cell and block until it is answered."""
    widget = ApprovalWidget(call, hints=hints, check=check)
    display(widget.root)
    decision = widget.wait()
    if decision.action != "deny":
        from .live import ANSWERED

        ANSWERED[call.id] = widget  # the live display ends its status line in what happened
    return decision


def ask_interactive(call: ToolCall, hints: str = "", check: Check | None = None) -> Decision:
    """approve="ask": in a notebook the widget (blocking on its clicks), anywhere else a prompt
    on stdin; either refuses an edit that ``check`` finds wrong."""
    return ask_widget(call, hints, check) if in_kernel() else ask_stdin(call, hints=hints, check=check)
