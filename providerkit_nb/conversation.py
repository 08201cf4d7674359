"""Conversation: the synchronous facade a notebook uses.

It runs the tool loop, one durable step at a time: load and repair the stored history,
stream a turn, save the assistant message before its tools run, run each tool and save each
result as it comes back, repeat until the model answers without calls. Whatever stops it (a
crash, a kernel restart, the Stop button) it stops between two saves, so the store always loads
and repairs cleanly and the next ``send`` or ``resume`` carries on.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

from . import approval
from .compact import active_history, compaction_messages, summarize
from .console import Show, terminal_display
from .core.compaction import guess_context_window, history_budget_tokens, needs_compaction, pick_cut
from .core.errors import ErrorKind, ProviderError
from .core.messages import (
    AssistantMessage,
    ContentPart,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from .core.repair import Repaired, repair_history
from .core.structured import JsonFormat, JsonReply, json_format, read_answer
from .core.turn import Turn, TurnAssembler
from .core.usage import UsageTracker

_P = ParamSpec("_P")
_R = TypeVar("_R")

__all__ = ["Conversation", "TurnRecord"]


@dataclass(slots=True)
class TurnRecord:
    """One streamed turn as this session saw it, for ``turns_frame``."""

    turn: Turn
    started_at: float
    seconds: float
    first_chunk_seconds: float | None
    step: int
    error: str | None = None


@dataclass(slots=True)
class _State:
    history: list[Message] = field(default_factory=list)


def _guarded(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """Hold the conversation in the store while ``method`` runs, so two workers never send or
    resume it at once: the second gets ``ConversationBusy``, or waits ``busy_wait`` seconds."""

    @functools.wraps(method)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        self: Any = args[0]
        hold = getattr(self.store, "hold", None)
        if hold is None:  # a store of your own without the guard
            return method(*args, **kwargs)
        with hold(self.id, wait=self.busy_wait):
            return method(*args, **kwargs)

    return run


class Conversation:
    """``Conversation(store, conversation_id, provider, tools, system=None)``.

    This is the facade without a notebook (a terminal, a worker of ``resume_many``); what
    ``pk.Conversation`` gives is the notebook layer's subclass, which adds ``view()``, HTML
    live display and the approval widget.

    ``options`` are per-call options passed to every ``create_stream`` (effort, max_tokens...).
    ``display`` is "auto" (live display in a notebook, plain text in a terminal), True or False.
    ``rate`` (a ``Rate`` or ``{"input", "output", "cache_read", "cache_write"}`` in USD per
    million tokens) prices ``usage``, the session's ``UsageTracker``; ``budget_usd`` stops
    ``send`` with ``BudgetExceeded`` before a call once the spend has reached it.
    ``compact=True`` summarises the older part of the history with the same provider when a
    call fails with kind ``context`` or the last prompt nearly filled ``context_window``
    (guessed from the model id when not given), then goes on.
    """

    busy_wait: float = 0.0  # seconds send/resume wait for another holder before ConversationBusy

    def __init__(
        self,
        store: Any,
        conversation_id: str,
        provider: Any,
        tools: Any = None,
        system: str | None = None,
        *,
        max_steps: int = 8,
        display: bool | str = "auto",
        options: dict[str, Any] | None = None,
        approve: approval.Approve = None,
        rate: Any = None,
        budget_usd: float | None = None,
        compact: bool = False,
        context_window: int | None = None,
    ) -> None:
        from .core.tools import ToolRegistry

        if not conversation_id:
            raise ValueError("conversation_id must be a non-empty string")
        if max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        self.store = store
        self.id = conversation_id
        self.provider = provider
        self.tools = tools if tools is not None else ToolRegistry([])
        self.max_steps = max_steps
        self.display = display
        self.options = dict(options or {})
        self.records: list[TurnRecord] = []
        self.usage = UsageTracker(rate=rate, max_usd=budget_usd)
        self.compact = compact
        self.context_window = context_window
        self.compactions = 0
        self._last_input = 0  # the newest turn's prompt size, for the compaction decision
        self._json: JsonFormat | None = None
        self.session_id: str = store.session_id(conversation_id)
        self._history: list[Message] = list(store.load(conversation_id))
        if system is not None and not any(isinstance(m, SystemMessage) for m in self._history):
            self._save(SystemMessage(system))
        self.approve = approve  # None: tools run as they come; "ask" or a callable: see approval
        self._approver = approval.resolve_approver(approve, self._ask)
        self._asking: set[str] = approval.asking_ids(store, conversation_id)
        self.repaired: Repaired = self.repair()

    # reading ---------------------------------------------------------------

    @property
    def messages(self) -> list[Message]:
        """The history exactly as stored."""
        return list(self._history)

    @property
    def interrupted(self) -> list[Any]:
        """Calls that never returned, as the last repair saw them."""
        return list(self.repaired.interrupted)

    def is_read_only(self, name: str) -> bool:
        try:
            return bool(self.tools.get(name).is_read_only)
        except KeyError:
            return False

    def repair(self) -> Repaired:
        """Repair what is stored (without changing the store) and remember the result."""
        self.repaired = repair_history(
            active_history(self._history), is_read_only=self.is_read_only, pending=self._asking
        )
        return self.repaired

    def reload(self) -> Repaired:
        """Read the store again (another process may have written to it)."""
        self._history = list(self.store.load(self.id))
        self._asking = approval.asking_ids(self.store, self.id)
        return self.repair()

    # acting ----------------------------------------------------------------

    @_guarded
    def send(self, text: str | Sequence[ContentPart] | UserMessage, *, json: Any = None) -> Any:
        """Add a user message and run the loop until the model answers without calls.

        Returns the last Turn; with ``json=`` (a schema, a model class with
        ``model_json_schema``, or "object") a ``JsonReply``: the parsed answer (validated into
        the model when it has ``model_validate``) next to the turn, or the reason it did not parse.
        """
        fmt = json_format(json)  # a bad json= fails before anything is saved
        self.usage.check_budget()  # so does a spent budget: the message is not saved either
        message = text if isinstance(text, UserMessage) else UserMessage(
            text if isinstance(text, str) else list(text)
        )
        if self._asking and self.repair().pending:  # calls still waiting did not run: say so
            approval.skip_pending(self)
        self._save(message)
        self._json = fmt
        try:
            turn = self._loop()
        finally:
            self._json = None
        if fmt is None:
            return turn
        if turn is None:
            return JsonReply(None, None, "no answer: the loop ended without a turn")
        got = read_answer(turn.message.content, fmt)
        return JsonReply(got.value, turn, got.error)

    @_guarded
    def resume(self, *, rerun_read_only: bool = False) -> Turn | None:
        """Carry on after an interruption, without a new user message.

        With ``rerun_read_only=True`` the interrupted calls of read-only tools run again and their
        real results are saved; calls that may have side effects are never re-run: the model is
        told they were interrupted and decides.
        """
        repaired = self.reload()
        if repaired.pending:  # the question was open when the last process stopped: ask again
            approval.answer_pending(self)
            repaired = self.repair()
        if rerun_read_only:
            by_id = self._calls_by_id()
            for row in repaired.interrupted:
                if not row.read_only or row.original_id != row.id:
                    continue  # renamed duplicates are left to the note: their result is ambiguous
                call = by_id.get(row.original_id)
                if call is not None:
                    self._save(self.tools.run(call))
            self.repair()
        last = next((m for m in reversed(self.repaired.messages) if not isinstance(m, SystemMessage)), None)
        if isinstance(last, AssistantMessage) and not last.tool_calls:
            return None  # nothing to resume: the model already answered
        if last is None:
            return None
        return self._loop()

    # the loop --------------------------------------------------------------

    def _calls_by_id(self) -> dict[str, ToolCall]:
        calls: dict[str, ToolCall] = {}
        for m in self._history:
            if isinstance(m, AssistantMessage) and m.tool_calls:
                for c in m.tool_calls:
                    calls[c.id] = c
        return calls

    def _save(self, message: Message) -> None:
        self.store.save(self.id, message)
        self._history.append(message)

    def _loop(self) -> Turn | None:
        turn: Turn | None = None
        for step in range(self.max_steps):
            self.usage.check_budget()  # before a call that would start over the budget
            if self.compact and needs_compaction(self._last_input, self._window()):
                self.compact_now()
            repaired = self.repair()
            try:
                turn = self._stream_turn(repaired.messages, step)
            except ProviderError as exc:
                if not (self.compact and exc.kind == ErrorKind.CONTEXT and self.compact_now()):
                    raise
                turn = self._stream_turn(self.repair().messages, step)  # once, on the summary
            if self._approver is not None:  # marked before the call is saved: see approval
                approval.mark_asking(self, turn.message.tool_calls or [])
            if turn.message.has_content:
                self._save(turn.message)  # before its tools run
            calls = turn.message.tool_calls or []
            if not calls:
                return turn
            for call in calls:
                if self._approver is not None and call.id in self._asking:  # a person decides
                    approval.run_call(self, call, self._approver)
                else:
                    self._save(self.tools.run(call))  # each result as it comes back
        self.repair()
        return turn

    def _stream_turn(self, messages: list[Message], step: int) -> Turn:
        tools = self.tools.definitions() or None
        asm = TurnAssembler()
        started = time.time()
        t0 = time.monotonic()
        first: float | None = None
        show: Show = self._live_display()
        options = self.options if self._json is None else {**self.options, "json": self._json}
        stream = self.provider.create_stream(
            messages, tools, session_id=self.session_id, **options
        )
        try:
            for chunk in stream:
                if first is None:
                    first = time.monotonic() - t0
                asm.feed(chunk)
                show(asm, False)
            turn = asm.turn()
        except BaseException as exc:
            partial = asm.snapshot()
            try:
                exc.partial = partial  # type: ignore[attr-defined]
            except Exception:
                pass
            self._keep_lost_turn(partial, exc)
            self.usage.add(partial.usage)
            self.records.append(
                TurnRecord(partial, started, time.monotonic() - t0, first, step, error=_describe(exc))
            )
            show(asm, True)
            raise
        finally:
            stream.close()
        show(asm, True)
        self.usage.add(turn.usage)
        if turn.usage is not None:
            self._last_input = turn.usage.input_tokens
        self.records.append(TurnRecord(turn, started, time.monotonic() - t0, first, step))
        return turn

    def _window(self) -> int:
        model = self.options.get("model") or getattr(self.provider, "model", "") or ""
        return self.context_window or guess_context_window(model)

    def compact_now(self) -> bool:
        """Summarise the older part of the live history with the same provider and save the
        summary (a user turn) and the kept recent messages; False when there is nothing older
        to summarise. The stored record keeps everything; see ``compact``."""
        live = self.repair().messages
        first = next((i for i, m in enumerate(live) if not isinstance(m, SystemMessage)), len(live))
        cut = pick_cut(live, history_budget_tokens(self._window()))
        if cut <= first:
            return False
        turn = summarize(self.provider, live[:cut], {**self.options, "session_id": self.session_id})
        self.usage.add(turn.usage)
        for m in compaction_messages(live, cut, turn.message.content.strip()):
            self._save(m)
        self.compactions += 1
        self._last_input = 0
        self.repair()
        return True

    def _keep_lost_turn(self, partial: Turn, exc: BaseException) -> None:
        keep = getattr(self.store, "save_lost_turn", None)
        if keep is None or not (partial.message.content or partial.message.tool_calls or partial.message.reasoning):
            return
        try:
            keep(self.id, partial, _describe(exc))
        except Exception:  # the side table is for inspection; never mask the real failure
            pass

    # The faces of the facade. Here, those of a terminal or a worker; the notebook layer's
    # Conversation (``pk.Conversation``) draws HTML in place, asks through a widget and adds
    # ``view()``, so this layer never imports the notebook's.

    def _live_display(self) -> Show:
        return terminal_display(self.display)

    @staticmethod
    def _ask(call: ToolCall) -> approval.Decision:
        """approve="ask" without a notebook: a prompt on stdin."""
        return approval.ask_stdin(call)

    def settle(self, call_id: str, how: approval.SettleHow, *, note: str | None = None) -> ToolMessage:
        """Decide by hand what became of an interrupted call that may have run, and save it:
        ``"ran"`` (``note`` says what happened; saved as entered by the user), ``"run"`` (run it
        now and save the real result) or ``"model"`` (the repair text: the model decides)."""
        return approval.settle(self, call_id, how, note)

    def __repr__(self) -> str:
        spent = ""
        if self.usage.calls:
            spent = f", {self.usage.calls} calls ${self.usage.cost:.4f}"
            if self.usage.max_usd is not None:
                spent += f" of ${self.usage.max_usd:.4f}"
        return (
            f"<Conversation {self.id!r}: {len(self._history)} messages, "
            f"{len(self.repaired.interrupted)} interrupted, provider={getattr(self.provider, 'id', '?')!r}{spent}>"
        )


def _describe(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "KeyboardInterrupt: stopped by the user"
    kind = getattr(exc, "kind", None)
    prefix = f"{type(exc).__name__}({kind})" if kind is not None else type(exc).__name__
    return f"{prefix}: {exc}"
