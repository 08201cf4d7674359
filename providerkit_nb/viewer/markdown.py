"""Prose as safe Markdown: what the model and the person wrote, shown as they meant it to look.

Assistant text, user text and thinking are Markdown in practice (headings, lists, code spans,
fenced code, tables, links), so the cards render them with markdown-it-py, set up so that a
transcript can neither run nor fetch anything:

- raw HTML is off: ``<script>`` or ``<img onerror=...>`` in a message is shown as text;
- a link is kept only when it points to http, https or mailto; any other (``javascript:``,
  ``data:``, ``vbscript:``, a relative path) stays text. Kept links open in a new tab and carry
  ``rel="noopener noreferrer nofollow"``;
- an image is never loaded (the report is offline, and loading would tell a server the report
  was opened): it is shown as its alt text and its address, as text;
- nesting deeper than markdown-it's limit would silently drop the rest of the text, and a very
  long text can take markdown-it super-linear time: both are shown verbatim instead.

Text with none of Markdown's marks skips the parser (a cheap search): most of a long coding
session's prose is plain sentences, and the result looks the same either way.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache
from typing import Any

__all__ = ["render_markdown", "has_markdown", "MARKDOWN_CHARS"]

MARKDOWN_CHARS = 10_000  # longer prose is shown verbatim (folded): parsing time grows faster than size
_NESTING = 20  # markdown-it's own limit (its CommonMark preset); deeper text is shown verbatim
_SCHEMES = ("http://", "https://", "mailto:")

# a character or a line start that may mean Markdown; text without any is a plain paragraph
_MARKS = re.compile(r"[`*_#\[\]<>|~&\\]|^[ \t]*(?:[-+=]|\d{1,9}[.)])|^(?: {4}|\t)", re.M)


def has_markdown(text: str) -> bool:
    """Whether ``text`` may hold Markdown (False means it would render as plain paragraphs)."""
    return _MARKS.search(text) is not None


def _safe_link(url: str) -> bool:
    return url.strip().lower().startswith(_SCHEMES)


def _image(renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """An image as text: its alt text and its address, never an ``<img>``."""
    token = tokens[idx]
    alt = "".join(c.content for c in token.children or ())
    src = token.attrGet("src") or ""
    return (
        f'<span class="pk-img">[image: {html.escape(alt, quote=True)}]'
        f' <span class="pk-url">{html.escape(str(src), quote=True)}</span></span>'
    )


@lru_cache(maxsize=1)
def _parser() -> Any:
    # imported when prose is first shown: ``import providerkit_nb`` stays light
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "breaks": True, "linkify": False, "typographer": False,
                                   "maxNesting": _NESTING})
    md.enable(["table", "strikethrough"])
    md.validateLink = _safe_link  # type: ignore[method-assign]  # markdown-it documents replacing it
    md.add_render_rule("image", _image)

    def _link(renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        t = tokens[idx]
        t.attrSet("rel", "noopener noreferrer nofollow")
        t.attrSet("target", "_blank")
        return str(renderer.renderToken(tokens, idx, options, env))

    md.add_render_rule("link_open", _link)
    return md


@lru_cache(maxsize=2048)  # the same short prose recurs ("Continue", "Done.")
def render_markdown(text: str) -> str | None:
    """``text`` as safe HTML (no raw HTML, no image loaded, only http/https/mailto links), or None
    when it should be shown verbatim: no Markdown marks in it, longer than ``MARKDOWN_CHARS``, or
    nested deeper than markdown-it renders."""
    if len(text) > MARKDOWN_CHARS or not has_markdown(text):
        return None
    md = _parser()
    tokens = md.parse(text)
    if any(t.level >= _NESTING - 1 for t in tokens):
        return None  # markdown-it stops there and drops the rest; the text in full beats a cut one
    return str(md.renderer.render(tokens, md.options, {}))
