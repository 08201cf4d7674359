"""HistoryView on long histories: the rows repair touched with context and the last messages by
default, pages and filters for the rest, and a payload bounded by the page, not the history.
The build-time limit (< 0.5 s for 10,000 messages) is measured in bench/views.py, not here."""

from __future__ import annotations

import pandas as pd
import pytest

import providerkit_nb as pk
from bench.repair import make_history
from providerkit_nb.notebook import frames
from providerkit_nb.notebook.widgets import (
    HistoryView,
    payload_bytes,
    select_rows,
)
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


def _rows(html_value: str, cls: str = "pk-row") -> int:
    return html_value.count(f'<tr class="{cls}"')


def _indexes(html_value: str) -> list[int]:
    import re

    return [int(i) for i in re.findall(r'<tr class="pk-row"[^>]*><td>(\d+)</td>', html_value)]


def test_the_default_view_shows_touched_rows_with_context_and_the_last_messages(long_history):
    view = HistoryView(long_history)
    expected = pk.repair_history(long_history)
    stored_at = {id(m): i for i, m in enumerate(long_history)}
    touched_set = {c.index_before for c in expected.changes if c.index_before is not None}
    for c in expected.changes:  # an added result shows at the stored message it follows
        if c.index_before is None and c.index_after is not None:
            a = c.index_after - 1
            while id(expected.messages[a]) not in stored_at:
                a -= 1
            touched_set.add(stored_at[id(expected.messages[a])])
    touched = sorted(touched_set)
    assert len(touched) > 50  # the fixture really is broken in many places
    shown = _indexes(view.before.value)
    assert len(shown) == PAGE_ROWS
    # page 1 holds the first touched rows, each with its context, in order
    first = touched[0]
    assert list(range(max(0, first - CONTEXT), first + CONTEXT + 1)) == shown[: first + CONTEXT + 1 - max(0, first - CONTEXT)]
    assert shown == sorted(shown) and _rows(view.before.value, "pk-gap") > 0
    # the last page ends with the last messages
    view.go_to(view.pages - 1)
    last = _indexes(view.before.value)
    assert last[-LAST:] == list(range(len(long_history) - LAST, len(long_history)))
    # every touched row is on some page
    seen: set[int] = set()
    for page in range(view.pages):
        view.go_to(page)
        seen.update(_indexes(view.before.value))
    assert set(touched) <= seen


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
    before, after = view.shown_rows()
    assert after == sorted(view.highlights()) and len(before) >= len(after) - 10


def test_huge_messages_are_cut_in_the_table_and_kept_in_the_frame():
    big = "x" * 3 * MB
    history = [pk.UserMessage(big), pk.AssistantMessage("<b>" + big + "</b>")]
    view = HistoryView(history)
    assert payload_bytes(view.root) < 20_000
    assert "<b>" not in view.before.value  # escaped, as every transcript text is
    assert view.frame().shape == (2, 7)  # the seven history columns


def test_pages_and_filters_reach_every_row(long_history):
    view = HistoryView(long_history)
    view.show.value = "all"
    assert view.pages == len(long_history) // PAGE_ROWS
    assert view.prev_button.disabled and not view.next_button.disabled
    view.next_button.click()
    assert _indexes(view.before.value) == list(range(PAGE_ROWS, 2 * PAGE_ROWS))
    assert view.page_label.value == f"page 2 of {view.pages}"
    view.role.value = "tool"  # a filter goes back to page 1
    assert view.page == 0
    shown = _indexes(view.before.value)
    assert shown and all(long_history[i].role == "tool" for i in shown)
    view.role.value = "all"
    view.repair()
    view.kind.value = "renamed_call"
    marks = view.highlights()
    after = _indexes(view.after.value)
    assert after == sorted(i for i, k in marks.items() if k == "renamed_call")[:PAGE_ROWS]
    assert view.after.value.count('data-change="renamed_call"') == len(after)


def test_select_rows_keeps_a_short_history_whole_and_merges_overlapping_context():
    roles = ["user"] * 200
    assert select_rows(30, {}, roles[:30]) == list(range(30))
    rows = select_rows(200, {50: "k", 52: "k"}, roles)
    assert rows == list(range(48, 55)) + list(range(190, 200))
    assert select_rows(200, {50: "a", 52: "b"}, roles, kind="b") == [52]


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
