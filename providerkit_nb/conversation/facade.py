"""Conversation: the synchronous facade a notebook uses.

It runs the tool loop, one durable step at a time: load and repair the stored history,
stream a turn, save the assistant message before its tools run, run each tool and save each
result as it comes back, repeat until the model answers without calls. Whatever stops it (a
crash, a kernel restart, the Stop button) it stops between two saves, so the store always loads
and repairs cleanly and the next ``send`` or ``resume`` carries on.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, overload

from ..core.compaction import (
    active_history,
    compaction_messages,
    guess_context_window,
    history_budget_tokens,
    needs_compaction,
    pick_cut,
    summarize,
)
from ..core.errors import (
    Error,
    ErrorKind,
    ProviderError,
    StepLimitReached,
    SystemPromptChanged,  # noqa: F401 (defined at the bottom, kept importable here)
    short_traceback,
)
from ..core.messages import (
    AssistantMessage,
    ContentPart,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from ..core.repair import Repaired, repair_history
from ..core.structured import JsonFormat, JsonReply, json_format, read_answer
from ..core.tools import Tool, ToolRegistry
from ..core.turn import Turn, TurnAssembler
from ..core.usage import UsageTracker
from ..store.base import Store
from ..store.call_marks import FINISHED, LOST, STARTED, STOPPED, TOLD_BY_STATE, told_by_marks
from . import approval
from .console import Live, no_display

if TYPE_CHECKING:
    from ..core.repair import InterruptedCall
    from ..core.usage import Rate
    from ..notebook.widgets import HistoryView
    from ..providers.base import Provider

_P = ParamSpec("_P")
_R = TypeVar("_R")
_M = TypeVar("_M")

__all__ = ["Conversation", "SystemPromptChanged", "TurnRecord"]


def _open_store(store: Any) -> Store:
    """A store object as it is; a path (str or os.PathLike) opens a NotebookStore there."""
    if isinstance(store, str | os.PathLike):
        from ..store.sqlite import NotebookStore

        return NotebookStore(os.fspath(store))
    if not callable(getattr(store, "load", None)) or not callable(getattr(store, "save", None)):
        raise TypeError(
            f"store must be a store (pk.NotebookStore(), pk.MemoryStore(), providerkit_nb.store.PostgresStore(dsn)) "
            f"or the path of a SQLite file, got {type(store).__name__}"
        )
    checked: Store = store
    return checked


@dataclass(slots=True)
class TurnRecord:
    """One streamed turn as this session saw it, for ``turns_frame``."""

    turn: Turn
    started_at: float
    seconds: float
    first_chunk_seconds: float | None
    step: int
    error: str | None = None

    def to_stored(self) -> dict[str, Any]:
        """What the store keeps per turn (``save_turn_usage``): usage and timings, the calls by
        id and name; never the text, which is in the history."""
        t = self.turn
        return {
            "usage": t.usage.to_dict() if t.usage is not None else None,
            "model": t.model,
            "finish_reason": t.finish_reason,
            "calls": [[c.id, c.name] for c in t.message.tool_calls or []],
            "started_at": self.started_at,
            "seconds": self.seconds,
            "first_chunk_seconds": self.first_chunk_seconds,
            "step": self.step,
            "error": self.error,
            **({"notices": [n.to_dict() for n in t.notices]} if t.notices else {}),
        }

    @classmethod
    def from_stored(cls, d: dict[str, Any]) -> TurnRecord:
        from ..core.turn import Notice, Usage

        calls = [ToolCall(str(i), str(n), "") for i, n in d.get("calls") or []]
        usage = Usage.from_dict(d["usage"]) if d.get("usage") else None
        notices = [n for n in (Notice.from_dict(x) for x in d.get("notices") or ()) if n is not None]
        turn = Turn(AssistantMessage("", tool_calls=calls or None), usage, d.get("finish_reason"), d.get("model"),
                    notices)
        return cls(turn, float(d.get("started_at") or 0.0), float(d.get("seconds") or 0.0),
                   d.get("first_chunk_seconds"), int(d.get("step") or 0), d.get("error"))


def _guarded(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """Hold the conversation in the store while ``method`` runs, so two workers never send or
    resume it at once: the second gets ``ConversationBusy``, or waits ``busy_wait`` seconds."""

    @functools.wraps(method)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        self: Any = args[0]
        with self.store.hold(self.id, wait=self.busy_wait):
            return method(*args, **kwargs)

    return run


class Conversation:
    """``Conversation(store, conversation_id, provider, tools, system=None)``.

    One class wherever it runs: in a notebook each send draws as HTML in place, ``approve="ask"``
    shows the approval widget and ``view()`` the history before and after repair; in a terminal
    or a worker of ``resume_many`` the same sends print text and ask on stdin.

    ``options`` are per-call options passed to every ``create_stream`` (effort, max_tokens...).
    ``display`` is "auto" (live display in a notebook, plain text in a terminal), True or False.
    ``rate`` (a ``Rate`` or ``{"input", "output", "cache_read", "cache_write"}`` in USD per
    million tokens) prices ``usage``, the conversation's ``UsageTracker`` (every turn it
    streamed, read back from the store after a restart); ``budget_usd`` stops
    ``send`` with ``BudgetExceeded`` before a call once the spend has reached it.
    ``compact=True`` summarises the older part of the history with the same provider when a
    call fails with kind ``context`` or the last prompt nearly filled ``context_window``
    (guessed from the model id when not given), then goes on.
    """

    busy_wait: float = 0.0  # seconds send/resume wait for another holder before ConversationBusy
    # Where the history view's Resume draws the send (an ipywidgets HTML), instead of under a
    # running cell: a button's callback has no cell to draw under.
    live_into: Any = None

    def __init__(
        self,
        store: Store | str | os.PathLike[str],
        conversation_id: str,
        provider: Provider,
        tools: ToolRegistry | Sequence[Tool | Callable[..., object]] | None = None,
        system: str | None = None,
        *,
        replace_system: bool = False,
        max_steps: int = 8,
        display: bool | str = "auto",
        options: dict[str, Any] | None = None,
        approve: approval.Approve = None,
        rate: Rate | dict[str, float] | None = None,
        budget_usd: float | None = None,
        compact: bool = False,
        context_window: int | None = None,
    ) -> None:
        if not conversation_id:
            raise ValueError("conversation_id must be a non-empty string")
        if max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        store = _open_store(store)
        self.store: Store = store
        self.id = conversation_id
        self.provider: Provider = provider
        self.tools: ToolRegistry = tools if isinstance(tools, ToolRegistry) else ToolRegistry(list(tools or []))
        self.max_steps = max_steps
        self.display = display
        self.options = dict(options or {})
        self.usage = UsageTracker(rate=rate, budget_usd=budget_usd)
        # every turn this conversation streamed, read back from the store (usage survives a restart)
        self.records: list[TurnRecord] = [TurnRecord.from_stored(d) for d in store.turn_usage(conversation_id)]
        for rec in self.records:
            self.usage.add(rec.turn.usage)
            if rec.turn.usage is None and rec.error is None:
                self.usage.add_unreported()  # finished, and its server sent no usage
        self.compact = compact
        self.context_window = context_window
        self.compactions = 0
        self._last_input = 0  # the newest turn's prompt size, for the compaction decision
        self._json: JsonFormat | None = None
        self._live: Live = no_display  # the display of the send running now
        self._running: dict[str, dict[str, Any]] = {}  # call id -> its mark detail, until saved
        self.session_id: str = store.session_id(conversation_id)
        self._history: list[Message] = list(store.load(conversation_id))
        if system is not None:
            self._set_system(system, replace_system)
        self.repaired = Repaired(list(self._history))
        self._told_by_marks: dict[str, str] = {}  # call id -> text, from the calls' marks
        self._maybe_lost: set[str] = set()
        self._kept_results: tuple[int, dict[str, str]] = (0, {})  # see _told
        # None: tools run as they come; "ask" or a callable: a person decides (see approval)
        self.approval = approval.Approval(
            self, approve, self._ask, save=self._save_step, run=self._run_call,
            tell=lambda call, status, text: self._live.tool(call, status, text),
        )
        self._read_marks()
        self.repair()

    def _set_system(self, system: str, replace: bool) -> None:
        stored = [m for m in self._history if isinstance(m, SystemMessage)]
        if not stored:
            self._save(SystemMessage(system))
            return
        current = stored[-1].content if isinstance(stored[-1].content, str) else ""
        if current == system:
            return
        if not replace:
            raise SystemPromptChanged(self.id, current, system)
        self._save(SystemMessage(system))  # the newest system message is the one sent

    # reading ---------------------------------------------------------------

    @property
    def messages(self) -> list[Message]:
        """The history exactly as stored."""
        return list(self._history)

    @property
    def interrupted(self) -> list[InterruptedCall]:
        """Calls that never returned, as the last repair saw them (the loop repairs again as
        soon as Stop lands, so right after Stop this already lists the stopped call)."""
        return list(self.repaired.interrupted)

    @property
    def approve(self) -> approval.Approve:
        """What ``approve=`` was: None, "ask" or the callable."""
        return self.approval.approve

    def is_read_only(self, name: str) -> bool:
        try:
            return bool(self.tools.get(name).read_only)
        except KeyError:
            return False

    def repair(self) -> Repaired:
        """Repair what is stored (without changing the store) and remember the result."""
        live = active_history(self._history)
        self.repaired = repair_history(
            live,
            is_read_only=self.is_read_only,
            pending=self.approval.asking,
            notes=self._told(len(live) != len(self._history)),
        )
        return self.repaired

    def _told(self, compacted: bool) -> dict[str, str]:
        """What the model reads for a call of the live history that has no result there, when
        the store knows more than "interrupted": the result it saved before a compaction's
        summary (a compaction that crashed half-written, in a store written before compactions
        were saved as one step), the person's denial (a decision saved without its result, the
        same way), or that Stop landed in it."""
        told = dict(self._told_by_marks)
        if compacted:
            n, kept = self._kept_results
            if n != len(self._history):
                kept = {m.tool_call_id: m.content for m in self._history if isinstance(m, ToolMessage)}
                self._kept_results = (len(self._history), kept)
            told.update(kept)
        return told

    def reload(self) -> Repaired:
        """Read the store again (another process may have written to it)."""
        self._history = list(self.store.load(self.id))
        self._read_marks()
        return self.repair()

    def _read_marks(self) -> None:
        self.approval.reload()
        marks = self.store.call_marks(self.id)
        self._told_by_marks = told_by_marks(marks)
        # started by an earlier process: lost if it has no result (checked under the hold)
        self._maybe_lost = {cid for cid, m in marks.items() if m.state == STARTED}

    def _mark_lost(self) -> None:
        """Under the hold: a call marked started with no result was running when its process
        ended. Say so in its mark (the model is told it may have partly run)."""
        if not self._maybe_lost:
            return  # the common case: no read of the marks on every send
        answered = {m.tool_call_id for m in self._history if isinstance(m, ToolMessage)}
        for cid, m in self.store.call_marks(self.id).items():
            if m.state == STARTED and cid not in answered and cid in self._maybe_lost:
                self.store.mark_call(self.id, cid, LOST, {**m.detail, "was": STARTED})
        self._maybe_lost = set()

    # acting ----------------------------------------------------------------

    @overload
    def send(self, text: str | Sequence[ContentPart] | UserMessage, *, json: None = None) -> Turn: ...

    @overload
    def send(self, text: str | Sequence[ContentPart] | UserMessage, *, json: type[_M]) -> JsonReply[_M]: ...

    @overload
    def send(
        self, text: str | Sequence[ContentPart] | UserMessage, *, json: dict[str, Any] | str
    ) -> JsonReply[Any]: ...

    def send(self, text: str | Sequence[ContentPart] | UserMessage, *, json: Any = None) -> Any:
        """Add a user message and run the loop until the model answers without calls.

        The message is saved before the call, so a crash or a refused request keeps it: the
        error then says so, ``convo.resume()`` sends it, and sending the same text again does
        not add it twice (the store never takes a message back, so another text would follow
        it). Interrupted calls of the last turn still open are settled first: the model is told
        the repair text, saved as their result (see ``settle``).

        Returns the last Turn; with ``json=`` (a schema, a model class with
        ``model_json_schema``, or "object") a ``JsonReply``: the parsed answer (validated into
        the model when it has ``model_validate``) next to the turn, or the reason it did not parse.
        When the model still asks for tools after ``max_steps`` calls, ``StepLimitReached`` is
        raised with every result saved (``convo.resume()`` goes on).

        The library's errors and Stop come out with a short traceback: the cell's frames and the
        tool Stop landed in, not the library's (``exc.full_traceback`` and ``exc.cause`` keep
        the rest; see ``short_traceback``).
        """
        try:
            return self._send(text, json)
        except (Error, KeyboardInterrupt) as exc:
            raise short_traceback(exc) from None  # the library's frames cut: exc.full_traceback has them

    @_guarded
    def _send(self, text: str | Sequence[ContentPart] | UserMessage, json: Any) -> Any:
        fmt = json_format(json)  # a bad json= fails before anything is saved
        self.usage.check_budget()  # so does a spent budget: the message is not saved either
        message = text if isinstance(text, UserMessage) else UserMessage(
            text if isinstance(text, str) else list(text)
        )
        self._mark_lost()
        if self.approval.asking and self.repair().pending:  # calls still waiting did not run: say so
            self.approval.skip_pending()
        self._json = fmt
        try:
            turn = self._run_loop(lambda: self._add_and_loop(message))
        finally:
            self._json = None
        if fmt is None:
            return turn
        if turn is None:
            return JsonReply(None, None, "no answer: the loop ended without a turn")
        got = read_answer(turn.message.content, fmt)
        return JsonReply(got.value, turn, got.error)

    def resume(self, *, rerun_read_only: bool = False) -> Turn | None:
        """Carry on after an interruption, without a new user message.

        With ``rerun_read_only=True`` the interrupted calls of read-only tools run again and their
        real results are saved; calls that may have side effects are never re-run: the model is
        told they were interrupted and decides. Errors come out short, as from ``send``.
        """
        try:
            return self._resume_held(rerun_read_only)
        except (Error, KeyboardInterrupt) as exc:
            raise short_traceback(exc) from None  # the library's frames cut: exc.full_traceback has them

    @_guarded
    def _resume_held(self, rerun_read_only: bool) -> Turn | None:
        self.reload()
        self._mark_lost()
        return self._run_loop(lambda: self._resume(rerun_read_only))

    def _resume(self, rerun_read_only: bool) -> Turn | None:
        repaired = self.repaired
        if repaired.pending:  # the question was open when the last process stopped: ask again
            self.approval.answer_pending()
            repaired = self.repair()
        if rerun_read_only:
            by_id = approval.calls_by_id(self._history)
            for row in repaired.interrupted:
                if not row.read_only or row.original_id != row.id:
                    continue  # renamed duplicates are left to the note: their result is ambiguous
                call = by_id.get(row.original_id)
                if call is not None:
                    self._save(self._run_call(call, {"rerun": "read_only"}))
            self.repair()
        self.approval.settle_for_model()  # calls left open: the model is told, and the store says so
        last = next((m for m in reversed(self.repaired.messages) if not isinstance(m, SystemMessage)), None)
        if isinstance(last, AssistantMessage) and not last.tool_calls:
            self._live.note("nothing to resume: the model already answered (its last message asks for no "
                            "tool); send() a new message to go on")
            return None
        if last is None:
            self._live.note(f"nothing to resume: conversation {self.id!r} has no messages yet; send() starts it")
            return None
        return self._loop()

    # the loop --------------------------------------------------------------

    def _save(self, message: Message) -> None:
        self._save_step([message], ())

    def _save_step(self, messages: Sequence[Message], marks: Sequence[approval.Mark]) -> None:
        """Save what one step writes, seen whole or not at all after a crash (``store.save_step``):
        a result with its call's "finished" mark, a calling message with its calls' "asking"
        marks, a decision with the result it gives, a compaction's summary with its copies."""
        marks = list(marks)
        finished = [m.tool_call_id for m in messages if isinstance(m, ToolMessage) and m.tool_call_id in self._running]
        marks += [(cid, FINISHED, self._running[cid]) for cid in finished]
        if len(messages) == 1 and not marks:
            self.store.save(self.id, messages[0])
        else:
            self.store.save_step(self.id, messages, marks=marks)
        self._history.extend(messages)
        for cid in finished:
            self._running.pop(cid, None)

    def _run_call(self, call: ToolCall, detail: dict[str, Any]) -> ToolMessage:
        """Run one call on this thread, its mark following it: "started" before it runs,
        "stopped" if Stop lands in it (no result is saved: what it did is what it did), and
        "finished" once the caller saves its result."""
        self.store.mark_call(self.id, call.id, STARTED, detail)
        self._live.tool(call, "running")
        t0 = time.monotonic()
        try:
            result = self.tools.invoke(call, notify=self._live.note)
        except BaseException as exc:
            seconds = round(time.monotonic() - t0, 3)
            if isinstance(exc, KeyboardInterrupt):
                self._told_by_marks[call.id] = TOLD_BY_STATE[STOPPED]
                self._live.tool(call, "stopped", "stopped where it was running; no result saved")
                self.store.mark_call(self.id, call.id, STOPPED, {**detail, "seconds": seconds})
            raise
        status = "done" if result.kind == "ok" else result.kind
        self._running[call.id] = {**detail, "kind": result.kind, "seconds": round(result.seconds, 3)}
        if result.traceback:  # the tool raised: its traceback is shown, and kept with the call's mark
            self._live.tool(call, status, result.message.content, traceback=result.traceback)
            self._running[call.id]["traceback"] = result.traceback
        else:
            self._live.tool(call, status, result.message.content)
        return result.message

    def _run_loop(self, loop: Callable[[], Turn | None]) -> Turn | None:
        """One send or resume under one live display."""
        self._live = self._live_display()
        try:
            turn = loop()
        except BaseException as exc:
            self.repair()  # what Stop left: ``interrupted`` and the views say it at once
            if isinstance(exc, ProviderError):
                self._say_what_is_kept(exc)
            raise
        finally:
            live, self._live = self._live, no_display
        if turn is not None and live is not no_display:
            turn.shown_live = True  # a cell ending in send(...) shows the answer once
        return turn

    def _add_and_loop(self, message: UserMessage) -> Turn:
        """Under the send's live display: settle the calls left open (the model is told, the
        store says so, the display shows it), save the message, and run the loop."""
        self.approval.settle_for_model()
        if not self._ends_with(message):  # the same text after a refused send is not added twice
            self._save(message)
        return self._loop()

    def _ends_with(self, message: UserMessage) -> bool:
        """Does the history end with this very user message, unanswered (a send the provider
        refused, or one a crash cut short)?"""
        last = next((m for m in reversed(self._history) if not isinstance(m, SystemMessage)), None)
        return isinstance(last, UserMessage) and last == message

    def _say_what_is_kept(self, exc: ProviderError) -> None:
        """A send or resume failed: the error says what the store kept and how to go on."""
        last = next((m for m in reversed(self._history) if not isinstance(m, SystemMessage)), None)
        if isinstance(last, UserMessage):
            note = (f"(your message is saved in conversation {self.id!r} but was not answered: once this is "
                    "fixed, convo.resume() sends it; sending the same text again is not added twice)")
        else:
            note = (f"(everything up to the failure is saved in conversation {self.id!r}: once this is fixed, "
                    "convo.resume() carries on)")
        if note not in exc.message:
            exc.message = f"{exc.message}\n{note}"
            exc.args = (exc.message,)

    def _loop(self) -> Turn:
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
            if self._json is not None and not turn.message.tool_calls:
                turn = self._json_retry(turn, step)
            asking = self.approval.asking_marks(turn.message.tool_calls or [])
            if turn.message.has_content:  # before its tools run, with the marks of the calls that wait
                self._save_step([turn.message], asking)
            calls = turn.message.tool_calls or []
            if not calls:
                return turn
            for call in calls:
                if self.approval.needs(call):  # a person decides
                    self.approval.run_call(call)
                else:
                    self._save(self._run_call(call, {}))  # each result as it comes back
        self.repair()
        raise StepLimitReached(self.max_steps, turn)

    def _json_retry(self, turn: Turn, step: int) -> Turn:
        """A JSON reply that does not parse or fit is asked for once more in the server's other
        JSON form before it is reported; the first is kept aside (a lost turn), never saved."""
        used = turn.notice("json_form")
        if self._json is None or used is None or used.value is None:
            return turn
        why = read_answer(turn.message.content, self._json).error
        if why is None:
            return turn
        try:
            self.store.save_lost_turn(self.id, turn, f"the JSON reply ({used.value}) did not fit: {why}")
        except Exception:  # the side table is for inspection; never mask the turn
            pass
        # the retry's json_form notice says a reply in the first form did not fit
        return self._stream_turn(self.repair().messages, step, avoid_json_form=used.value)

    def _stream_turn(self, messages: list[Message], step: int, avoid_json_form: str | None = None) -> Turn:
        tools = self.tools.definitions() or None
        asm = TurnAssembler()
        started = time.time()
        t0 = time.monotonic()
        first: float | None = None
        show = self._live
        options = self.options if self._json is None else {
            **self.options, "json": self._json, **({"avoid_json_form": avoid_json_form} if avoid_json_form else {})
        }
        stream = self.provider.create_stream(
            messages, tools, session_id=self.session_id, **options
        )
        try:
            for chunk in stream:
                if first is None:
                    first = time.monotonic() - t0
                asm.feed(chunk)
                show.turn(asm, False)
            turn = asm.turn()
        except KeyboardInterrupt as exc:
            self._lose(asm, exc, started, t0, first, step)
            show.stopped(asm)
            stopped = KeyboardInterrupt("stopped while the answer streamed: what was shown is not saved")
            stopped.partial = asm.snapshot()  # type: ignore[attr-defined]
            raise stopped from None  # from here, not from deep inside the HTTP client
        except BaseException as exc:
            try:
                exc.partial = asm.snapshot()  # type: ignore[attr-defined]
            except Exception:
                pass
            self._lose(asm, exc, started, t0, first, step)
            show.turn(asm, True)
            raise
        finally:
            stream.close()
        show.turn(asm, True)
        self.usage.add(turn.usage)
        if turn.usage is not None:
            self._last_input = turn.usage.input_tokens
        else:
            self.usage.add_unreported()
        self._record(TurnRecord(turn, started, time.monotonic() - t0, first, step))
        return turn

    def _lose(
        self, asm: TurnAssembler, exc: BaseException, started: float, t0: float, first: float | None, step: int
    ) -> None:
        """A turn that did not finish: kept aside for inspection, counted, never in the history."""
        partial = asm.snapshot()
        self._keep_lost_turn(partial, exc)
        self.usage.add(partial.usage)
        self._record(TurnRecord(partial, started, time.monotonic() - t0, first, step, error=_describe(exc)))

    def _record(self, rec: TurnRecord) -> None:
        self.records.append(rec)
        try:
            self.store.save_turn_usage(self.id, rec.to_stored())
        except Exception:  # accounting must never mask the turn itself
            pass

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
        # the summary and the copies it carries, as one step: a crash leaves all or none of them
        self._save_step(compaction_messages(live, cut, turn.message.content.strip()), ())
        self.compactions += 1
        self._last_input = 0
        self.repair()
        return True

    def _keep_lost_turn(self, partial: Turn, exc: BaseException) -> None:
        if not (partial.message.content or partial.message.tool_calls or partial.message.reasoning):
            return
        try:
            self.store.save_lost_turn(self.id, partial, _describe(exc))
        except Exception:  # the side table is for inspection; never mask the real failure
            pass

    # The faces: the notebook layer's (HTML in place, the approval widget, the history view),
    # each falling back to the terminal's outside a kernel. This module sits above the notebook
    # layer for that reason; the approval and console modules it shares sit below it.

    def _live_display(self) -> Live:
        """HTML in place under the running cell in a notebook (or in ``live_into``), text in a
        terminal, nothing with ``display=False``."""
        from ..notebook.live import live_display

        return live_display(self.display, into=self.live_into)

    def _ask(self, call: ToolCall) -> approval.Decision:
        """approve="ask": in a notebook the widget (blocking on its clicks), else a prompt on
        stdin; both show the tool's MCP hints and refuse an edit the tool's schema rejects."""
        from ..notebook.approval import ask_interactive

        self._live.question(call)  # the box goes where the call is, not below the whole send
        return ask_interactive(
            call, hints=approval.hints_of(self.tools, call.name), check=self.approval.check(call)
        )

    def view(self) -> HistoryView:
        """A widget: the history before and after repair, and the interrupted calls (with
        Resume, and Settle for a call that may have run). Needs the ``notebook`` extra."""
        from ..notebook.widgets import HistoryView

        return HistoryView(self)

    def settle(self, call_id: str, how: approval.SettleHow, *, note: str | None = None) -> ToolMessage:
        """Decide by hand what became of an interrupted call that may have run, and save it:
        ``"ran"`` (``note`` says what happened; saved as entered by the user), ``"run"`` (run it
        now and save the real result) or ``"model"`` (the repair text: the model decides).

        Settle before the conversation goes on. The next ``send`` or ``resume`` tells the model
        the repair text for every call still open and saves that text as the call's result,
        marked as the library's (``{"settled": "model", "by": "library"}``): from then on the
        call is no longer interrupted anywhere (the store, the views, ``validate_history``), and
        settling it raises ``SettleError`` saying what the model was told."""
        try:
            return self.approval.settle(call_id, how, note)
        except (Error, KeyboardInterrupt) as exc:
            raise short_traceback(exc) from None  # the library's frames cut: exc.full_traceback has them

    def __repr__(self) -> str:
        spent = ""
        if self.usage.calls:
            spent = f", {self.usage.calls} calls ${self.usage.cost_usd:.4f}"
            if self.usage.budget_usd is not None:
                spent += f" of ${self.usage.budget_usd:.4f}"
        if self.usage.unreported:
            spent += f", usage not reported by the server for {self.usage.unreported} turn(s)"
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
