"""DataFrames of histories, repairs, turns and gates: usable without any widget.

pandas is imported here and only here (and by the widgets built on these frames).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from ..core.compaction import estimate_tokens
from ..core.html import USAGE_NOT_REPORTED, preview
from ..core.messages import AssistantMessage, Message, ToolMessage, ensure_messages, text_of
from ..core.repair import Repaired

__all__ = [
    "history_frame",
    "changes_frame",
    "interrupted_frame",
    "turns_frame",
    "usage_frame",
    "gate_frame",
    "history_row",
    "show_frame",
    "tools_frame",
]

HISTORY_COLUMNS = [
    "role",
    "text",
    "tool_calls",
    "call_id",
    "reasoning",
    "signatures",
    "tokens",
]


def _messages_of(obj: Any) -> list[Message]:
    if isinstance(obj, Repaired):
        return obj.messages
    if hasattr(obj, "messages") and not isinstance(obj, list | tuple):
        return list(obj.messages)
    return ensure_messages(obj)


def _has_signatures(m: AssistantMessage) -> bool:
    if m.reasoning_items is not None:
        return True
    return any(c.thought_signature for c in m.tool_calls or [])


def history_row(m: Message) -> dict[str, Any]:
    """One message as a row of ``history_frame`` (the views build only the rows they show)."""
    if isinstance(m, AssistantMessage):
        calls = ", ".join(f"{c.name}({preview(c.arguments, 60)})" for c in m.tool_calls or [])
        ids = ", ".join(c.id for c in m.tool_calls or [])
        size = len(m.content) + len(m.reasoning or "") + sum(len(c.arguments) for c in m.tool_calls or [])
        return {
            "role": "assistant",
            "text": preview(m.content),
            "tool_calls": calls,
            "call_id": ids,
            "reasoning": bool(m.reasoning or m.reasoning_details or m.reasoning_items),
            "signatures": _has_signatures(m),
            "tokens": (size + 3) // 4,
        }
    if isinstance(m, ToolMessage):
        return {
            "role": "tool",
            "text": preview(f"{m.name}: {m.content}"),
            "tool_calls": "",
            "call_id": m.tool_call_id,
            "reasoning": False,
            "signatures": False,
            "tokens": estimate_tokens(m.content),
        }
    text = text_of(m)
    return {
        "role": m.role,
        "text": preview(text),
        "tool_calls": "",
        "call_id": "",
        "reasoning": False,
        "signatures": False,
        "tokens": estimate_tokens(text),
    }


def history_frame(messages: Sequence[Message | dict[str, Any]] | Any) -> pd.DataFrame:
    """One row per message: role, a text preview, calls made, the call id answered, whether
    reasoning and signed state are present, and an estimate of its tokens."""
    frame = pd.DataFrame([history_row(m) for m in _messages_of(messages)], columns=HISTORY_COLUMNS)
    frame.index.name = "index"
    return frame


def _rows(items: Iterable[Any]) -> list[dict[str, Any]]:
    out = []
    for item in items:
        d = item.to_dict() if hasattr(item, "to_dict") else dict(item)
        for k, v in list(d.items()):
            if isinstance(v, list | tuple):
                d[k] = ", ".join(str(x) for x in v)
        out.append(d)
    return out


def changes_frame(repaired: Repaired) -> pd.DataFrame:
    """Each edit repair made: its kind, where the message was before and after, the ids."""
    frame = pd.DataFrame(_rows(repaired.changes))
    if frame.empty:
        frame = pd.DataFrame(columns=["kind", "index_before", "index_after", "ids", "detail"])
    return frame


def interrupted_frame(repaired: Repaired, tools: Any = None) -> pd.DataFrame:
    """The calls that never returned: id sent, original id, tool, arguments, read-only, note.

    With ``tools`` (a ToolRegistry) a ``source`` column names where each tool runs (``local``
    or ``mcp:<server>``)."""
    cols = ["id", "original_id", "name", "source", "arguments", "read_only", "message_index", "note"]
    rows = _rows(repaired.interrupted)
    if tools is not None:
        for row in rows:
            row["source"] = _source_of(tools, row.get("name", ""))
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame(columns=cols)
    ordered = [c for c in cols if c in frame.columns] + [c for c in frame.columns if c not in cols]
    return frame[ordered]


def _source_of(tools: Any, name: str) -> str:
    try:
        return str(getattr(tools.get(name), "source", "local"))
    except KeyError:
        return "(not registered)"


def tools_frame(tools: Any) -> pd.DataFrame:
    """Every tool with where it runs, the four MCP hints as the server sent them, and whether
    it counts as read-only and why (what the repair and ``approve="ask"`` go by).

    A hint the server left out shows as "absent (default X)", X being the spec's default; a
    local tool has no hints ("-")."""
    from ..mcp.hints import HINTS, SPEC_DEFAULTS

    rows = []
    for t in tools:
        hints = getattr(t, "hints", None)
        row: dict[str, Any] = {"name": t.name, "source": getattr(t, "source", "local")}
        for h in HINTS:
            if hints is None:
                row[h] = "-"
            elif h in hints:
                row[h] = hints[h]
            else:
                row[h] = f"absent (default {str(SPEC_DEFAULTS[h]).lower()})"
        row["read_only"] = bool(t.read_only)
        reason = getattr(t, "read_only_reason", "")
        if not reason:
            reason = "set on the tool (read_only=True)" if t.read_only else "local tool: not read-only unless it says so"
        row["why"] = reason
        rows.append(row)
    cols = ["name", "source", *HINTS, "read_only", "why"]
    return pd.DataFrame(rows, columns=cols).set_index("name") if rows else pd.DataFrame(columns=cols)


def turns_frame(
    source: Any, prices: Mapping[str, Mapping[str, float]] | None = None
) -> pd.DataFrame:
    """Usage per turn, and cost where a price is known.

    ``source`` is a Conversation (its streamed turns with timings) or a list of Turns.
    ``prices`` maps a model to USD per million tokens: ``{"input", "cached_input", "output",
    "cache_write"}``; without one, a Conversation's own ``rate`` (its ``usage`` tracker's)
    prices every turn; a provider-reported cost wins when there is one. A turn whose server
    reported no usage has no token counts and no cost (unknown, never zero) and its ``usage``
    column says so; ``notes`` holds what the turn's notices say (the JSON form a server took,
    a forced call that was not made).
    """
    default_rate = getattr(getattr(source, "usage", None), "rate", None)
    records = getattr(source, "records", None)
    items = records if records is not None else [None for _ in source]
    turns = [r.turn for r in records] if records is not None else list(source)
    rows = []
    for rec, t in zip(items, turns, strict=True):
        u = t.usage
        row: dict[str, Any] = {
            "model": t.model,
            "finish_reason": t.finish_reason,
            "calls": len(t.message.tool_calls or []),
            "input_tokens": u.input_tokens if u else None,
            "cached_input_tokens": u.cached_input_tokens if u else None,
            "cache_write_tokens": u.cache_write_tokens if u else None,
            "output_tokens": u.output_tokens if u else None,
            "reasoning_tokens": u.reasoning_tokens if u else None,
            "cost_usd": _cost(t, prices, default_rate),
            "usage": _usage_said(t, rec),
            "notes": "; ".join(n.text for n in getattr(t, "notices", None) or ()),
        }
        if rec is not None:
            row.update(
                {
                    "step": rec.step,
                    "seconds": round(rec.seconds, 3),
                    "first_chunk_seconds": None
                    if rec.first_chunk_seconds is None
                    else round(rec.first_chunk_seconds, 3),
                    "error": rec.error,
                }
            )
        rows.append(row)
    return pd.DataFrame(rows)


def _usage_said(turn: Any, rec: Any) -> str:
    """Why a turn has no token counts, in words ("" when it has them)."""
    if turn.usage is not None:
        return ""
    if getattr(rec, "error", None) or not turn.finished:
        return "none (the turn did not finish)"
    return USAGE_NOT_REPORTED


def _cost(turn: Any, prices: Mapping[str, Mapping[str, float]] | None, default_rate: Any = None) -> float | None:
    from ..core.usage import cost_usd

    u = turn.usage
    if u is None:
        return None
    rate = (prices or {}).get(turn.model or "") or default_rate
    cost = cost_usd(u, rate or None)
    return None if cost is None else round(float(cost), 8)


def usage_frame(source: Any) -> pd.DataFrame:
    """One row of session totals from a Conversation (or a ``UsageTracker``): calls, tokens,
    cost, what the cache saved, and the budget left when there is one. Turns whose server
    reported no usage are counted in ``usage``; when no turn reported any, the totals are None
    (unknown), never zero."""
    tracker = getattr(source, "usage", source)
    if not hasattr(tracker, "totals"):
        raise TypeError(f"usage_frame takes a Conversation or a UsageTracker, got {type(source).__name__}")
    row: dict[str, Any] = {"calls": tracker.calls, **tracker.totals.to_dict()}
    row.pop("reasoning_tokens", None)  # not summed across calls (see UsageTracker)
    row["cost_usd"] = round(tracker.cost_usd, 8)
    row["cache_savings_usd"] = round(tracker.savings_usd, 8)
    row["budget_usd"] = tracker.budget_usd
    row["budget_left_usd"] = None if tracker.budget_usd is None else round(max(0.0, tracker.budget_usd - tracker.cost_usd), 8)
    unreported = getattr(tracker, "unreported", 0)
    if unreported and not tracker.calls:  # nothing known: unknown, never zero
        for k in ("input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens", "cost_usd",
                  "cache_savings_usd", "budget_left_usd"):
            row[k] = None
    row["usage"] = "" if not unreported else (
        f"{USAGE_NOT_REPORTED} for {unreported} of {unreported + tracker.calls} turn(s)"
        + (": the totals cover the others" if tracker.calls else "")
    )
    return pd.DataFrame([row])


def gate_frame(source: Any) -> pd.DataFrame:
    """One row per connection (a Registry) or one row (a Gate): in use, queued, longest wait."""
    status = source.status() if hasattr(source, "status") else source
    if isinstance(status, Mapping) and status and all(isinstance(v, Mapping) for v in status.values()):
        rows = [{"connection": name, **_flat(s)} for name, s in status.items()]
    elif isinstance(status, Mapping):
        rows = [_flat(status)]
    else:
        rows = [_flat(s) for s in status]
    return pd.DataFrame(rows)


def _flat(d: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, Mapping):
            for k2, v2 in v.items():
                out[f"{k}.{k2}"] = v2
        else:
            out[k] = v
    return out


_ITABLES_LOADED = False


def show_frame(frame: pd.DataFrame, **options: Any) -> Any:
    """Show a DataFrame with interactive paging and search when ``itables`` is installed (the
    ``tables`` extra), else as pandas shows it. The frame itself stays a plain DataFrame.

    The table's script comes from the installed itables package, not from the internet: the
    first call puts itables' bundle into the notebook (its offline mode), so the tables work
    offline and in a saved notebook (keep that first output)."""
    global _ITABLES_LOADED
    try:
        import itables
    except ImportError:
        from .show import display

        display(frame)
        return None
    if not _ITABLES_LOADED and not options.get("connected"):
        itables.init_notebook_mode(all_interactive=False, connected=False)
        _ITABLES_LOADED = True
    options.setdefault("pageLength", 25)
    return itables.show(frame, **options)
