"""The person at the notebook decides: approve a call before its side effect, settle a call
that was interrupted.

``Conversation(..., approve="ask")`` stops before each call of a tool that is not read-only and
asks (a widget in a notebook, a prompt on stdin in a terminal); ``approve=callable`` asks a
function instead (scripts, tests). What was decided is saved as the call's result, in words the
model reads, and beside the history as a call mark (``store.mark_call``), so the canonical
message JSON keeps its shape. A call is marked "asking" before it is saved and "started" just
before it runs: a process that dies while the question is open leaves a call the store knows
never started, which the next ``resume`` asks about again instead of telling the model it may
have partly run.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from .core.messages import AssistantMessage, Message, ToolCall, ToolMessage
from .core.repair import InterruptedCall, Repaired
from .core.tools import ToolRegistry
from .store.call_marks import ANSWERED, ASKING, STARTED

__all__ = [
    "Decision",
    "ApprovalError",
    "SettleError",
    "DENIED_TEXT",
    "NOT_ANSWERED_TEXT",
    "ENTERED_BY_USER",
    "EDITED_BY_USER",
    "decision_of",
    "resolve_approver",
    "ask_stdin",
    "open_interrupted",
]


class Facade(Protocol):
    """What the approval step needs of the facade (``conversation.Conversation``), named here
    so that this module, which the facade imports, does not import it back."""

    store: Any
    id: str
    tools: ToolRegistry
    repaired: Repaired
    _asking: set[str]
    _approver: Callable[[ToolCall], Decision] | None

    @property
    def messages(self) -> list[Message]: ...

    def is_read_only(self, name: str) -> bool: ...

    def reload(self) -> Repaired: ...

    def _save(self, message: Message) -> None: ...

    def _calls_by_id(self) -> dict[str, ToolCall]: ...

    def _ask(self, call: ToolCall) -> Decision: ...

# What the model reads in place of a result. Fixed texts: the same decision gives the same bytes,
# so a prompt cache keeps hitting.
DENIED_TEXT = (
    "The user declined this call, so it did not run. Do not call it again unless the user asks "
    "you to."
)
NOT_ANSWERED_TEXT = (
    "This call did not run: it was waiting for the user's approval when the user sent a new "
    "message instead. Do not call it again unless the user asks you to."
)
ENTERED_BY_USER = (
    "[Entered by the user: this call was interrupted before it returned; the user checked what "
    "happened and wrote the following.]"
)
EDITED_BY_USER = "[The user changed the arguments of this call before it ran.]"

Approve = Literal["ask"] | Callable[[ToolCall], Any] | None
SettleHow = Literal["ran", "run", "model"]


class ApprovalError(RuntimeError):
    """A question about a call could not be asked or its answer was not understood."""


class SettleError(ValueError):
    """``settle`` was given a call that is not an open interrupted call, or a wrong action."""


@dataclass(slots=True, frozen=True)
class Decision:
    """What the person decided about one call: approve, deny, or edit (run ``arguments``)."""

    action: Literal["approve", "deny", "edit"]
    arguments: dict[str, Any] | None = None


def decision_of(answer: Any, call: ToolCall) -> Decision:
    """``True`` runs the call, ``False`` denies it, a dict runs it with these arguments."""
    if isinstance(answer, Decision):
        return answer
    if answer is True:
        return Decision("approve")
    if answer is False:
        return Decision("deny")
    if isinstance(answer, dict):
        return Decision("edit", dict(answer))
    raise ApprovalError(
        f"the approve callable answered {type(answer).__name__} for call {call.id!r} "
        f"({call.name}); it must return True (run it), False (deny it) or a dict of arguments "
        "(run it with these instead)"
    )


def resolve_approver(
    approve: Approve, ask: Callable[[ToolCall], Decision]
) -> Callable[[ToolCall], Decision] | None:
    """The function the loop asks (``ask`` for "ask": the notebook's widget or stdin), or None
    when calls run without asking."""
    if approve is None:
        return None
    if approve == "ask":
        return ask
    if callable(approve):
        fn = approve
        return lambda call: decision_of(fn(call), call)
    raise ValueError(f"approve must be None, 'ask' or a callable, got {approve!r}")


def _pretty(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except ValueError:
        return arguments


def ask_stdin(
    call: ToolCall,
    *,
    read: Callable[[str], str] = input,
    write: Callable[[str], Any] | None = None,
    hints: str = "",
) -> Decision:
    """A terminal prompt: y runs the call, n denies it, e reads new arguments (one JSON line).
    ``hints`` is the tool's hints line (an MCP tool's annotations, destructive marked)."""
    say = write or (lambda text: print(text, file=sys.stdout, flush=True))
    say(f"The model wants to call {call.name} (call id {call.id}) with:\n{_pretty(call.arguments)}")
    if hints:
        say(hints)
    while True:
        try:
            answer = read("Run it? [y]es / [n]o / [e]dit arguments: ").strip().lower()
            if answer in ("y", "yes"):
                return Decision("approve")
            if answer in ("n", "no"):
                return Decision("deny")
            if answer in ("e", "edit"):
                text = read("New arguments, one line of JSON (an object): ")
                try:
                    value = json.loads(text)
                except ValueError as exc:
                    say(f"That is not JSON ({exc}); answer again.")
                    continue
                if not isinstance(value, dict):
                    say("The arguments must be a JSON object; answer again.")
                    continue
                return Decision("edit", value)
            say("Please answer y, n or e.")
        except (EOFError, OSError) as exc:
            raise ApprovalError(
                f"call {call.id!r} ({call.name}) needs approval but stdin gave no answer "
                f"({type(exc).__name__}); pass approve=<a function> to decide in a script, or "
                "approve=None to run tools without asking"
            ) from None


# --------------------------------------------------------------------------- the loop's side


def hints_of(tools: Any, name: str) -> str:
    """The hints line approval shows for a tool ("" for a local tool or an unknown name)."""
    from .mcp.hints import hints_line

    try:
        t = tools.get(name)
    except (KeyError, AttributeError):
        return ""
    return hints_line(getattr(t, "hints", None), getattr(t, "source", ""))


def mark(convo: Facade, call_id: str, state: str, detail: dict[str, Any] | None = None) -> None:
    """Record a call's state beside the history (a store without marks just does not keep it)."""
    put = getattr(convo.store, "mark_call", None)
    if put is not None:
        put(convo.id, call_id, state, detail)


def mark_asking(convo: Facade, calls: list[ToolCall]) -> None:
    """Before the calling message is saved: the calls a person must approve are "asking"."""
    for call in calls:
        if not convo.is_read_only(call.name):
            mark(convo, call.id, ASKING)
            convo._asking.add(call.id)


def asking_ids(store: Any, conversation_id: str) -> set[str]:
    """The calls the store knows were waiting for a person's answer."""
    read = getattr(store, "call_marks", None)
    if read is None:
        return set()
    return {cid for cid, m in read(conversation_id).items() if m.state == ASKING}


def run_call(convo: Facade, call: ToolCall, decide: Callable[[ToolCall], Decision]) -> None:
    """Ask about one call, then save what was decided as its result. A Stop while the question
    is open leaves the call marked "asking": the next ``resume`` asks again."""
    decision = decide(call)
    if decision.action == "deny":
        mark(convo, call.id, ANSWERED, {"decision": "denied"})
        convo._save(ToolMessage(call.id, call.name, DENIED_TEXT))
    elif decision.action == "edit" and decision.arguments is not None:
        edited = json.dumps(decision.arguments, ensure_ascii=False)
        mark(convo, call.id, STARTED, {"decision": "edited", "original": call.arguments, "arguments": edited})
        result = convo.tools.run(ToolCall(call.id, call.name, edited))
        text = f"{EDITED_BY_USER}\nThe model's arguments: {call.arguments}\nRan with: {edited}\nResult:\n{result.content}"
        convo._save(ToolMessage(call.id, call.name, text, result.images))
    else:
        mark(convo, call.id, STARTED, {"decision": "approved"})
        convo._save(convo.tools.run(call))
    convo._asking.discard(call.id)


def answer_pending(convo: Facade) -> None:
    """Ask again about the calls that were waiting when the last process stopped."""
    decide = convo._approver or convo._ask  # the question was open: it is asked again
    by_id = convo._calls_by_id()
    for p in convo.repaired.pending:
        call = by_id.get(p.id)
        if call is not None:
            run_call(convo, call, decide)


def skip_pending(convo: Facade) -> None:
    """A new user message while calls wait: they did not run, and the model is told so."""
    by_id = convo._calls_by_id()
    for p in convo.repaired.pending:
        call = by_id.get(p.id)
        if call is not None:
            mark(convo, call.id, ANSWERED, {"decision": "not_answered"})
            convo._save(ToolMessage(call.id, call.name, NOT_ANSWERED_TEXT))
            convo._asking.discard(call.id)


# --------------------------------------------------------------------------- settling by hand


def open_interrupted(convo: Facade) -> list[InterruptedCall]:
    """Interrupted calls whose result can still be recorded in place: calls of the last
    assistant message (only results after it) that kept their id. Elsewhere the conversation
    went on without the result, so only the repair text fits."""
    history = convo.messages
    last = len(history) - 1
    while last >= 0 and isinstance(history[last], ToolMessage):
        last -= 1
    tail = history[last] if last >= 0 else None
    if not isinstance(tail, AssistantMessage) or not tail.tool_calls:
        return []
    ids = {c.id for c in tail.tool_calls}
    return [r for r in convo.repaired.interrupted if r.original_id in ids and r.id == r.original_id]


def settle(convo: Facade, call_id: str, how: SettleHow, note: str | None = None) -> ToolMessage:
    """Record what became of an interrupted call: "ran" (the person says what happened, in
    ``note``), "run" (run it now, save the real result) or "model" (the repair text)."""
    convo.reload()
    rows = {r.id: r for r in open_interrupted(convo)}
    row = rows.get(call_id)
    if row is None:
        if any(p.id == call_id for p in convo.repaired.pending):
            raise SettleError(f"call {call_id!r} waits for approval, it was not interrupted: "
                              "resume() asks about it again")
        listed = ", ".join(sorted(rows)) or "none"
        raise SettleError(
            f"call {call_id!r} is not an open interrupted call of conversation {convo.id!r} "
            f"(open ones: {listed}); only a call of the last assistant message that never "
            "returned can be settled"
        )
    if how == "ran":
        if not isinstance(note, str) or not note.strip():
            raise SettleError('settle(call_id, "ran", note=...) needs a note saying what happened')
        mark(convo, call_id, ANSWERED, {"settled": "ran", "by": "user"})
        message = ToolMessage(call_id, row.name, f"{ENTERED_BY_USER}\n{note.strip()}")
        convo._save(message)
    elif how == "run":
        call = convo._calls_by_id()[call_id]
        mark(convo, call_id, STARTED, {"settled": "run"})
        message = convo.tools.run(call)
        convo._save(message)
    elif how == "model":
        mark(convo, call_id, ANSWERED, {"settled": "model"})
        message = ToolMessage(call_id, row.name, row.note)
        convo._save(message)
    else:
        raise SettleError(f'settle takes "ran", "run" or "model", got {how!r}')
    convo.reload()
    return message
