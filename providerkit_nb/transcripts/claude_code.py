"""``claude_code``: a Claude Code session file (``~/.claude/projects/<dir>/<session>.jsonl``).

One JSON object per line. ``user`` and ``assistant`` lines carry an Anthropic Messages
``message``; one API message is split over several lines (one content block each) that share
``message.id``. The conversation is a tree: it is the chain from the last line back through
``parentUuid`` (rewinds and forks leave dead branches; a compaction starts a new root), plus the
results of parallel calls, which Claude Code parents to their own ``tool_use`` line rather than
to the chain. Lines without ``parentUuid`` (older or hand-written files) are read in file order.
Progress, file snapshots, queue operations, summaries and system lines are skipped and counted;
Claude Code's own interruption texts become markers. Converted with the ``anthropic`` importer.

What is not on the branch is kept too, as ``Transcript.nested``: each branch the session did not
resume (a rewind's dead end, the lines a resume left off, the history before a compaction), under
the message it forked after; and each sub-agent, read from the files Claude Code writes beside
the session (``<session>/subagents/agent-<id>.jsonl``, whose ``.meta.json`` names the call that
started it), under that call: in the session, or in the sub-agent that started it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from operator import itemgetter
from typing import Any

from ..core.messages import (
    AssistantMessage,
    FilePart,
    ImagePart,
    Message,
    ReasoningItems,
    TextPart,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from ..wire.anthropic import input_as_arguments, read_document, read_image, read_tool_result
from .base import Marker, Nested, Source, Transcript, TranscriptError, jsonl_records
from .resume_findings import left_off_branch

_MESSAGE_TYPES = frozenset({"user", "assistant"})
_KNOWN_TYPES = _MESSAGE_TYPES | {"system", "progress", "file-history-snapshot", "queue-operation", "summary"}
_ASSISTANT_BLOCKS = frozenset({"text", "thinking", "redacted_thinking", "tool_use"})
_USER_BLOCKS = frozenset({"text", "image", "document", "tool_result"})
# blocks that _base64_source passes when they carry no "source" (the usual ones, checked inline)
_NO_SOURCE = frozenset({"text", "thinking", "redacted_thinking", "tool_use", "tool_result"})

# Claude Code's built-in tools that only read (it runs them without asking for permission).
READ_ONLY_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "WebFetch", "WebSearch", "NotebookRead", "TodoRead"})

INTERRUPTED_PREFIX = "[Request interrupted by user"
MISSING_RESULT = "[Tool result missing due to internal error]"
REJECTED = "User rejected tool use"


def detect(source: Source, name: str) -> bool:
    for obj in source.first_json_lines(8):
        if not isinstance(obj, dict):
            continue
        kind = obj.get("type")
        msg = obj.get("message")
        if kind in _MESSAGE_TYPES and isinstance(msg, dict) and (
            "sessionId" in obj or "parentUuid" in obj or "uuid" in obj or msg.get("role") == kind
        ):
            return True
        if kind in ("file-history-snapshot", "queue-operation") or (
            kind in ("progress", "system", "summary") and ("sessionId" in obj or "leafUuid" in obj)
        ):
            return True
    return False


def load(source: Source, name: str, *, thread: str | None = None) -> Transcript:
    # A session is many small dicts that all stay alive until the end: pausing the cyclic
    # collector meanwhile keeps it from re-walking them again and again (a third of the time).
    paused = gc.isenabled()
    gc.disable()
    try:
        t = _load(source, name, thread)
    finally:
        if paused:
            gc.enable()
    if source.path is not None:
        _subagents(t, source.path, name)
    return t


def _load(source: Source, name: str, thread: str | None) -> Transcript:
    """Converts each message line as soon as it is parsed, assuming every message line is on
    the branch: its dict is dropped at once instead of every parsed line living until the end
    (a third less peak memory on a large session). When the walk at the end finds a line off the
    branch, or a line (perhaps off it) cannot be converted, the file is read again the general
    way (``_load_tree``), so the result is always the tree walk's."""
    t = Transcript(source.name, name, [], wire="anthropic", read_only_tools=READ_ONLY_TOOLS)
    w = _Pass()
    converted = Transcript(source.name, name, [])  # the conversion's own counts, details and markers
    try:
        out = _convert(_lines(source, t, w, None), converted)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError):  # TranscriptError included
        return _load_tree(source, name, thread)
    if not w.recognised:
        raise TranscriptError(f"{source.name}: no Claude Code session line (user, assistant, progress...) in it")
    if w.linked and not _through_every_line(w.parent, w.leaf, w.seen):
        chain = _chain(w.parent, w.leaf, t)
        if not chain.issuperset(map(itemgetter(1), w.seen)):  # some line hangs beside the chain, or off it
            # what _conversation reads of each line
            seen = [(n, {"uuid": u, "parentUuid": p, "type": kind,
                         "message": {"id": x} if kind == "assistant" else {"content": x}})
                    for n, u, p, kind, x in w.seen]
            if len(_conversation(seen, w.parent, chain, t)) != len(seen):
                return _load_tree(source, name, thread)  # a fork, rewind or compaction left lines off the branch
    _meta(t, w.sid, w.last, thread, w.stamp)
    for what, k in converted.skipped.items():
        t.skip(what, k)
    t.warnings += converted.warnings
    for call_id in converted.meta.get("error_results", ()):
        t.failed(call_id)
    t.details, t.markers, t.messages = converted.details, converted.markers, out
    if w.uses:
        t.abandoned += left_off_branch(t, w.uses, w.results)
    return t


class _Pass:
    """What the pass over the lines keeps of them for choosing the branch."""

    __slots__ = ("parent", "leaf", "linked", "recognised", "seen", "sid", "last", "uses", "results", "stamp", "side")

    def __init__(self) -> None:
        # every line with a uuid, in file order (progress lines link the chain too)
        self.parent: dict[str, str | None] = {}
        self.leaf: str | None = None
        self.linked = False
        self.recognised = 0
        # each message line converted at once: (line, uuid, parentUuid, type, message id or content)
        self.seen: list[tuple[int, Any, Any, str, Any]] = []
        self.sid: str | None = None  # the last message line's sessionId (that is a string)
        self.last: dict[str, Any] | None = None  # the last message line
        # the calls and results of the lines not converted on the branch (off it, duplicated,
        # malformed), for the calls Claude Code's own resume left off it
        self.uses: dict[str, dict[str, Any]] = {}
        self.results: set[str] = set()
        self.stamp: Any = None  # the last line's timestamp (a progress line may come after every message)
        # whether the file is a sub-agent's (its first message line is a sidechain): then its
        # sidechain lines are its conversation; in a session's own file they are skipped
        self.side: bool | None = None


def _load_tree(source: Source, name: str, thread: str | None) -> Transcript:
    """The general way: keep every message line, walk the tree, convert the branch."""
    t = Transcript(source.name, name, [], wire="anthropic", read_only_tools=READ_ONLY_TOOLS)
    w = _Pass()
    messages: list[tuple[int, dict[str, Any]]] = []
    for _ in _lines(source, t, w, messages):
        pass
    if not w.recognised:
        raise TranscriptError(f"{source.name}: no Claude Code session line (user, assistant, progress...) in it")
    chosen = _conversation(messages, w.parent, _chain(w.parent, w.leaf, t), t) if w.linked else messages
    on_branch = {n for n, _ in chosen}
    for n, o in messages:
        if n not in on_branch:
            _note_calls(o, w)
    sid = None
    for _, o in chosen:
        if isinstance(o.get("sessionId"), str):
            sid = o["sessionId"]
    _meta(t, sid, chosen[-1][1] if chosen else None, thread, w.stamp)
    upto: dict[int, int] = {}
    t.messages = _convert(chosen, t, upto)
    if w.uses:
        t.abandoned += left_off_branch(t, w.uses, w.results)
    if len(chosen) < len(messages):
        t.nested += _branches(t, name, [(n, o) for n, o in messages if n not in on_branch], chosen, w.parent, upto)
    return t


def _branches(
    t: Transcript, name: str, off: list[tuple[int, dict[str, Any]]], chosen: list[tuple[int, dict[str, Any]]],
    parent: dict[str, str | None], upto: dict[int, int],
) -> list[Nested]:
    """The message lines off the branch, grouped by where each branch leaves it (the first of its
    lines whose parent is on the branch, or a root), each converted as a conversation of its own."""
    on = {o.get("uuid"): n for n, o in chosen}
    placed: dict[Any, tuple[Any, Any]] = {}  # uuid -> (its branch's first line, the line it forked from)
    groups: dict[Any, list[tuple[int, dict[str, Any]]]] = {}
    forks: dict[Any, Any] = {}
    off_uuids = {o.get("uuid") for _, o in off}
    for n, o in off:
        key, fork = _branch_of(o.get("uuid"), parent, on, off_uuids, placed)
        groups.setdefault(key, []).append((n, o))
        forks[key] = fork
    out = []
    for key, lines in groups.items():
        at = _fork_index(forks[key], parent, on, upto)
        b = Transcript(t.source, name, [], wire="anthropic", read_only_tools=READ_ONLY_TOOLS, thread=t.thread)
        try:
            b.messages = _convert(lines, b)
        except (TranscriptError, KeyError, TypeError, AttributeError, IndexError, ValueError):
            t.warnings.append(f"{t.source}: lines {lines[0][0]} to {lines[-1][0]}: a branch that was not resumed "
                              f"({len(lines)} line(s)) is not shown: a line of it is not a well-formed message")
            continue
        if not b.messages:
            continue
        b.mark_error_results()
        when = lines[0][1].get("timestamp")
        where = f"after message #{at}" if at is not None else "before the first message of the one resumed"
        label = f"left {where}" + (f", from {when.replace('T', ' ')[:19]}" if isinstance(when, str) else "")
        out.append(Nested("branch", label, b, None, at))
    return out


def _branch_of(
    u: Any, parent: dict[str, str | None], on: dict[Any, int], off: set[Any], placed: dict[Any, tuple[Any, Any]],
) -> tuple[Any, Any]:
    """(the first off-branch message line of ``u``'s branch, the line that branch leaves the
    resumed one from, or None for a root), walking up through lines of any type, remembered."""
    path = []
    at, key, fork = u, u, None
    while at is not None:
        if at in placed:
            key, fork = placed[at]
            break
        if at in on:
            fork = at
            break
        path.append(at)
        if at in off:
            key = at  # the topmost off-branch message line so far
        at = parent.get(at)
    for x in path:
        placed[x] = (key, fork)
    return key, fork


def _fork_index(fork: Any, parent: dict[str, str | None], on: dict[Any, int], upto: dict[int, int]) -> int | None:
    """The canonical index of the resumed branch's message a branch forked after."""
    n = on.get(fork)
    if n is None or n not in upto:
        return None
    return upto[n] - 1 if upto[n] else None


def _subagents(t: Transcript, path: Any, name: str) -> None:
    """The sub-agents Claude Code wrote beside the session, each under the call that started it
    (in the session or in another sub-agent); one it cannot place stays under the session."""
    from pathlib import Path

    folder = Path(path).with_suffix("") / "subagents"
    if not folder.is_dir():
        return
    from . import load as load_any

    found: list[tuple[Nested, Transcript]] = []
    for f in sorted(folder.glob("agent-*.jsonl")):
        try:
            sub = load_any(f, format="claude_code")
        except TranscriptError as exc:
            t.warnings.append(f"{f}: a sub-agent's file cannot be read: {exc}")
            continue
        meta = _agent_meta(f, t)
        call = meta.get("toolUseId") if isinstance(meta.get("toolUseId"), str) else t.meta.get("agent_calls", {}).get(
            f.stem.removeprefix("agent-"))
        what = " ".join(str(meta[k]) for k in ("agentType", "description") if isinstance(meta.get(k), str))
        label = f"{what or f.stem} ({f.stem})"
        found.append((Nested("subagent", label, sub, call), sub))
    t.meta.pop("agent_calls", None)
    owners = {c.id: x for x in [t, *(s for _, s in found)] for m in x.messages
              if isinstance(m, AssistantMessage) for c in m.tool_calls or ()}
    for n, _ in found:
        (owners.get(n.call_id or "") or t).nested.append(n)


def _agent_meta(f: Any, t: Transcript) -> dict[str, Any]:
    """A sub-agent's ``.meta.json`` (the call that started it, its type and description)."""
    import json

    meta = f.with_suffix(".meta.json")
    if not meta.exists():
        return {}
    try:
        doc = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        t.warnings.append(f"{meta}: cannot be read ({exc}); its sub-agent is shown under the session")
        return {}
    return doc if isinstance(doc, dict) else {}


def _note_calls(obj: dict[str, Any], w: _Pass) -> None:
    """The tool_use and tool_result blocks of a line that is not converted on the branch."""
    msg = obj.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    if not isinstance(content, list) or bool(obj.get("isSidechain")) != bool(w.side):
        return
    for b in content:
        if not isinstance(b, dict):
            continue
        kind = b.get("type")
        if kind == "tool_use" and isinstance(b.get("id"), str):
            w.uses.setdefault(b["id"], b)
        elif kind == "tool_result" and isinstance(b.get("tool_use_id"), str):
            w.results.add(b["tool_use_id"])


def _meta(t: Transcript, sid: str | None, last: dict[str, Any] | None, thread: str | None, stamp: Any = None) -> None:
    """The session id and the last branch line's version, cwd and branch, and the time of the
    file's last line (where a killed session stopped); a session asked for by id that is not
    this one is refused."""
    t.thread = sid
    if isinstance(stamp, str):
        t.meta["last_record"] = stamp
    if last is not None:
        for key in ("version", "cwd", "gitBranch"):
            if last.get(key) is not None:
                t.meta[key] = last[key]
    if t.thread:
        t.meta["session_id"] = t.thread
    if thread is not None and t.thread is not None and thread != t.thread:
        raise TranscriptError(f"{t.source}: holds session {t.thread}, not {thread!r}")


def _lines(
    source: Source, t: Transcript, w: _Pass, messages: list[tuple[int, dict[str, Any]]] | None,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Every line read into ``w`` (its links) and ``t`` (what is skipped and why); the message
    lines kept in ``messages``, or, without it, yielded for converting at once."""
    parent, seen = w.parent, w.seen
    before: str | None = None  # the uuid of the line before (most lines' parent: kept once, not twice)
    leaf: str | None = None
    linked = False
    recognised = 0
    skipped = t.skipped  # counted inline (as t.skip does): most lines are skipped progress lines
    known, message_types = _KNOWN_TYPES, _MESSAGE_TYPES
    stamp = None
    for n, obj in jsonl_records(source, t):
        stamp = obj.get("timestamp", stamp)
        kind = obj.get("type")
        if type(kind) is not str:
            kind = None
        u = obj.get("uuid")
        p = obj.get("parentUuid")
        # the usual line (string or absent links; a message object whose id is a string or
        # absent) needs none of _malformed's checks, which name what is wrong
        if (u is None and "uuid" in obj) or (u is not None and type(u) is not str) or (
            p is not None and type(p) is not str) or (kind in message_types and not (
                type(msg := obj.get("message")) is dict and ((mid := msg.get("id")) is None or type(mid) is str))):
            bad = _malformed(obj, kind)
            if bad:
                t.skip("malformed_line")
                t.warnings.append(f"{source.name}: line {n} {bad}; skipped")
                _note_calls(obj, w)
                continue
        if kind in known:
            recognised += 1
        if u is not None:
            if u in parent:  # the same line written twice (a resumed session copies lines)
                t.skip("duplicate_line")
                _note_calls(obj, w)
                continue
            if p is not None and p == before:
                p = before
            parent[u] = p
            before = u
        if kind in message_types:
            if w.side is None:
                w.side = bool(obj.get("isSidechain"))
            if bool(obj.get("isSidechain")) != w.side:
                t.skip("sidechain")
                continue
            linked = linked or "parentUuid" in obj
            if messages is not None:
                messages.append((n, obj))
            else:
                msg = obj["message"]
                seen.append((n, u, p, kind, msg.get("id") if kind == "assistant" else msg.get("content")))
                if isinstance(obj.get("sessionId"), str):
                    w.sid = obj["sessionId"]
                w.last = obj
                yield n, obj
        else:
            if "message" in obj:  # not a message line, yet it carries one: its calls still count
                _note_calls(obj, w)
            if kind == "system":
                t.skip(f"system:{obj.get('subtype')}")
            elif kind in known:
                skipped[kind] = skipped.get(kind, 0) + 1
                continue
            else:
                t.skip(f"line:{kind}")
                continue
        if isinstance(u, str) and bool(obj.get("isSidechain")) == bool(w.side):
            leaf = u
    w.leaf, w.linked, w.recognised, w.stamp = leaf, linked, recognised, stamp


def _malformed(obj: dict[str, Any], kind: str | None) -> str | None:
    """Why a line cannot take part in the tree (its links or message are of the wrong type)."""
    if "uuid" in obj and not isinstance(obj["uuid"], str):
        return "has a uuid that is not a string"
    if not isinstance(obj.get("parentUuid"), (str, type(None))):
        return "has a parentUuid that is not a string"
    if kind in _MESSAGE_TYPES:
        msg = obj.get("message")
        if not isinstance(msg, dict):
            return "has no message object"
        if not isinstance(msg.get("id"), (str, type(None))):
            return "has a message.id that is not a string"
    return None


def _through_every_line(parent: dict[str, str | None], leaf: str | None, seen: list[tuple[int, Any, Any, str, Any]]) -> bool:
    """True when the walk from the leaf to its root meets every message line (in reverse file
    order) and no broken link: what ``_chain`` would find, told without building the chain. False
    sends the load the long way (``_chain``, which names broken links), never to a wrong answer."""
    k = len(seen) - 1
    expected = seen[k][1] if k >= 0 else None
    at = leaf
    for _ in range(len(parent) + 1):  # more steps than lines: a cycle
        if at is None:
            return k < 0
        if at == expected:
            k -= 1
            expected = seen[k][1] if k >= 0 else None
        up = parent.get(at, _MISSING)
        if up is _MISSING:
            return False
        at = up  # type: ignore[assignment]  # not the _MISSING sentinel: a uuid string (checked above)
    return False


_MISSING = object()


def _chain(parent: dict[str, str | None], leaf: str | None, t: Transcript) -> set[str]:
    """The uuids from the leaf back to its root: the branch the session would resume.

    A ``parentUuid`` naming a line that is not in the file (a line lost or cut out) is a
    broken link, not a root: the walk goes on from the line written just before, and a
    warning says so."""
    order: list[str] = []
    pos: dict[str, int] | None = None
    chain: set[str] = set()
    at = leaf
    while at is not None and at not in chain:
        chain.add(at)
        up = parent.get(at)
        if up is not None and up not in parent:
            if pos is None:
                order = list(parent)  # the uuids in file order
                pos = {u: i for i, u in enumerate(order)}
            i = pos[at]
            t.warnings.append(
                f"{t.source}: line {at} points to parent {up}, which is not in the file; "
                "continuing with the line written before it"
            )
            up = order[i - 1] if i > 0 else None
        at = up
    return chain


def _conversation(
    messages: list[tuple[int, dict[str, Any]]],
    parent: dict[str, str | None],
    chain: set[str],
    t: Transcript,
) -> list[tuple[int, dict[str, Any]]]:
    """The message lines of the branch the session would resume, in file order: those on the
    ``chain`` (see ``_chain``), plus the lines Claude Code hangs beside it (the other lines of
    a split message, the results of parallel calls)."""
    on_chain = [o for _, o in messages if o.get("uuid") in chain]
    if len(on_chain) == len(messages):
        return messages  # a session without forks: every message line is on the branch
    msg_ids = {(o.get("message") or {}).get("id") for o in on_chain if o.get("type") == "assistant"} - {None}
    answered = {i for o in on_chain for i in _result_ids(o)}
    message_uuids = {o.get("uuid") for _, o in messages}
    included = set(chain)
    chosen: list[tuple[int, dict[str, Any]]] = []
    for n, o in messages:
        u = o.get("uuid")
        if u in chain:
            chosen.append((n, o))
            continue
        p = o.get("parentUuid")
        steps = 0
        while p is not None and p not in message_uuids and p not in chain and steps < 1000:
            p = parent.get(p)  # through progress lines, to the message line they hang from
            steps += 1
        if p is None or p not in included:
            continue
        if o.get("type") == "assistant":
            ok = (o.get("message") or {}).get("id") in msg_ids
        else:
            ids = _result_ids(o)
            ok = _only_results(o) and not (set(ids) & answered)
            if ok:
                answered.update(ids)
        if ok and isinstance(u, str):
            included.add(u)
            chosen.append((n, o))
    off = len(messages) - len(chosen)
    if off:
        t.skip("off_branch", off)
    return chosen


def _blocks(o: dict[str, Any]) -> list[Any]:
    c = (o.get("message") or {}).get("content")
    if isinstance(c, str):
        return [{"type": "text", "text": c}]
    return c if isinstance(c, list) else []


def _result_ids(o: dict[str, Any]) -> list[str]:
    if o.get("type") != "user":
        return []
    return [
        b["tool_use_id"] for b in _blocks(o)
        if isinstance(b, dict) and b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str)
    ]


def _only_results(o: dict[str, Any]) -> bool:
    bs = _blocks(o)
    return bool(bs) and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in bs)


def _convert(
    chosen: Iterable[tuple[int, dict[str, Any]]], t: Transcript, upto: dict[int, int] | None = None,
) -> list[Message]:
    """Group lines into messages (the lines of one API message share ``message.id``), convert
    them straight to canonical messages in one pass, and place the markers. The result is what
    ``from_anthropic_messages`` gives for the grouped Anthropic messages, errors included (its
    block importers are reused), without building the intermediate Anthropic dicts. ``upto``
    (line number -> messages made so far) tells where each line landed."""
    out: list[Message] = []
    names: dict[str, str] = {}  # tool_use id -> tool name, for the results
    info: list[dict[str, Any]] = []  # time, model and tokens of each grouped message, where given
    produced: list[int] = []  # canonical messages each grouped message turns into
    pending_markers: list[tuple[int, Marker]] = []  # (grouped message index, marker)
    last_msg_id: str | None = None
    # the open assistant message (the last grouped one, while it is an assistant's): its place
    # in ``out`` and its texts, thoughts, reasoning items and calls
    group: tuple[int, list[str], list[str], list[Any], list[ToolCall]] | None = None
    no_source, assistant_blocks = _NO_SOURCE, _ASSISTANT_BLOCKS
    if upto is not None:
        chosen = _counted(chosen, out, upto)
    for n, o in chosen:
        msg = o["message"]  # a dict: _load skipped message lines without one
        c = msg.get("content")
        bs = [{"type": "text", "text": c}] if isinstance(c, str) else c if isinstance(c, list) else []
        if o["type"] == "assistant":
            mid = msg.get("id") if isinstance(msg.get("id"), str) else None
            extend = group is not None and mid is not None and mid == last_msg_id
            if not extend:
                last_msg_id = mid
            kept = 0
            for b in bs:
                bt = b.get("type") if isinstance(b, dict) else None
                if type(bt) is not str or bt not in assistant_blocks or (
                    bt not in no_source or "source" in b) and not _base64_source(b):
                    t.skip(f"block:{bt if isinstance(bt, str) else None}")
                    continue
                if not kept and not extend:
                    if group is not None:
                        _close(out, group)
                    group = (len(out), [], [], [], [])
                    out.append(None)  # type: ignore[arg-type]  # set when the message closes
                    info.append(_details(o, msg))
                    produced.append(1)
                kept += 1
                assert group is not None
                if bt == "text":
                    group[1].append(b.get("text") or "")
                elif bt == "tool_use":
                    cid, name = b.get("id", ""), b.get("name", "")
                    group[4].append(ToolCall(cid, name, input_as_arguments(b.get("input") or {})))
                    names[cid] = name
                else:  # thinking, redacted_thinking
                    group[3].append(dict(b))
                    if bt == "thinking" and b.get("thinking"):
                        group[2].append(b["thinking"])
            if extend:
                info[-1].update(_details(o, msg))  # the last line of a message carries its final usage
            elif not kept:
                t.skip("empty_line")
            continue
        last_msg_id = None
        first = len(out)
        if not _user_line(n, o, bs, len(info), out, names, pending_markers, t):
            t.skip("empty_line")
            continue
        if group is not None:  # a user message follows: the assistant's is complete
            _close(out, group)
            group = None
        info.append(_details(o, msg))
        produced.append(len(out) - first)
    if group is not None:
        _close(out, group)
    ends: list[int] = []
    total = 0
    for k in produced:
        total += k
        ends.append(total - 1)
    details = t.details
    for at, d in enumerate(info):
        if d:
            for i in range(ends[at] - produced[at] + 1, ends[at] + 1):
                details[i] = d
    for at, marker in pending_markers:
        marker.index = ends[at] if ends[at] >= 0 else None
        t.markers.append(marker)
    return out


def _counted(
    chosen: Iterable[tuple[int, dict[str, Any]]], out: list[Message], upto: dict[int, int],
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``chosen``, noting for each line how many messages ``out`` holds once it is converted
    (read when the next line is asked for, or the lines run out)."""
    prev = None
    for n, o in chosen:
        if prev is not None:
            upto[prev] = len(out)
        yield n, o
        prev = n
    if prev is not None:
        upto[prev] = len(out)


def _user_line(
    n: int, o: dict[str, Any], bs: list[Any], at: int, out: list[Message], names: dict[str, str],
    pending_markers: list[tuple[int, Marker]], t: Transcript,
) -> bool:
    """A user line's tool messages and user message, appended to ``out`` as the Anthropic
    importer makes them from grouped message ``at``, and its markers; False when no block of
    it can be kept."""
    k = 0  # the block's index among the kept ones (the importer's content[k])
    parts: list[TextPart | ImagePart | FilePart] = []
    interrupts: list[tuple[int, Marker]] = []
    rejected = o.get("toolUseResult") == REJECTED
    for b in bs:
        bt = b.get("type") if isinstance(b, dict) else None
        if type(bt) is not str or bt not in _USER_BLOCKS or (
            bt not in _NO_SOURCE or "source" in b) and not _base64_source(b):
            t.skip(f"block:{bt if isinstance(bt, str) else None}")
            continue
        try:
            if bt == "tool_result":
                b = _result_kept(b, t)
                call_id = b.get("tool_use_id", "")
                content = b.get("content")
                if content is None or isinstance(content, str):
                    text, images = content or "", None
                else:
                    text, images = read_tool_result(content, f"messages[{at}].content[{k}]")
                out.append(ToolMessage(call_id, names.get(call_id, ""), text, images or None))
                if b.get("is_error") is True:
                    t.failed(call_id)
                shown = _result_text(content)
                if rejected:
                    pending_markers.append((at, Marker("rejected", None, REJECTED, [b.get("tool_use_id", "")])))
                elif MISSING_RESULT in shown and shown.strip() == MISSING_RESULT:  # no copy of every result
                    pending_markers.append((at, Marker("result_missing", None, MISSING_RESULT, [b.get("tool_use_id", "")])))
            elif bt == "text":
                if (b.get("text") or "").startswith(INTERRUPTED_PREFIX):
                    interrupts.append((at, Marker("user_interrupt", None, b["text"].strip())))
                parts.append(TextPart(b.get("text") or ""))
            elif bt == "image":
                parts.append(read_image(b, f"messages[{at}].content[{k}]"))
            else:
                parts.append(read_document(b, f"messages[{at}].content[{k}]"))
        except ValueError as exc:
            raise TranscriptError(f"{t.source}: line {n}: {exc}") from exc
        k += 1
    if not k:
        return False
    pending_markers += interrupts  # after the results' markers, as the importer's order gives them
    _agent_call(o, bs, t)
    if parts:
        out.append(UserMessage(parts[0].text) if len(parts) == 1 and isinstance(parts[0], TextPart) else UserMessage(parts))
    return True


def _agent_call(o: dict[str, Any], bs: list[Any], t: Transcript) -> None:
    """An Agent (Task) call's result names the sub-agent it ran: kept to place the sub-agent's file
    when no ``.meta.json`` names its call."""
    result = o.get("toolUseResult")
    agent = result.get("agentId") if isinstance(result, dict) else None
    if isinstance(agent, str):
        for b in bs:
            if isinstance(b, dict) and b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str):
                t.meta.setdefault("agent_calls", {})[agent] = b["tool_use_id"]


def _close(out: list[Message], group: tuple[int, list[str], list[str], list[Any], list[ToolCall]]) -> None:
    """The open assistant message, built (as the Anthropic importer builds one)."""
    at, texts, thoughts, items, calls = group
    out[at] = AssistantMessage(
        content="".join(texts),
        reasoning="\n\n".join(thoughts) if thoughts else None,
        reasoning_items=ReasoningItems("anthropic", items) if items else None,
        tool_calls=calls or None,
    )


def _details(o: dict[str, Any], msg: dict[str, Any]) -> dict[str, Any]:
    """A line's timestamp, model and token counts (as the session file gives them)."""
    out: dict[str, Any] = {}
    ts = o.get("timestamp")
    if isinstance(ts, str):
        out["time"] = ts.replace("T", " ")[:19]
    model = msg.get("model")
    if isinstance(model, str) and model != "<synthetic>":
        out["model"] = model
    usage = msg.get("usage")
    if isinstance(usage, dict):
        tin = sum(v for k, v in usage.items() if k.endswith("input_tokens") and isinstance(v, int))
        tout = usage.get("output_tokens")
        if tin or isinstance(tout, int):
            # how much of the input came from the prompt cache (read) or went into it (written)
            cache = [
                f"{v:,} cache {what}"
                for key, what in (("cache_read_input_tokens", "read"), ("cache_creation_input_tokens", "write"))
                if isinstance(v := usage.get(key), int) and v
            ]
            parts = f" ({', '.join(cache)})" if cache else ""
            out["tokens"] = f"{tin:,} in{parts}, {tout if isinstance(tout, int) else 0:,} out"
    return out


def _base64_source(b: dict[str, Any]) -> bool:
    """Images and documents travel inline in a canonical history; a URL or file reference
    cannot (such a block is skipped and counted)."""
    kind = (b.get("source") or {}).get("type")
    if b.get("type") == "image":
        return kind == "base64"
    return b.get("type") != "document" or kind in ("base64", "text")


def _result_kept(b: dict[str, Any], t: Transcript) -> dict[str, Any]:
    """A tool_result with only the content blocks a canonical result holds (text, inline
    images); others (tool references, linked images) are counted in ``skipped``."""
    content = b.get("content")
    if not isinstance(content, list):
        return b
    kept = []
    for c in content:
        kind = c.get("type") if isinstance(c, dict) else None
        kind = kind if isinstance(kind, str) else None
        if kind == "text" or (kind == "image" and isinstance(c, dict) and _base64_source(c)):
            kept.append(c)
        else:
            t.skip(f"block:tool_result:{kind}")
    return b if len(kept) == len(content) else {**b, "content": kept}


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""
