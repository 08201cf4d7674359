"""Plain HTML for turns, repairs and transcripts: no pandas or widgets needed.

Used by ``_repr_html_`` on core objects and by the notebook layer's live display; it lives in
the core so those core objects render without importing anything above the core. Everything is
escaped, and nothing here ever sees a credential (it only reads messages).
"""

from __future__ import annotations

import html
from typing import Any

from .messages import AssistantMessage
from .text_calls import text_calls

# what every view says of a finished turn whose server sent no usage (never a zero)
USAGE_NOT_REPORTED = "not reported by the server"

_STYLE = (
    "font-family: var(--jp-ui-font-family, sans-serif); font-size: 13px; line-height: 1.4;"
)


def esc(value: Any) -> str:
    """Text made safe for HTML, quotes too (it also goes into attributes); None becomes nothing
    (a view never says "None"). The one escape every view and report uses."""
    return "" if value is None else html.escape(str(value), quote=True)


def preview(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def turn_html(turn: Any, *, live: bool = False) -> str:
    m: AssistantMessage = turn.message
    parts = [f'<div class="pk-turn" style="{_STYLE}">']
    if m.reasoning:
        parts.append(
            '<details><summary style="color:#777">reasoning '
            f"({len(m.reasoning)} chars)</summary>"
            f'<pre style="white-space:pre-wrap;color:#777">{esc(m.reasoning)}</pre></details>'
        )
    if m.content:
        parts.append(f'<div style="white-space:pre-wrap">{esc(m.content)}</div>')
    for c in m.tool_calls or []:
        parts.append(
            '<div style="margin-top:4px"><code style="background:#eef">'
            f"{esc(c.name)}({esc(preview(c.arguments, 300))})</code>"
            f' <span style="color:#999">{esc(c.id)}</span></div>'
        )
    footer = []
    if live and not turn.finished:
        footer.append("streaming\u2026")
    if turn.finish_reason:
        footer.append(f"finish: {turn.finish_reason}")
    if turn.model:
        footer.append(f"model: {turn.model}")
    u = turn.usage
    if u is not None:
        footer.append(
            f"tokens: {u.input_tokens} in ({u.cached_input_tokens} cached), {u.output_tokens} out"
        )
    elif turn.finished:
        footer.append(f"tokens: {USAGE_NOT_REPORTED}")
    if footer:
        joined = " \u00b7 ".join(footer)
        parts.append(f'<div style="color:#999;font-size:11px">{esc(joined)}</div>')
    written = text_calls(m.content) if turn.finished and m.content else []
    if written:
        parts.append('<div class="pk-notice" data-kind="call_as_text" style="color:#997404;font-size:12px">'
                     f"the model wrote a tool call as text ({esc(written[0].form)}): the server did not turn it "
                     "into a call, so it was not run</div>")
    for n in getattr(turn, "notices", None) or ():
        parts.append(f'<div class="pk-notice" data-kind="{esc(n.kind)}" style="color:#997404;font-size:12px">'
                     f"{esc(n.text)}</div>")
    parts.append("</div>")
    return "".join(parts)


def repaired_html(repaired: Any) -> str:
    rows = "".join(
        f"<tr><td>{esc(str(c.kind))}</td><td>{esc(str(getattr(c, 'detail', '')))}</td></tr>"
        for c in repaired.changes
    )
    calls = "".join(
        f"<li><code>{esc(r.name)}</code> {esc(r.id)}"
        f"{' (read-only)' if r.read_only else ''}</li>"
        for r in repaired.interrupted
    )
    return (
        f'<div style="{_STYLE}"><b>{len(repaired.messages)} messages after repair</b>, '
        f"{len(repaired.changes)} change(s), {len(repaired.interrupted)} interrupted call(s)"
        + (f"<table>{rows}</table>" if rows else "")
        + (f"<ul>{calls}</ul>" if calls else "")
        + "</div>"
    )
