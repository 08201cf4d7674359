"""Cards: one message (and, for a call, its result) as escaped HTML, and the findings that point at them.

``build_page`` turns what an inspection knows (the messages as stored, the repaired history, the
validators' problems, the source's own markers, skipped counts and warnings) into a ``Page``:
findings, each linked to the card it concerns, and rows that pair a stored message with the
message sent in its place (an inserted repair result gets a row of its own, empty on the stored
side), so the two sides stay aligned. Every view (the widget, the HTML file, a saved notebook)
renders these same cards. Everything from a transcript is escaped here and nowhere else.

Prose (assistant and user text, thinking) is rendered as safe Markdown (``markdown.py``). What is
data stays verbatim text: a tool's output and a call's arguments, and the system prompt. The
system prompt is configuration the provider reads character for character (its indentation,
its XML-like sections and its literal asterisks are instructions, not layout), and a person
reads it to learn exactly what the model was told, so it is shown as written.
"""

from __future__ import annotations

import html
import json
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from ..core.messages import AssistantMessage, Message, SystemMessage, ToolMessage, text_of
from ..core.repair import (
    ADDED_RESULT,
    DROPPED_EMPTY_ASSISTANT,
    RENAMED_CALL,
    RENAMED_RESULT,
    RESULT_TO_NOTE,
    Repaired,
)
from ..core.text_calls import text_calls
from . import tools
from .markdown import render_markdown

__all__ = [
    "Finding", "Row", "Page", "build_page", "fold", "esc", "CHANGE_LABELS", "KIND_LABELS", "ERROR_RESULT", "CALL_AS_TEXT",
]

FOLD_LINES = 8  # a text longer than this many lines is folded (its line count shown)
FOLD_CHARS = 800  # ... or longer than this many characters
SEARCH_CHARS = 20_000  # searchable text kept per row

# What each kind of repair did, in words a reader needs no glossary for.
CHANGE_LABELS = {
    ADDED_RESULT: "result added by repair",
    RESULT_TO_NOTE: "result passed on as a note",
    RENAMED_CALL: "call id renamed (used twice)",
    RENAMED_RESULT: "result id renamed (used twice)",
    DROPPED_EMPTY_ASSISTANT: "empty message dropped",
}
# A tool result the source marks as an error (``details[i]["error"]``): shown and filterable,
# not a finding (the history is valid; the model read the error).
ERROR_RESULT = "error_result"
# An answer holding a tool call the model wrote as text (the server did not parse it): never run.
CALL_AS_TEXT = "call_as_text"
KIND_LABELS = {**CHANGE_LABELS, ERROR_RESULT: "tool result was an error", CALL_AS_TEXT: "tool call written as text"}
_ERROR_BADGE = '<span class="pk-badge pk-bad">error</span>'


def esc(value: Any) -> str:
    """Escaped text; None becomes nothing (a page never says "None")."""
    return "" if value is None else html.escape(str(value), quote=True)


@dataclass(slots=True)
class Finding:
    """One thing the reader should know, and the stored message it concerns (None: the whole
    transcript)."""

    id: str  # "f-3": its anchor
    kind: str  # a validator rule, "lost_call", a marker kind, "call_as_text", "warning", "skipped"
    title: str
    index: int | None = None  # stored message
    wording: str | None = None  # the provider's own words
    told: str | None = None  # what the model reads instead (a lost call)
    read_only: bool | None = None
    call_id: str | None = None


class Row:
    """One aligned row: a stored message and what is sent in its place (either may be None).

    Its cards are built when first asked for, so a view of a long history pays only for the
    rows it shows."""

    __slots__ = ("before", "after", "role", "text", "kinds", "_sides", "_html")

    def __init__(
        self, before: int | None, after: int | None, role: str, text: str, kinds: list[str],
        sides: tuple[_Side, _Side | None],
    ) -> None:
        self.before, self.after, self.role, self.text, self.kinds = before, after, role, text, kinds
        self._sides = sides
        self._html: tuple[str, str] | None = None

    def _cards(self) -> tuple[str, str]:
        if self._html is None:
            stored, sent = self._sides
            b = stored.card(self.before) if self.before is not None else ""
            a = sent.card(self.after) if sent is not None and self.after is not None else ""
            self._html = (b, a)
        return self._html

    @property
    def before_html(self) -> str:
        return self._cards()[0]

    @property
    def after_html(self) -> str:
        return self._cards()[1]


@dataclass(slots=True)
class Page:
    title: str
    source_format: str | None
    rows: list[Row]
    findings: list[Finding]
    stored: int
    sent: int
    changed: bool
    valid: bool
    skipped: dict[str, int] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    anchor: str = ""  # prefix of every id on the page
    hand_back: str | None = None  # the command that writes it back for its coding agent to resume
    errors: int = 0  # tool results the source marks as errors (not findings)

    def kinds(self) -> list[str]:
        """Kinds that occur on some row, in order of first occurrence (the legend lists only these)."""
        seen: dict[str, None] = {}
        for r in self.rows:
            for k in r.kinds:
                seen.setdefault(k, None)
        return list(seen)


# --------------------------------------------------------------------------- text pieces


def _lines(text: str) -> int:
    return text.count("\n") + 1 if text else 0


def fold(
    text: str, *, cls: str = "pk-text", label: str = "", code: bool = False, limit: int | None = None, md: bool = False,
) -> str:
    """Text as a block that keeps its lines and wraps; a long one folded behind its line count,
    and cut after ``limit`` characters (saying how many more there are). ``md``: prose, rendered
    as safe Markdown (``markdown.render_markdown``) when it has any."""
    tag = "pre" if code else "div"
    if not code:  # blank lines at either end of prose (joined text blocks) only push the card apart
        text = text.strip("\n")
    shown = text if limit is None or len(text) <= limit else text[:limit]
    cut = f'<div class="pk-lbl">cut here: {len(text) - len(shown):,} more characters</div>' if shown is not text else ""
    rendered = render_markdown(shown) if md and not code else None
    inner = esc(shown) if rendered is None else rendered
    body = f'<{tag} class="{cls}{"" if rendered is None else " pk-md"}">{inner}</{tag}>{cut}'
    n = _lines(text)
    if n <= FOLD_LINES and len(text) <= FOLD_CHARS:
        if label:
            return f'<div class="pk-lbl">{esc(label)}</div>{body}'
        return body
    first = " ".join(text.strip().split("\n", 1)[0].split())[:120]
    what = f"{label}: " if label else ""
    return (
        f'<details class="pk-fold"><summary>{esc(what)}<span class="pk-n">{n} lines, '
        f'{len(text):,} chars</span> <span class="pk-first">{esc(first)}</span></summary>{body}</details>'
    )


def _args(arguments: str) -> str:
    """Call arguments as the model wrote them, JSON laid out when it is JSON."""
    try:
        parsed = json.loads(arguments) if arguments else None
    except (ValueError, RecursionError):  # not JSON, or nested past what the parser takes
        return arguments
    if isinstance(parsed, dict | list):
        return json.dumps(parsed, indent=1, ensure_ascii=False)
    return arguments


# the argument that says what a call does, for the one-line head (Claude Code's, Codex's and
# common MCP tools' names); the rest stays in the arguments below
_GIST_KEYS = ("command", "cmd", "query", "url", "file_path", "pattern", "path", "prompt")


def _gist(arguments: str) -> str:
    """The call's stated purpose and its main argument, one line each at most (escaped HTML)."""
    try:
        parsed = json.loads(arguments) if arguments else None
    except (ValueError, RecursionError):  # not JSON, or nested past what the parser takes
        return ""
    if not isinstance(parsed, dict):
        return ""
    out = []
    what = parsed.get("description")
    if isinstance(what, str) and what.strip():
        out.append(f' <span class="pk-what">{esc(_one_line(what))}</span>')
    for key in _GIST_KEYS:
        v = parsed.get(key)
        if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
            v = " ".join(v)
        if isinstance(v, str) and v.strip():
            out.append(f' <code class="pk-gist">{esc(_one_line(v))}</code>')
            break
    return "".join(out)


def _one_line(text: str, limit: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "\u2026"


def _info(details: Mapping[str, Any] | None) -> str:
    if not details:
        return ""
    bits = []
    for key in ("time", "model", "tokens"):
        v = details.get(key)
        if v not in (None, ""):
            bits.append(f'<span class="pk-{key}">{esc(v)}</span>')
    return f' <span class="pk-info">{" · ".join(bits)}</span>' if bits else ""


# --------------------------------------------------------------------------- one side


class _Side:
    """The cards of one history (stored or sent): results found by call id, anchors, flags."""

    def __init__(
        self,
        messages: Sequence[Message],
        prefix: str,
        *,
        lost: Mapping[str, Finding] | None = None,
        added: Mapping[int, str] | None = None,
        findings: Mapping[int, list[Finding]] | None = None,
        details: Mapping[int, Mapping[str, Any]] | None = None,
        limit: int | None = None,
        colour: tools.Colour | None = None,
    ) -> None:
        self.messages = messages
        self.limit = limit
        self.colour = colour if colour is not None else tools.Colour()  # shared by a page's sides
        self.prefix = prefix
        self.lost = lost or {}
        self.added = added or {}  # index -> kind of change on this side
        self.findings = findings or {}
        self.details = details or {}
        # call id -> index of its result, and result index -> index of its call (the first
        # result after the call with that id: the pairing a provider checks)
        self.result_of: dict[tuple[int, str], int] = {}
        self.call_of: dict[int, int] = {}
        open_calls: dict[str, int] = {}
        for i, m in enumerate(messages):
            if isinstance(m, AssistantMessage):
                for c in m.tool_calls or []:
                    open_calls[c.id] = i
            elif isinstance(m, ToolMessage):
                at = open_calls.pop(m.tool_call_id, None)
                if at is not None:
                    self.result_of[(at, m.tool_call_id)] = i
                    self.call_of[i] = at

    def anchor(self, i: int) -> str:
        return f"{self.prefix}{i}"

    def failed(self, i: int) -> bool:
        """Whether message ``i`` is a tool result its source marks as an error."""
        d = self.details.get(i)
        return bool(d and d.get("error") is True)

    def text(self, i: int) -> str:
        """What search finds message ``i`` by: its text, tool names, call ids, arguments, the
        results of its calls and the text sent for a lost one."""
        m = self.messages[i]
        if isinstance(m, AssistantMessage):
            out = [m.role, m.reasoning or "", m.content]
            for c in m.tool_calls or []:
                out += [c.name, c.id, c.arguments]
                r = self.result_of.get((i, c.id))
                if r is not None:
                    out.append(text_of(self.messages[r]))
                elif c.id in self.lost:
                    out.append(self.lost[c.id].told or "")
            return "\n".join(out)
        if isinstance(m, ToolMessage):
            return "\n".join((m.role, m.name, m.tool_call_id, m.content))
        return f"{m.role}\n{text_of(m)}"

    def card(self, i: int) -> str:
        """The card of message ``i`` (escaped HTML)."""
        m = self.messages[i]
        kind = self.added.get(i)
        flags = []
        badges = []
        if kind:
            flags.append("pk-changed")
            badges.append(f'<span class="pk-badge pk-k-{esc(kind)}">{esc(CHANGE_LABELS.get(kind, kind))}</span>')
        if self.failed(i):
            badges.append(_ERROR_BADGE)
        here = self.findings.get(i, [])
        if any(f.kind != "lost_call" for f in here):
            flags.append("pk-flagged")
        head = (
            f'<div class="pk-head"><a class="pk-idx" href="#{self.anchor(i)}">#{i}</a> '
            f'<b class="pk-role">{esc(m.role)}</b>{_info(self.details.get(i))}{"".join(badges)}</div>'
        )
        parts = [head]
        if isinstance(m, AssistantMessage):
            if m.reasoning:
                parts.append(fold(m.reasoning, cls="pk-text pk-thinking", label="thinking", limit=self.limit, md=True))
            elif m.reasoning_items is not None or m.reasoning_details:
                parts.append('<div class="pk-lbl">thinking kept encrypted (sent back as it was)</div>')
            if m.content:
                parts.append(fold(m.content, limit=self.limit, md=True))
            for c in m.tool_calls or []:
                parts.append(self._call(i, c.id, c.name, c.arguments))
        elif isinstance(m, ToolMessage):
            at = self.call_of.get(i)
            if at is not None and not kind:
                parts.append(
                    f'<div class="pk-stub">result of <code>{esc(m.name)}</code> '
                    f'<span class="pk-id">{esc(m.tool_call_id)}</span>, {_lines(m.content)} line(s): '
                    f'shown with its call in <a href="#{self.anchor(at)}">#{at}</a></div>'
                )
            else:
                parts.append(
                    f'<div class="pk-callhead"><code>{esc(m.name)}</code> '
                    f'<span class="pk-id">{esc(m.tool_call_id)}</span></div>'
                )
                parts.append(fold(m.content, code=True, cls="pk-code", limit=self.limit))
        else:
            text = text_of(m)
            system = isinstance(m, SystemMessage)  # verbatim: see the module's docstring
            parts.append(fold(text, label="system prompt" if system else "", limit=self.limit, md=not system))
        for f in here:
            if f.kind == "lost_call":
                continue  # shown on its call
            parts.append(_finding_box(f))
        cls = " ".join(["pk-card", f"pk-r-{esc(m.role)}", *flags])
        return f'<div class="{cls}" id="{self.anchor(i)}">{"".join(parts)}</div>'

    def _call(self, i: int, call_id: str, name: str, arguments: str) -> str:
        r = self.result_of.get((i, call_id))
        lost = self.lost.get(call_id)
        shown = _args(arguments)
        # a result repair wrote is its note, not the tool's output: it keeps the generic block
        res_text = text_of(self.messages[r]) if r is not None and r not in self.added else None
        lay = tools.layout(name, arguments, res_text, fold=partial(fold, limit=self.limit), shown=shown,
                           colour=self.colour)  # None: generic
        out = [
            f'<div class="pk-call{" pk-lost" if lost is not None and r is None else ""}">'
            f'<div class="pk-callhead">call <code>{esc(name)}</code> <span class="pk-id">{esc(call_id)}</span>'
            f"{_gist(arguments) if lay is None else lay.gist}</div>"
        ]
        if lay is not None:
            out.append(lay.body)
        elif arguments:
            out.append(fold(shown, code=True, cls="pk-code", label="arguments", limit=self.limit))
        if r is not None:
            res = self.messages[r]
            assert isinstance(res, ToolMessage)
            added = self.added.get(r)
            tag = f" ({CHANGE_LABELS.get(added, added)})" if added else ""
            # what the source says about the result (rejected, an error, ...) shows on the call too
            marks = [f for f in self.findings.get(r, []) if f.kind != "lost_call"]
            bad = "".join(f'<span class="pk-badge pk-bad">{esc(f.kind)}</span>' for f in marks)
            if self.failed(r):
                bad += _ERROR_BADGE
            out.append(
                f'<div class="pk-result{" pk-bad" if bad else ""}"><a class="pk-idx" href="#{self.anchor(r)}">'
                f"#{r}</a> result{esc(tag)}{bad}"
                f"{fold(res.content, code=True, cls='pk-code', limit=self.limit) if lay is None or lay.result is None else lay.result}</div>"
            )
        elif lost is not None:
            out.append(_lost_box(lost))
        else:
            out.append('<div class="pk-lbl">no result yet</div>')
        out.append("</div>")
        return "".join(out)


def _lost_box(f: Finding) -> str:
    safe = (
        "read-only: changed nothing, safe to call again"
        if f.read_only
        else "not read-only: it may have partly run"
    )
    parts = [
        f'<div class="pk-lostbox" data-finding="{esc(f.id)}"><b>lost: no result was stored for this call</b>'
        f' <span class="pk-badge">{esc(safe)}</span>'
    ]
    if f.wording:
        parts.append(f'<div class="pk-why">the provider would answer: <q>{esc(f.wording)}</q></div>')
    if f.told:
        parts.append(f'<div class="pk-lbl">the model will read instead:</div><div class="pk-told">{esc(f.told)}</div>')
    parts.append("</div>")
    return "".join(parts)


def _finding_box(f: Finding) -> str:
    wording = f'<div class="pk-why">the provider would answer: <q>{esc(f.wording)}</q></div>' if f.wording else ""
    return (
        f'<div class="pk-note" data-finding="{esc(f.id)}"><span class="pk-badge">{esc(f.kind)}</span> '
        f"{esc(f.title)}{wording}</div>"
    )


# --------------------------------------------------------------------------- alignment


def align(before: Sequence[Message], repaired: Repaired) -> list[tuple[int | None, int | None]]:
    """Rows (stored index, sent index): a message kept (the same object or an equal one, or one a
    change names on both sides) shares a row; an added one has a row with no stored side; a
    dropped one a row with no sent side. The stored history may be a fresh load (other objects)."""
    after = repaired.messages
    by_change: dict[int, int] = {}
    dropped: set[int] = set()
    for c in repaired.changes:
        if c.index_before is not None and c.index_after is not None:
            by_change.setdefault(c.index_after, c.index_before)
        elif c.index_before is not None:
            dropped.add(c.index_before)
    moved = set(by_change.values())
    rows: list[tuple[int | None, int | None]] = []
    i = 0
    for j, m in enumerate(after):
        b = by_change.get(j)
        if b is None:
            while i < len(before) and (i in dropped or i in moved):
                if i in dropped:
                    rows.append((i, None))
                i += 1
            if i < len(before) and (before[i] is m or before[i] == m):
                b = i
            else:
                rows.append((None, j))
                continue
        rows.append((b, j))
        if b == i:
            i += 1
    rows.extend((k, None) for k in range(i, len(before)) if k not in moved)
    return rows


# --------------------------------------------------------------------------- the page


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, Mapping) else getattr(obj, key, None)


def build_page(
    messages: Sequence[Message],
    repaired: Repaired | None = None,
    problems: Iterable[Any] = (),
    *,
    title: str = "Transcript",
    source_format: str | None = None,
    markers: Iterable[Any] = (),
    skipped: Mapping[str, int] | None = None,
    warnings: Iterable[str] = (),
    pending: Iterable[str] = (),
    abandoned: Iterable[Any] = (),
    details: Mapping[int, Mapping[str, Any]] | None = None,
    meta: Mapping[str, Any] | None = None,
    max_chars: int | None = None,
    anchor: str = "",
    hand_back: str | None = None,
) -> Page:
    """Everything a view shows, built once: findings (linked to their stored message) and rows.

    ``anchor`` prefixes every id (``m-3`` becomes ``<anchor>m-3``), so several pages shown in one
    notebook link each to its own cards; the HTML file uses none (``#m-123``, ``#f-2``)."""
    messages = list(messages)
    repaired = repaired if repaired is not None else Repaired(list(messages))
    findings: list[Finding] = []

    def add(kind: str, title: str, index: int | None, **kw: Any) -> Finding:
        f = Finding(f"{anchor}f-{len(findings) + 1}", kind, title, index if isinstance(index, int) else None, **kw)
        findings.append(f)
        return f

    problems = list(problems)
    # a lost call: where it was made, the provider's words for it, and the text sent instead
    calls_at: dict[str, int] = {}
    for i, m in enumerate(messages):
        if isinstance(m, AssistantMessage):
            for c in m.tool_calls or []:
                calls_at.setdefault(c.id, i)
    changed = bool(repaired.changes)
    pairs = align(messages, repaired) if changed else [(i, i) for i in range(len(messages))]
    stored_of = {a: b for b, a in pairs if a is not None and b is not None}
    lost: dict[str, Finding] = {}
    used: set[int] = set()
    for r in repaired.interrupted:
        # where the call was made: by its message (an id a restarted agent used again is not enough)
        at = stored_of.get(r.message_index, calls_at.get(r.original_id))
        said: list[str] = []  # the provider's own words first, then the validators'
        for k, p in enumerate(problems):
            if _get(p, "index") == at and r.original_id in f"{_get(p, 'message')} {_get(p, 'provider_wording') or ''}":
                used.add(k)
                own = _get(p, "provider_wording")
                if own:
                    said.insert(0, str(own))
                else:
                    said.append(str(_get(p, "message")))
        wording = said[0] if said else None
        lost[r.original_id] = add(
            "lost_call", f"{r.name} ({r.original_id}) never returned", at,
            wording=wording, told=r.note, read_only=r.read_only, call_id=r.original_id,
        )
    for k, p in enumerate(problems):
        if k not in used:
            add(str(_get(p, "rule")), str(_get(p, "message") or ""), _get(p, "index"), wording=_get(p, "provider_wording"))
    for mk in [*markers, *_calls_as_text(messages)]:
        ids = _get(mk, "ids") or []
        text = str(_get(mk, "text") or "") + (f" ({', '.join(ids)})" if ids else "")
        add(str(_get(mk, "kind")), text, _get(mk, "index"))
    for a in abandoned:  # a coding agent's own resume hid the call or answered it with its placeholder
        agent, name, cid = _get(a, "agent"), _get(a, "name") or "?", _get(a, "call_id")
        args = str(_get(a, "arguments") or "")
        args = args if len(args) <= 300 else args[:297] + "..."
        add(
            "abandoned_call",
            f"{agent}'s own resume abandoned {name} ({cid or 'never written'}) {args}: it may have run, "
            f"and the model was never told. {_get(a, 'what')}",
            _get(a, "index") if _get(a, "index") is not None else calls_at.get(cid or ""),
            read_only=_get(a, "read_only"), call_id=cid,
        )
    for cid in pending:
        add("waiting_for_approval", f"call {cid} waits for a person's answer (not broken)", calls_at.get(cid))
    for w in warnings:
        add("warning", w, None)
    if skipped:
        add("skipped", "not shown (the source holds them, the canonical history cannot): "
            + ", ".join(f"{k} {v}" for k, v in sorted(skipped.items())), None)

    by_index: dict[int, list[Finding]] = {}
    for f in findings:
        if f.index is not None:
            by_index.setdefault(f.index, []).append(f)
    before_marks = {c.index_before: c.kind for c in repaired.changes if c.index_before is not None and c.index_after is None}
    after_marks: dict[int, str] = {}
    for ch in repaired.changes:
        if ch.index_after is not None:
            after_marks.setdefault(ch.index_after, ch.kind)
    colour = tools.Colour()  # one budget for the page's code colouring
    stored = _Side(messages, f"{anchor}m-", lost=lost, added=before_marks, findings=by_index, details=details,
                   limit=max_chars, colour=colour)
    failed = sorted(i for i in stored.details if 0 <= i < len(messages) and stored.failed(i))
    # a failed result kept by repair is badged on the sent side too
    sent_failed = {a: {"error": True} for b, a in pairs if b in failed and a is not None}
    sent = _Side(repaired.messages, f"{anchor}a-", added=after_marks, details=sent_failed, limit=max_chars,
                 colour=colour) if changed else None
    errors = set(failed) | {stored.call_of[i] for i in failed if i in stored.call_of}  # the result and its call
    rows: list[Row] = []
    for b, a in pairs:
        kinds: list[str] = []
        if b is not None:
            text = stored.text(b)
            kinds += [f.kind for f in by_index.get(b, [])]
            if b in errors:
                kinds.append(ERROR_RESULT)
            if b in before_marks:
                kinds.append(before_marks[b])
        else:
            text = sent.text(a) if sent is not None and a is not None else ""
        if sent is not None and a is not None and a in after_marks:
            kinds.append(after_marks[a])
        role = (messages[b] if b is not None else repaired.messages[a or 0]).role
        rows.append(Row(b, a, role, text[:SEARCH_CHARS].lower(), list(dict.fromkeys(kinds)), (stored, sent)))
    return Page(
        title=title,
        source_format=source_format,
        rows=rows,
        findings=findings,
        stored=len(messages),
        sent=len(repaired.messages),
        changed=changed,
        valid=not problems and not repaired.interrupted and not changed and not any(
            f.kind == "abandoned_call" for f in findings
        ),
        skipped=dict(skipped or {}),
        meta=dict(meta or {}),
        anchor=anchor,
        hand_back=hand_back,
        errors=len(failed),
    )


def _calls_as_text(messages: Sequence[Message]) -> Iterable[dict[str, Any]]:
    """A marker for each answer holding a tool call the model wrote as text."""
    for i, m in enumerate(messages):
        written = text_calls(m.content) if isinstance(m, AssistantMessage) and m.content else []
        if written:
            names = ", ".join(dict.fromkeys(c.name or "a tool" for c in written))
            yield {"kind": CALL_AS_TEXT, "index": i, "text": (
                f"the model wrote a call to {names} as text ({written[0].form}): the server did not turn it into a "
                "tool call, so it was not run (a server whose chat template cannot render tools)")}


def page_of(obj: Any, *, title: str | None = None, max_chars: int | None = None, anchor: str = "") -> Page:
    """The Page of an inspection (anything with ``messages``, ``repaired``, ``problems`` and,
    optionally, the source's ``markers``, ``skipped``, ``warnings``, ``pending_approval``,
    ``details``)."""
    return build_page(
        obj.messages,
        getattr(obj, "repaired", None),
        getattr(obj, "problems", ()) or (),
        title=title or str(getattr(obj, "source", "Transcript")),
        source_format=getattr(obj, "format", None),
        markers=getattr(obj, "markers", ()) or (),
        skipped=getattr(obj, "skipped", None),
        warnings=getattr(obj, "warnings", ()) or (),
        pending=getattr(obj, "pending_approval", ()) or (),
        abandoned=getattr(obj, "abandoned", ()) or (),
        details=getattr(obj, "details", None),
        meta=getattr(obj, "meta", None),
        max_chars=max_chars,
        anchor=anchor,
        hand_back=hand_back_command(obj),
    )


# the coding agents whose sessions ``repair --to`` writes back as a new session they resume
HAND_BACK = ("claude_code", "codex", "opencode", "cline")


def hand_back_command(obj: Any) -> str | None:
    """``providerkit-nb repair SOURCE --to AGENT``, for a session read from a coding agent's file."""
    fmt, source, thread = getattr(obj, "format", None), getattr(obj, "source", None), getattr(obj, "thread", None)
    if fmt not in HAND_BACK or not isinstance(source, str | Path) or not str(source):
        return None
    cmd = f"providerkit-nb repair {shlex.quote(str(source))} --to {fmt}"
    return cmd + (f" --thread {shlex.quote(str(thread))}" if isinstance(thread, str) and thread else "")
