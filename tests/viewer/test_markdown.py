"""Prose as safe Markdown: what renders, and what a hostile transcript cannot do with it.

Each expectation is the exact escaped piece the card must hold (a literal written here), and
the absence of any executable or fetching markup: no ``<script``, no ``<img``, no ``on...=``
attribute, no link but http/https/mailto.
"""

from __future__ import annotations

import re

import pytest

import providerkit_nb as pk
from providerkit_nb.core.messages import ensure_messages
from providerkit_nb.viewer import build_page
from providerkit_nb.viewer.cards import fold
from providerkit_nb.viewer.markdown import render_markdown

_TAG = re.compile(r"<([a-zA-Z][a-zA-Z0-9]*)([^>]*)>")
ALLOWED_TAGS = {"p", "br", "strong", "em", "code", "pre", "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6",
                "blockquote", "table", "thead", "tbody", "tr", "th", "td", "a", "hr", "s", "span", "div",
                "b", "details", "summary"}  # the card's own frame


def _no_active_markup(out: str) -> None:
    """Only inert tags; no event handler; every href is http(s), mailto or the card's own anchor."""
    for name, attrs in _TAG.findall(out):
        assert name.lower() in ALLOWED_TAGS, name
        assert not re.search(r"\son\w+\s*=", attrs, re.I), attrs
        assert "src=" not in attrs.lower() and "style=" not in attrs.lower(), attrs
        for href in re.findall(r'href="([^"]*)"', attrs):
            assert href.startswith(("http://", "https://", "mailto:")) or re.fullmatch(r"#m-\d+", href), href


def _card(text: str, role: str = "assistant") -> str:
    msgs = ensure_messages([{"role": "user", "content": "q"}, {"role": role, "content": text}]) if role != "user" else (
        ensure_messages([{"role": "user", "content": text}]))
    return build_page(msgs).rows[-1].before_html


def test_prose_renders_headings_lists_code_tables_and_links() -> None:
    text = (
        "# Plan\n\nSome *emphasis* and `code <b>`.\n\n- one\n- two\n\n"
        "```python\nif a < b:\n    print('x')\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
        "See [the docs](https://example.com/d?a=1&b=2)."
    )
    card = _card(text)
    assert '<div class="pk-text pk-md"><h1>Plan</h1>' in card
    assert "<p>Some <em>emphasis</em> and <code>code &lt;b&gt;</code>.</p>" in card
    assert "<ul>\n<li>one</li>\n<li>two</li>\n</ul>" in card
    # a fenced block keeps its lines and indentation
    assert "<pre><code class=\"language-python\">if a &lt; b:\n    print('x')\n</code></pre>" in card
    assert "<th>a</th>" in card and "<td>2</td>" in card
    assert ('<a href="https://example.com/d?a=1&amp;b=2" rel="noopener noreferrer nofollow" target="_blank">'
            "the docs</a>") in card
    _no_active_markup(card)


def test_plain_prose_skips_the_parser_and_keeps_its_lines() -> None:
    card = _card("Part 3 has 60 files.\nAll of them are text")
    assert '<div class="pk-text">Part 3 has 60 files.\nAll of them are text</div>' in card


def test_user_text_and_thinking_are_markdown_the_system_prompt_and_tool_output_are_not() -> None:
    msgs = ensure_messages([
        {"role": "system", "content": "You are **terse**.\n# Rules"},
        {"role": "user", "content": "Fix **this**"},
        {"role": "assistant", "content": "", "reasoning": "Try `ls` first",
         "tool_calls": [{"id": "c1", "name": "Bash", "arguments": '{"command": "ls **"}'}]},
        {"role": "tool", "tool_call_id": "c1", "name": "Bash", "content": "# not a heading\n**stars**"},
    ])
    page = build_page(msgs)
    assert '<div class="pk-text">You are **terse**.\n# Rules</div>' in page.rows[0].before_html
    assert "<p>Fix <strong>this</strong></p>" in page.rows[1].before_html
    call = page.rows[2].before_html
    assert '<div class="pk-text pk-thinking pk-md"><p>Try <code>ls</code> first</p>' in call
    assert '<pre class="pk-code pk-term"># not a heading\n**stars**</pre>' in call  # the result, verbatim (a shell's: a terminal block)
    assert "<h1>" not in call


HOSTILE = [
    ("<script>window.__pwned=1</script> **b**",
     "<p>&lt;script&gt;window.__pwned=1&lt;/script&gt; <strong>b</strong></p>"),
    ("<img src=x onerror=window.__pwned=2> *i*", "<p>&lt;img src=x onerror=window.__pwned=2&gt; <em>i</em></p>"),
    ("[x](javascript:alert(1)) *i*", "<p>[x](javascript:alert(1)) <em>i</em></p>"),
    ("[x](JaVaScRiPt:alert(1)) [d](data:text/html,<b>x</b>) [v](vbscript:msgbox) [r](local.html)",
     "<p>[x](JaVaScRiPt:alert(1)) [d](data:text/html,&lt;b&gt;x&lt;/b&gt;) [v](vbscript:msgbox) [r](local.html)</p>"),
    ("![x](http://evil/a.png) *i*",
     '<p><span class="pk-img">[image: x] <span class="pk-url">http://evil/a.png</span></span> <em>i</em></p>'),
    ("<div onclick=\"window.__pwned=3\">\n\n*raw block*\n\n</div>",
     "<p>&lt;div onclick=&quot;window.__pwned=3&quot;&gt;</p>\n<p><em>raw block</em></p>\n<p>&lt;/div&gt;</p>"),
    ("&lt;script&gt; &amp; &copy; &#x3C;img src=x&#x3E; `&lt;`",
     "<p>&lt;script&gt; &amp; © &lt;img src=x&gt; <code>&amp;lt;</code></p>"),
    ("<https://example.com/a?b=1> <javascript:alert(1)> <a@b.example>",
     '<p><a href="https://example.com/a?b=1" rel="noopener noreferrer nofollow" target="_blank">'
     "https://example.com/a?b=1</a> &lt;javascript:alert(1)&gt; "
     '<a href="mailto:a@b.example" rel="noopener noreferrer nofollow" target="_blank">a@b.example</a></p>'),
    ('```html" onmouseover="x\n<script>1</script>\n```',
     '<pre><code class="language-html&quot;">&lt;script&gt;1&lt;/script&gt;\n</code></pre>'),
]


@pytest.mark.parametrize(("text", "piece"), HOSTILE)
def test_hostile_prose_is_shown_as_text(text: str, piece: str) -> None:
    card = _card(text)
    assert piece in card
    _no_active_markup(card)
    assert "<script" not in card and "<img" not in card


def test_a_200_level_nesting_is_shown_whole_and_verbatim() -> None:
    """markdown-it stops at its nesting limit and would drop the rest: the text is shown as written."""
    quote = "> " * 200 + "deep <b>"
    assert f'<div class="pk-text">{"&gt; " * 200}deep &lt;b&gt;</div>' in _card(quote)
    nested = "\n".join("  " * i + f"- item{i}" for i in range(200))
    card = _card(nested)
    assert "- item199" in card and "<ul>" not in card
    assert render_markdown(nested) is None


def test_a_one_megabyte_line_is_folded_and_escaped() -> None:
    line = "[<script>x</script>*" * 52_429  # about 1 MB, one line, every mark markdown-it is slow on
    card = _card(line)
    assert "<script" not in card and "<img" not in card
    assert '<div class="pk-text">' + "[&lt;script&gt;x&lt;/script&gt;*" * 52_429 + "</div>" in card  # verbatim
    assert '<details class="pk-fold"><summary><span class="pk-n">1 lines, 1,048,580 chars</span>' in card
    _no_active_markup(card)


def test_a_long_message_stays_folded_with_the_markdown_inside() -> None:
    text = "## Steps\n\n" + "\n".join(f"{k}. step **{k}**" for k in range(1, 21))
    out = fold(text, md=True)
    assert out.startswith('<details class="pk-fold"><summary><span class="pk-n">22 lines, ')
    assert "<li>step <strong>20</strong></li>" in out and out.endswith("</ol>\n</div></details>")


def test_search_text_is_the_source_text() -> None:
    """The report searches a row's text, not its HTML: words split by Markdown are still found."""
    page = build_page([pk.UserMessage("q"), pk.AssistantMessage("a **bold** [link](https://x.example)")])
    assert "a **bold** [link](https://x.example)" in page.rows[1].text


def test_markdown_it_is_imported_only_when_prose_with_marks_is_drawn() -> None:
    import subprocess
    import sys

    code = (
        "import sys, providerkit_nb as pk\n"
        "from providerkit_nb.viewer import build_page\n"
        "p = build_page([pk.UserMessage('plain words'), pk.AssistantMessage('plain too')])\n"
        "p.rows[1].before_html\n"
        "print('markdown_it' in sys.modules)\n"
        "build_page([pk.UserMessage('**marked**')]).rows[0].before_html\n"
        "print('markdown_it' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]
