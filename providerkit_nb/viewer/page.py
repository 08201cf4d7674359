"""The views of a Page: the self-contained HTML file, the static HTML a saved notebook keeps, and text.

Every view says the same things in the same words: ``headline`` (the counts) and the findings
come from one place, and a lost call's state is ``Finding.safety`` (``core.repair``'s decision).

The file holds every row in the document when the session is under ``ALL_ROWS`` messages, long
texts folded: the browser's own find reaches every message, printing gives every message, and
with scripts off the page still reads. A longer session carries its rows' cards as data (JSON in
a ``<script type="application/json">``, with ``<`` written as ``\\u003c`` so no text can close the
tag) and a small inline script draws only the rows on screen, so tens of thousands of messages
open at once; without scripts it shows the rows around the findings. Nothing is fetched from
the network: the file works offline and from disk.

A row whose message is sent as it is stored is drawn once, across both columns; only rows repair
changes show the two sides.
"""

from __future__ import annotations

import html as _html
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from ..core.html import esc
from .cards import KIND_LABELS, Finding, NestedPage, Page, Row, scoped, why_html
from .report_js import JS
from .style import CSS
from .timeline import session_timeline

__all__ = [
    "report_html", "write_html", "static_html", "findings_html", "rows_html", "text_summary", "focus_rows",
    "headline", "highlight", "nested_html", "ALL_ROWS",
]

ALL_ROWS = 3000  # up to this many rows the file holds them all in the document; beyond, drawn on scroll


def headline(page: Page) -> list[str]:
    """The counts every view gives, in the same words: messages, problems, calls that never
    returned (and how many of them the user stopped), findings, error results."""
    bits = [f"{page.stored:,} messages as stored"]
    if page.changed:
        bits.append(f"{page.sent:,} to send after repair")
    bits.append(f"{page.problems} problem(s)")
    lost = page.lost
    if lost:
        stopped = sum(f.why == "stopped" for f in lost)
        bits.append(f"{len(lost)} interrupted call(s)" + (f", {stopped} stopped by the user" if stopped else ""))
    bits.append(f"{len(page.findings)} finding(s)")
    if page.errors:
        bits.append(f"{page.errors} tool result(s) were errors")
    return bits


def _headline(page: Page) -> str:
    fmt = f" ({page.source_format})" if page.source_format and page.source_format not in page.title else ""
    return f'<div class="pk-summary"><b>{esc(page.title)}</b>{esc(fmt)}: {esc("; ".join(headline(page)))}</div>'


def findings_html(page: Page, *, limit: int | None = None, nested: bool = False) -> str:
    """The summary, the session's timeline and the findings, each linking to its card
    (``#m-<index>``). ``nested``: a sub-agent's or a branch's, under its session's (no facts
    the session's header already gives)."""
    out = [_headline(page)]
    facts = [(k, v) for k, v in page.meta.items() if isinstance(v, str | int | float) and not isinstance(v, bool)]
    if facts and not nested:  # what the source says about itself: session id, model, working directory, version
        out.append('<div class="pk-lbl">' + " \u00b7 ".join(f"{esc(k)}: {esc(v)}" for k, v in facts[:12]) + "</div>")
    if page.valid:
        out.append(
            '<div class="pk-ok">valid as stored: every call has its result and a provider accepts the '
            "history as it is; nothing to repair.</div>"
        )
    out.append(_hand_back(page))
    out.append(session_timeline(page))
    items = [_finding_item(page, f) for f in (page.findings if limit is None else page.findings[:limit])]
    if limit is not None and len(page.findings) > limit:
        items.append(f"<li>and {len(page.findings) - limit} more</li>")
    if items:
        out.append(f'<ol class="pk-findings">{"".join(items)}</ol>')
    out += [nested_html(n) for n in page.unplaced]
    kinds = page.kinds()
    if kinds:
        legend = "".join(f'<span class="pk-badge">{esc(KIND_LABELS.get(k, k))}</span>' for k in kinds)
        out.append(f'<div class="pk-legend pk-lbl">on the rows below: {legend}</div>')
    return "".join(out)


def _finding_item(page: Page, f: Finding) -> str:
    where = f' at <a href="#{page.anchor}m-{f.index}">message #{f.index}</a>' if f.index is not None else ""
    extra = f' <span class="pk-badge">{esc(f.safety)}</span>' if f.kind == "lost_call" else ""
    return (
        f'<li id="{esc(f.id)}" class="pk-fk-{esc(f.kind)}"><a href="#{esc(f.id)}" class="pk-idx" '
        f'title="finding {esc(f.number)}">{esc(f.number)}.</a><span class="pk-badge">{esc(f.kind)}</span> '
        f"{esc(f.title)}{where}{extra}{why_html(f)}</li>"
    )


def nested_html(n: NestedPage) -> str:
    """A sub-agent or a branch, folded: its own findings and every one of its messages, in one
    column (what the model will read for a call with no result is on that call's card)."""
    sub = n.page
    what = "sub-agent" if n.kind == "subagent" else "branch not resumed"
    count = f"{sub.stored:,} message(s), {len(sub.findings)} finding(s)"
    rows = "".join(_one_column(sub, r) for r in sub.rows if r.before is not None)
    return (
        f'<details class="pk-nested pk-nested-{esc(n.kind)}"><summary><b>{what}</b> {esc(n.label)} '
        f'<span class="pk-lbl">{esc(count)}</span></summary><div class="pk-nested-body">'
        f"{findings_html(sub, nested=True)}{rows}</div></details>"
    )


def _one_column(page: Page, r: Row) -> str:
    return f'<div class="pk-row pk-one">{r.before_html}</div>' + "".join(
        f'<div class="pk-row pk-one pk-nested-row">{nested_html(n)}</div>' for n in r.nested)


def _hand_back(page: Page) -> str:
    """For a broken coding-agent session: the command that writes the repaired session back for
    the agent to resume (it prints the agent's own resume command)."""
    if page.valid or not page.hand_back:
        return ""
    cmd = page.hand_back
    return (f'<div class="pk-lbl">to hand it back to the agent: <code class="pk-handback" title="click to copy">'
            f"{esc(cmd)}</code> (writes a new session beside the original and prints how to resume it)</div>")


def _row(page: Page, r: Row, k: int | None = None) -> str:
    """One row: one card when the message is sent as stored (or nothing was repaired), else the
    two sides. ``k``: the row's number, kept on it for the page's script."""
    data = "" if k is None else (f' data-row="{k}" data-r="{esc(r.role)}" data-k="{esc(" ".join(r.kinds))}"'
                                 f' data-b="{"" if r.before is None else r.before}"'
                                 f' data-a="{"" if r.after is None else r.after}"')
    under = "".join(nested_html(n) for n in r.nested)
    if under:  # drawn across the page under the row (inside it: a filter keeps or hides them together)
        under = f'<div class="pk-under">{under}</div>'
    if not page.changed:
        return f'<div class="pk-row pk-one"{data}>{r.before_html}{under}</div>'
    if r.same:
        sent = f"{page.anchor}a-{r.after}"
        note = "" if r.after == r.before else f' (sent as #{r.after})'
        return (f'<div class="pk-row pk-same" id="{sent}" title="sent as it is stored{note}"{data}>'
                f"{r.before_html}{under}</div>")
    before = r.before_html or '<div class="pk-empty">not in the stored history (added by repair)</div>'
    after = r.after_html or '<div class="pk-empty">not sent (dropped by repair)</div>'
    return f'<div class="pk-row"{data}>{before}{after}{under}</div>'


def _columns(page: Page) -> str:
    if not page.changed:
        return '<div class="pk-cols pk-one"><div>history</div></div>'
    return ('<div class="pk-cols"><div>as stored</div><div>as sent after repair <span class="pk-lbl">'
            "(a card across both columns is sent as it is stored)</span></div></div>")


def focus_rows(page: Page, *, context: int = 1, first: int = 3, last: int = 5) -> list[int]:
    """Rows worth showing when not all fit: those with a finding or a change, a little around
    each, and the first and last few."""
    n = len(page.rows)
    keep = set(range(min(first, n))) | set(range(max(0, n - last), n))
    for k, r in enumerate(page.rows):
        if r.kinds:
            keep.update(range(max(0, k - context), min(n, k + context + 1)))
    return sorted(keep)


def rows_html(page: Page, rows: Sequence[int], *, mark: Callable[[int, str], str] | None = None) -> str:
    """The given rows, with a gap line where rows are left out; ``mark(k, html)`` may mark each
    row's HTML (the widget's search)."""
    out = [_columns(page)]
    prev = -1
    for k in rows:
        if k > prev + 1:
            out.append(f'<div class="pk-gap">{k - prev - 1} message(s) not shown</div>')
        row = _row(page, page.rows[k])
        out.append(row if mark is None else mark(k, row))
        prev = k
    if prev < len(page.rows) - 1:
        out.append(f'<div class="pk-gap">{len(page.rows) - 1 - prev} message(s) not shown</div>')
    return "".join(out)


def static_html(page: Page, *, max_rows: int = 80, prefix: str = "") -> str:
    """Findings and cards as plain HTML, no script (what a saved, exported or GitHub-rendered
    notebook shows): the whole history when short, else the rows around the findings. ``prefix``
    scopes its ids (two views of one page in a document must not share them)."""
    rows = list(range(len(page.rows)))
    if len(rows) > max_rows:
        rows = focus_rows(page)[:max_rows]
    body = scoped(f"{findings_html(page, limit=50)}{rows_html(page, rows)}", prefix)
    return f'<div class="pk-view"><style>{CSS}</style>{body}</div>'


def text_summary(page: Page, *, limit: int = 20) -> str:
    """Plain text: the headline and the findings, in the words the HTML uses."""
    lines = [f"{page.title}: " + "; ".join(headline(page))]
    if page.valid:
        lines.append("valid as stored; nothing to repair")
    if page.errors:
        lines.append(f"{page.errors} tool result(s) were errors (shown, not a problem: the model read them)")
    for f in page.findings[:limit]:
        where = f" at message {f.index}" if f.index is not None else ""
        lines.append(f"- {f.kind}{where}: {f.title}")
        if f.kind == "lost_call":
            lines.append(f"  {f.safety}")
        if f.wording:
            lead = "once the conversation goes on, the provider would answer" if f.next_request else \
                "the provider would answer"
            lines.append(f"  {lead}: {f.wording}")
        elif f.kind == "lost_call":
            lines.append("  no provider has seen this history yet")
        if f.told:
            lines.append(f"  the model will read: {f.told}")
    if len(page.findings) > limit:
        lines.append(f"- and {len(page.findings) - limit} more")
    return "\n".join(lines)


# --------------------------------------------------------------------------- search marks (the widget)

_TAG = re.compile(r"(<[^>]*>)")


def highlight(text: str, query: str, current: int | None = None) -> tuple[str, int]:
    """``text`` (HTML) with each match of ``query`` (case-insensitive) in its text marked
    (``<mark class="pk-mark">``), the ``current``-th one also ``pk-cur``; and how many were
    marked. Only text between tags is searched, so markup is never broken."""
    q = query.lower()
    if not q:
        return text, 0
    out = []
    n = 0
    for part in _TAG.split(text):
        if not part or part.startswith("<"):
            out.append(part)
            continue
        plain = _html.unescape(part)
        low = plain.lower()
        if q not in low or len(low) != len(plain):
            out.append(part)
            continue
        at = 0
        pieces = []
        while (hit := low.find(q, at)) >= 0:
            cls = "pk-mark pk-cur" if n == current else "pk-mark"
            pieces.append(esc(plain[at:hit]) + f'<mark class="{cls}">{esc(plain[hit:hit + len(q)])}</mark>')
            at = hit + len(q)
            n += 1
        pieces.append(esc(plain[at:]))
        out.append("".join(pieces))
    return "".join(out), n


# --------------------------------------------------------------------------- the file


def _data(page: Page) -> str:
    rows = [{"h": _row(page, r), "r": r.role, "k": r.kinds, "b": r.before, "a": r.after} for r in page.rows]
    text = json.dumps({"rows": rows}, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c")  # no "</script>" (or "<!--") can occur inside the tag


def _all_rows(page: Page) -> str:
    """Every row, each numbered for the page's script (search, filters, links)."""
    return "".join(_row(page, r, k) for k, r in enumerate(page.rows))


_PAGE_CSS = """
body{margin:0 16px 24px}
#pk-bar{position:sticky;top:0;z-index:2;background:#fff;border-bottom:1px solid #d0d7de;padding:6px 0;display:none;gap:8px;align-items:center;flex-wrap:wrap}
.pk-js #pk-bar{display:flex}
#pk-bar input{flex:1 1 240px;min-width:0;padding:3px 6px;font:inherit}
#pk-bar select,#pk-bar button{font:inherit}
#pk-count{color:#57606a;font-size:12px}
#pk-hint{color:#8c959f;font-size:11px;flex-basis:100%}
#pk-rows{overflow-anchor:none}
#pk-rows.pk-all>.pk-row{content-visibility:auto;contain-intrinsic-size:auto 80px}
#pk-rows>.pk-row[hidden]{display:none}
.pk-noscript{border:1px dashed #d0d7de;padding:4px 8px;margin:6px 0;color:#57606a}
@media print{
 #pk-bar,#pk-top,#pk-bot,.pk-noscript-hint{display:none!important}
 #pk-rows.pk-all>.pk-row{content-visibility:visible}
 .pk-row{break-inside:avoid-page}
 details>summary{list-style:none}
 details::details-content{content-visibility:visible;display:contents}
}
"""


def _bar(page: Page, virtual: bool) -> str:
    kinds = page.kinds()
    kind_opts = "".join(f'<option value="{esc(k)}">{esc(KIND_LABELS.get(k, k))}</option>' for k in kinds)
    hint = ("this long session draws only the rows on screen: this search reaches every message "
            "(the browser's own find sees the rows drawn)" if virtual else
            "every message is in the page: the browser's find and print reach them all")
    return (
        '<div id="pk-bar"><input id="pk-q" type="search" placeholder="search text, tool names, call ids; /a regex/ '
        '(press / to search, Enter or F3 for the next match, Esc to clear)" aria-label="search">'
        '<button id="pk-prev" type="button" title="previous match (Shift+Enter, Shift+F3)">\u25b2</button>'
        '<button id="pk-next" type="button" title="next match (Enter, F3)">\u25bc</button>'
        '<select id="pk-role" aria-label="role"><option value="">every role</option><option value="system">system</option>'
        '<option value="user">user</option><option value="assistant">assistant</option><option value="tool">tool</option>'
        '</select><select id="pk-kind" aria-label="finding"><option value="">every message</option>'
        f'<option value="*">with a finding or change</option>{kind_opts}</select><span id="pk-count"></span>'
        f'<span id="pk-hint">{esc(hint)}</span></div>'
    )


def report_html(page: Page) -> str:
    """One self-contained HTML document: findings at the top, then the rows with search (every
    match marked, stepped through with Enter or F3), filters by role and by finding, and a link
    per message and per finding."""
    virtual = len(page.rows) > ALL_ROWS
    if virtual:
        rows = (f'<noscript><div class="pk-noscript">scripts are off: the rows around the findings are shown; '
                f"allow scripts for this file to read all {len(page.rows):,} messages</div>"
                f'{rows_html(page, focus_rows(page, context=2, last=10))}</noscript>'
                '<div id="pk-list"><div id="pk-top"></div><div id="pk-rows"></div><div id="pk-bot"></div></div>'
                f'<script type="application/json" id="pk-data">{_data(page)}</script>')
    else:
        rows = f'<div id="pk-list"><div id="pk-rows" class="pk-all">{_all_rows(page)}</div></div>'
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>{esc(page.title)}</title><style>{CSS}{_PAGE_CSS}</style></head>
<body><div class="pk-view">
{findings_html(page)}
{_bar(page, virtual)}
{_columns(page)}
{rows}
</div>
<script>{JS}</script>
</body></html>
"""


def write_html(page: Page, path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(report_html(page), encoding="utf-8")
    return p
