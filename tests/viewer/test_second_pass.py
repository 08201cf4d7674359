"""The viewer's second pass, without a browser: ids unique per view, the widget's search marks
and steps, the provider's words (or that no provider has seen it) with both numbers, one card
where a message is sent as stored, sub-agents and branches nested with their own findings,
Codex rows with times and tokens, call durations, a patch's removed lines first, a Markdown
file rendered. Expectations come from the files themselves."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

import providerkit_nb as pk
from providerkit_nb.core.messages import ensure_messages
from providerkit_nb.viewer import build_page, report_html
from tests.viewer.test_cards import _broken

FIXTURES = Path(__file__).resolve().parents[1] / "transcripts" / "fixtures"
AGENTS = FIXTURES / "coding_agents"
SUB = AGENTS / "claude_code" / "subagents_killed.jsonl"


def _ids(html: str) -> list[str]:
    return re.findall(r' id="([^"]+)"', html)


# --------------------------------------------------------------------------- ids, one per view


def test_the_widget_and_its_static_twin_never_share_an_id(monkeypatch) -> None:
    """JupyterLab shows the static twin (hidden) and the widget in one document: a finding's link
    must reach the widget's own card, so no id may occur twice."""
    from providerkit_nb.notebook import widgets

    shown: list[dict] = []
    monkeypatch.setattr("IPython.display.display", lambda obj, raw=False: shown.append(obj))
    view = widgets.HistoryView(_broken())
    view._ipython_display_()
    static = shown[0]["text/html"]
    document = static + view.findings.value + view.cards.value + view._repr_mimebundle_()["text/html"]
    ids = _ids(document)
    assert ids and [i for i, n in Counter(ids).items() if n > 1] == []
    # every in-page link of the widget goes to an id of the widget's own
    own = set(_ids(view.findings.value + view.cards.value))
    links = re.findall(r'href="#([^"]+)"', view.findings.value + view.cards.value)
    assert links and set(links) <= own


# --------------------------------------------------------------------------- the widget's search


@pytest.mark.upstream
def test_the_widgets_search_marks_every_match_and_steps_through_them(upstream_transcripts_dir: Path) -> None:
    src = upstream_transcripts_dir / "claude-code" / "tool_heavy.jsonl"
    assert src.read_text().lower().count("xterm") > 5  # the file's own text
    view = pk.inspect(src).view
    view.search.value = "xterm"
    marks = re.findall(r'<mark class="(pk-mark[^"]*)">([^<]*)</mark>', view.cards.value)
    assert len(marks) > 3 and {m.lower() for _, m in marks} == {"xterm"}
    assert not any("pk-cur" in c for c, _ in marks)  # no current match before stepping
    total = sum(n for _, n in view.matches())
    view.match_next.click()
    assert view.match_label.value == f"match 1 of {total}"
    first_row = view.card_rows()[0]
    view.match_next.click()
    view.match_next.click()
    assert view.match_label.value == f"match 3 of {total}"
    cur = re.findall(r'<mark class="pk-mark pk-cur">([^<]*)</mark>', view.cards.value)
    assert [c.lower() for c in cur] == ["xterm"]
    # the cards start at the message that holds the current match
    start = re.search(r'class="pk-card[^"]*" id="w\d+-m-(\d+)"', view.cards.value)
    assert start is not None and int(start.group(1)) >= view.cards_page().rows[first_row].before
    view.match_prev.click()
    assert view.match_label.value == f"match 2 of {total}"
    view.search.value = ""
    assert "<mark" not in view.cards.value and view.match_label.value == ""


# --------------------------------------------------------------------------- the provider's words


def test_a_lost_call_at_the_end_says_what_the_provider_will_answer_or_that_none_has_seen_it() -> None:
    msgs = ensure_messages(_broken()[:2])  # the history ends with the calls: no provider has seen them
    page = build_page(msgs, pk.repair_history(msgs), pk.validate_history(msgs))
    said = report_html(page)
    assert "no provider has seen this history yet" in said
    assert "repair_history" not in said  # our own function's name is nobody's answer
    # a Claude Code session that ends with its lost call: the words the next request would get
    report = pk.inspect(AGENTS / "claude_code" / "killed_mid_tool.jsonl")
    [lost] = report.page().lost
    assert lost.next_request and "`tool_use` ids were found without `tool_result` blocks" in lost.wording
    assert "once the conversation goes on, the provider would answer" in report.report_html()


@pytest.mark.upstream
def test_our_number_and_the_providers_path_are_both_shown(upstream_transcripts_dir: Path, tmp_path: Path) -> None:
    src = upstream_transcripts_dir / "claude-code" / "tool_heavy.jsonl"
    lines = src.read_text().splitlines(keepends=True)
    victim = next(b["id"] for x in lines for b in (json.loads(x).get("message") or {}).get("content") or []
                  if isinstance(b, dict) and b.get("name") == "WebSearch")
    cut = tmp_path / "s.jsonl"
    cut.write_text("".join(x for x in lines if f'"tool_use_id":"{victim}"' not in x.replace(" ", "")))
    [lost] = pk.inspect(cut).page().lost
    path = re.match(r"messages\.(\d+):", lost.wording)
    assert path and int(path.group(1)) != lost.index  # the provider counts its request, we count messages
    html = pk.inspect(cut).report_html()
    assert f"message #{lost.index} here is <code>messages.{path.group(1)}</code> in the provider's words" in html


# --------------------------------------------------------------------------- page weight


def test_a_message_sent_as_stored_is_one_card() -> None:
    msgs = ensure_messages(_broken())
    page = build_page(msgs, pk.repair_history(msgs), pk.validate_history(msgs))
    html = report_html(page)
    cards = re.findall(r'class="pk-card[^"]*" id="([am]-\d+)"', html)
    # the user's two messages and the read's result are sent as stored: one card each; the
    # calls' message (its lost call) and the inserted result show both sides
    assert sorted(cards) == sorted(["m-0", "m-1", "a-1", "m-2", "a-3", "m-3"])
    assert re.search(r'<div class="pk-row pk-same" id="a-4"', html)  # a link to #a-4 still lands


# --------------------------------------------------------------------------- sub-agents and branches


def test_sub_agents_hang_under_the_call_that_started_them_with_their_own_findings() -> None:
    meta = [json.loads(f.read_text()) for f in sorted((SUB.with_suffix("") / "subagents").glob("*.meta.json"))]
    depth = {m["spawnDepth"]: m for m in meta}
    report = pk.inspect(SUB)
    assert [(n.kind, n.call_id) for n in report.nested] == [("subagent", depth[1]["toolUseId"])]
    outer = report.nested[0].inspection
    assert [(n.kind, n.call_id) for n in outer.nested] == [("subagent", depth[2]["toolUseId"])]
    inner = outer.nested[0].inspection
    # each was killed mid-call: each has its own lost call, and none is the other's
    assert [r.name for r in report.interrupted] == ["Agent"]
    assert [r.name for r in outer.interrupted] == ["Agent"] and [r.name for r in inner.interrupted] == ["Bash"]
    assert depth[2]["description"] in report.nested[0].inspection.nested[0].label
    page = report.page()
    assert [f.kind for f in page.findings if f.kind == "subagent"] == ["subagent"]
    assert page.rows[1].nested and "sub-agent" in report.report_html()
    data = report.to_json()["nested"]
    assert data[0]["interrupted"] == [depth[2]["toolUseId"]] or data[0]["nested"][0]["interrupted"]


def test_the_branch_a_resume_left_is_shown_under_the_message_it_forked_from() -> None:
    src = AGENTS / "claude_code" / "after_own_resume.jsonl"
    lines = [json.loads(x) for x in src.read_text().splitlines() if x.strip()]
    on = {x["uuid"] for x in lines if x.get("type") in ("user", "assistant")}
    children = {x.get("parentUuid") for x in lines}
    killed = next(x for x in lines if x.get("type") == "assistant" and x["uuid"] not in children)  # a dead end
    call = killed["message"]["content"][0]["id"]
    report = pk.inspect(src)
    [branch] = report.nested
    assert branch.kind == "branch" and branch.index == 0  # it left after the user's first message
    assert [r.original_id for r in branch.inspection.interrupted] == [call]
    page = report.page()
    assert "off_branch" not in page.findings[-1].title  # not "not shown": it is shown
    assert page.rows[0].nested and on


# --------------------------------------------------------------------------- Codex rows


def test_codex_rows_get_their_lines_times_and_the_answers_tokens() -> None:
    src = AGENTS / "codex" / "after_own_resume.jsonl"
    records = [json.loads(x) for x in src.read_text().splitlines() if x.strip()]
    answer = next(r for r in records if r["type"] == "response_item" and r["payload"].get("role") == "assistant")
    usage = next(r["payload"]["info"]["last_token_usage"] for r in records
                 if r["type"] == "event_msg" and r["payload"].get("type") == "token_count")
    model = next(r["payload"]["model"] for r in records if r["type"] == "turn_context")
    report = pk.inspect(src)
    timed = [i for i, m in enumerate(report.messages) if report.details.get(i, {}).get("time")]
    assert len(timed) == len(report.messages)  # every row, not one in a hundred
    last = len(report.messages) - 1
    d = report.details[last]
    assert d["at"] == answer["timestamp"] and d["model"] == model
    assert d["tokens"].startswith(f"{usage['input_tokens']:,} in") and d["tokens"].endswith(f"{usage['output_tokens']:,} out")


@pytest.mark.upstream
def test_each_call_says_how_long_it_took(upstream_transcripts_dir: Path) -> None:
    src = sorted((upstream_transcripts_dir / "codex").glob("rollout-2026-*.jsonl"))[0]
    records = [json.loads(x) for x in src.read_text().splitlines() if x.strip()]
    at = {r["payload"].get("call_id"): r["timestamp"] for r in records if r["type"] == "response_item"
          and r["payload"].get("type") in ("function_call", "custom_tool_call")}
    done = {r["payload"].get("call_id"): r["timestamp"] for r in records if r["type"] == "response_item"
            and r["payload"].get("type") in ("function_call_output", "custom_tool_call_output")}
    from datetime import datetime

    page = pk.inspect(src).page()
    for cid in at:
        took = (datetime.fromisoformat(done[cid].replace("Z", "+00:00"))
                - datetime.fromisoformat(at[cid].replace("Z", "+00:00"))).total_seconds()
        assert page.durations[cid] == pytest.approx(took, abs=1.0)  # from the message that made the call
    html = report_html(page)
    assert html.count('class="pk-took"') == len(at) and "took 2.0 s" in html


# --------------------------------------------------------------------------- patches and Markdown


def test_a_codex_patch_shows_what_it_removes_before_what_it_adds() -> None:
    patch = ("*** Begin Patch\n*** Update File: app.py\n@@ def total():\n+    return sum(prices)\n"
             "-    t = 0\n-    return t\n*** End Patch")
    msgs = [pk.UserMessage("fix"), pk.AssistantMessage("", tool_calls=[pk.ToolCall("c1", "apply_patch", patch)]),
            pk.ToolMessage("c1", "apply_patch", "Success.")]
    card = build_page(msgs).rows[1].before_html
    diff = re.search(r'<pre class="pk-code pk-diff">(.*?)</pre>', card, re.S)
    assert diff is not None
    lines = re.findall(r"<(ins|del)>", diff.group(1))
    assert lines == ["del", "del", "ins"]


def test_a_written_markdown_file_is_shown_rendered_and_raw() -> None:
    content = "# Notes\n\n- **subtotal** counts quantities\n- <script>alert(1)</script>\n"
    args = json.dumps({"file_path": "/p/NOTES.md", "content": content})
    msgs = [pk.UserMessage("note it"), pk.AssistantMessage("", tool_calls=[pk.ToolCall("w", "Write", args)]),
            pk.ToolMessage("w", "Write", "File created")]
    card = build_page(msgs).rows[1].before_html
    rendered = re.search(r'<div class="pk-rendered pk-md">(.*?)</div>', card, re.S)
    assert rendered is not None and "<h1>Notes</h1>" in rendered.group(1) and "<strong>subtotal</strong>" in rendered.group(1)
    assert "<script>" not in card and "&lt;script&gt;alert(1)&lt;/script&gt;" in card  # shown as text
    assert "# Notes" in card  # and as written, numbered
    plain = json.dumps({"file_path": "/p/app.py", "content": "# not markdown\n"})
    other = build_page([pk.AssistantMessage("", tool_calls=[pk.ToolCall("x", "Write", plain)])]).rows[0].before_html
    assert "pk-rendered" not in other
