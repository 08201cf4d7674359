"""HistoryView on long histories: the rows repair touched with context and the last messages by
default, pages and filters for the rest, and a payload bounded by the page, not the history.
The build-time limit (< 0.5 s for 10,000 messages) is measured in bench/views.py, not here."""

from __future__ import annotations

import re

import pandas as pd
import pytest

import providerkit_nb as pk
from bench.repair import make_history
from providerkit_nb.notebook import frames
from providerkit_nb.notebook.widgets import HistoryView, payload_bytes
from providerkit_nb.testing import simulate

# the view's page: 100 rows, each touched row with 2 rows of context, the last 10 messages
PAGE_ROWS, CONTEXT, LAST = 100, 2, 10

# the exact texts, pinned here (not imported from the code under test)
ENTERED = (
    "[Entered by the user: this call was interrupted before it returned; the user checked what "
    "happened and wrote the following.]"
)
MAY_HAVE_RUN = (
    "This call was interrupted before it returned. It may have partly run, so check its effect "
    "before calling it again."
)

MB = 1_000_000


@pytest.fixture(scope="module")
def long_history() -> list[pk.Message]:
    return make_history(10_000, broken=True)


def _stored(view: HistoryView) -> list[int]:
    """Indexes of the stored messages whose cards the view shows now."""
    return [int(i) for i in re.findall(r'class="pk-card[^"]*" id="w\d+-m-(\d+)"', view.cards.value)]


def _rows(view: HistoryView) -> list[str]:
    """The HTML of each aligned row (stored card, and what is sent in its place) shown now."""
    return view.cards.value.split('<div class="pk-row')[1:]


def _touched(history: list[pk.Message]) -> list[int]:
    """Stored rows repair touches; an added result counts at the stored message it follows."""
    expected = pk.repair_history(history)
    stored_at = {id(m): i for i, m in enumerate(history)}
    touched = {c.index_before for c in expected.changes if c.index_before is not None}
    for c in expected.changes:
        if c.index_before is None and c.index_after is not None:
            a = c.index_after - 1
            while id(expected.messages[a]) not in stored_at:
                a -= 1
            touched.add(stored_at[id(expected.messages[a])])
    return sorted(touched)


def test_the_default_view_shows_touched_rows_with_context_and_the_last_messages(long_history):
    view = HistoryView(long_history)
    touched = _touched(long_history)
    assert len(touched) > 50  # the fixture really is broken in many places
    assert len(_rows(view)) == PAGE_ROWS
    shown = _stored(view)
    assert "message(s) not shown" in view.cards.value  # in stored order, but for results repair moves
    # page 1 starts at the first touched row's context, in order
    first = touched[0]
    assert shown[0] <= max(0, first - CONTEXT) and set(range(max(0, first - CONTEXT), first + 1)) <= set(shown)
    # the last page ends with the last messages
    view.go_to(view.pages - 1)
    # (the last of the last LAST rows is a result repair adds: it has no stored card)
    assert _stored(view)[-(LAST - 1):] == list(range(len(long_history) - LAST + 1, len(long_history)))
    # every touched row is on some page, and nothing in between the context windows
    seen: set[int] = set()
    for page in range(view.pages):
        view.go_to(page)
        seen.update(_stored(view))
    assert set(touched) <= seen and len(seen) < len(long_history) // 2


def test_the_payload_stays_under_a_megabyte_whatever_is_shown(long_history):
    view = HistoryView(long_history)
    sizes = {"built": payload_bytes(view.root)}
    view.repair_button.click()
    sizes["repaired"] = payload_bytes(view.root)
    view.show.value = "all"
    sizes["all"] = payload_bytes(view.root)
    view.go_to(view.pages - 1)
    sizes["all, last page"] = payload_bytes(view.root)
    view.kind.value = "changed"
    sizes["changed only"] = payload_bytes(view.root)
    assert all(size < MB for size in sizes.values()), sizes
    rows = _rows(view)
    # every row shown carries a change or a finding (a lost call is marked on its call)
    assert rows and all(any(mark in r for mark in ("pk-changed", "pk-flagged", "pk-call pk-lost")) for r in rows)


def test_huge_messages_are_cut_in_the_cards_and_kept_in_the_frame():
    big = "x" * 3 * MB
    history = [pk.UserMessage(big), pk.AssistantMessage("<b>" + big + "</b>")]
    view = HistoryView(history)
    assert payload_bytes(view.root) < 20_000
    assert "<b>x" not in view.cards.value and "&lt;b&gt;x" in view.cards.value  # escaped
    assert pk.history_frame(view.messages).shape == (2, 7)  # the seven history columns, kept whole


def test_pages_and_filters_reach_every_row(long_history):
    view = HistoryView(long_history)
    view.show.value = "all"
    added = [c for c in pk.repair_history(long_history).changes if c.index_before is None]
    assert view.pages == -(-(len(long_history) + len(added)) // PAGE_ROWS)  # one row per stored or added message
    assert view.prev_button.disabled and not view.next_button.disabled
    first = _stored(view)
    view.next_button.click()
    second = _stored(view)
    assert len(_rows(view)) == PAGE_ROWS and not set(first) & set(second) and min(second) > min(first)
    assert view.page_label.value == f"page 2 of {view.pages}"
    seen: set[int] = set()
    for page in range(view.pages):  # the pages together hold every stored message once
        view.go_to(page)
        here = _stored(view)
        assert not seen & set(here)
        seen.update(here)
    assert seen == set(range(len(long_history)))
    view.role.value = "tool"  # a filter goes back to page 1
    assert view.page == 0
    shown = _stored(view)
    assert shown and all(long_history[i].role == "tool" for i in shown)
    stored_roles = re.findall(r'class="pk-card pk-r-(\w+)[^"]*" id="w\d+-m-', view.cards.value)
    assert stored_roles == ["tool"] * len(shown)  # (a stray result is sent as a user note: the other side)
    view.role.value = "all"
    view.repair()
    view.kind.value = "renamed_call"
    renamed = [c for c in view.repaired.changes if c.kind == "renamed_call"]
    rows = _rows(view)
    assert len(rows) == min(PAGE_ROWS, len(renamed)) > 0
    assert all("pk-k-renamed_call" in r for r in rows)


def test_show_frame_uses_itables_when_installed(monkeypatch):
    itables = pytest.importorskip("itables")  # the tables extra; the test extra installs it
    shown: list[tuple[pd.DataFrame, dict]] = []
    monkeypatch.setattr(itables, "show", lambda df, **kw: shown.append((df, kw)))  # no notebook here
    frame = pk.history_frame([pk.UserMessage("hi")])
    frames.show_frame(frame)
    assert shown and shown[0][0] is frame and shown[0][1]["pageLength"] == 25
    assert isinstance(frame, pd.DataFrame)
    html_table = itables.to_html_datatable(frame)  # what itables sends: paging and search, client side
    assert "hi" in html_table and "<table" in html_table


# --------------------------------------------------------------------------- settling in the view


def _interrupted_conversation():
    store = pk.MemoryStore()
    tools, workspace = simulate.demo_tools()
    stopping = pk.ToolRegistry([tools.get("read_file"), simulate.stop_in_tool(tools.get("write_file"))])
    provider = simulate.ScriptedProvider(
        [
            simulate.call_turn([("read_file", {"path": "README.md"}), ("write_file", {"path": "N.md", "content": "x"})]),
            simulate.text_turn("ok"),
        ]
    )
    convo = pk.Conversation(store, "c", provider, stopping, display=False)
    with pytest.raises(KeyboardInterrupt):
        convo.send("go")
    convo.tools = tools
    return convo, store, workspace


@pytest.mark.parametrize("how", ["ran", "run", "model"])
def test_the_three_actions_in_the_view_save_and_refresh(how):
    convo, store, workspace = _interrupted_conversation()
    view = convo.view()
    view.repair_button.click()
    assert list(view.settle_rows) == ["call_2"]
    row = view.settle_rows["call_2"]
    assert "write_file" in row.label.value
    workspace.pop("N.md", None)
    if how == "ran":
        row.note.value = "It wrote N.md."
        row.ran_button.click()
        assert store.load("c")[-1].content == f"{ENTERED}\nIt wrote N.md."
    elif how == "run":
        row.run_button.click()
        assert workspace.get("N.md") == "x" and store.load("c")[-1].role == "tool"
    else:
        row.model_button.click()
        assert store.load("c")[-1].content.startswith("The user stopped this call while it was running")
    assert view.settle_rows == {} and view.settle_box.children == ()
    assert view.repaired is not None and view.repaired.interrupted == []
    assert view.status.value.startswith("call_2: ")


def test_a_ran_without_a_note_is_refused_in_the_status_line():
    convo, store, _ = _interrupted_conversation()
    view = convo.view()
    view.repair()
    n = len(store.load("c"))
    view.settle_rows["call_2"].ran_button.click()
    assert view.status.value.startswith("not saved:") and "needs a note" in view.status.value
    assert len(store.load("c")) == n and "call_2" in view.settle_rows


def test_calls_waiting_for_approval_are_listed_not_offered_as_interrupted():
    store = pk.MemoryStore()
    tools, _ = simulate.demo_tools()
    provider = simulate.ScriptedProvider([simulate.call_turn([("write_file", {"path": "N.md", "content": "<x>"})])])

    def stop(call: pk.ToolCall) -> bool:
        raise KeyboardInterrupt

    convo = pk.Conversation(store, "c", provider, tools, display=False, approve=stop)
    with pytest.raises(KeyboardInterrupt):
        convo.send("go")
    view = pk.Conversation(store, "c", provider, tools, display=False).view()
    view.repair()
    assert view.settle_rows == {} and view.repaired.interrupted == []
    assert "waiting for approval" in view.pending_html.value and "write_file" in view.pending_html.value
    assert "<x>" not in view.pending_html.value
