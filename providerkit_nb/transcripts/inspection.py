"""examine(source): open a transcript of any supported format and say what is wrong with it.

Analysis, below every view: a thin layer over ``providerkit_nb.transcripts``: the format is detected (or named), the
transcript loaded read-only, validated against the rules of the wire it came from (or the one
named), and repaired, with what the source itself said (interruption markers, calls waiting for
a person, what could not be represented) kept next to the validators' findings. The same
``Findings`` backs the command line's text and ``--json``; ``pk.Inspection`` (the notebook layer)
is Findings that show themselves: the views, the frames and the HTML report.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..core.messages import AssistantMessage, Message, ToolMessage
from ..core.repair import (
    LOST_RECORDED,
    ORPHAN,
    InterruptedCall,
    Repaired,
    analyze,
    read_only_tool,
    repair_history,
)
from ..core.validate import DANGLING_CALL, Problem
from ..wire.gemini import RESPONSE_COUNT
from . import MultipleThreads, Source, Transcript, TranscriptTruncated, load
from .base import Marker
from .provider_dialects import detect_format
from .resume_findings import abandoned_calls

__all__ = ["examine", "inspect_transcript", "Findings", "NestedInspection", "detect_format"]

_DANGLING_RULES = ("dangling",)  # substrings of the rule ids that name a call without result
TRUNCATED = "source.truncated"  # the finding for a file cut short (what is whole of it was read)


@dataclass
class NestedInspection:
    """A sub-agent or a branch not resumed, inspected on its own, and where it hangs."""

    kind: str  # "subagent" | "branch"
    label: str
    inspection: Findings
    call_id: str | None = None  # the call that started it (a sub-agent)
    index: int | None = None  # the message it forked after (a branch)

    def to_json(self) -> dict[str, Any]:
        i = self.inspection
        return {"kind": self.kind, "label": self.label, "call_id": self.call_id, "index": self.index,
                "messages": len(i.messages), "problems": len(i.problems),
                "interrupted": [r.original_id for r in i.interrupted], "nested": [n.to_json() for n in i.nested]}


@dataclass
class Findings:
    """What a transcript holds, what a provider would refuse in it, and the repaired history.

    When the source holds several threads and none was picked, ``threads`` lists them and the
    rest is empty (``needs_thread`` is true)."""

    source: str
    format: str
    messages: list[Message]
    problems: list[Any] = field(default_factory=list)
    repaired: Repaired | None = None
    wire: str | None = None
    thread: str | None = None
    threads: list[str] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    markers: list[Marker] = field(default_factory=list)
    pending_approval: list[str] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    # calls the tool's own resume hid or answered with its placeholder (transcripts.resume_findings)
    abandoned: list[Any] = field(default_factory=list)
    details: dict[int, dict[str, Any]] = field(default_factory=dict)  # time, model, tokens per message
    sources: dict[str, str] = field(default_factory=dict)  # tool name -> where it runs (tools=)
    nested: list[NestedInspection] = field(default_factory=list)  # its sub-agents and branches not resumed

    @property
    def path(self) -> str:
        """The source (kept under its old name)."""
        return self.source

    @property
    def interrupted(self) -> list[InterruptedCall]:
        """Calls that never returned, as the repaired history answers them."""
        return list(self.repaired.interrupted) if self.repaired is not None else []

    @property
    def needs_thread(self) -> bool:
        return self.thread is None and len(self.threads) > 1

    @property
    def valid(self) -> bool:
        return not self.problems and not self.abandoned and not self.needs_thread

    @property
    def error_results(self) -> list[int]:
        """Indices of the tool results the source marks as errors (shown and counted; not problems:
        the model read them)."""
        return sorted(i for i, d in self.details.items() if d.get("error") is True)

    @property
    def title(self) -> str:
        where = f", thread {self.thread}" if self.thread else ""
        return f"{self.source} ({self.format}{where})"

    def to_json(self) -> dict[str, Any]:
        """The command line's ``--json`` object."""
        repaired = self.repaired
        return {
            "source": self.source,
            "format": self.format,
            "thread": self.thread,
            "messages": len(self.messages),
            "skipped": dict(self.skipped),
            "problems": [
                {"rule": p.rule, "index": p.index, "message": p.message, "provider_wording": p.provider_wording}
                for p in self.problems
            ],
            "interrupted": [
                {"id": r.id, "original_id": r.original_id, "name": r.name, "read_only": r.read_only,
                 **({"source": self.sources[r.name]} if r.name in self.sources else {})}
                for r in self.interrupted
            ],
            "orphans": list(self.orphans),
            "pending_approval": list(self.pending_approval),
            "changes": [c.to_dict() for c in repaired.changes] if repaired is not None else [],
            "abandoned": [a.to_dict() for a in self.abandoned],
            "error_results": self.error_results,
            **({"nested": [n.to_json() for n in self.nested]} if self.nested else {}),
        }

    def __repr__(self) -> str:
        if self.needs_thread:
            lines = [f"{self.source}: {self.format}, {len(self.threads)} threads; pick one with thread=..."]
            lines += [f"  - {t}" for t in self.threads]
            return "\n".join(lines)
        where = f", thread {self.thread}" if self.thread else ""
        lines = [
            f"{self.source}: {self.format}{where}, {len(self.messages)} messages, "
            f"{len(self.problems)} problem(s)"
            + (f", {len(self.abandoned)} call(s) its own resume abandoned" if self.abandoned else "")
        ]
        for a in self.abandoned:
            lines.append(f"  abandoned by {a.agent}'s resume: {a.name or '?'} {a.call_id or '(never written)'}"
                         f"{' ' + a.arguments if a.arguments else ''}: {a.what}")
        lines += self._problem_lines()
        lines += self._source_lines()
        lines += self._call_lines()
        lines.extend(f"  warning: {w}" for w in self.warnings)
        lines += self._nested_lines()
        return "\n".join(lines)

    def _nested_lines(self, depth: int = 1) -> list[str]:
        """Its sub-agents and branches not resumed, each with its own counts and calls."""
        lines = []
        pad = "  " * depth
        for n in self.nested:
            i = n.inspection
            where = f" under call {n.call_id}" if n.call_id else ""
            what = "sub-agent" if n.kind == "subagent" else "branch not resumed"
            lines.append(f"{pad}{what} {n.label}{where}: {len(i.messages)} messages, {len(i.problems)} problem(s)")
            lines += [pad + x for x in i._call_lines() if x.strip()]
            lines += i._nested_lines(depth + 1)
        return lines

    def _problem_lines(self) -> list[str]:
        lines = []
        for p in self.problems:
            d = p.to_dict() if hasattr(p, "to_dict") else dict(p)
            lines.append(f"  - {d.get('rule')} at {d.get('index')}: {d.get('message')}")
            if d.get("provider_wording"):
                lines.append(f"    the provider would answer: {d.get('provider_wording')}")
        errors = self.error_results
        if errors:
            lines.append(f"  {len(errors)} tool result(s) were errors (the model read them; not a problem): "
                         + ", ".join(f"#{i}" for i in errors[:20]) + (" ..." if len(errors) > 20 else ""))
        return lines

    def _source_lines(self) -> list[str]:
        """What the source says of itself: what was skipped, its own markers."""
        lines = []
        if self.skipped:
            lines.append("  skipped: " + ", ".join(f"{k} {v}" for k, v in sorted(self.skipped.items())))
        for m in self.markers:
            at = f" at {m.index}" if m.index is not None else ""
            ids = f" ({', '.join(m.ids)})" if m.ids else ""
            lines.append(f"  marker {m.kind}{at}: {m.text}{ids}")
        return lines

    def _call_lines(self) -> list[str]:
        """Each call without a result: what it is (``InterruptedCall.safety``, the same words every
        view shows) and the text the model reads in its place; orphans and calls waiting."""
        lines = []
        for r in self.interrupted:
            where = f" ({self.sources[r.name]})" if r.name in self.sources else ""
            lines.append(f"  interrupted: {r.name}{where} {r.original_id}"
                         + (f" sent as {r.id}" if r.id != r.original_id else "") + f": {r.safety}")
            lines.append(f"    the model will read: {r.note}")
        for o in self.orphans:
            lines.append(f"  orphan result: {o}")
        for c in self.pending_approval:
            lines.append(f"  pending approval: {c}")
        return lines

def examine(
    source: Any,
    *,
    format: str | None = None,
    thread: str | None = None,
    wire: str | None = None,
    is_read_only: Callable[[str], bool] | None = None,
    tools: Any = None,
) -> Findings:
    """Load a transcript (a path, a DSN or a parsed object), list what a provider would refuse
    in it, and repair it.

    ``format`` names the source format instead of detecting it; ``thread`` picks one
    conversation of a source that holds several; ``wire``
    checks against another wire's rules than the one the source came from; ``is_read_only``
    tells repair which tools change nothing (default: what the source format knows, e.g.
    Claude Code's Read, Grep, Glob...). ``tools`` (a ToolRegistry, e.g. with MCP tools) gives
    both: each tool's read-only decision, and where each interrupted call went (``local`` or
    ``mcp:<server>``)."""
    src = Source(source)
    try:
        t = load(src, format=format, thread=thread)
    except MultipleThreads as exc:
        from . import detect

        return Findings(src.name, format or detect(src), [], threads=list(exc.threads))
    except TranscriptTruncated as exc:
        if exc.transcript is None:
            raise
        t = exc.transcript  # what is whole of a file cut short; the cut is one of the findings
    if tools is not None and is_read_only is None:
        is_read_only = tools.is_read_only
    found = inspect_transcript(t, wire=wire, is_read_only=is_read_only)
    if tools is not None:
        found.sources = {tool.name: str(getattr(tool, "source", "local")) for tool in tools}
    return found


def inspect_transcript(
    t: Transcript, *, wire: str | None = None, is_read_only: Callable[[str], bool] | None = None
) -> Findings:
    """What a loaded transcript holds and what a provider would refuse in it."""
    from ..wire.validate import validate_history

    wire = wire or t.wire
    messages = t.messages
    pending = list(dict.fromkeys(t.pending_approval))
    if is_read_only is None and t.read_only_tools:
        is_read_only = t.read_only_tools.__contains__
    repaired = repair_history(messages, is_read_only, pending=pending, notes=t.notes)
    abandoned = abandoned_calls(t)
    for lost in abandoned:  # the same decision repair made (the source's knowledge, or the caller's)
        lost.read_only = bool(lost.name) and read_only_tool(is_read_only, lost.name or "")
    if t.recorded_results:
        repaired = _use_recorded(repaired, t.recorded_results)
    problems = validate_history(messages, wire=wire) if wire else validate_history(messages)
    problems = _one_finding_per_call(problems, messages)
    waiting = {p.id for p in repaired.pending}
    if waiting:
        problems = [p for p in problems if not _only_about(p, messages, waiting)]
    problems = _next_request_wording(problems, messages, wire)
    cut = t.meta.get("truncated")
    if isinstance(cut, dict):
        problems = [*problems, Problem(TRUNCATED, len(messages), str(cut.get("text")))]
    a = analyze(messages)
    orphans = [
        m.tool_call_id for i, why in sorted(a.unmatched.items()) if why == ORPHAN
        for m in (messages[i],) if isinstance(m, ToolMessage)
    ]
    return Findings(
        source=t.source,
        format=t.format,
        messages=messages,
        problems=problems,
        repaired=repaired,
        wire=wire,
        thread=t.thread,
        threads=[t.thread] if t.thread else [],
        skipped=dict(t.skipped),
        markers=list(t.markers),
        pending_approval=pending,
        orphans=orphans,
        warnings=list(t.warnings),
        meta=dict(t.meta),
        abandoned=abandoned,
        details=dict(t.details),
        nested=[_nested(n, wire, is_read_only) for n in t.nested],
    )


def _nested(n: Any, wire: str | None, is_read_only: Callable[[str], bool] | None) -> NestedInspection:
    """A sub-agent or branch inspected as a conversation of its own. What its agent's own resume
    would do does not apply (a sub-agent is not resumed; a branch's calls are the session's
    findings already), so it has no abandoned calls of its own."""
    found = inspect_transcript(n.transcript, wire=wire, is_read_only=is_read_only)
    found.abandoned = []
    return NestedInspection(n.kind, n.label, found, n.call_id, n.index)


def _count_rule_absorbed(problems: list[Any], messages: list[Message]) -> list[Any]:
    """Gemini's response-count rule names no call: it is the same finding as ``dangling_call``
    only when it points at the same assistant message and every call of that message lacks a
    result; then its wording goes on the ``dangling_call`` finding(s) and it is dropped."""
    counts = [p for p in problems if p.rule == RESPONSE_COUNT.id]
    if not counts:
        return problems
    out = list(problems)
    for c in counts:
        m = messages[c.index] if 0 <= c.index < len(messages) else None
        calls = m.tool_calls if isinstance(m, AssistantMessage) else None
        mine = [k for k, p in enumerate(out) if p.rule == DANGLING_CALL and p.index == c.index]
        named = {x.id for x in calls or () for k in mine if repr(x.id) in out[k].message}
        if not calls or named != {x.id for x in calls}:
            continue
        for k in mine:
            p = out[k]
            out[k] = Problem(p.rule, p.index, p.message, p.provider_wording or c.provider_wording)
        out.remove(c)
    return out


def _one_finding_per_call(problems: list[Any], messages: list[Message]) -> list[Any]:
    """One broken call is one finding: the generic ``dangling_call`` (it names the call and
    what repair does) with the wire rule's provider wording attached, instead of a second
    finding from the wire's own dangling rule about the same call."""
    problems = _count_rule_absorbed(problems, messages)
    wire = [p for p in problems if p.rule != DANGLING_CALL and any(k in p.rule for k in _DANGLING_RULES)]
    if not wire:
        return problems
    out: list[Any] = []
    absorbed: set[int] = set()
    for p in problems:
        if p.rule == DANGLING_CALL and 0 <= p.index < len(messages):
            m = messages[p.index]
            calls = m.tool_calls if isinstance(m, AssistantMessage) else None
            ids = [c.id for c in calls or () if repr(c.id) in p.message]
            same = next((w for w in wire if w.index == p.index and ids
                         and all(i in f"{w.message} {w.provider_wording or ''}" for i in ids)), None)
            if same is not None:
                absorbed.add(id(same))
                said = same.provider_wording or same.message
                if same.message.startswith(said):  # the wording with the ids filled in
                    said = same.message
                out.append(Problem(p.rule, p.index, p.message, said))
                continue
        out.append(p)
    return [p for p in out if id(p) not in absorbed]


def _next_request_wording(problems: list[Any], messages: list[Message], wire: str | None) -> list[Any]:
    """A call the history ends with has not been sent on to a provider, so the wire's rules have
    no wording for it yet: give it the words the provider would answer once the conversation
    goes on (the history checked with one more user message after it)."""
    bare = [k for k, p in enumerate(problems) if p.rule == DANGLING_CALL and not p.provider_wording]
    if not bare or wire is None:
        return problems
    from ..core.messages import UserMessage
    from ..wire.validate import validate_history

    ahead = _one_finding_per_call(validate_history([*messages, UserMessage("(the next message)")], wire=wire),
                                  messages)
    said = {(p.index, p.message): p.provider_wording for p in ahead if p.rule == DANGLING_CALL and p.provider_wording}
    out = list(problems)
    for k in bare:
        p = out[k]
        wording = said.get((p.index, p.message))
        if wording:
            out[k] = Problem(p.rule, p.index, p.message, wording)
    return out


RECORDED_RESULT = "recorded_result"


def _use_recorded(repaired: Repaired, recorded: dict[str, str]) -> Repaired:
    """Answer an interrupted call with the result its tool recorded (the tool ran; the model
    never saw it) instead of the 'interrupted' text."""
    from ..core.repair import Change

    for r in repaired.interrupted:
        if r.original_id not in recorded:
            continue
        text = recorded[r.original_id]
        for k, m in enumerate(repaired.messages):
            if isinstance(m, ToolMessage) and m.tool_call_id == r.id and m.content == r.note:
                repaired.messages[k] = ToolMessage(r.id, m.name, text)
                repaired.changes.append(Change(
                    RECORDED_RESULT, None, k, [r.id],
                    f"call {r.id} ({r.name}): the tool ran and recorded its result, which the model "
                    "never saw; that result is used instead of the interrupted text"))
                r.note = text
                r.why = LOST_RECORDED
                break
    return repaired


def inspect_conversation(convo: Any, *, wire: str | None = None) -> Findings:
    """What a live Conversation holds, from what it has just read from its store."""
    convo.reload()
    return conversation_inspection(convo, wire=wire)


def conversation_inspection(convo: Any, *, wire: str | None = None) -> Findings:
    """The Findings of a live Conversation as it stands (its history and its last repair, which
    knows the calls the Stop button landed in): what ``pk.inspect(convo)`` and ``convo.view()``
    both show, so they say the same things in the same words."""
    from ..wire.validate import validate_history

    repaired = convo.repaired
    messages = convo.messages
    problems = validate_history(messages, wire=wire) if wire else validate_history(messages)
    problems = _one_finding_per_call(problems, messages)
    waiting = {p.id for p in repaired.pending}
    if waiting:
        problems = [p for p in problems if not _only_about(p, messages, waiting)]
    return Findings(
        source=f"conversation {convo.id!r} in {convo.store!r}",
        format="providerkit",
        messages=messages,
        problems=problems,
        repaired=repaired,
        wire=wire,
        thread=convo.id,
        threads=[convo.id],
        pending_approval=sorted(waiting),
    )


def _only_about(p: Any, messages: list[Message], waiting: set[str]) -> bool:
    """A dangling-call problem whose calls all wait for a person (so not a problem)."""
    if not any(k in p.rule for k in _DANGLING_RULES) or not 0 <= p.index < len(messages):
        return False
    m = messages[p.index]
    if not isinstance(m, AssistantMessage) or not m.tool_calls:
        return False
    said = f"{p.message} {p.provider_wording or ''}"
    named = {c.id for c in m.tool_calls if c.id in said}
    return bool(named) and named <= waiting
