"""A tool result marked as an error (``details[i]["error"]``) is badged, filterable and counted,
on both sides of a repair, and is not a finding."""

from __future__ import annotations

import providerkit_nb as pk
from providerkit_nb.core.messages import ensure_messages
from providerkit_nb.viewer import build_page, report_html

BADGE = '<span class="pk-badge pk-bad">error</span>'


def test_the_badge_follows_the_result_to_the_sent_side() -> None:
    msgs = ensure_messages([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "a", "name": "read_file", "arguments": "{}"}, {"id": "b", "name": "write_file", "arguments": "{}"}]},
        {"role": "tool", "tool_call_id": "a", "name": "read_file", "content": "boom"},
    ])
    page = build_page(msgs, pk.repair_history(msgs), details={2: {"error": True}})
    assert [(r.before, r.after) for r in page.rows] == [(0, 0), (1, 1), (2, 2), (None, 3)]
    assert [r.kinds for r in page.rows] == [[], ["lost_call", "error_result"], ["error_result"],
                                            ["added_interrupted_result"]]
    for r in page.rows[1:3]:
        assert r.before_html.count(BADGE) == 1 and r.after_html.count(BADGE) == 1
    assert BADGE not in page.rows[3].after_html  # the result repair added is no error
    assert page.errors == 1 and [f.kind for f in page.findings] == ["lost_call"]
    assert "1 tool result(s) were errors" in report_html(page)


def test_no_details_no_badge() -> None:
    msgs = ensure_messages([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "name": "x", "arguments": "{}"}]},
        {"role": "tool", "tool_call_id": "a", "name": "x", "content": "fine"},
    ])
    page = build_page(msgs, details={2: {"time": "2026-01-01 00:00:00", "error": False}})
    assert page.errors == 0 and all(BADGE not in r.before_html for r in page.rows)
    assert "error_result" not in page.kinds() and "were errors" not in report_html(page)
