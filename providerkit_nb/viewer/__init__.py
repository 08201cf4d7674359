"""The one renderer of transcripts: cards, findings, the HTML file and the static notebook view.

Below the notebook layer (no pandas, no widgets) and above the transcripts, so the command line,
the widget and a saved notebook all show the same cards.
"""

from __future__ import annotations

from .cards import Finding, NestedPage, Page, PageOptions, Row, align, build_page, page_of, scoped
from .page import (
    findings_html,
    focus_rows,
    headline,
    highlight,
    report_html,
    rows_html,
    static_html,
    text_summary,
    write_html,
)

__all__ = [
    "Finding",
    "NestedPage",
    "Page",
    "PageOptions",
    "Row",
    "align",
    "build_page",
    "page_of",
    "scoped",
    "findings_html",
    "focus_rows",
    "headline",
    "highlight",
    "report_html",
    "rows_html",
    "static_html",
    "text_summary",
    "write_html",
]
