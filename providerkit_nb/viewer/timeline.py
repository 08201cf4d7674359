"""Teaching pictures: where in a turn a break struck and what survived, and the two repair texts.

A turn is a row of steps (the stream, each save, each tool run, the break, what was lost and
what the store kept); the picture is plain inline HTML, so it shows in a notebook, a saved or
exported one, and on GitHub, without a script.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.repair import INTERRUPTED_MAY_HAVE_RUN, INTERRUPTED_READ_ONLY, INTERRUPTED_STOPPED
from .cards import esc
from .style import CSS

__all__ = ["STEP_KINDS", "timeline_html", "repair_texts_html", "lost_html"]

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
