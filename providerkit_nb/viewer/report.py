"""A self-contained HTML report of a repair: the history before and after, side by side, the
rows repair touched highlighted by kind, the interrupted calls, and what a provider would
refuse. One file, no scripts, opens in any browser; needs neither pandas nor widgets."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.messages import AssistantMessage, Message, ToolMessage, text_of
from ..core.repair import (
    ADDED_RESULT,
    DROPPED_EMPTY_ASSISTANT,
    RENAMED_CALL,
    RENAMED_RESULT,
    RESULT_TO_NOTE,
    Repaired,
)

__all__ = ["report_html", "write_report"]

_COLOURS = {
    ADDED_RESULT: "#fff3cd",
    RESULT_TO_NOTE: "#e2e3ff",
    RENAMED_CALL: "#d1ecf1",
    RENAMED_RESULT: "#d1ecf1",
    DROPPED_EMPTY_ASSISTANT: "#f8d7da",
}

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { border-bottom: 1px solid #ddd; padding: 4px 6px; text-align: left; vertical-align: top; }
.cols { display: flex; gap: 2em; } .cols > div { flex: 1; min-width: 0; }
.kind { font-size: 11px; color: #555; } pre { white-space: pre-wrap; margin: 0; }
.legend span { padding: 2px 8px; margin-right: 8px; }
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _body(m: Message) -> str:
    if isinstance(m, AssistantMessage):
        calls = "".join(
            f"<div><code>{_e(c.name)}({_e(c.arguments)})</code> <span class='kind'>{_e(c.id)}</span></div>"
            for c in m.tool_calls or []
        )
        return f"<pre>{_e(m.content)}</pre>{calls}"
    if isinstance(m, ToolMessage):
        return f"<span class='kind'>{_e(m.name)} [{_e(m.tool_call_id)}]</span><pre>{_e(m.content)}</pre>"
    return f"<pre>{_e(text_of(m))}</pre>"


def _history(messages: Sequence[Message], marks: dict[int, str]) -> str:
    rows = []
    for i, m in enumerate(messages):
        kind = marks.get(i)
        style = f" style='background:{_COLOURS.get(kind, '#eee')}'" if kind else ""
        label = f"<div class='kind'>{_e(kind)}</div>" if kind else ""
        rows.append(f"<tr{style}><td>{i}</td><td>{_e(m.role)}{label}</td><td>{_body(m)}</td></tr>")
    return f"<table><tr><th>#</th><th>role</th><th>content</th></tr>{''.join(rows)}</table>"


def abandoned_html(abandoned: Sequence[Any]) -> str:
    """The calls a coding agent's own resume hid or answered with its placeholder (escaped)."""
    if not abandoned:
        return ""
    rows = "".join(
        f"<tr><td>{_e(a.agent)}</td><td>{_e(a.call_id or '(never written)')}</td><td>{_e(a.name or '?')}</td>"
        f"<td><code>{_e(a.arguments or '')}</code></td><td>{'yes' if a.read_only else 'no'}</td><td>{_e(a.what)}</td></tr>"
        for a in abandoned
    )
    return (
        "<h2 class='pk-abandoned'>Calls the tool's own resume abandoned</h2>"
        "<p>They may have run, and the model was never told.</p>"
        "<table><tr><th>tool</th><th>call id</th><th>name</th><th>arguments</th><th>read-only</th>"
        f"<th>what its resume did</th></tr>{rows}</table>"
    )


def report_html(
    before: Sequence[Message], repaired: Repaired, problems: Sequence[Any] = (), *, title: str = "Repair report",
    abandoned: Sequence[Any] = (),
) -> str:
    marks: dict[int, str] = {}
    for c in repaired.changes:
        if c.index_after is not None:
            marks.setdefault(c.index_after, c.kind)
    dropped = {c.index_before: c.kind for c in repaired.changes if c.index_after is None and c.index_before is not None}
    legend = "".join(f"<span style='background:{v}'>{_e(k)}</span>" for k, v in _COLOURS.items())
    probs = "".join(
        f"<tr><td>{_e(p.rule)}</td><td>{_e(p.index)}</td><td>{_e(p.message)}</td>"
        f"<td>{_e(p.provider_wording or '')}</td></tr>"
        for p in problems
    )
    calls = "".join(
        f"<tr><td>{_e(r.id)}</td><td>{_e(r.original_id)}</td><td>{_e(r.name)}</td>"
        f"<td><code>{_e(r.arguments)}</code></td><td>{'yes' if r.read_only else 'no'}</td><td>{_e(r.note)}</td></tr>"
        for r in repaired.interrupted
    )
    changes = "".join(
        f"<tr><td>{_e(c.kind)}</td><td>{_e(c.index_before)}</td><td>{_e(c.index_after)}</td><td>{_e(c.detail)}</td></tr>"
        for c in repaired.changes
    )
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{_e(title)}</title><style>{_CSS}</style></head>
<body><h1>{_e(title)}</h1>
<p>{len(before)} messages as stored, {len(repaired.messages)} to send;
{len(repaired.changes)} change(s), {len(repaired.interrupted)} call(s) that never returned.</p>
<p class="legend">{legend}</p>
{abandoned_html(abandoned)}
<h2>What a provider would refuse</h2>
{f"<table><tr><th>rule</th><th>message</th><th>what is wrong</th><th>provider wording</th></tr>{probs}</table>" if probs else "<p>nothing</p>"}
<h2>History</h2>
<div class="cols"><div><h3>as stored</h3>{_history(before, dropped)}</div>
<div><h3>after repair</h3>{_history(repaired.messages, marks)}</div></div>
<h2>Calls that never returned</h2>
{f"<table><tr><th>id sent</th><th>original id</th><th>tool</th><th>arguments</th><th>read-only</th><th>the model is told</th></tr>{calls}</table>" if calls else "<p>none</p>"}
<h2>Every change</h2>
{f"<table><tr><th>kind</th><th>before</th><th>after</th><th>detail</th></tr>{changes}</table>" if changes else "<p>none</p>"}
</body></html>
"""


def write_report(
    path: str | Path, before: Sequence[Message], repaired: Repaired, problems: Sequence[Any] = (), *, title: str = "Repair report",
    abandoned: Sequence[Any] = (),
) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(report_html(before, repaired, problems, title=title, abandoned=abandoned), encoding="utf-8")
    return p
