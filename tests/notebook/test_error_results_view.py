"""The notebook view of an inspection filters the tool results its source marks as errors."""

from __future__ import annotations

import re
from pathlib import Path

import providerkit_nb as pk


def test_the_widget_shows_only_the_error_rows(upstream_transcripts_dir: Path) -> None:
    """short.jsonl: both results (messages 2 and 3, ``is_error: true``) answer message 1's calls."""
    view = pk.inspect(upstream_transcripts_dir / "claude-code" / "short.jsonl").view
    view.kind.value = "error_result"
    html = view.cards.value
    assert 'id="' in html
    shown = sorted({int(x) for x in re.findall(r'class="pk-card[^"]*" id="[^"]*m-(\d+)"', html)})
    assert shown == [1, 2, 3]
    assert html.count('<span class="pk-badge pk-bad">error</span>') == 4  # on the call's card twice, each result
