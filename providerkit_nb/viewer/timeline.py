"""Pictures of time: where in a turn a break struck and what survived, the texts repair gives a call
that never returned, and a whole session over time with its break marked.

A turn is a row of steps (the stream, each save, each tool run, the break, what was lost and
what the store kept); the picture is plain inline HTML, so it shows in a notebook, a saved or
exported one, and on GitHub, without a script.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from ..core.html import esc
from ..core.repair import INTERRUPTED_MAY_HAVE_RUN, INTERRUPTED_READ_ONLY, INTERRUPTED_STOPPED
from .cards import duration_text, parse_time
from .style import CSS

__all__ = ["STEP_KINDS", "timeline_html", "repair_texts_html", "lost_html", "session_timeline"]

# kind of step -> (colour, what it means)
STEP_KINDS = {
    "save": ("#1a7f37", "saved to the store"),
    "stream": ("#0969da", "streamed from the provider"),
    "tool": ("#8250df", "a tool ran"),
    "crash": ("#cf222e", "the break"),
    "lost": ("#8c959f", "lost"),
    "survived": ("#1a7f37", "what the store kept"),
}

_CSS = """
.pk-tl{display:flex;flex-wrap:wrap;align-items:stretch;gap:0;margin:6px 0}
.pk-step{border:2px solid;border-radius:6px;padding:3px 8px;font-size:12px;max-width:220px;background:#fff}
.pk-step b{display:block;font-size:11px;text-transform:uppercase;letter-spacing:.03em}
.pk-step.pk-s-lost{border-style:dashed;color:#57606a;text-decoration:line-through}
.pk-step.pk-s-crash{background:#ffebe9}
.pk-step.pk-s-survived{background:#dafbe1}
.pk-arrow{align-self:center;color:#8c959f;padding:0 4px}
.pk-texts{display:grid;grid-template-columns:repeat(auto-fit,minmax(220px,1fr));gap:8px}
.pk-texts > div{border:1px solid #d0d7de;border-radius:4px;padding:6px}
"""


def timeline_html(steps: Sequence[tuple[str, str]], *, title: str = "") -> str:
    """One turn as steps left to right: ``(kind, text)`` with kind one of ``STEP_KINDS``."""
    boxes = []
    for k, (kind, text) in enumerate(steps):
        colour, meaning = STEP_KINDS.get(kind, ("#57606a", kind))
        if k:
            boxes.append('<span class="pk-arrow">\u2192</span>')
        boxes.append(
            f'<div class="pk-step pk-s-{esc(kind)}" style="border-color:{colour}" title="{esc(meaning)}">'
            f'<b style="color:{colour}">{esc(kind)}</b>{esc(text)}</div>'
        )
    head = f'<div class="pk-lbl">{esc(title)}</div>' if title else ""
    return f'<div class="pk-view"><style>{CSS}{_CSS}</style>{head}<div class="pk-tl">{"".join(boxes)}</div></div>'


def lost_html(lost: dict[str, str]) -> str:
    """What a break took away: each item with its exact text (a partial answer, a file's content)."""
    if not lost:
        return '<div class="pk-lbl">nothing was lost</div>'
    items = "".join(
        f'<div class="pk-note"><span class="pk-badge">{esc(k)}</span><pre class="pk-code">{esc(v)}</pre></div>'
        for k, v in lost.items()
    )
    return f'<div class="pk-view"><style>{CSS}</style>{items}</div>'


def repair_texts_html() -> str:
    """The three texts repair gives a call that never returned, side by side, each with when."""
    return (
        f'<div class="pk-view"><style>{CSS}{_CSS}</style><div class="pk-texts">'
        f'<div><b>read-only</b>: lost, from a tool that only reads (it changed nothing)'
        f'<div class="pk-told">{esc(INTERRUPTED_READ_ONLY)}</div></div>'
        f'<div><b>may have partly run</b>: lost, from any other tool (a crash or kill; nobody saw it end)'
        f'<div class="pk-told">{esc(INTERRUPTED_MAY_HAVE_RUN)}</div></div>'
        f'<div><b>stopped by the user</b>: Stop pressed while it ran (the conversation saw it)'
        f'<div class="pk-told">{esc(INTERRUPTED_STOPPED)}</div></div>'
        "</div></div>"
    )


# --------------------------------------------------------------------------- a whole session

_W = 1000  # the drawing's width in its own units (it is stretched to the page's width)
_LANES = (("user", "#0969da"), ("assistant", "#8250df"), ("tool calls", "#1a7f37"))
_LANE_H = 20
_LINKED = 400  # up to this many timed messages each mark links to its card; more are drawn as one path
_GAP = 0.2  # a pause longer than this share of the session (and over 10 min) is drawn short, and labelled
_STROKE = 'vector-effect="non-scaling-stroke"'  # the drawing stretches; its lines keep their width


def _scale(times: list[datetime]) -> Callable[[datetime], float] | None:
    """Time to x (0 to ``_W``), each long pause drawn short; None when there is no time span."""
    ts = sorted(set(times))
    if len(ts) < 2 or ts[-1] <= ts[0]:
        return None
    total = (ts[-1] - ts[0]).total_seconds()
    long_gap = max(600.0, total * _GAP)
    steps = []  # each step between two times: (its start, its seconds, where it starts drawn)
    drawn = 0.0
    for a, b in zip(ts, ts[1:], strict=False):
        sec = (b - a).total_seconds()
        steps.append((a, sec, drawn))
        drawn += min(sec, long_gap * 0.1) if sec > long_gap else sec
    starts = [s[0] for s in steps]

    def x(t: datetime) -> float:
        k = min(max(0, bisect.bisect_right(starts, t) - 1), len(steps) - 1)
        a, sec, at = steps[k]
        nxt = steps[k + 1][2] if k + 1 < len(steps) else drawn
        frac = 0.0 if sec <= 0 else min(1.0, max(0.0, (t - a).total_seconds() / sec))
        return round((at + frac * (nxt - at)) / drawn * _W, 1)

    x.gaps = [(a, sec) for a, sec, _ in steps if sec > long_gap]  # type: ignore[attr-defined]  # the scale carries its gaps to the axis
    return x


def _ticks(marks: list[tuple[float, int, str]], y: float, colour: str, anchor: str) -> str:
    """One lane's marks: each a link to its card when few, else one path (a long session)."""
    if len(marks) <= _LINKED:
        return "".join(
            f'<a href="#{anchor}m-{i}"><line x1="{x}" x2="{x}" y1="{y + 3}" y2="{y + _LANE_H - 3}" stroke="{colour}" '
            f'stroke-width="2" {_STROKE}><title>{esc(tip)}</title></line></a>'
            for x, i, tip in marks
        )
    d = "".join(f"M{x} {y + 3}v{_LANE_H - 6}" for x, _, _ in marks)
    return f'<path d="{d}" stroke="{colour}" stroke-width="1" fill="none" {_STROKE}/>'


def session_timeline(page: Any) -> str:
    """The session over time, drawn here (inline SVG and HTML: no script, no network): a lane
    each for the user's messages, the model's and the tool calls (a bar from the call to its
    result); a call with no result runs in red from its start to the session's last record,
    where the break is marked. Empty when the source gives fewer than two times."""
    times: dict[int, datetime] = page.times
    last = parse_time(page.meta.get("last_record"))  # the file's last line: a progress line may follow every message
    x = _scale([*times.values(), *([last] if last is not None else [])])
    if x is None or not times:
        return ""
    start, end = min(times.values()), max([*times.values(), *([last] if last is not None else [])])
    lanes: dict[str, list[tuple[float, int, str]]] = {name: [] for name, _ in _LANES}
    for r in page.rows:
        if r.before is not None and r.before in times and r.role in lanes:
            t = times[r.before]
            lanes[r.role].append((x(t), r.before, f"#{r.before} {r.role} {t:%Y-%m-%d %H:%M:%S}"))
    y_calls = 2 * _LANE_H
    parts = [_ticks(lanes[name], k * _LANE_H, colour, page.anchor) for k, (name, colour) in enumerate(_LANES[:2])]
    bars = [f"M{x(times[a])} {y_calls + _LANE_H / 2}H{max(x(times[a]) + 1, x(times[b]))}"
            for a, b, _ in page.spans.values() if a in times and b in times]
    if bars:
        parts.append(f'<path d="{"".join(bars)}" stroke="#1a7f37" stroke-width="8" fill="none" {_STROKE}/>')
    lost, notes = _lost_marks(page, x, end, y_calls)
    parts += lost
    notes += [f'<span class="pk-tl-gap" style="left:{x(a) / _W:.1%}">\u22ef {esc(_span_text(sec))} later</span>'
              for a, sec in getattr(x, "gaps", [])]
    names = "".join(f'<div style="color:{c}">{esc(n)}</div>' for n, c in _LANES)
    return (
        '<div class="pk-timeline"><div class="pk-lbl">the session over time: each mark links to its message; a '
        'green bar is a call running, a red one a call that never returned</div><div class="pk-tl-grid">'
        f'<div class="pk-tl-names">{names}</div><div class="pk-tl-plot">'
        f'<svg viewBox="0 0 {_W} {3 * _LANE_H}" preserveAspectRatio="none" role="img" '
        f'aria-label="timeline of the session">{"".join(parts)}</svg>{"".join(notes)}</div></div>'
        f'<div class="pk-tl-axis"><span>{start:%Y-%m-%d %H:%M:%S}</span><span>{end:%Y-%m-%d %H:%M:%S} '
        f"({esc(duration_text((end - start).total_seconds()))} in all)</span></div></div>"
    )


def _lost_marks(page: Any, x: Any, end: datetime, y: float) -> tuple[list[str], list[str]]:
    """Each call with no result: a red bar from its start to the last record; the break itself
    (a line, and a note over the drawing)."""
    out, notes = [], []
    lost = [f for f in page.findings if f.kind == "lost_call" and f.index is not None and f.index in page.times]
    for f in lost:
        x0 = x(page.times[f.index])
        out.append(f'<a href="#{page.anchor}m-{f.index}"><path d="M{x0} {y + _LANE_H / 2}H{max(x0 + 2, x(end))}" '
                   f'stroke="#cf222e" stroke-width="8" stroke-dasharray="6 3" {_STROKE}><title>{esc(f.title)}'
                   "</title></path></a>")
    if lost:
        xe = x(end)
        out.append(f'<line x1="{xe}" x2="{xe}" y1="0" y2="{3 * _LANE_H}" stroke="#cf222e" stroke-width="2" {_STROKE}/>')
        notes.append(f'<span class="pk-tl-break" style="right:{1 - xe / _W:.1%}">\u2715 the break: the last '
                     f"record, {end:%H:%M:%S}</span>")
    return out, notes


def _span_text(seconds: float) -> str:
    s = round(seconds)
    if s < 120:
        return f"{s} s"
    if s < 7200:
        return f"{s // 60} min"
    if s < 172800:
        return f"{s // 3600} h {s % 3600 // 60} min"
    return f"{s // 86400} days"
