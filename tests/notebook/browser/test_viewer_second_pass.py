"""The report, second pass, in a real browser (Debian's Chromium driven by Playwright):

- a 1,000-message session holds every row in the document: the browser's own find reaches the
  last message, printing (print media, the page's beforeprint) lays out every message with its
  folds open, and with scripts off every message still reads;
- a longer session (over the page's all-rows limit) draws rows on scroll, yet search steps to a
  match deep down and printing draws them all;
- Claude Code sub-agents are shown nested under the Agent call that started them, with their
  own findings, reached by link;
- a Codex rollout killed mid-command gets times on its rows and a timeline with the break marked.

Screenshots go to ``test-output/``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import providerkit_nb as pk

from .test_viewer_report import OUTPUT, WIDTH, _long_session, _open, _search, _shot, _visible

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

REPO = Path(__file__).resolve().parents[3]
AGENTS = REPO / "tests" / "transcripts" / "fixtures" / "coding_agents"


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:
    pg = chromium.new_page(viewport={"width": WIDTH, "height": 900})
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.errors = errors
    yield pg
    assert not errors, errors
    pg.close()


def _last_output(src: Path) -> tuple[str, str]:
    """The last answer's text and the last line of the last tool output (folded in its card), from the file."""
    lines = [json.loads(x) for x in src.read_text().splitlines()]
    blocks = [b for x in lines if isinstance(x["message"]["content"], list) for b in x["message"]["content"]]
    texts = [b["text"] for b in blocks if b.get("type") == "text"]
    outputs = [b["content"] for b in blocks if b.get("type") == "tool_result"]
    return texts[-1], outputs[-1].splitlines()[-1]


def test_find_print_and_no_scripts_reach_the_last_of_a_thousand_messages(page: Any, chromium: Any,
                                                                         tmp_path: Path) -> None:
    src = tmp_path / "thousand.jsonl"
    _long_session(src, n=1_000, lost_at=501)
    last_text, folded_line = _last_output(src)
    report = pk.inspect(src)
    assert len(report.messages) == 1_000
    out = tmp_path / "thousand.html"
    facts = _open(page, report, out)
    assert facts["rows"] == 1_001 and facts["width"] <= WIDTH  # every row (and the one repair adds)
    assert page.evaluate("document.querySelectorAll('#pk-rows > .pk-row').length") == 1_001
    # the browser's own find (window.find, what Ctrl+F runs) reaches the last message
    assert page.evaluate("(t) => window.find(t, true, false, true)", last_text)
    found_in = page.evaluate("() => window.getSelection().anchorNode.parentElement.closest('.pk-card').id")
    answer = max(i for i, m in enumerate(report.messages) if m.role == "assistant" and m.content == last_text)
    assert found_in == f"m-{answer}" and answer >= 996
    # a line inside the last output's fold: find opens the fold that holds it
    assert page.evaluate("(t) => { window.getSelection().removeAllRanges(); return window.find(t, true, false, true); }",
                         folded_line)
    # print: every message laid out, every fold open, the search bar gone
    page.emulate_media(media="print")
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    printed = page.evaluate("document.body.innerText")
    assert last_text in printed and folded_line in printed
    assert page.evaluate("document.querySelectorAll('.pk-view details:not([open])').length") == 0
    assert page.evaluate("document.getElementById('m-999').getBoundingClientRect().height") > 0
    assert page.evaluate("getComputedStyle(document.getElementById('pk-bar')).display") == "none"
    pdf = page.pdf(format="A4")
    pages = len(re.findall(rb"/Type\s*/Page\b", pdf))
    assert pdf.startswith(b"%PDF") and pages > 100, pages  # a thousand messages are many pages, not a screenful
    page.evaluate("window.dispatchEvent(new Event('afterprint'))")
    page.emulate_media(media="screen")
    # scripts off: the messages are in the page, readable
    ctx = chromium.new_context(java_script_enabled=False, viewport={"width": WIDTH, "height": 900})
    try:
        bare = ctx.new_page()
        bare.goto(out.as_uri())
        assert last_text in bare.text_content("#pk-rows")
        card = bare.locator(f"#m-{answer}")
        card.scroll_into_view_if_needed()
        bare.wait_for_timeout(300)  # a row off screen is laid out once scrolled to
        assert card.is_visible() and last_text in card.inner_text()  # drawn where a person scrolls to it
        assert bare.locator("#pk-bar").is_hidden()  # the search needs the script: not shown without it
        bare.screenshot(path=str(OUTPUT / "viewer-no-scripts.png"))
    finally:
        ctx.close()


def test_a_long_session_still_searches_steps_and_prints_every_row(page: Any, tmp_path: Path) -> None:
    src = tmp_path / "long.jsonl"
    lost_id = _long_session(src, n=4_000, lost_at=3_801)
    report = pk.inspect(src)
    facts = _open(page, report, tmp_path / "long.html")
    assert facts["rows"] == 4_001 and facts["rendered"] < 200  # drawn on scroll
    assert " in 2 of " in _search(page, lost_id)  # its card and the result repair adds
    page.press("#pk-q", "Enter")
    page.wait_for_timeout(200)
    cur = page.locator("mark.pk-mark.pk-cur")
    assert cur.count() == 1 and cur.is_visible() and cur.inner_text() == lost_id
    assert page.inner_text("#pk-count").startswith("match 1 of ")
    _shot(page, "viewer-long-search-step.png")
    page.keyboard.press("Escape")
    page.wait_for_function("() => window.pkViewer.shown() === window.pkViewer.rows")
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    assert page.evaluate("document.getElementById('pk-rows').children.length") == 4_001  # print draws them all
    page.evaluate("window.dispatchEvent(new Event('afterprint'))")
    assert page.evaluate("window.pkViewer.rendered()") < 200


def test_sub_agents_are_nested_under_the_call_that_started_them(page: Any, tmp_path: Path) -> None:
    src = AGENTS / "claude_code" / "subagents_killed.jsonl"
    meta = {json.loads(f.read_text())["toolUseId"]: f for f in (src.with_suffix("") / "subagents").glob("*.meta.json")}
    outer = next(c for c, f in meta.items() if json.loads(f.read_text())["spawnDepth"] == 1)
    report = pk.inspect(src)
    _open(page, report, tmp_path / "sub.html")
    # the session's Agent call is on the card of message #1; its sub-agent is drawn under that row
    row = page.locator("#pk-rows > .pk-row", has=page.locator("#m-1"))
    assert outer in row.locator(".pk-card").first.inner_text()
    nested = row.locator(":scope > .pk-under > details.pk-nested-subagent")
    assert nested.count() == 1 and "Survey the project" in nested.locator(":scope > summary").inner_text()
    # the main findings name it; its own findings are inside it, and their links reach its cards
    top = page.inner_text(".pk-findings >> nth=0")
    assert "sub-agent" in top and "finding(s) of its own" in top
    nested.locator(":scope > summary").click()
    inner = nested.locator(".pk-findings li.pk-fk-lost_call a[href*='-m-']").first
    href = inner.get_attribute("href")
    assert href.startswith("#s1-m-")
    inner.click()
    page.wait_for_timeout(200)
    assert _visible(page, href[1:])
    # the second sub-agent, started by the first, is nested inside it
    deeper = nested.locator("details.pk-nested-subagent")
    assert deeper.count() == 1 and "Read app.py" in deeper.locator(":scope > summary").inner_text()
    page.evaluate("document.querySelectorAll('details.pk-nested').forEach(d => d.open = true)")
    nested.scroll_into_view_if_needed()
    _shot(page, "viewer-subagents.png")
    page.screenshot(path=str(OUTPUT / "viewer-subagents-full.png"), full_page=True)


def test_a_killed_codex_rollout_has_times_durations_and_its_break_on_a_timeline(page: Any, tmp_path: Path) -> None:
    src = AGENTS / "codex" / "killed_mid_tool.jsonl"
    records = [json.loads(x) for x in src.read_text().splitlines() if x.strip()]
    call = next(r for r in records if r["type"] == "response_item" and r["payload"].get("type") == "function_call")
    report = pk.inspect(src)
    _open(page, report, tmp_path / "codex.html")
    # the call's row carries the time of its line, and the model of its turn
    card = page.inner_text("#m-3")
    assert call["timestamp"].replace("T", " ")[:19] in card
    timeline = page.locator(".pk-timeline")
    assert timeline.count() == 1 and timeline.locator("svg").count() == 1
    # the break: the file's last record, marked on the timeline
    assert f"the last record, {records[-1]['timestamp'][11:19]}" in timeline.inner_text()
    assert timeline.locator("a[href='#m-3'] path[stroke='#cf222e']").count() == 1  # the lost call, in red
    _shot(page, "viewer-codex-timeline.png")
