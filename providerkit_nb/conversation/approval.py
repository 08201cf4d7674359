"""The person at the notebook decides: approve a call before its side effect, settle a call
that was interrupted.

``Conversation(..., approve="ask")`` stops before each call of a tool that is not read-only and
asks (a widget in a notebook, a prompt on stdin in a terminal); ``approve=callable`` asks a
function instead (scripts, tests). What was decided is saved as the call's result, in words the
model reads, and beside the history as a call mark, so the canonical message JSON keeps its
shape. A decision and the result it gives are saved as one step (``store.save_step``), and a
call is marked "asking" in the step that saves it and "started" just before it runs: a process
that dies while the question is open leaves a call the store knows never started, which the
next ``resume`` asks about again instead of telling the model it may have partly run. ``Approval`` is the object a Conversation owns for this (``convo.approval``).
"""

from __future__ import annotations

import contextlib
import functools
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ..core.errors import Error
from ..core.messages import AssistantMessage, Message, ToolCall, ToolMessage
from ..core.repair import InterruptedCall, Repaired
from ..core.tools import ToolRegistry
from ..store.base import Store
from ..store.call_marks import ANSWERED, ASKING, DENIED
from .console import preview

__all__ = [
    "Approval",
    "ApprovalDeferred",
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
    "calls_by_id",
    "Mark",
    "Check",
]


class Host(Protocol):
    """The public side of the Conversation that owns an ``Approval`` (named here so that this
    module, which the facade imports, does not import it back)."""

    id: str
    tools: ToolRegistry

    @property
    def store(self) -> Store: ...

    @property
    def messages(self) -> list[Message]: ...

    @property
    def repaired(self) -> Repaired: ...

    def reload(self) -> Repaired: ...

    def repair(self) -> Repaired: ...


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
Mark = tuple[str, str, dict[str, Any] | None]  # (call id, state, detail), as store.save_step takes it
SettleHow = Literal["ran", "run", "model"]
# what is wrong with a person's edited arguments ("<path>: <what>" each; empty: they fit)
Check = Callable[[dict[str, Any]], list[str]]


class ApprovalError(Error, RuntimeError):
    """A question about a call could not be asked or its answer was not understood."""


class ApprovalDeferred(Error):
    """Under ``Approval.deferring()`` a call that needs a person's answer ends the loop instead
    of waiting for it (a button's callback must never wait): the call stays "asking" in the
    store, and ``answer`` then ``resume`` carry on."""

    def __init__(self, call: ToolCall) -> None:
        super().__init__(f"call {call.id!r} ({call.name}) waits for your answer")
        self.call = call


class SettleError(Error, ValueError):
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


def pretty_arguments(arguments: str) -> str:
    """A call's arguments as a person reads them before approving: indented JSON, or the text
    as it came when it is not JSON."""
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
    check: Check | None = None,
) -> Decision:
    """A terminal prompt: y runs the call, n denies it, e reads new arguments (one JSON line).
    ``hints`` is the tool's hints line (an MCP tool's annotations, destructive marked);
    ``check`` names what is wrong with edited arguments (the tool's schema): such an edit is
    refused here and asked again, never run."""
    say = write or (lambda text: print(text, file=sys.stdout, flush=True))
    say(f"The model wants to call {call.name} (call id {call.id}) with:\n{pretty_arguments(call.arguments)}")
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
                problems = check(value) if check is not None else []
                if problems:
                    say(f"Those arguments do not fit the schema of {call.name} ({'; '.join(problems)}); "
                        "answer again.")
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


def calls_by_id(messages: list[Message]) -> dict[str, ToolCall]:
    """Every call of a history by its id (the last one wins for a reused id)."""
    return {c.id: c for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls or []}


class Approval:
    """The person's side of one Conversation (``convo.approval``): which calls wait for an
    answer, asking about them, and saving what was decided. A Stop while the question is open
    leaves the call "asking": the next ``resume`` asks again.

    ``answer(call_id, decision)`` gives an answer ahead of the question (the view's widget does,
    from its button callbacks); the next ``resume`` uses it instead of asking.
    """

    def __init__(
        self,
        host: Host,
        approve: Approve,
        ask: Callable[[ToolCall], Decision],
        *,
        save: Callable[[Sequence[Message], Sequence[Mark]], None],
        run: Callable[[ToolCall, dict[str, Any]], ToolMessage],
        tell: Callable[[ToolCall, str, str], None] | None = None,
    ) -> None:
        self.approve = approve
        self._host = host
        self._ask = ask
        self._decide = resolve_approver(approve, ask)
        self._save = save
        self._run = run
        self._tell = tell or (lambda call, status, text: None)  # the live display's status line
        self._given: dict[str, Decision] = {}
        self._asking: set[str] = set()
        self._defer = False
        self.reload()

    @property
    def active(self) -> bool:
        """True when calls of tools that are not read-only wait for a person (``approve=``)."""
        return self._decide is not None

    @property
    def asking(self) -> frozenset[str]:
        """Ids of the calls waiting for a person's answer, as the store knows them."""
        return frozenset(self._asking)

    def reload(self) -> None:
        marks = self._host.store.call_marks(self._host.id)
        self._asking = {cid for cid, m in marks.items() if m.state == ASKING}

    def answer(self, call_id: str, decision: Decision | bool | dict[str, Any]) -> None:
        """Answer a waiting call now; the next ``resume`` runs (or denies) it with this answer."""
        call = calls_by_id(self._host.messages).get(call_id)
        if call is None or call_id not in self._asking:
            raise ApprovalError(f"call {call_id!r} of conversation {self._host.id!r} is not waiting for approval")
        given = decision_of(decision, call)
        self._refuse_bad_edit(call, given)
        self._given[call_id] = given

    def check(self, call: ToolCall) -> Check:
        """What is wrong with edited arguments for ``call``: its tool's input schema."""
        return functools.partial(self._host.tools.check_arguments, call.name)

    def _refuse_bad_edit(self, call: ToolCall, decision: Decision) -> None:
        """An edit that does not fit the tool's schema is the person's to fix, never run (the
        model would read the tool's refusal as its own mistake): the call keeps waiting."""
        if decision.action != "edit" or decision.arguments is None:
            return
        problems = self.check(call)(decision.arguments)
        if problems:
            raise ApprovalError(
                f"the edited arguments for call {call.id!r} ({call.name}) do not fit the tool's input "
                f"schema: {'; '.join(problems)}. The call did not run and still waits for an answer: "
                "answer again with arguments that fit (resume() asks again)"
            )

    @contextlib.contextmanager
    def deferring(self) -> Iterator[None]:
        """While the body runs, a question that would wait for a person raises
        ``ApprovalDeferred`` instead (an ``approve=`` callable is still asked: it answers)."""
        self._defer = True
        try:
            yield
        finally:
            self._defer = False

    # the loop's side

    def asking_marks(self, calls: list[ToolCall]) -> list[Mark]:
        """The "asking" marks of the calls a person must approve, to be saved in one step with
        the message that makes them."""
        if not self.active:
            return []
        marks: list[Mark] = []
        for call in calls:
            if not self._host.tools.is_read_only(call.name):
                marks.append((call.id, ASKING, None))
                self._asking.add(call.id)
        return marks

    def needs(self, call: ToolCall) -> bool:
        return call.id in self._asking and (self.active or call.id in self._given)

    def run_call(self, call: ToolCall) -> None:
        """Ask about one call (or take the answer given ahead), then save what was decided."""
        given = self._given.pop(call.id, None)
        if given is None and self._defer and (self._decide is None or self.approve == "ask"):
            raise ApprovalDeferred(call)
        decision = given or (self._decide or self._ask)(call)
        self._refuse_bad_edit(call, decision)
        self._asking.discard(call.id)  # answered: from here it runs (or not) like any call
        if decision.action == "deny":  # the decision and the result it gives: one step
            self._save([ToolMessage(call.id, call.name, DENIED_TEXT)], [(call.id, DENIED, {"decision": "denied"})])
            self._tell(call, "denied", DENIED_TEXT)
        elif decision.action == "edit" and decision.arguments is not None:
            edited = json.dumps(decision.arguments, ensure_ascii=False)
            result = self._run(
                ToolCall(call.id, call.name, edited),
                {"decision": "edited", "original": call.arguments, "arguments": edited},
            )
            text = f"{EDITED_BY_USER}\nThe model's arguments: {call.arguments}\nRan with: {edited}\nResult:\n{result.content}"
            self._save([ToolMessage(call.id, call.name, text, result.images)], ())
        else:
            self._save([self._run(call, {"decision": "approved"})], ())

    def answer_pending(self) -> None:
        """Ask again about the calls that were waiting when the last process stopped."""
        by_id = calls_by_id(self._host.messages)
        for p in self._host.repaired.pending:
            call = by_id.get(p.id)
            if call is not None:
                self.run_call(call)

    def skip_pending(self) -> None:
        """A new user message while calls wait: they did not run, and the model is told so (their
        results and marks saved as one step)."""
        by_id = calls_by_id(self._host.messages)
        messages: list[Message] = []
        marks: list[Mark] = []
        for p in self._host.repaired.pending:
            call = by_id.get(p.id)
            if call is not None:
                marks.append((call.id, ANSWERED, {"decision": "not_answered"}))
                messages.append(ToolMessage(call.id, call.name, NOT_ANSWERED_TEXT))
                self._asking.discard(call.id)
                self._given.pop(call.id, None)
        if messages:
            self._save(messages, marks)

    # settling: by hand, or by the library when the conversation goes on

    def _last_calls(self) -> list[ToolCall]:
        """The calls of the last assistant message, if only their results come after it."""
        history = self._host.messages
        last = len(history) - 1
        while last >= 0 and isinstance(history[last], ToolMessage):
            last -= 1
        tail = history[last] if last >= 0 else None
        if not isinstance(tail, AssistantMessage) or not tail.tool_calls:
            return []
        return list(tail.tool_calls)

    def open_interrupted(self) -> list[InterruptedCall]:
        """Interrupted calls whose result can still be recorded in place: calls of the last
        assistant message (only results after it) that kept their id. Elsewhere the
        conversation went on without the result, so only the repair text fits."""
        ids = {c.id for c in self._last_calls()}
        if not ids:
            return []
        return [r for r in self._host.repaired.interrupted if r.original_id in ids and r.id == r.original_id]

    def settle_for_model(self) -> list[ToolMessage]:
        """The conversation goes on (a new message, or ``resume``) while calls of the last turn
        are still open: the model now reads the repair text for each (``INTERRUPTED_STOPPED``
        for a stopped call, else may-have-run or read-only). That text is saved as the call's
        result, then its mark says the library settled it ("answered",
        ``{"settled": "model", "by": "library", "was": <its state>, ...}``, keeping the detail of
        how it ran), so the store, every view, ``validate_history`` and ``settle`` agree from
        here on that the model was told, and what. Settle a call before going on to tell the
        model something else."""
        ids = {c.id for c in self._last_calls()}
        if not ids:
            return []  # the common case: nothing open, no repair needed
        host = self._host
        rows = [r for r in host.repair().interrupted if r.original_id == r.id and r.id in ids]
        if not rows:
            return []
        marks = host.store.call_marks(host.id)
        by_id = calls_by_id(host.messages)
        saved = []
        for row in rows:
            was = marks.get(row.id)
            detail = {**was.detail, "was": was.state} if was is not None else {}  # how it ran, kept
            detail.update(settled="model", by="library")
            saved.append(self._settle_as(row, row.note, detail))
            self._tell(by_id[row.id], "interrupted", f"the model is told: {row.note}")
        return saved

    def _settle_as(self, row: InterruptedCall, text: str, detail: dict[str, Any]) -> ToolMessage:
        """Save ``text`` as the call's result and mark it answered, in one step (a crash leaves
        both or neither)."""
        message = ToolMessage(row.id, row.name, text)
        self._save([message], [(row.id, ANSWERED, detail)])
        return message

    def settle(self, call_id: str, how: SettleHow, note: str | None = None) -> ToolMessage:
        """Record what became of an interrupted call of the last turn: "ran" (the person says
        what happened, in ``note``), "run" (run it now, save the real result) or "model" (the
        repair text).

        Only while the call is open: once the conversation goes on (``send`` or ``resume``),
        the model is told the repair text and that text is saved as the call's result (see
        ``settle_for_model``); settling it then raises ``SettleError`` saying what the model
        was told (it cannot be taken back: say what really happened in the next message)."""
        host = self._host
        host.reload()
        rows = {r.id: r for r in self.open_interrupted()}
        row = rows.get(call_id)
        if row is None:
            raise SettleError(self._not_open(call_id, rows))
        if how == "ran":
            if not isinstance(note, str) or not note.strip():
                raise SettleError('settle(call_id, "ran", note=...) needs a note saying what happened')
            message = self._settle_as(row, f"{ENTERED_BY_USER}\n{note.strip()}", {"settled": "ran", "by": "user"})
        elif how == "run":
            message = self._run(calls_by_id(host.messages)[call_id], {"settled": "run"})
            self._save([message], ())
        elif how == "model":
            message = self._settle_as(row, row.note, {"settled": "model", "by": "user"})
        else:
            raise SettleError(f'settle takes "ran", "run" or "model", got {how!r}')
        host.reload()
        return message

    def _not_open(self, call_id: str, rows: dict[str, InterruptedCall]) -> str:
        """Why ``call_id`` cannot be settled, and what the model read for it."""
        host = self._host
        where = f"call {call_id!r} is not an open interrupted call of conversation {host.id!r}"
        if any(p.id == call_id for p in host.repaired.pending):
            return f"call {call_id!r} waits for approval, it was not interrupted: resume() asks about it again"
        result = next((m for m in reversed(host.messages) if isinstance(m, ToolMessage) and m.tool_call_id == call_id), None)
        if result is not None:
            mark = host.store.call_marks(host.id).get(call_id)
            detail = mark.detail if mark is not None and mark.state == ANSWERED else {}
            if detail.get("by") == "library":
                how = "the library already told the model, when the conversation went on:"
            elif "settled" in detail:
                how = f"it was already settled by you ({detail['settled']!r}): the model read"
            else:
                how = "it already has its result: the model read"
            return (f"{where}: {how} {_clip(result.content)}. That cannot be taken back; "
                    "say what really happened in your next message")
        lost = next((r for r in host.repaired.interrupted if call_id in (r.id, r.original_id)), None)
        if lost is not None:
            return (f"{where}: the conversation went on after it: the model reads {_clip(lost.note)} in its "
                    "place (the same text every time). Say what really happened in your next message")
        listed = ", ".join(sorted(rows)) or "none"
        return (f"{where} (open ones: {listed}); only a call of the last assistant message that never "
                "returned can be settled")


def _clip(text: str) -> str:
    return repr(preview(text, 400))


def hints_of(tools: ToolRegistry, name: str) -> str:
    """The hints line approval shows for a tool ("" for a local tool or an unknown name)."""
    from ..mcp.hints import hints_line

    t = tools.find(name) if hasattr(tools, "find") else None
    if t is None:
        try:
            t = tools.get(name)
        except KeyError:
            return ""
    return hints_line(t.hints, t.source)
