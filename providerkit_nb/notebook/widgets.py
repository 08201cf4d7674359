"""Widgets: a history before and after repair, and a browser over a store.

Views render only through widget values (HTML strings, labels) and expose their data as
DataFrames, so a test can click a button and read the state without a browser or a kernel.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as w
import pandas as pd

from ..core import repair
from ..core.messages import Message, ensure_messages
from ..core.repair import Repaired, repair_history
from . import frames

__all__ = ["HistoryView", "StoreBrowser", "CHANGE_COLOURS"]

# One colour per kind of repair, so a reader sees at a glance what changed and why.
CHANGE_COLOURS = {
    repair.ADDED_RESULT: "#fff3cd",  # a call with no result got one
    repair.RESULT_TO_NOTE: "#e2e3ff",  # a result without its call became a user note
    repair.RENAMED_CALL: "#d1ecf1",  # an id used twice got a suffix...
    repair.RENAMED_RESULT: "#d1ecf1",  # ...on its result too
    repair.DROPPED_EMPTY_ASSISTANT: "#f8d7da",  # has no row after repair
}
_DEFAULT_COLOUR = "#eeeeee"

ROLES = ("all", "system", "user", "assistant", "tool")


# The side-by-side tables show what fits in half a notebook; the frames keep every column.
TABLE_COLUMNS = ["role", "text", "tool_calls", "call_id"]


def _table(frame: pd.DataFrame, highlight: dict[int, str] | None = None, role: str = "all") -> str:
    """An HTML table with one <tr> per shown row; highlighted rows carry their change kind."""
    highlight = highlight or {}
    cols = [c for c in TABLE_COLUMNS if c in frame.columns]
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in ["#", *cols])
    body = []
    for idx, row in frame.iterrows():
        if role != "all" and row.get("role") != role:
            continue
        kind = highlight.get(int(idx))
        style = f' style="background:{CHANGE_COLOURS.get(kind, _DEFAULT_COLOUR)}"' if kind else ""
        attr = f' data-change="{html.escape(kind)}"' if kind else ""
        cells = "".join(
            f'<td style="vertical-align:top;padding:2px 6px">{html.escape(str(row[c]))}</td>' for c in cols
        )
        body.append(f'<tr class="pk-row"{attr}{style}><td>{idx}</td>{cells}</tr>')
    return (
        '<table class="pk-history" style="border-collapse:collapse;font-size:12px">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


class HistoryView:
    """The history before and after repair side by side, with the interrupted calls under it.

    ``source`` is a list of messages (or canonical dicts) or a Conversation; with a
    Conversation the Resume button continues it, and Repair reads its store again first.
    ``problems`` (from ``validate_history`` or ``inspect``) are listed above the tables.
    """

    def __init__(
        self,
        source: Any,
        *,
        is_read_only: Callable[[str], bool] | None = None,
        problems: Sequence[Any] | None = None,
        title: str | None = None,
    ) -> None:
        self.conversation = source if hasattr(source, "resume") and hasattr(source, "store") else None
        if self.conversation is not None:
            self._messages: list[Message] = self.conversation.messages
            self.is_read_only = is_read_only or self.conversation.is_read_only
        else:
            self._messages = ensure_messages(source)
            self.is_read_only = is_read_only
        self.problems = list(problems or [])
        self.repaired: Repaired | None = None

        self.title = w.HTML(value=f"<b>{html.escape(title)}</b>" if title else "")
        self.role = w.Dropdown(options=ROLES, value="all", description="role")
        self.repair_button = w.Button(description="Repair", button_style="warning", icon="wrench")
        self.resume_button = w.Button(
            description="Resume", button_style="success", icon="play", disabled=self.conversation is None
        )
        self.status = w.Label(value=self._status_text())
        self.problems_html = w.HTML(value=self._problems_html())
        self.before = w.HTML(value="")
        self.after = w.HTML(value="<i>not repaired yet: press Repair</i>")
        self.interrupted_html = w.HTML(value="")
        self.root = w.VBox(
            [
                self.title,
                w.HBox([self.role, self.repair_button, self.resume_button]),
                self.status,
                self.problems_html,
                w.HBox(
                    [
                        w.VBox([w.HTML("<b>as stored</b>"), self.before], layout=w.Layout(width="50%")),
                        w.VBox([w.HTML("<b>after repair</b>"), self.after], layout=w.Layout(width="50%")),
                    ]
                ),
                w.HTML("<b>interrupted calls</b>"),
                self.interrupted_html,
            ]
        )
        self.role.observe(lambda _change: self._render(), names="value")
        self.repair_button.on_click(lambda _b: self.repair())
        self.resume_button.on_click(lambda _b: self.resume())
        self._render()

    # data ------------------------------------------------------------------

    @property
    def messages(self) -> list[Message]:
        return list(self._messages)

    def frame(self) -> pd.DataFrame:
        """The history as stored."""
        return frames.history_frame(self._messages)

    def repaired_frame(self) -> pd.DataFrame:
        if self.repaired is None:
            return frames.history_frame([])
        return frames.history_frame(self.repaired.messages)

    def changes_frame(self) -> pd.DataFrame:
        return frames.changes_frame(self.repaired) if self.repaired else frames.changes_frame(Repaired([]))

    def interrupted_frame(self) -> pd.DataFrame:
        return frames.interrupted_frame(self.repaired) if self.repaired else frames.interrupted_frame(Repaired([]))

    def highlights(self) -> dict[int, str]:
        """Row index after repair -> kind of change, for the rows repair touched."""
        marks: dict[int, str] = {}
        if self.repaired is None:
            return marks
        for c in self.repaired.changes:
            idx = getattr(c, "index_after", None)
            if idx is not None and idx >= 0:
                marks.setdefault(int(idx), str(c.kind))
        return marks

    # actions ---------------------------------------------------------------

    def repair(self) -> Repaired:
        if self.conversation is not None:
            self.repaired = self.conversation.reload()
            self._messages = self.conversation.messages
        else:
            self.repaired = repair_history(self._messages, is_read_only=self.is_read_only)
        self._render()
        return self.repaired

    def resume(self, **kwargs: Any) -> Any:
        if self.conversation is None:
            raise RuntimeError("Resume needs a Conversation; this view shows a plain message list")
        self.status.value = "resuming\u2026"
        try:
            turn = self.conversation.resume(**kwargs)
        except BaseException as exc:
            self.status.value = f"resume stopped: {type(exc).__name__}: {exc}"
            self._messages = self.conversation.messages
            self._render()
            raise
        self._messages = self.conversation.messages
        self.repair()
        return turn

    # rendering ---------------------------------------------------------------

    def _status_text(self) -> str:
        n = len(self._messages)
        if self.repaired is None:
            return f"{n} messages as stored; {len(self.problems)} problem(s) found"
        r = self.repaired
        if not r.changes:
            return f"repaired: nothing to change ({n} messages are valid as they are)"
        return (
            f"repaired: {len(r.changes)} change(s), {len(r.interrupted)} interrupted call(s); "
            f"{n} messages stored, {len(r.messages)} to send"
        )

    def _problems_html(self) -> str:
        if not self.problems:
            return ""
        items = []
        for p in self.problems:
            d = p.to_dict() if hasattr(p, "to_dict") else dict(p)
            wording = d.get("provider_wording")
            items.append(
                f"<li><code>{html.escape(str(d.get('rule')))}</code> at message {d.get('index')}: "
                f"{html.escape(str(d.get('message')))}"
                + (f"<br><small>provider would say: <q>{html.escape(str(wording))}</q></small>" if wording else "")
                + "</li>"
            )
        return f"<ul class='pk-problems'>{''.join(items)}</ul>"

    def _render(self) -> None:
        role = self.role.value
        self.before.value = _table(self.frame(), role=role)
        if self.repaired is not None:
            self.after.value = _table(self.repaired_frame(), self.highlights(), role=role)
            frame = self.interrupted_frame()
            self.interrupted_html.value = (
                frame.to_html(index=False, escape=True) if not frame.empty else "<i>none</i>"
            )
        self.status.value = self._status_text()
        self.problems_html.value = self._problems_html()

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.root)


class StoreBrowser:
    """Pick a conversation in a store and see its HistoryView."""

    def __init__(self, store: Any, *, is_read_only: Callable[[str], bool] | None = None) -> None:
        self.store = store
        self.is_read_only = is_read_only
        self.picker = w.Dropdown(options=[], description="conversation")
        self.refresh_button = w.Button(description="Refresh", icon="refresh")
        self.body = w.VBox([])
        self.view: HistoryView | None = None
        self.root = w.VBox([w.HBox([self.picker, self.refresh_button]), self.body])
        self.picker.observe(lambda _c: self._show(), names="value")
        self.refresh_button.on_click(lambda _b: self.refresh())
        self.refresh()

    def frame(self) -> pd.DataFrame:
        rows = []
        for info in self.store.conversations():
            d = info.to_dict() if hasattr(info, "to_dict") else dict(info)
            rows.append(d)
        return pd.DataFrame(rows)

    def refresh(self) -> None:
        ids = [getattr(i, "id", None) or i["id"] for i in self.store.conversations()]
        current = self.picker.value
        self.picker.options = ids
        if current in ids:
            self.picker.value = current
        elif ids:
            self.picker.value = ids[0]
        self._show()

    def _show(self) -> None:
        cid = self.picker.value
        if not cid:
            self.view = None
            self.body.children = [w.HTML("<i>no conversations in this store</i>")]
            return
        self.view = HistoryView(self.store.load(cid), is_read_only=self.is_read_only, title=cid)
        self.body.children = [self.view.root]

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.root)
