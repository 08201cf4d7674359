"""repair_history: make a history that was cut off mid-turn valid to send again.

A saved history can break in a few ways when a process dies mid-turn: a call whose result
never came, a result whose call is missing, an id reused by a later turn, an empty placeholder
assistant message. Every provider answers those with a 400, so repair fixes them, and does so
deterministically (same bytes in, same bytes out, so prompt caches keep hitting), idempotently,
in linear time, and with an audit trail (``changes``) a view can show.

The analysis (``analyze``) is shared with ``validate_history``, so "what validate reports" and
"what repair fixes" can never drift apart.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .messages import (
    AssistantMessage,
    ContentPart,
    Message,
    TextPart,
    ToolCall,
    ToolMessage,
    UserMessage,
    ensure_messages,
)

__all__ = [
    "INTERRUPTED_READ_ONLY",
    "INTERRUPTED_STOPPED",
    "INTERRUPTED_MAY_HAVE_RUN",
    "LOST_READ_ONLY",
    "LOST_MAY_HAVE_RUN",
    "LOST_STOPPED",
    "LOST_RECORDED",
    "LOST_NOTED",
    "LOST_SAFETY",
    "interrupted_text",
    "lost_why",
    "lost_safety",
    "read_only_tool",
    "InterruptedCall",
    "PendingCall",
    "Change",
    "Repaired",
    "repair_history",
    "note_text",
    "analyze",
    "Analysis",
]

INTERRUPTED_READ_ONLY = (
    "This call was interrupted before it returned. It changed nothing, so it is safe to call again."
)
INTERRUPTED_MAY_HAVE_RUN = (
    "This call was interrupted before it returned. It may have partly run, so check its effect "
    "before calling it again."
)
INTERRUPTED_STOPPED = (
    "The user stopped this call while it was running, before it returned. What it did up to "
    "that moment is done and the rest did not run, so check its effect before calling it again."
)

# Why a call has no result, which decides what the model reads in its place (the one place this is
# decided: repair, the views, the command line and a session written back all take it from here).
LOST_READ_ONLY = "read_only"  # a tool that changes nothing: safe to call again
LOST_MAY_HAVE_RUN = "may_have_run"  # any other tool: it may have partly run
LOST_STOPPED = "stopped"  # the user stopped it while it ran (a Conversation's Stop)
LOST_RECORDED = "recorded"  # the tool recorded its result; the model never saw it
LOST_NOTED = "noted"  # a caller's own text (``repair_history(notes=...)``)

# what the model reads, by why (LOST_RECORDED and LOST_NOTED carry their own text)
_TOLD = {
    LOST_READ_ONLY: INTERRUPTED_READ_ONLY,
    LOST_MAY_HAVE_RUN: INTERRUPTED_MAY_HAVE_RUN,
    LOST_STOPPED: INTERRUPTED_STOPPED,
}
# what every view says of such a call next to it, in a few words
LOST_SAFETY = {
    LOST_READ_ONLY: "read-only: it changed nothing, safe to call again",
    LOST_MAY_HAVE_RUN: "not read-only: it may have partly run",
    LOST_STOPPED: "stopped by the user while it ran",
    LOST_RECORDED: "it ran: its tool recorded the result, which the model never saw",
    LOST_NOTED: "answered with the text given for it",
}


def interrupted_text(read_only: bool) -> str:
    """What the model reads for a call that never returned and that nobody stopped."""
    return _TOLD[LOST_READ_ONLY if read_only else LOST_MAY_HAVE_RUN]


def lost_safety(why: str, read_only: bool = False) -> str:
    """What every view says of a call with no result, in a few words (``LOST_SAFETY``; a stopped
    call also says whether its tool only reads)."""
    said = LOST_SAFETY.get(why, LOST_SAFETY[LOST_MAY_HAVE_RUN])
    if why == LOST_STOPPED:
        said += ": its tool only reads, it changed nothing" if read_only else ": it may have partly run"
    return said


def lost_why(read_only: bool, note: str | None = None) -> str:
    """Why a call has no result (``LOST_*``), from whether its tool only reads and the text a
    caller gave for it (``INTERRUPTED_STOPPED`` means the user stopped it)."""
    if note:
        return next((why for why, text in _TOLD.items() if text == note), LOST_NOTED)
    return LOST_READ_ONLY if read_only else LOST_MAY_HAVE_RUN


# Why a tool message could not stay a result (these are also validate's rule ids).
ORPHAN = "orphan_result"  # no call anywhere in the history has its id
MISPLACED = "misplaced_result"  # its call exists, but not in the message the run answers
DUPLICATE_RESULT = "duplicate_result"  # its call already has a result in this run

_PAUSE_GC_FROM = 5000  # messages

# Kinds of change rows.
DROPPED_EMPTY_ASSISTANT = "dropped_empty_assistant"
RENAMED_CALL = "renamed_call"
RENAMED_RESULT = "renamed_result"
ADDED_RESULT = "added_interrupted_result"
RESULT_TO_NOTE = "result_to_note"


def note_text(name: str, call_id: str, content: str) -> str:
    """The user note that carries a result whose call is missing, so the model can still read it."""
    return (
        f"[Result of the tool {name or '(unnamed)'} for call id {call_id}. No call was waiting "
        "for it at this point of the conversation, so it is passed on here as a note.]\n"
        f"{content}"
    )


@dataclass(slots=True)
class InterruptedCall:
    """A call that never returned, under the id the repaired request carries."""

    id: str
    original_id: str
    name: str
    arguments: str
    read_only: bool
    message_index: int  # index of the calling assistant message in the repaired history
    note: str  # the text the model reads in place of the missing result
    why: str = LOST_MAY_HAVE_RUN  # LOST_*: what decided the note

    @property
    def safety(self) -> str:
        """What every view says of this call, in a few words (``lost_safety``)."""
        return lost_safety(self.why, self.read_only)

    @property
    def stopped(self) -> bool:
        return self.why == LOST_STOPPED

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class PendingCall:
    """A call at the end of the history that waits for a person's answer: not broken, so repair
    leaves it unanswered (the conversation resumes with the answer, not with a repair text)."""

    id: str
    name: str
    arguments: str
    message_index: int  # index of the calling assistant message in the repaired history

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class Change:
    """One edit repair made; indexes are positions before and after (None where absent)."""

    kind: str
    index_before: int | None
    index_after: int | None
    ids: list[str]
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class Repaired:
    messages: list[Message]
    interrupted: list[InterruptedCall] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    pending: list[PendingCall] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.changes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "messages": [m.to_dict() for m in self.messages],
            "interrupted": [r.to_dict() for r in self.interrupted],
            "changes": [c.to_dict() for c in self.changes],
            "pending": [p.to_dict() for p in self.pending],
        }

    def _repr_html_(self) -> str:  # pragma: no cover - exercised by notebook views
        from .html import repaired_html

        return repaired_html(self)


# --------------------------------------------------------------------------- analysis


class Analysis:
    """What is wrong with a history, by input index. Empty collections mean valid.

    Pairing is done as if the empty assistant messages were already gone, so a placeholder
    saved between a call and its results breaks nothing. (A plain class: it is internal, and
    a dataclass would cost import time for nothing.)
    """

    __slots__ = (
        "messages",
        "dropped",
        "renamed_calls",
        "first_use",
        "renamed_results",
        "unmatched",
        "dangling",
        "flush_at",
    )

    def __init__(self, messages: list[Message]) -> None:
        self.messages = messages
        self.dropped: set[int] = set()
        # assistant message index -> {call position: new id}, for calls whose id was used before
        self.renamed_calls: dict[int, dict[int, str]] = {}
        # message index of the call that used an id first, for each renamed original id
        self.first_use: dict[str, int] = {}
        # tool message index -> new tool_call_id (its call was renamed)
        self.renamed_results: dict[int, str] = {}
        # tool message index -> ORPHAN | MISPLACED | DUPLICATE_RESULT
        self.unmatched: dict[int, str] = {}
        # assistant message index -> positions of its calls with no result, in call order
        self.dangling: dict[int, list[int]] = {}
        # input index (len(messages) for the end) before which a run closes with something to
        # add: (assistant index whose missing results go here or -1, note indices in order)
        self.flush_at: dict[int, tuple[int, list[int]]] = {}

    @property
    def valid(self) -> bool:
        return not (
            self.dropped or self.renamed_calls or self.renamed_results or self.unmatched or self.dangling
        )


def analyze(messages: Sequence[Message | dict[str, Any]]) -> Analysis:
    """Pair every call with its result in one linear pass (a second one when an id repeats)."""
    msgs = ensure_messages(messages)
    a = _pair(msgs, None)
    if a is None:
        # An id repeats: pair again, renaming later uses to suffixes that collide with no id
        # anywhere in the history (results' ids included).
        used: set[str] = set()
        for m in msgs:
            if isinstance(m, ToolMessage):
                used.add(m.tool_call_id)
            elif isinstance(m, AssistantMessage) and m.tool_calls:
                used.update([c.id for c in m.tool_calls])
        a = _pair(msgs, used)
        assert a is not None
    return a


def _pair(msgs: list[Message], used: set[str] | None) -> Analysis | None:
    """The pass behind ``analyze``. Without ``used`` it gives up (None) at the first repeated
    call id, so a valid history costs exactly one pass, mostly in C-level dict and set calls."""
    a = Analysis(msgs)
    dropped = a.dropped
    unmatched = a.unmatched
    renamed_results = a.renamed_results
    first_seen: dict[str, int] = {}  # call id -> index of the message that used it first
    next_suffix: dict[str, int] = {}
    owner = -1  # index of the assistant whose run of results is open, or -1
    owner_ids: list[str] = []  # its calls' original ids
    send_ids: list[str] = []  # the id each of its calls carries after repair
    waiting: dict[str, int] = {}  # original id -> position of the next call still unanswered
    extra: dict[str, list[int]] = {}  # further positions with that id (same id twice in one message)
    notes: list[int] = []  # unmatched results since the last run closed
    for i, m in enumerate(msgs):
        role = m.role
        if role == "tool":
            cid = m.tool_call_id  # type: ignore[union-attr]
            pos = waiting.pop(cid, -1) if owner >= 0 else -1
            if pos >= 0:
                if send_ids[pos] != cid:
                    renamed_results[i] = send_ids[pos]
                if extra:
                    more = extra.get(cid)
                    if more:
                        waiting[cid] = more.pop(0)
            elif owner >= 0 and cid in owner_ids:
                unmatched[i] = DUPLICATE_RESULT
                notes.append(i)
            else:
                unmatched[i] = ORPHAN  # or MISPLACED: decided once every call id is known
                notes.append(i)
            continue
        calls = m.tool_calls if role == "assistant" else None  # type: ignore[union-attr]
        if role == "assistant" and not calls and not m.content.strip():  # type: ignore[union-attr]
            dropped.add(i)
            continue
        if owner >= 0 or notes:
            notes = _close(a, i, owner, waiting, extra, notes)
            owner = -1
        if not calls:
            continue
        owner = i
        owner_ids = send_ids = [c.id for c in calls]
        waiting = dict(zip(owner_ids, range(len(owner_ids)), strict=True))
        extra = {}
        if len(waiting) == len(owner_ids) and first_seen.keys().isdisjoint(owner_ids):
            for cid in owner_ids:
                first_seen[cid] = i
            continue
        if used is None:
            return None
        send_ids, waiting, extra = _rename_repeats(a, i, owner_ids, first_seen, next_suffix, used)
    if owner >= 0 or notes:
        _close(a, len(msgs), owner, waiting, extra, notes)
    _mark_misplaced(a, first_seen)
    return a


def _rename_repeats(
    a: Analysis,
    i: int,
    owner_ids: list[str],
    first_seen: dict[str, int],
    next_suffix: dict[str, int],
    used: set[str],
) -> tuple[list[str], dict[str, int], dict[str, list[int]]]:
    """Message ``i`` repeats a call id (its own or an earlier message's): each later use gets a
    suffix no id in the history has. Returns the ids its calls carry after repair, the position
    of the first unanswered call per original id, and the further positions of an id it repeats."""
    send_ids = list(owner_ids)
    waiting: dict[str, int] = {}
    extra: dict[str, list[int]] = {}
    for pos, cid in enumerate(owner_ids):
        if cid in waiting:
            extra.setdefault(cid, []).append(pos)
        else:
            waiting[cid] = pos
        first = first_seen.get(cid)
        if first is None:
            first_seen[cid] = i
            continue
        k = next_suffix.get(cid, 2)
        new = f"{cid}_{k}"
        while new in used:
            k += 1
            new = f"{cid}_{k}"
        used.add(new)
        next_suffix[cid] = k + 1
        send_ids[pos] = new
        a.renamed_calls.setdefault(i, {})[pos] = new
        a.first_use.setdefault(cid, first)
    return send_ids, waiting, extra


def _mark_misplaced(a: Analysis, first_seen: dict[str, int]) -> None:
    """A result whose call exists elsewhere in the history is misplaced, not an orphan (known
    only once every call id has been seen)."""
    unmatched = a.unmatched
    for i, why in unmatched.items():
        if why == ORPHAN and a.messages[i].tool_call_id in first_seen:  # type: ignore[union-attr]
            unmatched[i] = MISPLACED


def _close(
    a: Analysis,
    at: int,
    owner: int,
    waiting: dict[str, int],
    extra: dict[str, list[int]],
    notes: list[int],
) -> list[int]:
    """A run of results ends before message ``at``: note what must be added there."""
    if owner >= 0 and waiting:
        missing = list(waiting.values())
        for more in extra.values():
            missing.extend(more)
        missing.sort()
        a.dangling[owner] = missing
    else:
        owner = -1
    if owner >= 0 or notes:
        a.flush_at[at] = (owner, notes)
    return []


# --------------------------------------------------------------------------- repair


def read_only_tool(is_read_only: Callable[[str], bool] | None, name: str) -> bool:
    """Whether the tool ``name`` only reads, as ``is_read_only`` says; a failing lookup (an
    unknown tool) counts as not read-only. Repair and every view decide it here."""
    if is_read_only is None:
        return False
    try:
        return bool(is_read_only(name))
    except Exception:
        # An unknown tool (removed since the call was made) or a failing lookup: assume the
        # call may have had effects, which is the safe thing to tell the model.
        return False


def _note(m: ToolMessage) -> UserMessage:
    text = note_text(m.name, m.tool_call_id, m.content)
    if m.images:
        parts: list[ContentPart] = [TextPart(text), *m.images]
        return UserMessage(parts)
    return UserMessage(text)


_REASON = {
    ORPHAN: "no call in the history has this id",
    MISPLACED: "its call is not in the assistant message this run of results answers",
    DUPLICATE_RESULT: "its call already has a result",
}


def repair_history(
    messages: Sequence[Message | dict[str, Any]],
    is_read_only: Callable[[str], bool] | None = None,
    *,
    pending: Collection[str] = (),
    notes: Mapping[str, str] | None = None,
) -> Repaired:
    """Return a history every provider accepts, the calls that never returned, and every edit.

    Rules: an assistant message with no text and no calls is dropped (before pairing); a call id
    used again becomes ``id_2``, ``id_3``... for the call and its result together (the n-th
    result with that id in the following run belongs to the n-th call; a suffix used anywhere
    in the history is skipped); a call with no result gets one under its id, placed after the
    results its message already has, in call order, saying the call was interrupted
    (``INTERRUPTED_READ_ONLY`` when ``is_read_only(name)`` says so, else
    ``INTERRUPTED_MAY_HAVE_RUN``); a result whose call is missing becomes a user note placed
    after the run it was found in. A valid history comes back unchanged (the same objects).

    ``pending`` names calls that wait for a person (an approval question, a LangGraph
    ``interrupt()``). Those of them that sit in the last assistant message with nothing but its
    own results after it are left unanswered and listed in ``Repaired.pending``; anywhere else
    the conversation went on without the answer, so they are repaired like any other call.

    ``notes`` (call id -> text) replaces the interrupted text for calls a caller knows more
    about (a Conversation's call marks: ``INTERRUPTED_STOPPED`` for a call the Stop button
    landed in).

    ``is_read_only`` may raise for an unknown tool; that call then counts as not read-only.
    The input is never mutated.
    """
    # Repair allocates many small objects and frees none of them; pausing the cyclic garbage
    # collector meanwhile keeps it from re-walking a long history again and again (it halves
    # the time of a 100,000-message repair). It is switched back on whatever happens. Short
    # histories (every ordinary send) leave the process-wide collector alone.
    paused = len(messages) >= _PAUSE_GC_FROM and gc.isenabled()
    if paused:
        gc.disable()
    try:
        return _repair(messages, is_read_only, frozenset(pending), notes or {})
    finally:
        if paused:
            gc.enable()


def _repair(
    messages: Sequence[Message | dict[str, Any]],
    is_read_only: Callable[[str], bool] | None,
    waiting: frozenset[str],
    told: Mapping[str, str],
) -> Repaired:
    a = analyze(messages)
    msgs = a.messages
    if a.valid:
        return Repaired(list(msgs))

    out: list[Message] = []
    interrupted: list[InterruptedCall] = []
    pending_calls: list[PendingCall] = []
    changes: list[Change] = []
    dropped, unmatched, dangling = a.dropped, a.unmatched, a.dangling
    renamed_calls, renamed_results, flush_at = a.renamed_calls, a.renamed_results, a.flush_at
    read_only: dict[str, bool] = {}  # one lookup per tool name
    out_index: dict[int, int] = {}  # where each assistant with missing results landed

    def flush(owner: int, notes: list[int], at_end: bool) -> None:
        if owner >= 0:
            at = out_index[owner]
            calls = out[at].tool_calls  # type: ignore[union-attr]
            originals = msgs[owner].tool_calls  # type: ignore[union-attr]
            for p in dangling[owner]:
                call, send_id = originals[p], calls[p].id  # type: ignore[index]
                if at_end and not notes and call.id in waiting:
                    pending_calls.append(PendingCall(send_id, call.name, call.arguments, at))
                    continue
                ro = read_only.get(call.name)
                if ro is None:
                    ro = read_only[call.name] = read_only_tool(is_read_only, call.name)
                why = lost_why(ro, told.get(call.id))
                text = told.get(call.id) or _TOLD[why]
                out.append(ToolMessage(send_id, call.name, text))
                interrupted.append(
                    InterruptedCall(send_id, call.id, call.name, call.arguments, ro, at, text, why)
                )
                changes.append(
                    Change(
                        ADDED_RESULT,
                        None,
                        len(out) - 1,
                        [send_id],
                        f"call {send_id} ({call.name}) from message {owner} never returned; "
                        f"added a result saying it was interrupted"
                        + (" (read-only tool)" if ro else ""),
                    )
                )
        for i in notes:
            m = msgs[i]
            out.append(_note(m))  # type: ignore[arg-type]
            changes.append(
                Change(
                    RESULT_TO_NOTE,
                    i,
                    len(out) - 1,
                    [m.tool_call_id],  # type: ignore[union-attr]
                    f"result for {m.tool_call_id} ({m.name}) kept as a user note: "  # type: ignore[union-attr]
                    f"{_REASON[unmatched[i]]}",
                )
            )

    # Only the messages something happens at are visited; the stretches between them are
    # copied as slices, so the cost follows the number of breaks, not the history's length.
    events = sorted(
        {*dropped, *unmatched, *renamed_results, *renamed_calls, *dangling, *flush_at}
    )
    n = len(msgs)
    prev = 0
    for e in events:
        if prev < e:
            out.extend(msgs[prev:e])
        prev = e + 1
        closing = flush_at.get(e)
        if closing is not None:
            flush(*closing, e == n)
        if e == n:
            break
        m = msgs[e]
        if e in dropped:
            changes.append(
                Change(
                    DROPPED_EMPTY_ASSISTANT,
                    e,
                    None,
                    [],
                    "assistant message with no text and no tool calls dropped",
                )
            )
            continue
        if e in unmatched:
            continue  # it comes back as a note where its run ends
        new_id = renamed_results.get(e)
        if new_id is not None:
            assert isinstance(m, ToolMessage)  # renamed_results holds indexes of tool messages
            old = m.tool_call_id
            m = ToolMessage(new_id, m.name, m.content, m.images)
            changes.append(
                Change(
                    RENAMED_RESULT,
                    e,
                    len(out),
                    [old, new_id],
                    f"result id {old} renamed to {new_id} with its call",
                )
            )
        new_ids = renamed_calls.get(e)
        if new_ids is not None:
            assert isinstance(m, AssistantMessage) and m.tool_calls  # indexes of calling messages
            calls = m.tool_calls
            new_calls = list(calls)
            for p, new_id in new_ids.items():
                c = calls[p]
                new_calls[p] = ToolCall(new_id, c.name, c.arguments, c.thought_signature)
                changes.append(
                    Change(
                        RENAMED_CALL,
                        e,
                        len(out),
                        [c.id, new_id],
                        f"call id {c.id} ({c.name}) was already used by an earlier call in message "
                        f"{a.first_use[c.id]}; renamed to {new_id}",
                    )
                )
            m = AssistantMessage(
                m.content, m.reasoning, m.reasoning_details, m.reasoning_items, new_calls
            )
        if e in dangling:
            out_index[e] = len(out)
        out.append(m)
    if prev < n:
        out.extend(msgs[prev:])
    return Repaired(out, interrupted, changes, pending_calls)
