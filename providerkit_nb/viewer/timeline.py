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

from ..core.repair import INTERRUPTED_MAY_HAVE_RUN, INTERRUPTED_READ_ONLY, INTERRUPTED_STOPPED
from .cards import esc
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
    """The three texts repair gives a call that never returned, side by side, and when each is used."""
    return (
        f'<div class="pk-view"><style>{CSS}{_CSS}</style><div class="pk-texts">'
        f'<div><b>read-only tool</b> (it changed nothing)<div class="pk-told">{esc(INTERRUPTED_READ_ONLY)}</div></div>'
        f'<div><b>any other tool</b> (it may have run)<div class="pk-told">{esc(INTERRUPTED_MAY_HAVE_RUN)}</div></div>'
        f'<div><b>stopped by the user</b> (the Stop button landed while it ran)'
        f'<div class="pk-told">{esc(INTERRUPTED_STOPPED)}</div></div>'
        "</div></div>"
    )


# --------------------------------------------------------------------------- a whole session

_W = 1000  # the drawing's width in its own units (it scales to the page)
_LANES = (("user", "#0969da"), ("assistant", "#8250df"), ("tool calls", "#1a7f37"))
_LANE_H = 16
_TOP = 18
_LINKED = 400  # up to this many timed messages each mark links to its card; more are drawn as one path
_GAP = 0.2  # a pause longer than this share of the session is drawn short (and labelled)


def _scale(times: list[datetime]) -> Callable[[datetime], float] | None:
    """Time to x, with each long pause drawn as a short gap; None when there is no time span."""
    ts = sorted(set(times))
    if len(ts) < 2 or ts[-1] <= ts[0]:
        return None
    total = (ts[-1] - ts[0]).total_seconds()
    long_gap = max(600.0, total * _GAP)
    # each step of the sorted times: (start, seconds, drawn seconds)
    steps = []
    drawn_total = 0.0
    for a, b in zip(ts, ts[1:], strict=False):
        sec = (b - a).total_seconds()
        drawn = min(sec, long_gap * 0.1) if sec > long_gap else sec
        steps.append((a, sec, drawn_total))
        drawn_total += drawn
    starts = [s[0] for s in steps]

    def x(t: datetime) -> float:
        k = max(0, bisect.bisect_right(starts, t) - 1)
        a, sec, at = steps[min(k, len(steps) - 1)]
        nxt = steps[k + 1][2] if k + 1 < len(steps) else drawn_total
        frac = 0.0 if sec <= 0 else min(1.0, max(0.0, (t - a).total_seconds() / sec))
        return round((at + frac * (nxt - at)) / drawn_total * _W, 1) if drawn_total else 0.0

    x.gaps = [(a, sec) for a, sec, _ in steps if sec > long_gap]  # type: ignore[attr-defined]
    return x


def _ticks(marks: list[tuple[float, int, str]], y: float, colour: str, anchor: str) -> str:
    """One lane's marks: each a link to its card when few, else one path (a long session)."""
    if len(marks) <= _LINKED:
        return "".join(
            f'<a href="#{anchor}m-{i}"><line x1="{x}" x2="{x}" y1="{y}" y2="{y + _LANE_H - 4}" stroke="{colour}" '
            f'stroke-width="2"><title>{esc(tip)}</title></line></a>'
            for x, i, tip in marks
        )
    d = "".join(f"M{x} {y}v{_LANE_H - 4}" for x, _, _ in marks)
    return f'<path d="{d}" stroke="{colour}" stroke-width="1" fill="none"/>'


def session_timeline(page: Any) -> str:
    """The session over time, drawn here (inline SVG: no script, no network): a lane each for
    the user's messages, the model's and the tool calls (a bar from the call to its result); a
    call with no result runs in red from its start to the session's last record, where the
    break is marked. Empty when the source gives fewer than two times."""
    times: dict[int, datetime] = page.times
    x = _scale(list(times.values()))
    if x is None:
        return ""
    end = max(times.values())
    anchor = page.anchor
    lanes = {"user": [], "assistant": [], "tool calls": []}  # type: dict[str, list[tuple[float, int, str]]]
    for r in page.rows:
        if r.before is None or r.before not in times or r.role not in lanes:
            continue
        t = times[r.before]
        lanes[r.role].append((x(t), r.before, f"#{r.before} {r.role} {t:%Y-%m-%d %H:%M:%S}"))
    parts = []
    for k, (name, colour) in enumerate(_LANES):
        y = _TOP + k * (_LANE_H + 4)
        parts.append(f'<text x="2" y="{y + 10}" class="pk-tl-lane">{esc(name)}</text>')
        if name != "tool calls":
            parts.append(_ticks(lanes[name], y, colour, anchor))
    y = _TOP + 2 * (_LANE_H + 4)
    bars = [f"M{x(times[a])} {y + 6}H{max(x(times[a]) + 1.5, x(times[b]))}"
            for a, b, _ in page.spans.values() if a in times and b in times]
    if bars:
        parts.append(f'<path d="{"".join(bars)}" stroke="#1a7f37" stroke-width="8" fill="none"/>')
    parts += _lost_marks(page, x, end, y, anchor)
    parts += _gap_marks(x, y)
    start = min(times.values())
    height = _TOP + 3 * (_LANE_H + 4) + 14
    axis = (f'<text x="60" y="{height - 2}" class="pk-tl-axis">{start:%Y-%m-%d %H:%M:%S}</text>'
            f'<text x="{_W}" y="{height - 2}" text-anchor="end" class="pk-tl-axis">{end:%Y-%m-%d %H:%M:%S} '
            f"({_span_text((end - start).total_seconds())})</text>")
    return (f'<div class="pk-timeline"><div class="pk-lbl">the session over time (each mark links to its message; '
            f'a green bar is a call running, a red one a call that never returned)</div>'
            f'<svg viewBox="0 0 {_W + 8} {height}" width="100%" preserveAspectRatio="none" role="img" '
            f'aria-label="timeline of the session">{"".join(parts)}{axis}</svg></div>')


def _lost_marks(page: Any, x: Any, end: datetime, y: float, anchor: str) -> list[str]:
    """Each call with no result: a red bar from its start to the last record; the break itself."""
    out = []
    lost = [f for f in page.findings if f.kind == "lost_call" and f.index is not None and f.index in page.times]
    for f in lost:
        x0 = x(page.times[f.index])
        out.append(f'<a href="#{anchor}m-{f.index}"><path d="M{x0} {y + 6}H{max(x0 + 3, x(end))}" stroke="#cf222e" '
                   f'stroke-width="8" stroke-dasharray="6 3"><title>{esc(f.title)}</title></path></a>')
    if lost:
        xe = x(end)
        out.append(f'<line x1="{xe}" x2="{xe}" y1="4" y2="{y + _LANE_H}" stroke="#cf222e" stroke-width="2"/>'
                   f'<text x="{xe - 4}" y="12" text-anchor="end" class="pk-tl-break">\u2715 the break: last record '
                   f"{end:%H:%M:%S}</text>")
    return out


def _gap_marks(x: Any, y: float) -> list[str]:
    out = []
    for a, sec in getattr(x, "gaps", []):
        xa = x(a)
        out.append(f'<text x="{xa + 2}" y="{y + _LANE_H + 10}" class="pk-tl-axis">\u22ef {esc(_span_text(sec))} '
                   "later</text>")
    return out


def _span_text(seconds: float) -> str:
    s = round(seconds)
    if s < 120:
        return f"{s} s"
    if s < 7200:
        return f"{s // 60} min"
    if s < 172800:
        return f"{s // 3600} h {s % 3600 // 60} min"
    return f"{s // 86400} days"
