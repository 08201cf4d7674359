"""inspect(source): open a transcript of any supported format and say what is wrong with it.

A thin layer over ``providerkit_nb.transcripts``: the format is detected (or named), the
transcript loaded read-only, validated against the rules of the wire it came from (or the one
named), and repaired, with what the source itself said (interruption markers, calls waiting for
a person, what could not be represented) kept next to the validators' findings. The same
``Inspection`` backs the notebook view, the HTML report and the command line's ``--json``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.messages import AssistantMessage, Message, ToolMessage
from ..core.repair import ORPHAN, InterruptedCall, Repaired, analyze, repair_history
from ..transcripts import MultipleThreads, Source, Transcript, load
from ..transcripts.base import Marker
from ..transcripts.provider_dialects import detect_format

__all__ = ["inspect", "Inspection", "detect_format", "load_transcript"]

_DANGLING_RULES = ("dangling",)  # substrings of the rule ids that name a call without result


@dataclass
class Inspection:
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
    sources: dict[str, str] = field(default_factory=dict)  # tool name -> where it runs (tools=)
    _view: Any = None

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
        return not self.problems and not self.needs_thread

    @property
    def view(self) -> Any:
        if self._view is None:
            from .widgets import HistoryView

            self._view = HistoryView(self.messages, problems=self.problems, title=self._title())
        return self._view

    def _title(self) -> str:
        where = f", thread {self.thread}" if self.thread else ""
        return f"{self.source} ({self.format}{where})"

    def problems_frame(self) -> Any:
        import pandas as pd

        rows = [p.to_dict() if hasattr(p, "to_dict") else dict(p) for p in self.problems]
        return pd.DataFrame(rows, columns=["rule", "index", "message", "provider_wording"])

    def markers_frame(self) -> Any:
        import pandas as pd

        return pd.DataFrame([m.to_dict() for m in self.markers], columns=["kind", "index", "text", "ids"])

    def history_frame(self) -> Any:
        from .frames import history_frame

        return history_frame(self.messages)

    def changes_frame(self) -> Any:
        from .frames import changes_frame

        return changes_frame(self.repaired or Repaired(list(self.messages)))

    def to_json(self) -> dict[str, Any]:
        """The command line's ``--json`` object."""
        repaired = self.repaired
        return {
            "source": self.source,
            "format": self.format,
            "thread": self.thread,
            "messages": len(self.messages),
            "skipped": dict(self.skipped),
            "problems": [{"rule": p.rule, "index": p.index, "message": p.message} for p in self.problems],
            "interrupted": [
                {"id": r.id, "original_id": r.original_id, "name": r.name, "read_only": r.read_only,
                 **({"source": self.sources[r.name]} if r.name in self.sources else {})}
                for r in self.interrupted
            ],
            "orphans": list(self.orphans),
            "pending_approval": list(self.pending_approval),
            "changes": [c.to_dict() for c in repaired.changes] if repaired is not None else [],
        }

    def report_html(self) -> str:
        """The before/after repair report (one self-contained, escaped HTML page)."""
        from .report import report_html

        return report_html(
            self.messages, self.repaired or Repaired(list(self.messages)), self.problems, title=self._title()
        )

    def write_html(self, path: str | Path) -> Path:
        from .report import write_report

        return write_report(
            path, self.messages, self.repaired or Repaired(list(self.messages)), self.problems, title=self._title()
        )

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.view.root)

    def __repr__(self) -> str:
        if self.needs_thread:
            lines = [f"{self.source}: {self.format}, {len(self.threads)} threads; pick one with thread=..."]
            lines += [f"  - {t}" for t in self.threads]
            return "\n".join(lines)
        where = f", thread {self.thread}" if self.thread else ""
        lines = [
            f"{self.source}: {self.format}{where}, {len(self.messages)} messages, "
            f"{len(self.problems)} problem(s)"
        ]
        for p in self.problems:
            d = p.to_dict() if hasattr(p, "to_dict") else dict(p)
            lines.append(f"  - {d.get('rule')} at {d.get('index')}: {d.get('message')}")
        if self.skipped:
            lines.append("  skipped: " + ", ".join(f"{k} {v}" for k, v in sorted(self.skipped.items())))
        for m in self.markers:
            at = f" at {m.index}" if m.index is not None else ""
            ids = f" ({', '.join(m.ids)})" if m.ids else ""
            lines.append(f"  marker {m.kind}{at}: {m.text}{ids}")
        for r in self.interrupted:
            where = f" ({self.sources[r.name]})" if r.name in self.sources else ""
            lines.append(f"  interrupted: {r.name}{where} {r.original_id}" + (f" sent as {r.id}" if r.id != r.original_id else ""))
        for o in self.orphans:
            lines.append(f"  orphan result: {o}")
        for c in self.pending_approval:
            lines.append(f"  pending approval: {c}")
        lines.extend(f"  warning: {w}" for w in self.warnings)
        return "\n".join(lines)


def load_transcript(path: str | Path, conversation: str | None = None) -> tuple[str, list[Message]]:
    """The format name and canonical messages of a transcript file (kept for older callers)."""
    t = load(path, thread=conversation)
    return t.format, t.messages


def inspect(
    source: Any,
    conversation: str | None = None,
    *,
    format: str | None = None,
    thread: str | None = None,
    wire: str | None = None,
    is_read_only: Callable[[str], bool] | None = None,
    tools: Any = None,
) -> Inspection:
    """Load a transcript (a path, a DSN or a parsed object), list what a provider would refuse
    in it, repair it, and show it in a HistoryView.

    ``format`` names the source format instead of detecting it; ``thread`` picks one
    conversation of a source that holds several (``conversation`` is its older name); ``wire``
    checks against another wire's rules than the one the source came from; ``is_read_only``
    tells repair which tools change nothing (default: what the source format knows, e.g.
    Claude Code's Read, Grep, Glob...). ``tools`` (a ToolRegistry, e.g. with MCP tools) gives
    both: each tool's read-only decision, and where each interrupted call went (``local`` or
    ``mcp:<server>``)."""
    src = Source(source)
    try:
        t = load(src, format=format, thread=thread or conversation)
    except MultipleThreads as exc:
        from ..transcripts import detect

        return Inspection(src.name, format or detect(src), [], threads=list(exc.threads))
    if tools is not None and is_read_only is None:
        is_read_only = tools.is_read_only
    found = inspect_transcript(t, wire=wire, is_read_only=is_read_only)
    if tools is not None:
        found.sources = {tool.name: str(getattr(tool, "source", "local")) for tool in tools}
    return found


def inspect_transcript(
    t: Transcript, *, wire: str | None = None, is_read_only: Callable[[str], bool] | None = None
) -> Inspection:
    """The Inspection of a loaded transcript."""
    from ..core.validate import validate_history

    wire = wire or t.wire
    messages = t.messages
    pending = list(dict.fromkeys(t.pending_approval))
    if is_read_only is None and t.read_only_tools:
        is_read_only = t.read_only_tools.__contains__
    repaired = repair_history(messages, is_read_only, pending=pending)
    problems = validate_history(messages, wire=wire) if wire else validate_history(messages)
    waiting = {p.id for p in repaired.pending}
    if waiting:
        problems = [p for p in problems if not _only_about(p, messages, waiting)]
    a = analyze(messages)
    orphans = [
        m.tool_call_id for i, why in sorted(a.unmatched.items()) if why == ORPHAN
        for m in (messages[i],) if isinstance(m, ToolMessage)
    ]
    return Inspection(
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
