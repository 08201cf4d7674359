"""Plain HTML for turns, repairs and transcripts: kept in ``core.html`` (core objects render
with it); the notebook layer reads it from here."""

from __future__ import annotations

from ..core.html import message_line, preview, repaired_html, turn_html

__all__ = ["message_line", "preview", "repaired_html", "turn_html"]
