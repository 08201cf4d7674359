"""The viewer's cards without a browser: alignment, findings, escaping, the widget's static display."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import providerkit_nb as pk
from providerkit_nb.core.messages import ensure_messages
from providerkit_nb.viewer import build_page, report_html, static_html, text_summary

FIXTURES = Path(__file__).resolve().parents[1] / "transcripts" / "fixtures"


def _broken() -> list[dict]:
    return [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "a", "name": "read_file", "arguments": "{}"}, {"id": "b", "name": "write_file", "arguments": "{}"}]},
        {"role": "tool", "tool_call_id": "a", "name": "read_file", "content": "text"},
        {"role": "user", "content": "and then?"},
    ]


def test_before_and_after_stay_aligned_with_the_inserted_result_in_its_own_row() -> None:
    msgs = ensure_messages(_broken())
    repaired = pk.repair_history(msgs)
    page = build_page(msgs, repaired, pk.validate_history(msgs))
    assert [(r.before, r.after) for r in page.rows] == [(0, 0), (1, 1), (2, 2), (None, 3), (3, 4)]
    inserted = page.rows[3]
    assert inserted.before_html == "" and "result added by repair" in inserted.after_html
    # the lost call is marked on its stored card, with the text the model reads instead
    card = page.rows[1].before_html
    assert "lost: no result was stored for this call" in card
    assert "It may have partly run, so check its effect before calling it again." in card
    assert [f.kind for f in page.findings][:1] == ["lost_call"]
    assert page.findings[0].call_id == "b" and page.findings[0].index == 1


def test_the_langgraph_error_is_a_finding_and_the_legend_lists_only_kinds_that_occur() -> None:
    report = pk.inspect(FIXTURES / "langgraph.sqlite", thread="tool-raised")
    page = report.page()
    assert page.kinds() == ["lost_call", "tool_error", "added_interrupted_result"]
    errors = [f for f in page.findings if f.kind == "tool_error"]
    assert len(errors) == 1 and "disk full" in errors[0].title
    html = static_html(page)
    legend = re.search(r'class="pk-legend[^"]*">(.*?)</div>', html)
    assert legend is not None
    assert "renamed" not in legend.group(1) and "dropped" not in legend.group(1)
    assert ">None<" not in html and " None " not in html


def test_a_valid_history_says_so_and_the_view_offers_no_repair() -> None:
    msgs = [pk.UserMessage("hi"), pk.AssistantMessage("hello")]
    page = build_page(msgs)
    assert page.valid and "valid as stored" in static_html(page)
    assert "valid as stored" in text_summary(page)
    from providerkit_nb.notebook.widgets import HistoryView

    view = HistoryView(msgs)
    assert view.actions.layout.display == "none"
    broken = HistoryView(_broken())
    assert broken.actions.layout.display != "none"


def test_text_cannot_close_the_data_tag(monkeypatch) -> None:
    evil = '</script><script>window.pwned=1</script><!--'
    msgs = [pk.UserMessage(evil), pk.AssistantMessage(evil)]
    # a short page holds its rows in the document: the text is escaped there, the page's one script is its own
    page_html = report_html(build_page(msgs))
    assert page_html.count("<script") == 1 and page_html.count("</script>") == 1
    assert page_html.count("&lt;/script&gt;&lt;script&gt;window.pwned=1") == 2
    # a long one carries them as data: nothing inside can close the tag
    from providerkit_nb.viewer import page as page_module

    monkeypatch.setattr(page_module, "ALL_ROWS", 1)
    page_html = report_html(build_page(msgs))
    assert page_html.count("<script") == 2 and page_html.count("</script>") == 2
    data = re.search(r'<script type="application/json" id="pk-data">(.*?)</script>', page_html, re.S)
    assert data is not None
    rows = json.loads(data.group(1))["rows"]
    assert "&lt;/script&gt;&lt;script&gt;window.pwned=1" in rows[0]["h"]  # the text survives, escaped


def test_the_rich_display_carries_static_html_and_text_next_to_the_widget() -> None:
    from providerkit_nb.notebook.widgets import HistoryView

    bundle = HistoryView(_broken())._repr_mimebundle_()
    assert set(bundle) >= {"text/plain", "text/html", "application/vnd.jupyter.widget-view+json"}
    assert "lost: no result was stored for this call" in bundle["text/html"]
    assert "lost_call at message 1" in bundle["text/plain"]
    report = pk.inspect(FIXTURES / "langgraph.sqlite", thread="tool-raised")
    assert "disk full" in report._repr_mimebundle_()["text/html"]


def test_settle_actions_are_ordered_by_safety() -> None:
    from providerkit_nb.notebook.widgets import HistoryView, _SettleRow

    view = HistoryView(_broken())
    row = _SettleRow(view, pk.repair_history(_broken()).interrupted[0])
    labels = [b.description for box in row.root.children[1:] for b in box.children if hasattr(b, "on_click")]
    assert labels == ["Leave it to the model", "It ran: record what happened", "Run it again"]
    assert row.model_button.button_style == "primary" and row.run_button.button_style == ""


def test_a_fresh_load_of_the_stored_history_aligns_by_value() -> None:
    """The stored side read again from a store (other objects, equal values) still pairs up."""
    repaired = pk.repair_history(ensure_messages(_broken()))
    fresh = ensure_messages(_broken())
    page = build_page(fresh, repaired)
    assert [(r.before, r.after) for r in page.rows] == [(0, 0), (1, 1), (2, 2), (None, 3), (3, 4)]


def test_a_dropped_and_a_renamed_message_keep_their_rows() -> None:
    msgs = ensure_messages([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": ""},  # an empty placeholder: dropped
        {"role": "assistant", "content": "", "tool_calls": [{"id": "x", "name": "read_file", "arguments": "{}"}]},
        {"role": "tool", "tool_call_id": "x", "name": "read_file", "content": "1"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "x", "name": "read_file", "arguments": "{}"}]},
        {"role": "tool", "tool_call_id": "x", "name": "read_file", "content": "2"},
    ])
    repaired = pk.repair_history(msgs)
    rows = [(r.before, r.after) for r in build_page(msgs, repaired).rows]
    assert rows == [(0, 0), (1, None), (2, 1), (3, 2), (4, 3), (5, 4)]


def test_two_views_on_one_notebook_page_link_each_to_its_own_cards() -> None:
    from providerkit_nb.notebook.widgets import HistoryView

    one, two = (HistoryView(_broken())._repr_mimebundle_()["text/html"] for _ in range(2))
    ids = [set(re.findall(r' id="([^"]+)"', h)) for h in (one, two)]
    assert ids[0] and ids[1] and not ids[0] & ids[1]
    for h, own in zip((one, two), ids, strict=True):
        targets = set(re.findall(r'href="#([^"]+)"', h))
        assert targets and targets <= own  # every link lands on a card of the same output


def test_a_call_head_says_what_the_call_does_in_one_line() -> None:
    """As Claude Code's own viewers do: the call's stated purpose and its command, query, URL or
    path in the head, not only inside the arguments' JSON."""
    msgs = ensure_messages([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "name": "Bash", "arguments": json.dumps(
                {"command": "mix phx.server", "description": "Start <the> server", "run_in_background": True})},
            {"id": "c2", "name": "WebSearch", "arguments": json.dumps({"query": "xterm.js scroll"})},
            {"id": "c3", "name": "odd", "arguments": "not json"},
            {"id": "c4", "name": "Glob", "arguments": json.dumps({"pattern": "mix.exs", "path": "/home/x"})}]},
        {"role": "tool", "tool_call_id": "c1", "name": "Bash", "content": "ok"},
        {"role": "tool", "tool_call_id": "c2", "name": "WebSearch", "content": "ok"},
        {"role": "tool", "tool_call_id": "c3", "name": "odd", "content": "ok"},
        {"role": "tool", "tool_call_id": "c4", "name": "Glob", "content": "ok"},
    ])
    card = build_page(msgs).rows[1].before_html
    heads = re.findall(r'<div class="pk-callhead">(.*?)</div>', card)
    assert len(heads) == 4
    # a command's head says its purpose; the command itself is the shell line right below it
    assert "Start &lt;the&gt; server" in heads[0] and "mix phx.server" not in heads[0]
    assert '<pre class="pk-code pk-cmd"><span class="pk-ps">$ </span>mix phx.server</pre>' in card
    assert "<code class=\"pk-gist\">xterm.js scroll</code>" in heads[1]
    assert "pk-gist" not in heads[2]
    assert "<code class=\"pk-gist\">mix.exs</code>" in heads[3]  # the pattern, not the folder


def test_blank_lines_around_prose_do_not_push_the_card_apart() -> None:
    msgs = ensure_messages([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "\n\nLet me check.\n\n", "reasoning": "Think.\n\n"},
    ])
    card = build_page(msgs).rows[1].before_html
    assert '<div class="pk-text">Let me check.</div>' in card
    assert '<div class="pk-text pk-thinking">Think.</div>' in card


def test_a_rejected_call_says_so_on_its_result(upstream_transcripts_dir: Path) -> None:
    """short.jsonl: the user rejected both calls of message 1 (``toolUseResult`` says so); the
    call's card marks its result, not only the result's own row."""
    report = pk.inspect(upstream_transcripts_dir / "claude-code" / "short.jsonl")
    card = report.page().rows[1].before_html
    results = re.findall(r'<div class="pk-result[^"]*">(.*?)</div>', card)
    assert len(results) == 2
    for r in results:
        assert '<span class="pk-badge pk-bad">rejected</span>' in r
    assert card.count('class="pk-result pk-bad"') == 2


def test_tokens_say_how_much_of_the_input_the_prompt_cache_served(upstream_transcripts_dir: Path) -> None:
    """short.jsonl's assistant turn: usage 3 input, 13,835 cache creation, 11,515 cache read, 13 out."""
    report = pk.inspect(upstream_transcripts_dir / "claude-code" / "short.jsonl")
    head = re.search(r'<div class="pk-head">(.*?)</div>', report.page().rows[1].before_html)
    assert head is not None
    assert "25,353 in (11,515 cache read, 13,835 cache write), 13 out" in head.group(1)


def test_a_lost_call_is_marked_where_it_was_made_when_its_id_was_used_before():
    # an agent that restarted numbers its calls from call_0 again: the first call_0 returned,
    # the second did not; the finding and the red call belong to the second (message 4)
    msgs = [
        pk.UserMessage("go"),
        pk.AssistantMessage("", tool_calls=[pk.ToolCall("call_0", "read_file", '{"path": "a"}')]),
        pk.ToolMessage("call_0", "read_file", "A"),
        pk.UserMessage("again"),
        pk.AssistantMessage("", tool_calls=[pk.ToolCall("call_0", "write_file", '{"path": "b"}')]),
    ]
    page = build_page(msgs, pk.repair_history(msgs))
    lost = [f for f in page.findings if f.kind == "lost_call"]
    assert [(f.index, f.title) for f in lost] == [(4, "write_file (call_0) never returned")]
    assert "lost_call" not in page.rows[1].kinds and "lost_call" in page.rows[4].kinds


def test_a_broken_coding_agent_session_names_the_command_that_hands_it_back(tmp_path: Path) -> None:
    from providerkit_nb.viewer import findings_html, page_of

    src = FIXTURES / "coding_agents" / "claude_code" / "killed_mid_tool.jsonl"
    session = next(json.loads(line)["sessionId"] for line in src.read_text().splitlines() if '"sessionId"' in line)
    html = findings_html(page_of(pk.inspect(src)))
    assert f"providerkit-nb repair {src} --to claude_code --thread {session}</code>" in html
    # a path a shell would split, or that holds markup, is quoted for the shell and escaped
    odd = tmp_path / "it's <b>here.jsonl"
    odd.write_bytes(src.read_bytes())
    html = findings_html(page_of(pk.inspect(odd)))
    (code,) = re.findall(r'<code class="pk-handback"[^>]*>(.*?)</code>', html)
    assert "<b>" not in code and "&lt;b&gt;" in code
    assert unescape(code) == f"providerkit-nb repair '{tmp_path}/it'\"'\"'s <b>here.jsonl' --to claude_code --thread {session}"
    # a canonical history is not an agent's session: nothing to hand back
    canonical = tmp_path / "history.jsonl"
    canonical.write_text("".join(json.dumps(m) + "\n" for m in _broken()))
    assert "pk-handback" not in findings_html(page_of(pk.inspect(canonical)))
