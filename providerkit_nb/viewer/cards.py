"""Cards: one message (and, for a call, its result) as escaped HTML, and the findings that point at them.

``build_page`` turns what an inspection knows (the messages as stored, the repaired history, the
validators' problems, the source's own markers, skipped counts and warnings, the sub-agents and
branches it holds) into a ``Page``: findings, each linked to the card it concerns, and rows that
pair a stored message with the message sent in its place (an inserted repair result gets a row of
its own, empty on the stored side), so the two sides stay aligned. Every view (the widget, the
HTML file, a saved notebook, the text) renders these same cards and findings. Everything from a
transcript is escaped here and nowhere else.

What the model reads for a call with no result, and whether its tool only reads, is decided once
(``core.repair``: ``InterruptedCall.why`` and ``.safety``); the cards show that decision, never a
second guess of their own.

Ids are written unscoped (``m-3``, ``a-4``, ``f-2``); a view that shows several pages, or two
copies of one page, in one document gives each its own prefix with ``scoped``.

Prose (assistant and user text, thinking) is rendered as safe Markdown (``markdown.py``). What is
data stays verbatim text: a tool's output and a call's arguments, and the system prompt. The
system prompt is configuration the provider reads character for character (its indentation,
its XML-like sections and its literal asterisks are instructions, not layout), and a person
reads it to learn exactly what the model was told, so it is shown as written.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from ..core.html import esc
from ..core.messages import AssistantMessage, Message, SystemMessage, ToolMessage, text_of
from ..core.repair import (
    ADDED_RESULT,
    DROPPED_EMPTY_ASSISTANT,
    LOST_STOPPED,
    RENAMED_CALL,
    RENAMED_RESULT,
    RESULT_TO_NOTE,
    Repaired,
    lost_safety,
)
from ..core.text_calls import text_calls
from . import tools
from .markdown import render_markdown

__all__ = [
    "Finding", "Row", "Page", "PageOptions", "NestedPage", "build_page", "page_of", "fold", "esc", "scoped",
    "CHANGE_LABELS", "KIND_LABELS", "ERROR_RESULT", "CALL_AS_TEXT", "duration_text",
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
KIND_LABELS = {**CHANGE_LABELS, ERROR_RESULT: "tool result was an error", CALL_AS_TEXT: "tool call written as text",
               "subagent": "sub-agent with findings", "branch": "branch not resumed, with findings"}
_ERROR_BADGE = '<span class="pk-badge pk-bad">error</span>'

# a provider's own place in the request it received: Anthropic's messages.5, Gemini's
# contents[5], the Responses API's input[5]
_WIRE_PATH = re.compile(r"\b(messages|contents|input)(?:\.|\[)(\d+)\]?")


def scoped(text: str, prefix: str) -> str:
    """Page HTML with every id and in-page link given ``prefix``, so two views of pages in one
    document never share an id. Safe on cards: text from a transcript is escaped (a quote is
    ``&quot;``), so ``id="`` and ``href="#`` only occur in the markup written here."""
    if not prefix:
        return text
    return text.replace(' id="', f' id="{prefix}').replace('href="#', f'href="#{prefix}')


@dataclass(slots=True)
class Finding:
    """One thing the reader should know, and the stored message it concerns (None: the whole
    transcript)."""

    id: str  # "f-3": its anchor
    kind: str  # a validator rule, "lost_call", a marker kind, "call_as_text", "warning", "skipped", "subagent", "branch"
    title: str
    index: int | None = None  # stored message
    wording: str | None = None  # the provider's own words
    told: str | None = None  # what the model reads instead (a lost call)
    read_only: bool | None = None
    call_id: str | None = None
    why: str | None = None  # a lost call: core.repair's LOST_* (what decided ``told``)
    next_request: bool = False  # ``wording`` is what the next request would get: no provider has seen it

    @property
    def number(self) -> str:
        """What a reader sees of the finding's id: its number."""
        return self.id.rsplit("-", 1)[-1]

    @property
    def safety(self) -> str | None:
        """A lost call's state in the words every view uses (``core.repair.lost_safety``)."""
        return lost_safety(self.why, bool(self.read_only)) if self.why else None


@dataclass(slots=True)
class NestedPage:
    """A conversation inside another: a sub-agent under the call that started it, or a branch
    of the session that was not resumed, under the message it forked from."""

    kind: str  # "subagent" | "branch"
    label: str
    page: Page
    call_id: str | None = None  # the call that started it (a sub-agent)
    index: int | None = None  # the stored message it hangs from (a branch's fork point)


class Row:
    """One aligned row: a stored message and what is sent in its place (either may be None).

    Its cards are built when first asked for, so a view of a long history pays only for the
    rows it shows. ``same``: the message is sent as it is stored (a view draws one card)."""

    __slots__ = ("before", "after", "role", "text", "kinds", "same", "nested", "_sides", "_html")

    def __init__(
        self, before: int | None, after: int | None, role: str, text: str, kinds: list[str],
        sides: tuple[_Side, _Side | None], same: bool = False, nested: list[NestedPage] | None = None,
    ) -> None:
        self.before, self.after, self.role, self.text, self.kinds = before, after, role, text, kinds
        self.same = same
        self.nested = nested or []  # the sub-agents and branches that hang from its stored message
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
    anchor: str = ""  # prefix of every id of a nested page (a top page has none: views scope it)
    hand_back: str | None = None  # the command that writes it back for its coding agent to resume
    errors: int = 0  # tool results the source marks as errors (not findings)
    problems: int = 0  # what the validators found: the count every view gives
    nested: list[NestedPage] = field(default_factory=list)
    unplaced: list[NestedPage] = field(default_factory=list)  # nested pages no card of this one holds
    times: dict[int, datetime] = field(default_factory=dict)  # stored message -> when it was written
    # call id -> (the message that made it, its result, seconds from one to the other), where timed
    spans: dict[str, tuple[int, int, float]] = field(default_factory=dict)

    def kinds(self) -> list[str]:
        """Kinds that occur on some row, in order of first occurrence (the legend lists only these)."""
        seen: dict[str, None] = {}
        for r in self.rows:
            for k in r.kinds:
                seen.setdefault(k, None)
        return list(seen)

    @property
    def lost(self) -> list[Finding]:
        return [f for f in self.findings if f.kind == "lost_call"]

    @property
    def durations(self) -> dict[str, float]:
        """Call id -> seconds from the call to its result."""
        return {cid: s for cid, (_, _, s) in self.spans.items()}


@dataclass(slots=True)
class PageOptions:
    """Everything besides the history that a page shows (what ``page_of`` reads off an inspection)."""

    title: str = "Transcript"
    source_format: str | None = None
    markers: Iterable[Any] = ()
    skipped: Mapping[str, int] | None = None
    warnings: Iterable[str] = ()
    pending: Iterable[str] = ()
    abandoned: Iterable[Any] = ()
    details: Mapping[int, Mapping[str, Any]] | None = None
    meta: Mapping[str, Any] | None = None
    max_chars: int | None = None  # a text in a card is cut here (None: whole)
    anchor: str = ""  # prefix of every id (a nested page's; a top page leaves it to its view)
    hand_back: str | None = None
    nested: Sequence[NestedPage] = ()


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
        return f'<div class="pk-lbl">{esc(label)}</div>{body}' if label else body
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


def duration_text(seconds: float) -> str:
    """A call's duration as a person reads it: 0.4 s, 12 s, 3 min 5 s, 2 h 4 min."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


def parse_time(value: Any) -> datetime | None:
    """A source's timestamp (ISO 8601, ``Z`` or an offset, or the cards' ``YYYY-MM-DD HH:MM:SS``)."""
    if not isinstance(value, str) or len(value) < 19:
        return None
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo is None else t.astimezone(UTC).replace(tzinfo=None)


def _when(details: Mapping[str, Any] | None) -> datetime | None:
    if not details:
        return None
    return parse_time(details.get("at")) or parse_time(details.get("time"))


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
        durations: Mapping[str, float] | None = None,
        nested: Sequence[NestedPage] = (),
    ) -> None:
        self.messages = messages
        self.limit = limit
        self.colour = colour if colour is not None else tools.Colour()  # shared by a page's sides
        self.prefix = prefix
        self.lost = lost or {}
        self.added = added or {}  # index -> kind of change on this side
        self.findings = findings or {}
        self.details = details or {}
        self.durations = durations or {}
        self.under_call: dict[str, list[NestedPage]] = {}
        self.under_index: dict[int, list[NestedPage]] = {}
        for n in nested:
            if n.call_id is not None:
                self.under_call.setdefault(n.call_id, []).append(n)
            elif n.index is not None:
                self.under_index.setdefault(n.index, []).append(n)
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

    def nested_at(self, i: int) -> list[NestedPage]:
        """The nested pages that hang from message ``i``: from its calls, or forked after it."""
        m = self.messages[i]
        out = list(self.under_index.get(i, ()))
        if isinstance(m, AssistantMessage):
            for c in m.tool_calls or ():
                out += self.under_call.get(c.id, ())
        return out

    def failed(self, i: int) -> bool:
        """Whether message ``i`` is a tool result its source marks as an error."""
        d = self.details.get(i)
        return bool(d and d.get("error") is True)

    def results(self, i: int) -> tuple[str | None, ...]:
        """The text of each call's result of message ``i`` (None: no result), to compare sides."""
        m = self.messages[i]
        if not isinstance(m, AssistantMessage) or not m.tool_calls:
            return ()
        out = []
        for c in m.tool_calls:
            r = self.result_of.get((i, c.id))
            out.append(None if r is None else text_of(self.messages[r]))
        return tuple(out)

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
        here = self.findings.get(i, [])
        flags = ["pk-changed"] if kind else []
        if any(f.kind not in ("lost_call", "subagent", "branch") for f in here):
            flags.append("pk-flagged")
        parts = [self._head(i, m, kind)]
        if isinstance(m, AssistantMessage):
            parts += self._assistant(i, m)
        elif isinstance(m, ToolMessage):
            parts += self._tool(i, m, kind)
        else:
            system = isinstance(m, SystemMessage)  # verbatim: see the module's docstring
            parts.append(fold(text_of(m), label="system prompt" if system else "", limit=self.limit, md=not system))
        parts += [_finding_box(f) for f in here if f.kind not in ("lost_call", "subagent", "branch")]
        parts += [_nested_pointer(n) for n in self.under_index.get(i, ())]
        cls = " ".join(["pk-card", f"pk-r-{esc(m.role)}", *flags])
        return f'<div class="{cls}" id="{self.anchor(i)}">{"".join(parts)}</div>'

    def _head(self, i: int, m: Message, kind: str | None) -> str:
        badges = []
        if kind:
            badges.append(f'<span class="pk-badge pk-k-{esc(kind)}">{esc(CHANGE_LABELS.get(kind, kind))}</span>')
        if self.failed(i):
            badges.append(_ERROR_BADGE)
        return (
            f'<div class="pk-head"><a class="pk-idx" href="#{self.anchor(i)}">#{i}</a> '
            f'<b class="pk-role">{esc(m.role)}</b>{_info(self.details.get(i))}{"".join(badges)}</div>'
        )

    def _assistant(self, i: int, m: AssistantMessage) -> list[str]:
        parts = []
        if m.reasoning:
            parts.append(fold(m.reasoning, cls="pk-text pk-thinking", label="thinking", limit=self.limit, md=True))
        elif m.reasoning_items is not None or m.reasoning_details:
            parts.append('<div class="pk-lbl">thinking kept encrypted (sent back as it was)</div>')
        if m.content:
            parts.append(fold(m.content, limit=self.limit, md=True))
        parts += [self._call(i, c.id, c.name, c.arguments) for c in m.tool_calls or []]
        return parts

    def _tool(self, i: int, m: ToolMessage, kind: str | None) -> list[str]:
        at = self.call_of.get(i)
        if at is not None and not kind:  # shown with its call: one short line here
            return [f'<div class="pk-stub">result of <code>{esc(m.name)}</code> <span class="pk-id">'
                    f'{esc(m.tool_call_id)}</span>, with its call in <a href="#{self.anchor(at)}">#{at}</a></div>']
        return [
            f'<div class="pk-callhead"><code>{esc(m.name)}</code> <span class="pk-id">{esc(m.tool_call_id)}</span></div>',
            fold(m.content, code=True, cls="pk-code", limit=self.limit),
        ]

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
            out.append(self._result(r, call_id, lay))
        elif lost is not None:
            out.append(_lost_box(lost))
        else:
            out.append('<div class="pk-lbl">no result yet</div>')
        out += [_nested_pointer(n) for n in self.under_call.get(call_id, ())]
        out.append("</div>")
        return "".join(out)

    def _result(self, r: int, call_id: str, lay: tools.Layout | None) -> str:
        res = self.messages[r]
        assert isinstance(res, ToolMessage)
        added = self.added.get(r)
        tag = f" ({CHANGE_LABELS.get(added, added)})" if added else ""
        # what the source says about the result (rejected, an error, ...) shows on the call too
        marks = [f for f in self.findings.get(r, []) if f.kind != "lost_call"]
        bad = "".join(f'<span class="pk-badge pk-bad">{esc(f.kind)}</span>' for f in marks)
        if self.failed(r):
            bad += _ERROR_BADGE
        took = self.durations.get(call_id)
        took_html = f' <span class="pk-took" title="from the call to its result">took {duration_text(took)}</span>' \
            if took is not None else ""
        body = fold(res.content, code=True, cls="pk-code", limit=self.limit) if lay is None or lay.result is None \
            else lay.result
        return (f'<div class="pk-result{" pk-bad" if bad else ""}"><a class="pk-idx" href="#{self.anchor(r)}">'
                f"#{r}</a> result{esc(tag)}{took_html}{bad}{body}</div>")


def lost_heading(f: Finding) -> str:
    """What the card says first of a call with no result: stopped, or lost."""
    if f.why == LOST_STOPPED:
        return "stopped: no result was stored for this call"
    return "lost: no result was stored for this call"


def _lost_box(f: Finding) -> str:
    parts = [
        f'<div class="pk-lostbox" data-finding="{esc(f.id)}"><b>{esc(lost_heading(f))}</b>'
        f' <span class="pk-badge">{esc(f.safety)}</span>',
        why_html(f),
    ]
    if f.told:
        parts.append(f'<div class="pk-lbl">the model will read instead:</div><div class="pk-told">{esc(f.told)}</div>')
    parts.append("</div>")
    return "".join(parts)


def why_html(f: Finding) -> str:
    """The provider's own words for a finding, where our number and the provider's differ, and
    for a lost call nobody has sent yet, that no provider has seen it."""
    if f.wording:
        lead = ("no provider has seen this yet; once the conversation goes on, the provider would answer"
                if f.next_request else "the provider would answer")
        return f'<div class="pk-why">{lead}: <q>{esc(f.wording)}</q>{_path_note(f)}</div>'
    if f.kind == "lost_call":
        return ('<div class="pk-why pk-lbl">no provider has seen this history yet: repair sends the text below '
                "in place of the missing result</div>")
    return ""


def _path_note(f: Finding) -> str:
    """Our message number next to the provider's path to the same message (``messages.5``)."""
    m = _WIRE_PATH.search(f.wording or "")
    if m is None or f.index is None or int(m.group(2)) == f.index:
        return ""
    return (f'<div class="pk-lbl pk-path-note">message #{f.index} here is <code>{esc(m.group(0))}</code> in the '
            "provider's words: it numbers the request it receives, where the system prompt travels apart and a "
            "turn's results (and what the user adds to them) share one message</div>")


def _finding_box(f: Finding) -> str:
    return (
        f'<div class="pk-note" data-finding="{esc(f.id)}"><span class="pk-badge">{esc(f.kind)}</span> '
        f"{esc(f.title)}{why_html(f)}</div>"
    )


def _nested_pointer(n: NestedPage) -> str:
    """On the card it hangs from: that a sub-agent or a branch is drawn right under the card."""
    what = "started the sub-agent" if n.kind == "subagent" else "a branch that was not resumed left here:"
    return (f'<div class="pk-lbl pk-nested-ptr">\u21b3 {what} <b>{esc(n.label)}</b>: {n.page.stored:,} message(s), '
            f"{len(n.page.findings)} finding(s), shown under this message</div>")


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
    options: PageOptions | None = None,
    **kw: Any,
) -> Page:
    """Everything a view shows, built once: findings (linked to their stored message) and rows.

    ``options`` (or its fields as keywords) carries what the page shows besides the history:
    the source's markers, skipped counts, warnings, details, sub-agents and branches, and so on."""
    return _Builder(list(messages), repaired, list(problems), options if options is not None else PageOptions(**kw)).page()


class _Builder:
    """The steps of ``build_page``: findings first (they mark the cards), then the two sides and
    the rows that pair them."""

    def __init__(self, messages: list[Message], repaired: Repaired | None, problems: list[Any], o: PageOptions) -> None:
        self.messages, self.problems, self.o = messages, problems, o
        self.repaired = repaired if repaired is not None else Repaired(list(messages))
        self.findings: list[Finding] = []
        self.changed = bool(self.repaired.changes)
        self.pairs = align(messages, self.repaired) if self.changed else [(i, i) for i in range(len(messages))]
        self.calls_at: dict[str, int] = {}
        for i, m in enumerate(messages):
            if isinstance(m, AssistantMessage):
                for c in m.tool_calls or []:
                    self.calls_at.setdefault(c.id, i)
        self.details = o.details or {}
        self.times = {i: t for i, d in self.details.items() if 0 <= i < len(messages) and (t := _when(d)) is not None}
        self.spans = self._spans()

    def add(self, kind: str, title: str, index: Any, **kw: Any) -> Finding:
        f = Finding(f"{self.o.anchor}f-{len(self.findings) + 1}", kind, title, index if isinstance(index, int) else None, **kw)
        self.findings.append(f)
        return f

    def page(self) -> Page:
        lost = self._lost()
        self._problems()
        self._marked()
        self._nested()
        rows, failed = self._rows(lost)
        o = self.o
        return Page(
            title=o.title, source_format=o.source_format, rows=rows, findings=self.findings,
            stored=len(self.messages), sent=len(self.repaired.messages), changed=self.changed,
            valid=not self.problems and not self.repaired.interrupted and not self.changed
            and not any(f.kind == "abandoned_call" for f in self.findings),
            skipped=dict(o.skipped or {}), meta=dict(o.meta or {}), anchor=o.anchor, hand_back=o.hand_back,
            errors=failed, problems=len(self.problems), nested=list(o.nested), times=self.times,
            unplaced=[n for n in o.nested if not (n.call_id in self.calls_at if n.call_id is not None
                                                  else n.index is not None and 0 <= n.index < len(self.messages))],
            spans=self.spans,
        )

    # findings ----------------------------------------------------------------

    def _lost(self) -> dict[str, Finding]:
        """A lost call: where it was made, the provider's words for it, and the text sent instead."""
        stored_of = {a: b for b, a in self.pairs if a is not None and b is not None}
        self._used: set[int] = set()
        lost: dict[str, Finding] = {}
        last = self._last_turn()
        for r in self.repaired.interrupted:
            # where the call was made: by its message (an id a restarted agent used again is not enough)
            at = stored_of.get(r.message_index, self.calls_at.get(r.original_id))
            wording = self._wording_for(at, r.original_id)
            title = (f"{r.name} ({r.original_id}) was stopped by the user while it ran" if r.why == LOST_STOPPED
                     else f"{r.name} ({r.original_id}) never returned")
            lost[r.original_id] = self.add(
                "lost_call", title, at, wording=wording, told=r.note, read_only=r.read_only,
                call_id=r.original_id, why=r.why, next_request=wording is not None and at is not None and at >= last,
            )
        return lost

    def _last_turn(self) -> int:
        """The index of the last message that is not a tool result: a call made there has not been
        followed by anything a provider would have checked."""
        for i in range(len(self.messages) - 1, -1, -1):
            if not isinstance(self.messages[i], ToolMessage):
                return i
        return 0

    def _wording_for(self, at: int | None, call_id: str) -> str | None:
        """The provider's own words about the call at ``at`` (the problems that name it are used
        up: they are this finding, not findings of their own)."""
        said = None
        for k, p in enumerate(self.problems):
            if _get(p, "index") == at and call_id in f"{_get(p, 'message')} {_get(p, 'provider_wording') or ''}":
                self._used.add(k)
                said = said or _get(p, "provider_wording")
        return str(said) if said else None

    def _problems(self) -> None:
        for k, p in enumerate(self.problems):
            if k not in self._used:
                self.add(str(_get(p, "rule")), str(_get(p, "message") or ""), _get(p, "index"),
                         wording=_get(p, "provider_wording"))

    def _marked(self) -> None:
        """What the source says (its markers), what its tool's own resume abandoned, calls waiting
        for a person, warnings and what could not be shown."""
        o = self.o
        for mk in [*o.markers, *_calls_as_text(self.messages)]:
            ids = _get(mk, "ids") or []
            self.add(str(_get(mk, "kind")), str(_get(mk, "text") or "") + (f" ({', '.join(ids)})" if ids else ""),
                     _get(mk, "index"))
        for a in o.abandoned:
            self._abandoned(a)
        for cid in o.pending:
            self.add("waiting_for_approval", f"call {cid} waits for a person's answer (not broken)", self.calls_at.get(cid))
        for w in o.warnings:
            self.add("warning", w, None)
        if o.skipped:
            self.add("skipped", "not shown (the source holds them, the canonical history cannot): "
                     + ", ".join(f"{k} {v}" for k, v in sorted(o.skipped.items())), None)

    def _abandoned(self, a: Any) -> None:
        """A coding agent's own resume hid the call or answered it with its placeholder."""
        agent, name, cid = _get(a, "agent"), _get(a, "name") or "?", _get(a, "call_id")
        args = str(_get(a, "arguments") or "")
        args = args if len(args) <= 300 else args[:297] + "..."
        ro = bool(_get(a, "read_only"))
        state = "its tool only reads, so it changed nothing" if ro else "it may have run"
        self.add(
            "abandoned_call",
            f"{agent}'s own resume abandoned {name} ({cid or 'never written'}) {args}: {state}, "
            f"and the model was never told. {_get(a, 'what')}",
            _get(a, "index") if _get(a, "index") is not None else self.calls_at.get(cid or ""),
            read_only=ro, call_id=cid,
        )

    def _nested(self) -> None:
        """A sub-agent or a branch with findings of its own is named at the top, linked to where
        it hangs."""
        for n in self.o.nested:
            if all(f.kind in ("skipped", "warning") for f in n.page.findings):
                continue
            at = self.calls_at.get(n.call_id) if n.call_id is not None else n.index
            what = "sub-agent" if n.kind == "subagent" else "branch not resumed"
            self.add(n.kind, f"{what} {n.label}: {len(n.page.findings)} finding(s) of its own", at, call_id=n.call_id)

    # rows --------------------------------------------------------------------

    def _sides(self, lost: dict[str, Finding]) -> tuple[_Side, _Side | None, list[int]]:
        by_index: dict[int, list[Finding]] = {}
        for f in self.findings:
            if f.index is not None:
                by_index.setdefault(f.index, []).append(f)
        self.by_index = by_index
        ch = self.repaired.changes
        self.before_marks = {c.index_before: c.kind for c in ch if c.index_before is not None and c.index_after is None}
        self.after_marks: dict[int, str] = {}
        for c in ch:
            if c.index_after is not None:
                self.after_marks.setdefault(c.index_after, c.kind)
        colour = tools.Colour()  # one budget for the page's code colouring
        a = self.o.anchor
        stored = _Side(self.messages, f"{a}m-", lost=lost, added=self.before_marks, findings=by_index,
                       details=self.details, limit=self.o.max_chars, colour=colour,
                       durations={c: x for c, (_, _, x) in self.spans.items()},
                       nested=self.o.nested)
        failed = sorted(i for i in stored.details if 0 <= i < len(self.messages) and stored.failed(i))
        # a failed result kept by repair is badged on the sent side too
        sent_failed = {x: {"error": True} for b, x in self.pairs if b in failed and x is not None}
        sent = _Side(self.repaired.messages, f"{a}a-", added=self.after_marks, details=sent_failed,
                     limit=self.o.max_chars, colour=colour) if self.changed else None
        return stored, sent, failed

    def _rows(self, lost: dict[str, Finding]) -> tuple[list[Row], int]:
        stored, sent, failed = self._sides(lost)
        errors = set(failed) | {stored.call_of[i] for i in failed if i in stored.call_of}  # the result and its call
        rows: list[Row] = []
        for b, a in self.pairs:
            kinds: list[str] = []
            if b is not None:
                text = stored.text(b)
                kinds += [f.kind for f in self.by_index.get(b, [])]
                if b in errors:
                    kinds.append(ERROR_RESULT)
                if b in self.before_marks:
                    kinds.append(self.before_marks[b])
            else:
                text = sent.text(a) if sent is not None and a is not None else ""
            if sent is not None and a is not None and a in self.after_marks:
                kinds.append(self.after_marks[a])
            kinds = list(dict.fromkeys(kinds))
            role = (self.messages[b] if b is not None else self.repaired.messages[a or 0]).role
            same = sent is not None and b is not None and a is not None and not kinds \
                and stored.results(b) == sent.results(a)
            nested = stored.nested_at(b) if b is not None and (stored.under_call or stored.under_index) else None
            rows.append(Row(b, a, role, text[:SEARCH_CHARS].lower(), kinds, (stored, sent), same, nested))
        return rows, len(failed)

    def _spans(self) -> dict[str, tuple[int, int, float]]:
        """Call id -> (its message, its result, seconds from one to the other), where the source
        gives both times."""
        if not self.times:
            return {}
        out: dict[str, tuple[int, int, float]] = {}
        open_calls: dict[str, int] = {}
        for i, m in enumerate(self.messages):
            if isinstance(m, AssistantMessage):
                for c in m.tool_calls or []:
                    open_calls[c.id] = i
            elif isinstance(m, ToolMessage) and m.tool_call_id in open_calls:
                at = open_calls.pop(m.tool_call_id)
                t0, t1 = self.times.get(at), self.times.get(i)
                if t0 is not None and t1 is not None and t1 >= t0:
                    out[m.tool_call_id] = (at, i, (t1 - t0).total_seconds())
        return out


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
    ``details``, ``abandoned`` and ``nested``: its sub-agents and branches, each a page of its own)."""
    nested = [
        NestedPage(n.kind, n.label, page_of(n.inspection, title=n.label, max_chars=max_chars,
                                              anchor=f"{anchor}{n.kind[0]}{k + 1}-"), n.call_id, n.index)
        for k, n in enumerate(getattr(obj, "nested", ()) or ())
    ]
    skipped = dict(getattr(obj, "skipped", None) or {})
    if any(n.kind == "branch" for n in nested):
        skipped.pop("off_branch", None)  # shown: each branch not resumed is a nested page
    return build_page(
        obj.messages,
        getattr(obj, "repaired", None),
        getattr(obj, "problems", ()) or (),
        PageOptions(
            title=title or str(getattr(obj, "source", "Transcript")),
            source_format=getattr(obj, "format", None),
            markers=getattr(obj, "markers", ()) or (),
            skipped=skipped,
            warnings=getattr(obj, "warnings", ()) or (),
            pending=getattr(obj, "pending_approval", ()) or (),
            abandoned=getattr(obj, "abandoned", ()) or (),
            details=getattr(obj, "details", None),
            meta=getattr(obj, "meta", None),
            max_chars=max_chars,
            anchor=anchor,
            hand_back=None if anchor else hand_back_command(obj),  # a nested page is handed back with its session
            nested=nested,
        ),
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
