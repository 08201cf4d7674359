"""The HTML report in a real browser: Debian's Chromium driven by Playwright, on real files.

Each file (a Codex rollout and Claude Code sessions from the upstream transcripts, a LangGraph
thread whose tool raised, a generated 15,000-message Claude Code session, a hostile transcript)
is inspected, written with ``Inspection.write_html`` and opened from disk at 1400 px. The
checks: no horizontal overflow, long text folded, the lost call's card reached from the
finding's link at the top, search finds a call id, a transcript's markup never runs. Time to first
paint is printed and written to ``test-output/viewer-paint.json`` (reported, not asserted).
Screenshots go to ``test-output/``. Without Chromium or Playwright the tests skip locally with
the reason and fail under CI=true.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import providerkit_nb as pk

REPO = Path(__file__).resolve().parents[3]
OUTPUT = REPO / "test-output"
FIXTURES = REPO / "tests" / "transcripts" / "fixtures"
WIDTH = 1400

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:
    pg = chromium.new_page(viewport={"width": WIDTH, "height": 900})
    errors: list[str] = []
    dialogs: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    # nothing may be fetched: the file is self-contained
    requests: list[str] = []
    pg.on("request", lambda r: requests.append(r.url) if not r.url.startswith(("file:", "data:", "about:")) else None)
    pg.errors, pg.dialogs, pg.requests = errors, dialogs, requests
    yield pg
    assert not errors, errors
    assert not dialogs, dialogs
    assert not requests, requests
    pg.close()


def _open(pg: Any, report: Any, path: Path) -> dict[str, Any]:
    report.write_html(path)
    pg.goto(path.as_uri())
    pg.wait_for_function("window.pkViewer && window.pkViewer.rendered() > 0 || window.pkViewer.rows === 0")
    return pg.evaluate(
        """() => ({width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight,
        rendered: window.pkViewer.rendered(), rows: window.pkViewer.rows,
        paint: (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime})"""
    )


def _shot(pg: Any, name: str) -> None:
    OUTPUT.mkdir(exist_ok=True)
    pg.screenshot(path=str(OUTPUT / name))


def _paint(name: str, ms: Any, rows: int) -> None:
    OUTPUT.mkdir(exist_ok=True)
    f = OUTPUT / "viewer-paint.json"
    data = json.loads(f.read_text()) if f.exists() else {}
    data[name] = {"first_contentful_paint_ms": ms, "rows": rows}
    f.write_text(json.dumps(data, indent=1))
    print(f"{name}: first contentful paint {ms} ms, {rows} rows")


def _visible(pg: Any, anchor: str) -> bool:
    return pg.evaluate(
        """(id) => { const e = document.getElementById(id); if (!e) return false;
        const r = e.getBoundingClientRect(); return r.bottom > 0 && r.top < window.innerHeight; }""",
        anchor,
    )


def _search(pg: Any, text: str) -> str:
    pg.fill("#pk-q", text)
    pg.wait_for_function("(t) => document.getElementById('pk-count').textContent.includes(' of ')", arg=text)
    return pg.inner_text("#pk-count")


def _follow_first_lost(pg: Any) -> str:
    """Click the first lost call's link at the top; the anchor of the card it names."""
    link = pg.locator(".pk-findings li.pk-fk-lost_call a[href^='#m-']").first
    href = link.get_attribute("href")
    pg.evaluate("window.scrollTo(0, 0)")
    link.click()
    pg.wait_for_timeout(200)
    return href[1:]


# --------------------------------------------------------------------------- real files


@pytest.mark.upstream
def test_codex_rollout(page: Any, upstream_transcripts_dir: Path, tmp_path: Path) -> None:
    src = sorted((upstream_transcripts_dir / "codex").glob("rollout-2026-*.jsonl"))[0]
    report = pk.inspect(src)
    facts = _open(page, report, tmp_path / "codex.html")
    assert facts["width"] <= WIDTH
    assert facts["rows"] == len(report.messages)
    # every call id of the file is in a card, and search finds it
    text = src.read_text()
    assert "call-structured-001" in text  # the file's own id
    assert " in 2 of " in _search(page, "call-structured-001")  # the call's card and its result's
    # what the rollout says about its session (the model of its turn context) heads the page
    records = [json.loads(x) for x in text.splitlines() if x.strip()]
    model = next(r["payload"]["model"] for r in records if r.get("type") == "turn_context")
    assert f"model: {model}" in page.inner_text(".pk-view")
    _shot(page, "viewer-codex.png")
    _paint("codex", facts["paint"], facts["rows"])


@pytest.mark.upstream
@pytest.mark.parametrize("name", ["tool_heavy.jsonl", "short.jsonl"])
def test_claude_code_session(page: Any, upstream_transcripts_dir: Path, tmp_path: Path, name: str) -> None:
    src = upstream_transcripts_dir / "claude-code" / name
    report = pk.inspect(src)
    facts = _open(page, report, tmp_path / "cc.html")
    assert facts["width"] <= WIDTH
    # time and model from the file itself are on the cards
    first = next(json.loads(x) for x in src.read_text().splitlines() if '"type":"assistant"' in x.replace(" ", ""))
    assert first["message"]["model"] in page.inner_text("#pk-rows")
    # a long text is folded behind its line count, not printed in full
    longest = max((m.content for m in report.messages if m.role == "tool"), key=len, default="")
    if longest.count("\n") > 8:
        assert page.locator("details.pk-fold").count() > 0
        assert "lines" in page.inner_text("details.pk-fold summary >> nth=0")
    for lost in (f for f in report.page().findings if f.kind == "lost_call"):
        assert lost.call_id is not None
        assert " in 2 of " in _search(page, lost.call_id.lower())  # its card, the inserted result
        page.fill("#pk-q", "")
    if any(f.kind == "lost_call" for f in report.page().findings):
        anchor = _follow_first_lost(page)
        assert _visible(page, anchor)
        assert page.locator(f"#{anchor} .pk-lostbox").count() >= 1
    _shot(page, f"viewer-claude-code-{name.split('.')[0]}.png")
    _paint(f"claude-code {name}", facts["paint"], facts["rows"])


def test_langgraph_thread_whose_tool_raised(page: Any, tmp_path: Path) -> None:
    report = pk.inspect(FIXTURES / "langgraph.sqlite", thread="tool-raised")
    facts = _open(page, report, tmp_path / "lg.html")
    assert facts["width"] <= WIDTH
    _shot(page, "viewer-langgraph-top.png")
    top = page.inner_text(".pk-findings")
    assert "disk full" in top  # the tool's own error, from the checkpoint's __error__ write
    assert "never returned" in top
    anchor = _follow_first_lost(page)
    assert _visible(page, anchor)
    card = page.inner_text(f"#{anchor}")
    assert "lost: no result was stored for this call" in card
    assert "It may have partly run" in card  # the text the model reads instead (write_note is not read-only)
    assert "the provider would answer" in card
    # the sent side carries the inserted results in rows of their own, level with empty stored cells
    assert page.locator(".pk-row .pk-empty").count() == 2
    _shot(page, "viewer-langgraph.png")


# --------------------------------------------------------------------------- a long session


def _long_session(path: Path, n: int = 15_000, lost_at: int = 7_501) -> str:
    """A Claude Code session of ``n`` messages (user asks, a Bash call, its 60-line output, an
    answer); the call made at message ``lost_at`` lost its result (the user interrupted)."""
    lines: list[dict[str, Any]] = []
    parent: str | None = None

    def put(kind: str, message: dict[str, Any]) -> None:
        nonlocal parent
        uid = f"u{len(lines):06d}"
        lines.append({"type": kind, "uuid": uid, "parentUuid": parent, "sessionId": "s-long",
                      "timestamp": f"2026-03-01T10:{len(lines) // 600 % 60:02d}:{len(lines) % 60:02d}.000Z",
                      "message": message})
        parent = uid

    k = 0
    lost_id = ""
    while len(lines) < n:
        k += 1
        put("user", {"role": "user", "content": f"step {k}: list the files of part {k}"})
        cid = f"toolu_{k:06d}"
        put("assistant", {"id": f"msg_{k}a", "role": "assistant", "model": "claude-sonnet-4-5",
                          "usage": {"input_tokens": 10 + k, "output_tokens": 7},
                          "content": [{"type": "tool_use", "id": cid, "name": "Bash",
                                       "input": {"command": f"ls part{k}"}}]})
        if len(lines) - 1 == lost_at:
            lost_id = cid
            put("user", {"role": "user", "content": "[Request interrupted by user for tool use]"})
            continue
        out = "\n".join(f"part{k}/file{j}.txt" for j in range(60))
        if k == 3:
            out += "\n" + "x" * 5000  # one long token
        put("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": cid, "content": out}]})
        put("assistant", {"id": f"msg_{k}b", "role": "assistant", "model": "claude-sonnet-4-5",
                          "content": [{"type": "text", "text": f"Part {k} has 60 files."}]})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines[:n]))
    return lost_id


def test_fifteen_thousand_messages(page: Any, tmp_path: Path) -> None:
    src = tmp_path / "long.jsonl"
    lost_id = _long_session(src)
    report = pk.inspect(src)
    assert len(report.messages) == 15_000
    facts = _open(page, report, tmp_path / "long.html")
    _paint("claude-code 15,000 messages", facts["paint"], facts["rows"])
    assert facts["rows"] >= 15_000
    assert facts["rendered"] < 200  # only what is on screen (and a little around it)
    assert facts["width"] <= WIDTH
    # folded: a 60-line output takes one summary line, so a row stays short
    heights = page.evaluate("Array.from(document.querySelectorAll('#pk-rows > .pk-row')).map(e => e.offsetHeight)")
    assert max(heights) < 300, heights
    # the lost call, 7,500 messages down, is one click from the top
    anchor = _follow_first_lost(page)
    assert _visible(page, anchor)
    assert lost_id in page.inner_text(f"#{anchor}")
    _shot(page, "viewer-long-lost-call.png")
    # search by call id: the call's card and the result repair inserts for it (one row each;
    # 15,000 stored messages and that one inserted row)
    found = _search(page, lost_id)
    assert re.fullmatch(r"\d+ matches in 2 of 15,001 messages", found), found
    # a deep link opens at its message
    page.fill("#pk-q", "")
    page.goto(page.url.split("#")[0] + "#m-12000")
    page.wait_for_timeout(300)
    assert _visible(page, "m-12000")
    # scrolling to the end renders the last rows and still only a few
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    page.wait_for_timeout(300)
    assert page.evaluate("window.pkViewer.rendered()") < 200
    assert _visible(page, "m-14999")


# --------------------------------------------------------------------------- hostile text

HOSTILE = ['<script>window.pwned=1</script>', '"><img src=x onerror="window.pwned=2">']


def _hostile_history() -> list[dict[str, Any]]:
    a, b = HOSTILE
    return [
        {"role": "system", "content": f"sys {a} {b}"},
        {"role": "user", "content": f"user {a} {b}"},
        {"role": "assistant", "content": f"text {a} {b}", "reasoning": f"think {a} {b}",
         "tool_calls": [{"id": f"id{a}{b}", "name": f"tool{a}{b}", "arguments": json.dumps({"x": a + b})},
                        {"id": f"ok{b}", "name": f"t2{a}", "arguments": f"not json {a}{b}"}]},
        {"role": "tool", "tool_call_id": f"ok{b}", "name": f"t2{a}", "content": f"out {a} {b}"},
        {"role": "tool", "tool_call_id": f"orphan{a}", "name": f"t3{b}", "content": f"orphan {a} {b}"},
        {"role": "user", "content": f"next {a} {b}"},
    ]


def test_hostile_text_is_shown_never_run(page: Any, tmp_path: Path) -> None:
    src = tmp_path / "hostile.json"
    src.write_text(json.dumps(_hostile_history()))
    report = pk.inspect(src)
    assert report.problems  # a lost call and an orphan result: both rendered
    facts = _open(page, report, tmp_path / "hostile.html")
    page.wait_for_timeout(300)
    assert page.evaluate("window.pwned === undefined")
    assert page.locator("img").count() == 0
    assert page.locator("script").count() == 1  # the page's own renderer (its rows are in the page)
    shown = page.inner_text("body")
    assert HOSTILE[0] in shown and HOSTILE[1] in shown  # shown as text
    # the static view a notebook saves is escaped too
    static = report._repr_html_()
    page.set_content(static)
    assert page.evaluate("window.pwned === undefined") and page.locator("img").count() == 0
    assert facts["width"] <= WIDTH


@pytest.mark.upstream
def test_search_marks_each_match_and_opens_the_fold_that_holds_it(
    page: Any, upstream_transcripts_dir: Path, tmp_path: Path
) -> None:
    """tool_heavy.jsonl: the Read of app.js returns 82 lines (folded) whose first is
    ``import "phoenix_html"``; searching for it marks the words inside the fold, opened."""
    src = upstream_transcripts_dir / "claude-code" / "tool_heavy.jsonl"
    assert 'import \\"phoenix_html\\"' in src.read_text()  # the file's own text
    _open(page, pk.inspect(src), tmp_path / "cc.html")
    assert page.locator("mark.pk-mark").count() == 0
    # the call's card, which shows the result (the result's own row only points to it)
    assert " in 1 of " in _search(page, "PHOENIX_html")
    marks = page.locator("mark.pk-mark")
    assert marks.count() >= 1
    assert marks.first.inner_text() == "phoenix_html"
    assert page.evaluate("() => document.querySelector('mark.pk-mark').closest('details').open")
    assert marks.first.is_visible()
    page.fill("#pk-q", "")
    page.wait_for_function("() => !document.getElementById('pk-count').textContent.includes(' of ')")
    assert page.locator("mark.pk-mark").count() == 0
    # /a regular expression/ finds and marks the same words; a broken one says so
    assert " in 1 of " in _search(page, r"/phoenix_\w+/")
    assert page.locator("mark.pk-mark").first.inner_text() == "phoenix_html"
    page.fill("#pk-q", "/(/")
    page.wait_for_function("() => document.getElementById('pk-count').textContent.startsWith('not a regular')")
    assert page.inner_text("#pk-count") == "not a regular expression: /(/"


@pytest.mark.upstream
def test_enter_and_f3_step_through_every_match(page: Any, upstream_transcripts_dir: Path, tmp_path: Path) -> None:
    """tool_heavy.jsonl mentions xterm many times in several messages (the user's question, the
    search and its results); Enter and F3 go to the next match, Shift back, each marked apart
    and brought into view (its fold opened); / focuses the search and Escape clears it."""
    src = upstream_transcripts_dir / "claude-code" / "tool_heavy.jsonl"
    assert src.read_text().count("xterm") > 3  # the file's own text
    _open(page, pk.inspect(src), tmp_path / "cc.html")
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "pk-q"
    page.keyboard.type("xterm")
    page.wait_for_function("() => document.getElementById('pk-count').textContent.includes(' of ')")
    found = re.fullmatch(r"([\d,]+) matches in (\d+) of [\d,]+ messages", page.inner_text("#pk-count"))
    assert found and int(found[1].replace(",", "")) > int(found[2]) > 3, found

    def current() -> tuple[int, str]:
        page.wait_for_timeout(100)
        cur = page.locator("mark.pk-mark.pk-cur")
        assert cur.count() == 1 and cur.inner_text().lower() == "xterm"
        assert cur.is_visible()  # brought into view, its fold opened
        said = re.match(r"match ([\d,]+) of ([\d,]+)", page.inner_text("#pk-count"))
        assert said, page.inner_text("#pk-count")
        return int(said[1].replace(",", "")), said[2]

    page.press("#pk-q", "Enter")
    assert current()[0] == 1
    page.press("#pk-q", "Enter")
    assert current()[0] == 2
    page.keyboard.press("F3")
    assert current()[0] == 3
    page.keyboard.press("Shift+F3")
    assert current()[0] == 2
    page.press("#pk-q", "Shift+Enter")
    page.press("#pk-q", "Shift+Enter")  # from the first, back round to the last
    last, total = current()
    assert str(last) == total.replace(",", "")
    page.keyboard.press("Escape")
    page.wait_for_function("() => !document.getElementById('pk-count').textContent.includes(' of ')")
    assert page.input_value("#pk-q") == "" and page.locator("mark.pk-mark").count() == 0


# --------------------------------------------------------------------------- Markdown prose

MD_HOSTILE = [
    "# Heading\n\n<script>window.__pwned=1</script>\n\n<img src=x onerror=\"window.__pwned=2\">",
    "[click](javascript:window.__pwned=3) ![beacon](http://127.0.0.1:9/beacon.png) <http://127.0.0.1:9/auto>",
    "<div onmouseover=\"window.__pwned=4\">\n\n*raw*\n\n</div>\n\n[ok](https://example.invalid/x)",
    "```html\n<script>window.__pwned=5</script>\n```\n\n" + "> " * 200 + "deep",
]


def test_markdown_prose_runs_nothing_and_fetches_nothing(page: Any, tmp_path: Path) -> None:
    """Hostile Markdown in every prose role: rendered (a heading, a link) yet no script runs, no
    image is loaded, no request leaves the page (the fixture fails on any request but the file's)."""
    history: list[dict[str, Any]] = [{"role": "user", "content": MD_HOSTILE[0]}]
    history += [{"role": "assistant", "content": t, "reasoning": t} for t in MD_HOSTILE[1:]]
    src = tmp_path / "md.json"
    src.write_text(json.dumps(history))
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    facts = _open(page, pk.inspect(src), tmp_path / "md.html")
    page.mouse.move(300, 300)
    page.hover(".pk-md >> nth=2")
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned === undefined")
    assert page.locator("img").count() == 0
    assert page.locator("script").count() == 1  # the page's own renderer (its rows are in the page)
    assert [u for u in requests if not u.startswith("file:")] == []
    assert page.locator(".pk-md h1").inner_text() == "Heading"
    links = page.eval_on_selector_all(".pk-md a", "as => as.map(a => [a.href, a.rel, a.target])")
    # the autolink and the https link, each in the thinking and the text; javascript: is no link
    kept = ["noopener noreferrer nofollow", "_blank"]
    assert links == [["http://127.0.0.1:9/auto", *kept]] * 2 + [["https://example.invalid/x", *kept]] * 2
    shown = page.inner_text("#pk-rows")
    assert "<script>window.__pwned=1</script>" in shown and "[image: beacon] http://127.0.0.1:9/beacon.png" in shown
    assert "[click](javascript:window.__pwned=3)" in shown
    assert facts["width"] <= WIDTH
    # search reads the message's text; the match is marked inside the rendered heading
    assert " in 1 of " in _search(page, "heading")
    assert page.locator(".pk-md h1 mark.pk-mark").inner_text() == "Heading"
    assert page.evaluate("window.__pwned === undefined")


@pytest.mark.upstream
def test_the_tool_errors_filter(page: Any, upstream_transcripts_dir: Path, tmp_path: Path) -> None:
    """short.jsonl: two tool_result blocks with ``is_error: true``, both answering calls of one
    assistant message: the filter keeps that message and the two results."""
    src = upstream_transcripts_dir / "claude-code" / "short.jsonl"
    assert src.read_text().count('"is_error":true') == 2  # the file's own
    _open(page, pk.inspect(src), tmp_path / "short.html")
    page.select_option("#pk-kind", "error_result")
    page.wait_for_function("() => document.getElementById('pk-count').textContent.includes(' of ')")
    assert page.inner_text("#pk-count") == "3 of 5 messages match"
    assert page.locator("#pk-rows .pk-result.pk-bad .pk-badge.pk-bad", has_text="error").count() == 2
    assert page.locator("#pk-rows .pk-head .pk-badge.pk-bad", has_text="error").count() == 2
