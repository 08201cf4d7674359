"""Per-tool layouts of a call card: edits as diffs, reads with line numbers, commands as a terminal.

A coding agent's calls say more when laid out for what they do: an edit is a diff of the file, a
read is the file's lines with their numbers, a shell call is a command and its output. ``layout``
picks one by the tool's name and the shape of its arguments (Claude Code, Codex, OpenCode, Gemini
CLI and Cline spell the same tools differently); ``None`` keeps the generic card. A layout never
fails the card: arguments that are not what the tool takes (not JSON, a missing key, a wrong type,
a diff too big to compute) give ``None`` too. The raw arguments stay one click away, folded, and
search still reads them (it searches the card's text, not this HTML). Everything is escaped here.

The card passes in its own ``fold`` (long text folded behind its line count and cut at the card's
limit), so a layout folds as every card does and this module needs nothing from ``cards``.
"""

from __future__ import annotations

import difflib
import functools
import html
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.html import esc

__all__ = ["Layout", "layout", "Fold", "Colour"]

Fold = Callable[..., str]  # fold(text, *, cls=..., label=..., code=...) -> escaped HTML, as cards.fold

MAX_DIFF_LINES = 20_000  # old + new lines beyond which no diff is computed (generic card instead)
MAX_DIFF_CHARS = 2_000_000
OPEN_DIFF_LINES = 40  # a diff up to this long is shown open (the point of the card); longer ones fold


@dataclass(slots=True, frozen=True)
class Layout:
    """What a tool's layout puts on its card: a short head (after the tool's name), a body in
    place of the arguments (which follow it, folded), and the result's body (None: the generic)."""

    gist: str
    body: str
    result: str | None = None


PAGE_CODE_CHARS = 20_000  # characters of code a page colours (about 500 lines; the rest plain)


class Colour:
    """How much code a page still colours. Lexing is the costly part of a card (about 2 ms for a
    kilobyte of Python), so a page colours its first ``budget`` characters of code and shows the
    rest plain: the report of a long session stays quick to build."""

    def __init__(self, budget: int | None = None) -> None:
        self.left = PAGE_CODE_CHARS if budget is None else budget

    def lines(self, escaped: list[str], path: str | None) -> list[str] | None:
        """The escaped lines as spans of pygments' token classes (pygments escapes the text and
        closes every span at the end of its line); None when not coloured."""
        if self.left <= 0:
            return None
        lexer = _lexer(path)
        if lexer is None:
            return None
        code = html.unescape("\n".join(escaped))
        if len(code) > self.left:
            return None
        self.left -= len(code)
        from pygments import highlight
        from pygments.formatters import HtmlFormatter

        try:
            out = highlight(code, lexer, HtmlFormatter(nowrap=True)).split("\n")
        except Exception:  # a lexer's own failure: the text stays readable, uncoloured
            return None
        return out[: len(escaped)] if len(out) >= len(escaped) else None


@dataclass(slots=True, frozen=True)
class _Card:
    """What a layout takes from its card: the card's fold, the arguments as the card lays them
    out, and the page's colouring budget."""

    fold: Fold
    shown: str
    colour: Colour

    def __call__(self, text: str, **kw: Any) -> str:
        return self.fold(text, **kw)


def layout(
    name: str, arguments: str, result: str | None, *, fold: Fold, shown: str, colour: Colour | None = None,
) -> Layout | None:
    """The layout of a call to ``name`` with these ``arguments`` (and the text of its result, if
    any), or None for the generic card. ``shown`` is the arguments as the generic card lays them
    out (kept, folded, under the layout); ``colour`` the page's budget for colouring code."""
    try:
        return _layout(name, arguments, result, _Card(fold, shown, colour if colour is not None else Colour()))
    except Exception:  # a layout is a nicety: odd arguments get the generic card, never an error
        return None


def _layout(name: str, arguments: str, result: str | None, fold: _Card) -> Layout | None:
    key = name.lower()
    if _PATCH_START in arguments and key in _PATCH_TOOLS:
        return _patch(_patch_text(arguments), key in _SHELL, arguments, result, fold)
    args = _object(arguments)
    if args is None:
        return None
    if key in _SHELL:
        return _command(args, arguments, result, fold)
    render = _BY_NAME.get(key)
    return render(args, arguments, result, fold) if render is not None else None


def _object(arguments: str) -> dict[str, Any] | None:
    try:
        parsed = json.loads(arguments) if arguments else None
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict) else None


def _str(args: dict[str, Any], *keys: str) -> str | None:
    """The first of ``keys`` that holds a string."""
    for k in keys:
        v = args.get(k)
        if isinstance(v, str):
            return v
    return None


def _int(args: dict[str, Any], *keys: str) -> int | None:
    for k in keys:
        v = args.get(k)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return None


def _raw(fold: _Card) -> str:
    """The arguments as the model wrote them, folded shut (the layout above shows what they mean):
    a long text folds as fold folds it (named here), a short one behind a summary of its own."""
    text = fold.shown
    html = fold(text, code=True, cls="pk-code")
    if html.startswith('<details class="pk-fold"><summary>'):
        return html.replace('<details class="pk-fold"><summary>', '<details class="pk-fold pk-raw"><summary>arguments as written: ', 1)
    n = text.count("\n") + 1
    return (
        f'<details class="pk-fold pk-raw"><summary>arguments as written: <span class="pk-n">{n} lines, '
        f"{len(text):,} chars</span></summary>{html}</details>"
    )


def _path(path: str | None) -> str:
    return f' <code class="pk-gist pk-path">{esc(path)}</code>' if path else ""


def _count(added: int, removed: int) -> str:
    return f' <span class="pk-dstat"><span class="pk-plus">+{added}</span> <span class="pk-minus">\u2212{removed}</span></span>'


# --------------------------------------------------------------------------- marked lines

_PRE = '<pre class="pk-code pk-lines">'


def _lines_block(
    text: str, lines: Callable[[list[str]], str], *, label: str, fold: _Card, open_upto: int = 0
) -> str:
    """``text`` folded as any long text is, its block of lines made by ``lines`` (given the
    escaped lines fold kept). fold decides whether to fold and where to cut; the block is then
    rebuilt from what it made (escaped text holds no ``<``, so the block is found)."""
    html = fold(text, code=True, cls="pk-code pk-lines", label=label)
    at = html.find(_PRE)
    end = html.find("</pre>", at)
    if at >= 0 and end >= 0:
        html = html[:at] + lines(html[at + len(_PRE) : end].split("\n")) + html[end + len("</pre>") :]
    if html.startswith('<details class="pk-fold">') and text.count("\n") < open_upto:
        html = '<details class="pk-fold" open>' + html[len('<details class="pk-fold">') :]
    return html


# a diff's lines as elements of their own: added <ins>, removed <del>, a hunk's head <em>, a
# patch's own lines <strong>; the sign stays on each line (colour is not the only cue)
_DIFF_TAG = {"+": "ins", "-": "del", "@": "em", "*": "strong"}


def _diff_lines(lines: list[str]) -> str:
    out = []
    for line in lines:
        tag = _DIFF_TAG.get(line[:1], "span")
        if tag == "strong" and not line.startswith("*** "):
            tag = "span"
        out.append(f"<{tag}>{line}</{tag}>")
    return f'<pre class="pk-code pk-diff">{"".join(out)}</pre>'


def _diff_block(lines: list[str], label: str, fold: _Card) -> str:
    return _lines_block("\n".join(lines), _diff_lines, label=label, fold=fold, open_upto=OPEN_DIFF_LINES)


def _unified(old: str, new: str) -> list[str] | None:
    """A unified diff of old to new, or None when too big to compute. The texts are snippets of
    a file, so the hunks' line numbers would mislead: a hunk after the first starts with ``@@ ⋯``."""
    if len(old) + len(new) > MAX_DIFF_CHARS:
        return None
    a, b = old.splitlines(), new.splitlines()
    if len(a) + len(b) > MAX_DIFF_LINES:
        return None
    lines = list(difflib.unified_diff(a, b, lineterm="", n=3))[2:]
    return ["@@ \u22ef" if x.startswith("@@") else x for x in lines[1:]]


def _stat(lines: list[str]) -> tuple[int, int]:
    added = sum(1 for x in lines if x.startswith("+"))
    removed = sum(1 for x in lines if x.startswith("-"))
    return added, removed


# --------------------------------------------------------------------------- edits


def _edit(args: dict[str, Any], arguments: str, result: str | None, fold: _Card) -> Layout | None:
    """One old/new pair: Claude Code Edit, OpenCode edit, Gemini CLI replace."""
    path = _str(args, "file_path", "filePath", "path", "absolute_path")
    old = _str(args, "old_string", "oldString")
    new = _str(args, "new_string", "newString")
    if old is None or new is None:
        return None
    return _pairs(path, [(old, new)], args.get("replace_all") is True or args.get("replaceAll") is True, arguments, fold)


def _multi(args: dict[str, Any], arguments: str, result: str | None, fold: _Card) -> Layout | None:
    """Claude Code MultiEdit: several pairs on one file, in order."""
    edits = args.get("edits")
    if not isinstance(edits, list) or not edits:
        return None
    pairs = []
    for e in edits:
        if not isinstance(e, dict):
            return None
        old, new = _str(e, "old_string", "oldString"), _str(e, "new_string", "newString")
        if old is None or new is None:
            return None
        pairs.append((old, new))
    return _pairs(_str(args, "file_path", "filePath"), pairs, False, arguments, fold)


def _pairs(path: str | None, pairs: list[tuple[str, str]], every: bool, arguments: str, fold: _Card) -> Layout | None:
    lines: list[str] = []
    for k, (old, new) in enumerate(pairs):
        d = _unified(old, new)
        if d is None:
            return None
        if len(pairs) > 1:
            lines.append(f"@@ edit {k + 1} of {len(pairs)}")
        lines += d
    added, removed = _stat(lines)
    note = ' <span class="pk-badge">every occurrence</span>' if every else ""
    gist = f' <span class="pk-what">edit</span>{_path(path)}{_count(added, removed)}{note}'
    body = _diff_block(lines, "diff", fold) if lines else '<div class="pk-lbl">no change: old and new text are the same</div>'
    return Layout(gist, body + _raw(fold))


def _write(args: dict[str, Any], arguments: str, result: str | None, fold: _Card) -> Layout | None:
    """A whole file written: Claude Code Write, OpenCode write, Gemini CLI write_file, Cline write_to_file."""
    path = _str(args, "file_path", "filePath", "path", "absolute_path")
    content = _str(args, "content")
    if content is None:
        return None
    rows = _split(content)
    n = len(rows)
    gist = f' <span class="pk-what">write whole file</span>{_path(path)} <span class="pk-dstat"><span class="pk-plus">{n} line(s)</span></span>'
    body = _rendered(path, content) + _numbered(rows, None, "content", fold, path=path)
    return Layout(gist, body + _raw(fold))


_MARKDOWN_FILES = (".md", ".markdown", ".mdx", ".mkd")


def _rendered(path: str | None, content: str) -> str:
    """A Markdown file as it reads, rendered by the cards' safe renderer (no raw HTML, no image
    loaded, only http/https/mailto links), above its lines as written. Empty for other files,
    and for text with no Markdown in it (it would read the same)."""
    if not path or not path.lower().endswith(_MARKDOWN_FILES):
        return ""
    from .markdown import render_markdown

    shown = render_markdown(content)
    if shown is None:
        return ""
    return (f'<details class="pk-fold pk-rendered-md" open><summary>rendered (as a Markdown viewer shows it; '
            f'its lines as written are below)</summary><div class="pk-rendered pk-md">{shown}</div></details>')


# Cline's SEARCH/REPLACE blocks, both spellings of their markers
_SEARCH = re.compile(r"^(?:-{3,} SEARCH|<{3,} SEARCH)[ \t]*$")
_DIVIDER = re.compile(r"^={3,}[ \t]*$")
_REPLACE = re.compile(r"^(?:\+{3,} REPLACE|>{3,} REPLACE)[ \t]*$")


def _search_replace(args: dict[str, Any], arguments: str, result: str | None, fold: _Card) -> Layout | None:
    """Cline replace_in_file: the diff's SEARCH/REPLACE blocks as old/new pairs."""
    diff = _str(args, "diff")
    if diff is None:
        return None
    pairs: list[tuple[str, str]] = []
    old: list[str] | None = None
    new: list[str] | None = None
    for line in diff.split("\n"):
        if _SEARCH.match(line):
            old, new = [], None
        elif old is not None and new is None and _DIVIDER.match(line):
            new = []
        elif new is not None and old is not None and _REPLACE.match(line):
            pairs.append(("\n".join(old), "\n".join(new)))
            old = new = None
        elif new is not None:
            new.append(line)
        elif old is not None:
            old.append(line)
    if not pairs:
        return None
    return _pairs(_str(args, "path", "file_path"), pairs, False, arguments, fold)


# --------------------------------------------------------------------------- patches

_PATCH_START = "*** Begin Patch"
_PATCH_TOOLS = {"apply_patch", "patch", "exec_command", "shell", "shell_command", "local_shell", "bash"}
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$", re.M)


def _patch_text(arguments: str) -> str:
    """The patch in a call: raw (a custom tool call), a JSON field, or inside a shell command."""
    args = _object(arguments)
    text = arguments
    if args is not None:
        v = _str(args, "input", "patch", "patchText", "cmd", "command")
        if v is None and isinstance(args.get("command"), list):
            v = "\n".join(x for x in args["command"] if isinstance(x, str))
        text = v or arguments
    start = text.find(_PATCH_START)
    end = text.find("*** End Patch", start)
    return text[start:] if end < 0 else text[start : end + len("*** End Patch")]


def _removed_first(lines: list[str]) -> list[str]:
    """Each run of changed lines with what it removes before what it adds, as a diff reads (a
    model writes a patch's ``+`` and ``-`` lines in any order; applying it does not care)."""
    out: list[str] = []
    run: list[str] = []
    for line in [*lines, ""]:
        if line[:1] in ("+", "-") and not line.startswith(("+++", "---")):
            run.append(line)
            continue
        out += [x for x in run if x[:1] == "-"] + [x for x in run if x[:1] == "+"]
        run = []
        out.append(line)
    return out[:-1]


def _added_files(patch: str) -> str:
    """The Markdown files a patch adds, each rendered (what ``_rendered`` shows for a write)."""
    out = []
    for section in re.split(r"^(?=\*\*\* (?:Add|Update|Delete) File: )", patch, flags=re.M):
        m = re.match(r"\*\*\* Add File: (.+)", section)
        if m:
            text = "\n".join(x[1:] for x in section.split("\n")[1:] if x.startswith("+"))
            out.append(_rendered(m.group(1).strip(), text))
    return "".join(out)


def _patch(patch: str, shell: bool, arguments: str, result: str | None, fold: _Card) -> Layout | None:
    """Codex's patch format (``*** Begin Patch``), already a diff: its lines marked (what a change
    removes before what it adds), its files named, a Markdown file it adds also shown rendered."""
    lines = _removed_first(patch.split("\n"))
    files = [f"{'new' if op == 'Add' else 'delete' if op == 'Delete' else 'edit'} {path.strip()}" for op, path in _PATCH_FILE.findall(patch)]
    added, removed = _stat([x for x in lines if not x.startswith("***")])
    shown = "; ".join(files[:4]) + (f"; and {len(files) - 4} more" if len(files) > 4 else "")
    gist = f' <span class="pk-what">patch</span> <code class="pk-gist pk-path">{esc(shown)}</code>{_count(added, removed)}'
    body = _diff_block(lines, "patch", fold) + _added_files(patch)
    res = _terminal(result, fold) if result is not None and shell else None  # a shell ran it: its output
    return Layout(gist, body + _raw(fold), res)


# --------------------------------------------------------------------------- reads

# "     1→text" (Claude Code), "00001| text" (OpenCode), "1: text", "1\ttext" (cat -n); a run of
# such lines is what a read returned
_LINE = r" *(\d{1,9})(?:\u2192|\| ?|: |\t)(.*)"
_NUMBERED = re.compile(rf"^{_LINE}$", re.M)
_RUN = re.compile(rf"(?:^{_LINE}(?:\n|$))+", re.M)


def _read(args: dict[str, Any], arguments: str, result: str | None, fold: _Card, *, plain: bool = False) -> Layout | None:
    """A file read: Claude Code Read, OpenCode read (their results number the lines), Gemini CLI
    and Cline read_file (``plain``: the file's text as it is, numbered here from the offset)."""
    path = _str(args, "file_path", "filePath", "absolute_path", "path")
    if path is None:
        return None
    offset, count = _int(args, "offset"), _int(args, "limit")
    asked = [f"{k} {v}" for k, v in (("offset", offset), ("limit", count)) if v is not None]
    span = f' <span class="pk-lbl">{esc(", ".join(asked))}</span>' if asked else ""
    gist = f' <span class="pk-what">read</span>{_path(path)}{span}'
    res = None
    if result is not None:
        res = _read_result(result, fold, path)
        if res is None and plain and result.strip() and not result.startswith("Error"):
            start = (offset or 0) + 1  # Gemini CLI's offset counts from 0
            # Gemini CLI puts a note above a truncated file's text, ending in this line
            note, mark, body = result.partition(_TRUNCATED)
            head = fold((note + mark).strip("\n"), code=True, cls="pk-code") if mark else ""
            res = head + _numbered(_split(body.lstrip("\n") if mark else result), None, "content", fold, start=start,
                                   path=path)
    return Layout(gist, _raw(fold), res)


_TRUNCATED = "--- FILE CONTENT (truncated) ---"


def _read_plain(args: dict[str, Any], arguments: str, result: str | None, fold: _Card) -> Layout | None:
    return _read(args, arguments, result, fold, plain=True)


def _read_result(text: str, fold: _Card, path: str | None = None) -> str | None:
    """The read lines with their numbers in a gutter; what comes before and after them (a note
    the agent wrapped around them, a reminder it appended) as text. None when no line is numbered."""
    run = _RUN.search(text)
    if run is None or text.count("\n", 0, run.start()) > 3:  # a wrapper's few lines at most before them
        return None
    rows = _NUMBERED.findall(run.group(0))
    numbers = [int(n) for n, _ in rows]
    head, rest = text[: run.start()].strip("\n"), text[run.end() :].strip("\n")
    out = []
    if head.strip():
        out.append(fold(head, code=True, cls="pk-code"))
    out.append(_numbered([x for _, x in rows], numbers, f"lines {numbers[0]}\u2013{numbers[-1]}", fold, path=path))
    if rest.strip():
        out.append(fold(rest, code=True, cls="pk-code"))
    return "".join(out)


def _split(text: str) -> list[str]:
    """A file's lines (a final newline ends the last line; it does not start another)."""
    rows = text.split("\n")
    return rows[:-1] if len(rows) > 1 and rows[-1] == "" else rows


def _numbered(
    lines: list[str], numbers: list[int] | None, label: str, fold: _Card, *, start: int = 1, path: str | None = None,
) -> str:
    """Lines with their numbers (counted from ``start`` when not given), as an ordered list: the
    numbers are list markers (drawn by the browser, left out when the text is copied) and a
    wrapped line keeps its one number. Code is highlighted for the language of ``path``."""
    first = numbers[0] if numbers else start
    counted = numbers is None or numbers == list(range(first, first + len(numbers)))

    def block(shown: list[str]) -> str:
        coloured = fold.colour.lines(shown, path)
        cls = "pk-code pk-num" if coloured is None else "pk-code pk-num pk-hl"
        shown = shown if coloured is None else coloured
        if counted:
            items = "<li>" + "</li><li>".join(shown) + "</li>"
        else:
            assert numbers is not None
            items = "".join(f'<li value="{n}">{x}</li>' for n, x in zip(numbers, shown, strict=False))
        return f'<ol class="{cls}" start="{first}">{items}</ol>'

    return _lines_block("\n".join(lines), block, label=label, fold=fold)


@functools.lru_cache(maxsize=256)
def _lexer_for(name: str) -> Any:
    from pygments.lexers import get_lexer_for_filename
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_for_filename(name, stripnl=False, ensurenl=False)
    except (ClassNotFound, ValueError):
        return None
    return None if lexer.name == "Text only" else lexer  # plain text: nothing to colour


def _lexer(path: str | None) -> Any:
    """The pygments lexer for a file's name (by its name only: the text is never guessed at), or None."""
    name = (path or "").replace("\\", "/").rsplit("/", 1)[-1]
    return _lexer_for(name) if "." in name else None


# --------------------------------------------------------------------------- commands

_SHELL = {"bash", "shell", "exec_command", "shell_command", "local_shell", "run_shell_command", "execute_command"}
_EXIT = re.compile(r"^(?:Error: )?(?:Exit code:? |Process exited with code )(-?\d+)\b", re.M)


def _command(args: dict[str, Any], arguments: str, result: str | None, fold: _Card) -> Layout | None:
    """A shell call: Claude Code and OpenCode bash, Codex exec_command/shell, Gemini CLI
    run_shell_command, Cline execute_command."""
    cmd: Any = args.get("command", args.get("cmd"))
    if isinstance(cmd, list) and cmd and all(isinstance(x, str) for x in cmd):
        # Codex's argv: ["bash", "-lc", "script"] shows as the script
        cmd = cmd[-1] if len(cmd) == 3 and cmd[1] in ("-lc", "-c") else " ".join(cmd)
    if not isinstance(cmd, str):
        return None
    what = _str(args, "description", "justification")
    where = _str(args, "workdir", "directory", "cwd")
    line = cmd if "\n" not in cmd.strip("\n") and len(cmd) <= 800 else None
    gist = f' <span class="pk-what">{esc(what)}</span>' if what else ""
    if line is not None:
        body = f'<pre class="pk-code pk-cmd"><span class="pk-ps">$ </span>{esc(line.strip())}</pre>'
    else:
        body = fold(cmd, code=True, cls="pk-code pk-cmd", label="$ command")
    if where:
        body = f'<div class="pk-lbl">in <code>{esc(where)}</code></div>' + body
    res = _terminal(result, fold) if result is not None else None
    return Layout(gist, body + _raw(fold), res)


def _terminal(text: str, fold: _Card) -> str:
    """A command's output as a terminal block, its exit code (when the tool wrote one) in front."""
    output, code = text, None
    parsed = _object(text) if text.startswith("{") else None
    if parsed is not None and isinstance(parsed.get("output"), str):  # Codex: {"output", "metadata"}
        output = parsed["output"]
        meta = parsed.get("metadata")
        if isinstance(meta, dict):
            code = _int(meta, "exit_code")
    if code is None:
        m = _EXIT.search("\n".join(output[:2000].split("\n", 5)[:5]))  # a tool's own header, not the output's
        code = int(m.group(1)) if m else None
    badge = ""
    if code is not None:
        badge = f'<span class="pk-badge pk-exit{" pk-bad" if code else ""}">exit {code}</span>'
    if not output.strip():
        return f'{badge}<div class="pk-lbl">no output</div>'
    return badge + fold(output, code=True, cls="pk-code pk-term")


# --------------------------------------------------------------------------- to-do lists

_TICK = {"completed": "\u2611", "done": "\u2611", "in_progress": "\u25d0", "pending": "\u2610", "cancelled": "\u2612"}


def _todos(args: dict[str, Any], arguments: str, result: str | None, fold: _Card) -> Layout | None:
    """Claude Code TodoWrite, OpenCode todowrite, Gemini CLI write_todos: the list as a checklist."""
    todos = args.get("todos")
    if not isinstance(todos, list):
        return None
    items = []
    done = 0
    for t in todos:
        if not isinstance(t, dict):
            return None
        text = _str(t, "content", "description", "text")
        status = _str(t, "status") or "pending"
        if text is None:
            return None
        done += status in ("completed", "done")
        tick = _TICK.get(status, "\u2610")
        items.append(
            f'<li class="pk-todo pk-todo-{esc(status)}"><span class="pk-tick" title="{esc(status)}">{tick}</span> '
            f'{esc(text)} <span class="pk-lbl">{esc(status.replace("_", " "))}</span></li>'
        )
    gist = f' <span class="pk-what">to-do list</span> <span class="pk-lbl">{done} of {len(todos)} done</span>'
    return Layout(gist, f'<ul class="pk-todos">{"".join(items)}</ul>' + _raw(fold))


_BY_NAME: dict[str, Callable[[dict[str, Any], str, str | None, _Card], Layout | None]] = {
    "edit": _edit,  # Claude Code, OpenCode
    "replace": _edit,  # Gemini CLI
    "multiedit": _multi,
    "write": _write,  # Claude Code, OpenCode
    "write_file": _write,  # Gemini CLI
    "write_to_file": _write,  # Cline
    "replace_in_file": _search_replace,  # Cline
    "read": _read,  # Claude Code, OpenCode
    "read_file": _read_plain,  # Gemini CLI, Cline
    "todowrite": _todos,  # Claude Code, OpenCode
    "write_todos": _todos,  # Gemini CLI
}
