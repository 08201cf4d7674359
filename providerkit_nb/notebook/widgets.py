"""Widgets: a history before and after repair, and a browser over a store.

Views render only through widget values (HTML strings, labels) and expose their data as
DataFrames, so a test can click a button and read the state without a browser or a kernel.

Long histories stay fast: a view builds HTML only for the rows it shows (by default the rows
repair touches, a few rows of context around each, and the last messages; pages and filters by
role and by kind of change reach the rest), so what goes to the browser is bounded by the page
size, not by the history (``bench/views.py`` measures it on 10,000 messages).
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
from ..viewer import (
    Page,
    build_page,
    findings_html,
    focus_rows,
    headline,
    highlight,
    page_of,
    rows_html,
    scoped,
    static_html,
    text_summary,
)
from ..viewer.cards import CHANGE_LABELS, ERROR_RESULT, KIND_LABELS
from ..viewer.style import CSS
from . import frames
from .show import display

__all__ = ["HistoryView", "StoreBrowser", "payload_bytes"]

ROLES = ("all", "system", "user", "assistant", "tool")
SHOW = (("repairs and the last messages", "focus"), ("every message", "all"))
KINDS = (("any row", "any"), ("changed rows only", "changed"), *((label, k) for k, label in CHANGE_LABELS.items()),
         (KIND_LABELS[ERROR_RESULT], ERROR_RESULT))

PAGE_ROWS = 100  # rows of cards per page: bounds the payload whatever the history
CONTEXT = 2  # rows shown around each row repair touched
LAST = 10  # the last messages, always in the default selection
SMALL = 60  # a history this short is shown whole
CARD_CHARS = 2000  # a text in a card is cut here (frame() and the HTML report keep it whole)
LIST_CAP = 50  # problems and interrupted calls listed in HTML (the frames have them all)


def _one_line(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def payload_bytes(widget: Any) -> int:
    """UTF-8 bytes of every text value in a widget tree: what the view sends to the browser."""
    total = 0
    stack = [widget]
    while stack:
        item = stack.pop()
        value = getattr(item, "value", None)
        if isinstance(value, str):
            total += len(value.encode())
        stack.extend(getattr(item, "children", ()) or ())
    return total


class _SettleRow:
    """The three actions for one interrupted call that may have run, safest first: leave it to
    the model, record what happened, and (least prominent) run it again."""

    def __init__(self, view: HistoryView, call: repair.InterruptedCall) -> None:
        self.call = call
        self.label = w.HTML(
            value=(
                f"<code>{html.escape(call.name)}</code> <small>call id {html.escape(call.id)}: "
                f"{html.escape(call.safety)}</small><pre style='white-space:pre-wrap;overflow-wrap:anywhere;margin:2px 0'>"
                f"{html.escape(call.arguments)}</pre>"
            )
        )
        self.note = w.Textarea(placeholder="what happened (for \u201cit ran\u201d)", layout=w.Layout(width="auto", flex="1"))
        self.model_button = w.Button(
            description="Leave it to the model", button_style="primary", layout=w.Layout(width="auto"),
            tooltip="the model reads that the call was interrupted and may have partly run",
        )
        self.ran_button = w.Button(description="It ran: record what happened", layout=w.Layout(width="auto"))
        self.run_button = w.Button(
            description="Run it again", layout=w.Layout(width="auto"),
            tooltip="runs the tool now, even though it may already have run",
        )
        self.run_button.add_class("pk-least")
        self.ran_button.on_click(lambda _b: view.settle(call.id, "ran", note=self.note.value))
        self.run_button.on_click(lambda _b: view.settle(call.id, "run"))
        self.model_button.on_click(lambda _b: view.settle(call.id, "model"))
        self.root = w.VBox(
            [self.label, w.HBox([self.model_button]), w.HBox([self.note, self.ran_button]), w.HBox([self.run_button])],
            layout=w.Layout(border="1px solid #ddd", padding="4px", margin="2px 0"),
        )
        self.root.add_class("pk-settle")


class HistoryView:
    """The history before and after repair side by side, with the interrupted calls under it.

    ``source`` is a list of messages (or canonical dicts) or a Conversation; with a
    Conversation the Resume button continues it, Repair reads its store again first, and each
    interrupted call that may have run gets three actions (it ran / run it now / leave it to
    the model), saved to the store. ``problems`` (from ``validate_history`` or ``inspect``; for a
    plain list, what ``validate_history`` finds) are listed above the tables.

    A Conversation's view shows the Inspection ``pk.inspect(convo)`` shows, and the view of an
    inspection shows that inspection's repair (never a second one with other read-only
    knowledge): one text and one count in every view.
    """

    def __init__(
        self,
        source: Any,
        *,
        is_read_only: Callable[[str], bool] | None = None,
        problems: Sequence[Any] | None = None,
        title: str | None = None,
        inspection: Any = None,
    ) -> None:
        self.conversation = source if hasattr(source, "resume") and hasattr(source, "store") else None
        self.inspection = inspection  # the source's markers, skipped counts, warnings, details
        self.is_read_only = is_read_only
        if self.conversation is not None:
            self.is_read_only = is_read_only or self.conversation.is_read_only
            self.inspection = self._inspect_conversation()
            self._messages: list[Message] = self.inspection.messages
            preview: Repaired = self.inspection.repaired
        elif inspection is not None and getattr(inspection, "repaired", None) is not None:
            self._messages = list(inspection.messages)
            preview = inspection.repaired  # the inspection's own decision about every lost call
        else:
            self._messages = ensure_messages(source)
            preview = repair_history(self._messages, is_read_only=self.is_read_only)
        self._preview = preview  # what repair would touch: where the default selection looks
        if problems is None and self.inspection is None:  # a plain list: its problems, so its count is true
            from ..wire.validate import validate_history

            problems = validate_history(self._messages)
        self.problems = list(problems if problems is not None else getattr(self.inspection, "problems", None) or [])
        self.title_text = title or getattr(self.inspection, "title", None) or ""
        self.repaired: Repaired | None = None
        self.page = 0
        self.match: int | None = None  # the search's current match, counted over the selected rows
        self.settle_rows: dict[str, _SettleRow] = {}
        self._key = f"{id(self) % 1_000_000}"  # scopes the ids of this view's HTML (and of its static twin)

        self.title = w.HTML(value=f"<style>{CSS}</style>")
        compact = {"style": {"description_width": "initial"}, "layout": w.Layout(width="auto")}
        self.show = w.Dropdown(options=SHOW, value="focus", description="show", **compact)
        self.role = w.Dropdown(options=ROLES, value="all", description="role", **compact)
        self.kind = w.Dropdown(options=KINDS, value="any", description="change", **compact)
        self.search = w.Text(placeholder="search text, tool names, call ids", continuous_update=False,
                             layout=w.Layout(flex="1", min_width="12em"))
        self.repair_button = w.Button(description="Repair", icon="wrench", layout=w.Layout(width="auto"))
        self.resume_button = w.Button(
            description="Resume", icon="play", disabled=self.conversation is None, layout=w.Layout(width="auto")
        )
        self.prev_button = w.Button(description="\u25c0 page", layout=w.Layout(width="auto"))
        self.next_button = w.Button(description="page \u25b6", layout=w.Layout(width="auto"))
        self.match_prev = w.Button(description="\u25b2 match", layout=w.Layout(width="auto"),
                                   tooltip="the previous match of the search")
        self.match_next = w.Button(description="match \u25bc", layout=w.Layout(width="auto"),
                                   tooltip="the next match of the search (the cards start at its message)")
        self.match_label = w.Label(value="")
        self.page_label = w.Label(value="")
        self.status = w.Label(value="")
        self.findings = w.HTML(value="")
        self.cards = w.HTML(value="")
        self.pending_html = w.HTML(value="")
        # The view's own output: what Resume runs is drawn here, and a question it must ask is
        # shown here, answered by its own buttons (a button's callback never waits).
        self.live = w.HTML(value="")
        self.hide_static = w.HTML(value="")  # set when displayed: hides the static twin
        self.asks = w.VBox([])
        self.settle_box = w.VBox([])
        if self.conversation is None:  # a plain list of messages has nothing to resume
            self.resume_button.layout.display = "none"
        self.actions = w.HBox([self.repair_button, self.resume_button])
        self.root = w.VBox(
            [
                self.title,
                self.hide_static,
                self.findings,
                self.actions,
                self.asks,
                self.live,
                w.HBox([self.search, self.match_prev, self.match_next, self.match_label, self.show, self.role, self.kind],
                       layout=w.Layout(flex_flow="row wrap", align_items="center")),
                w.HBox([self.prev_button, self.page_label, self.next_button, self.status],
                       layout=w.Layout(flex_flow="row wrap", align_items="center")),
                self.cards,
                self.settle_box,
                self.pending_html,
            ]
        )
        self.root.add_class("pk-view")
        self.search.observe(lambda _change: self._new_search(), names="value")
        self.match_prev.on_click(lambda _b: self.step(-1))
        self.match_next.on_click(lambda _b: self.step(1))
        for control in (self.show, self.role, self.kind):
            control.observe(lambda _change: self.go_to(0), names="value")
        self.repair_button.on_click(lambda _b: self.repair())
        self.resume_button.on_click(lambda _b: self._resume_clicked())
        self.prev_button.on_click(lambda _b: self.go_to(self.page - 1))
        self.next_button.on_click(lambda _b: self.go_to(self.page + 1))
        self._render()

    # data ------------------------------------------------------------------

    @property
    def messages(self) -> list[Message]:
        return list(self._messages)

    def changes_frame(self) -> pd.DataFrame:
        return frames.changes_frame(self.repaired) if self.repaired else frames.changes_frame(Repaired([]))

    def interrupted_frame(self) -> pd.DataFrame:
        tools = getattr(self.conversation, "tools", None)
        return frames.interrupted_frame(self.repaired or Repaired([]), tools)

    def cards_page(self) -> Page:
        """The viewer's cards and findings for the history (repaired, or as repair would do it)."""
        r = self.repaired or self._preview
        key = (id(self._messages), len(self._messages), id(r))
        if getattr(self, "_page_key", None) != key:
            title = self.title_text or f"{len(self._messages)} messages"
            if self.inspection is not None and getattr(self.inspection, "repaired", None) is r:
                self._page = page_of(self.inspection, title=title, max_chars=CARD_CHARS)
            else:
                i = self.inspection
                self._page = build_page(
                    self._messages, r, self.problems, title=title,
                    source_format=getattr(i, "format", None),
                    markers=getattr(i, "markers", ()) or (),
                    skipped=getattr(i, "skipped", None),
                    warnings=getattr(i, "warnings", ()) or (),
                    pending=getattr(i, "pending_approval", ()) or (),
                    abandoned=getattr(i, "abandoned", ()) or (),
                    details=getattr(i, "details", None),
                    max_chars=CARD_CHARS,
                )
            self._page_key = key
        return self._page

    def _inspect_conversation(self) -> Any:
        from ..transcripts.inspection import conversation_inspection

        return conversation_inspection(self.conversation)

    def card_rows(self) -> list[int]:
        """Rows of ``page()`` the filters and the search select, before paging."""
        page = self.cards_page()
        n = len(page.rows)
        if self.kind.value != "any":
            rows: Sequence[int] = [
                k for k, r in enumerate(page.rows) if r.kinds and (self.kind.value == "changed" or self.kind.value in r.kinds)
            ]
        elif self.show.value == "all" or n <= SMALL:
            rows = range(n)
        else:
            rows = focus_rows(page, context=CONTEXT, first=0, last=LAST)
        role, q = self.role.value, self.search.value.strip().lower()
        return [k for k in rows if (role == "all" or page.rows[k].role == role) and (not q or q in page.rows[k].text)]

    @property
    def id_prefix(self) -> str:
        """What this view puts before every id of its cards (its static twin uses another)."""
        return f"w{self._key}-"

    @property
    def pages(self) -> int:
        return max(1, -(-len(self.card_rows()) // PAGE_ROWS))

    def matches(self) -> list[tuple[int, int]]:
        """(row, matches in it) for each selected row the search finds, in order."""
        q = self.search.value.strip().lower()
        if not q:
            return []
        page = self.cards_page()
        return [(k, page.rows[k].text.count(q)) for k in self.card_rows()]

    def step(self, direction: int = 1) -> None:
        """The next (or previous) match of the search: the cards start at its message, the match
        marked apart from the others, and the label says which of how many it is."""
        found = self.matches()
        total = sum(n for _, n in found)
        if not total:
            self.match = None
            self._render()
            return
        self.match = (direction - 1) // 2 % total if self.match is None else (self.match + direction) % total
        self._render()

    def _new_search(self) -> None:
        self.go_to(0)

    # actions ---------------------------------------------------------------

    def go_to(self, page: int) -> None:
        self.page = page
        self.match = None
        self._render()

    def repair(self) -> Repaired:
        if self.conversation is not None:
            self.conversation.reload()
            self.inspection = self._inspect_conversation()
            self.problems = list(self.inspection.problems)
            self.repaired = self.inspection.repaired
            self._messages = self.inspection.messages
        elif self.inspection is not None and getattr(self.inspection, "repaired", None) is not None:
            self.repaired = self.inspection.repaired  # the inspection's repair: the same texts as its report
        else:
            self.repaired = repair_history(self._messages, is_read_only=self.is_read_only)
        self._preview = self.repaired
        self._render()
        return self.repaired

    def resume(self, **kwargs: Any) -> Any:
        """Continue the conversation, drawing it in the view. A call that needs your answer is
        asked here, in the view's own box, without waiting: its buttons carry on (so the
        kernel is never blocked by a button's callback). Returns the last turn, or None while a
        question is open."""
        if self.conversation is None:
            raise RuntimeError("Resume needs a Conversation; this view shows a plain message list")
        from ..conversation.approval import ApprovalDeferred

        convo = self.conversation
        self.status.value = "resuming\u2026"
        had = getattr(convo, "live_into", None)
        if hasattr(convo, "live_into"):
            convo.live_into = self.live
        try:
            with convo.approval.deferring():
                turn = convo.resume(**kwargs)
        except ApprovalDeferred as waiting:
            self._ask(waiting.call, kwargs)
            return None
        except BaseException as exc:
            self.status.value = f"resume stopped: {type(exc).__name__}: {exc}"
            self._messages = convo.messages
            self.repaired = convo.repaired
            self._render()
            raise
        finally:
            if hasattr(convo, "live_into"):
                convo.live_into = had
        self._messages = convo.messages
        self.repair()
        return turn

    def _resume_clicked(self) -> None:
        self.asks.children = []  # the questions of an earlier Resume, answered: start afresh
        self.resume()

    def _ask(self, call: Any, kwargs: dict[str, Any]) -> None:
        from .approval import ApprovalWidget

        def answered(decision: Any) -> None:
            assert self.conversation is not None
            self.conversation.approval.answer(call.id, decision)
            self.resume(**kwargs)
            widget.finished(f"{widget.status.value}: {self._how_it_ended(call.id)}")

        from ..conversation.approval import hints_of

        assert self.conversation is not None
        widget = ApprovalWidget(
            call, on_decide=answered, hints=hints_of(self.conversation.tools, call.name),
            check=self.conversation.approval.check(call),
        )
        self.asks.children = [*self.asks.children, widget.root]
        self._messages = self.conversation.messages if self.conversation is not None else self._messages
        self.repaired = self.conversation.repaired if self.conversation is not None else self.repaired
        self._render()
        self.status.value = f"waiting for your answer about {call.name} (call id {call.id}) in the box above"

    def _how_it_ended(self, call_id: str) -> str:
        assert self.conversation is not None
        mark = self.conversation.store.call_marks(self.conversation.id).get(call_id)
        if mark is None:
            return "not run"
        kind = mark.detail.get("kind")
        state: str = mark.state
        return {"finished": "done" if kind == "ok" else str(kind), "stopped": "stopped"}.get(state, state)

    def settle(self, call_id: str, how: str, note: str | None = None) -> Any:
        """One of the three actions on an interrupted call (see ``Conversation.settle``); what
        went wrong is shown in the status line, and the view refreshes from the store."""
        if self.conversation is None:
            raise RuntimeError("settling a call saves to a store: use the view of a Conversation")
        from ..conversation.approval import SettleError

        try:
            saved = self.conversation.settle(call_id, how, note=note)
        except SettleError as exc:
            self.status.value = f"not saved: {exc}"
            return None
        self.repair()
        what = {"ran": "recorded what you entered", "run": "ran it and saved its result",
                "model": "left it to the model"}[how]
        self.status.value = f"{call_id}: {what}. " + self.status.value
        return saved

    # rendering ---------------------------------------------------------------

    def _status_text(self) -> str:
        """The counts every view gives (``viewer.headline``), then what Repair did."""
        said = "; ".join(headline(self.cards_page()))
        r = self.repaired
        if r is None:
            p = self._preview
            return said + (f"; {len(p.pending)} waiting for approval" if p.pending else "")
        if not r.changes:
            return f"repaired: nothing to change ({len(self._messages)} messages are valid as they are)"
        return f"repaired: {len(r.changes)} change(s); {said}"

    def _render(self) -> None:
        card_rows = self.card_rows()
        pages = max(1, -(-len(card_rows) // PAGE_ROWS))
        self.page = min(max(0, self.page), pages - 1)
        at, current = self._current_match(card_rows)
        start = self.page * PAGE_ROWS if at is None else at
        if at is not None:
            self.page = at // PAGE_ROWS
        cut = card_rows[start:start + PAGE_ROWS]
        self.prev_button.disabled = start == 0
        self.next_button.disabled = start + PAGE_ROWS >= len(card_rows)
        self.page_label.value = f"page {self.page + 1} of {pages}" if at is None else \
            f"from message row {start + 1} of {len(card_rows)}"
        page = self.cards_page()
        prefix = self.id_prefix
        self.findings.value = f'<div class="pk-view">{scoped(findings_html(page, limit=LIST_CAP), prefix)}</div>'
        q = self.search.value.strip()
        found = f"{len(card_rows)} row(s) match \u201c{html.escape(q)}\u201d" if q else ""
        marked = (lambda k, text: highlight(text, q, current if k == (card_rows[at] if at is not None else -1) else None)[0]) \
            if q else None
        cards = rows_html(page, cut, mark=marked)
        self.cards.value = f'<div class="pk-view"><div class="pk-lbl">{found}</div>{scoped(cards, prefix)}</div>'
        finished = page.valid and (self.conversation is None or self._finished())
        self.actions.layout.display = "none" if finished else None
        self._render_calls()
        self.status.value = f"{self._status_text()}; showing {len(cut)} of {len(page.rows)} rows"

    def _current_match(self, card_rows: list[int]) -> tuple[int | None, int | None]:
        """Where the current match is: its row's place among the selected rows, and its number
        among that row's matches; the label says which match of how many it is."""
        found = self.matches()
        total = sum(n for _, n in found)
        self.match_prev.disabled = self.match_next.disabled = not total
        if self.match is None or not total:
            self.match_label.value = f"{total} match(es)" if self.search.value.strip() else ""
            return None, None
        left = self.match % total
        for k, n in found:
            if left < n:
                self.match_label.value = f"match {self.match % total + 1} of {total}"
                return card_rows.index(k), left
            left -= n
        return None, None

    def _render_calls(self) -> None:
        r = self.repaired or self._preview  # before Repair too: what repair will say
        rows: dict[str, _SettleRow] = {}
        if self.conversation is not None:
            for call in self.conversation.approval.open_interrupted()[:LIST_CAP]:
                if not call.read_only:  # a read-only call is safe to call again: nothing to settle
                    rows[call.id] = self.settle_rows.get(call.id) or _SettleRow(self, call)
        self.settle_rows = rows
        self.settle_box.children = [row.root for row in rows.values()]
        pending = r.pending
        self.pending_html.value = (
            "<b>waiting for approval</b> (they never started; resume() asks again):<ul>"
            + "".join(
                f"<li><code>{html.escape(p.name)}</code>(<code>{html.escape(_one_line(p.arguments))}</code>) "
                f"<small>call id {html.escape(p.id)}</small></li>"
                for p in pending[:LIST_CAP]
            )
            + "</ul>"
            if pending
            else ""
        )

    def _finished(self) -> bool:
        """The last message is the model's answer with no call open: nothing to resume."""
        last = self._messages[-1] if self._messages else None
        return last is not None and last.role == "assistant" and not getattr(last, "tool_calls", None)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The widget, plus the same cards as static HTML and the findings as text: what a saved,
        exported or GitHub-rendered notebook shows without a kernel."""
        page = self.cards_page()
        data = dict(self.root._repr_mimebundle_())
        data["text/html"] = static_html(page, prefix=f"b{self._key}-")
        data["text/plain"] = text_summary(page)
        return data

    def _ipython_display_(self) -> None:
        """Two outputs: the static cards, then the widget alone. A page that saved the widget
        state (``jupyter nbconvert --execute``'s default) renders only the widget of an output
        that has one, through a script from a CDN: offline it stays blank, so the cards must be
        an output of their own. Where the widget does render it hides them (a style in it
        names this display), so a live notebook shows the view once."""
        from uuid import uuid4

        page = self.cards_page()
        key = uuid4().hex
        display({"text/html": f'<div class="pk-static" data-pk-view="{key}">{static_html(page, prefix=f"s{self._key}-")}</div>',
                 "text/plain": text_summary(page)}, raw=True)
        self.hide_static.value = f'<style>.jp-OutputArea-child:has(.pk-static[data-pk-view="{key}"]),' \
            f' .pk-static[data-pk-view="{key}"] {{display: none}}</style>'
        display({"application/vnd.jupyter.widget-view+json":
                 {"model_id": self.root.model_id, "version_major": 2, "version_minor": 0},
                 "text/plain": "(the interactive view: run the cell to use it)"}, raw=True)


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
        display(self.root)
