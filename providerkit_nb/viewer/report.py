"""A self-contained HTML report of a repair: the history before and after, side by side.

Rendered by ``providerkit_nb.viewer`` (the one renderer of cards), so the report, the widget and a
saved notebook show the same thing. One file, no network, opens in any browser; needs neither
pandas nor widgets.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.messages import Message
from ..core.repair import Repaired
from ..viewer import build_page, write_html
from ..viewer import report_html as _page_html

__all__ = ["report_html", "write_report"]


def report_html(
    before: Sequence[Message], repaired: Repaired, problems: Sequence[Any] = (), *, title: str = "Repair report",
    abandoned: Sequence[Any] = (),
) -> str:
    return _page_html(build_page(before, repaired, problems, title=title, abandoned=abandoned))


def write_report(
    path: str | Path, before: Sequence[Message], repaired: Repaired, problems: Sequence[Any] = (), *, title: str = "Repair report",
    abandoned: Sequence[Any] = (),
) -> Path:
    return write_html(build_page(before, repaired, problems, title=title, abandoned=abandoned), path)
