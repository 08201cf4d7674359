"""What a coding agent's own resume does with a call that never returned.

After a crash mid-tool each CLI recovers in its own way, and none tells the model that the
command may have run: Claude Code's resume hangs its new lines from the entry before the
``tool_use`` (the call falls off the branch), Codex sends ``"aborted"`` in the request only,
OpenCode leaves the tool part ``running`` and sends "[Tool execution was interrupted]", Gemini
CLI never wrote the call at all (an empty model turn is all that is left). Each such call is an
``AbandonedCall``: a finding in its own right, whatever the history's other problems.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ..core.messages import AssistantMessage, ToolMessage
from .base import Transcript

__all__ = ["AbandonedCall", "abandoned_calls", "left_off_branch"]

CLAUDE_CODE_ON_BRANCH = (
    "no result in the session: Claude Code's own resume will hang its next lines from the entry before "
    "this call, so the call falls off the conversation and the model is never told whether it ran"
)
CLAUDE_CODE_OFF_BRANCH = (
    "left off the conversation by Claude Code's own resume (it went on from the entry before the call, "
    "with \"Continue from where you left off.\"); the model was never told whether it ran"
)
CODEX = (
    "no function_call_output in the rollout: Codex's own resume answers it with \"aborted\" in the request "
    "only and never writes that down; the model is never told the command may have run"
)
OPENCODE = (
    "tool part left \"{status}\": OpenCode's own resume sends \"[Tool execution was interrupted]\" for it "
    "and never stores that; the model is never told the command may have run"
)
GEMINI_CLI = (
    "empty model turn: Gemini CLI writes a call only once it has finished, so the call the model asked for "
    "here (and whatever it did) is lost; its own resume sends the history without it"
)
GEMINI_CLI_DROPPED = (
    "an empty model turn (where Gemini CLI lost a call it never wrote down) was dropped by its own resume: "
    "the resumed conversation does not show that the model asked for anything, nor what it may have run"
)


@dataclass(slots=True)
class AbandonedCall:
    """A call the tool's own resume hid or answered with its own placeholder."""

    agent: str  # the format: claude_code, codex, opencode, gemini_cli
    call_id: str | None  # None when the tool never wrote the call down (Gemini CLI)
    name: str | None
    arguments: str | None
    what: str  # what the tool's own resume did (or will do) with it
    read_only: bool = False  # the tool only reads (safe to repeat)
    index: int | None = None  # the canonical message it sits at (None: off the branch)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def abandoned_calls(t: Transcript) -> list[AbandonedCall]:
    """The calls of ``t`` its tool's own resume abandons: what the reader found (Claude Code's
    calls off the branch among them), plus the unanswered calls on the branch of a Claude Code
    session and of a Codex rollout, read from the loaded history."""
    found: list[AbandonedCall] = [a for a in t.abandoned if isinstance(a, AbandonedCall)]
    if t.format == "claude_code":
        return _unanswered(t, CLAUDE_CODE_ON_BRANCH) + found
    if t.format == "codex":
        return found + _unanswered(t, CODEX)
    return found


def _calls(t: Transcript) -> tuple[dict[str, tuple[int, Any]], set[str]]:
    calls: dict[str, tuple[int, Any]] = {}
    answered: set[str] = set()
    for i, m in enumerate(t.messages):
        if isinstance(m, AssistantMessage):
            for c in m.tool_calls or ():
                calls.setdefault(c.id, (i, c))
        elif isinstance(m, ToolMessage):
            answered.add(m.tool_call_id)
    return calls, answered


def _unanswered(t: Transcript, what: str) -> list[AbandonedCall]:
    calls, answered = _calls(t)
    return [
        AbandonedCall(t.format, cid, c.name, c.arguments, what, c.name in t.read_only_tools, i)
        for cid, (i, c) in calls.items()
        if cid not in answered and cid not in t.pending_approval
    ]


def left_off_branch(t: Transcript, uses: Mapping[str, dict[str, Any]], answered: set[str]) -> list[AbandonedCall]:
    """Claude Code: the calls of the lines off the branch (``uses``: tool_use blocks by id, which
    the reader collects in its pass over the file) that no line answers, neither on the branch
    nor among ``answered``. Claude Code's own resume went on from the entry before each."""
    on_branch, results = _calls(t)
    found = []
    for cid, b in uses.items():
        if cid in on_branch or cid in results or cid in answered:
            continue
        name = b.get("name") if isinstance(b.get("name"), str) else None
        args = json.dumps(b.get("input"), ensure_ascii=False) if "input" in b else None
        found.append(AbandonedCall(t.format, cid, name, args, CLAUDE_CODE_OFF_BRANCH,
                                   name in t.read_only_tools if name else False, None))
    return found
