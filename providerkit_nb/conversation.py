"""Conversation: the synchronous facade a notebook uses.

It runs the loop of the guide, one durable step at a time: load and repair the stored history,
stream a turn, save the assistant message before its tools run, run each tool and save each
result as it comes back, repeat until the model answers without calls. Whatever stops it (a
crash, a kernel restart, the Stop button) it stops between two saves, so the store always loads
and repairs cleanly and the next ``send`` or ``resume`` carries on.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .core.messages import (
    AssistantMessage,
    ContentPart,
    Message,
    SystemMessage,
    ToolCall,
    UserMessage,
)
from .core.repair import Repaired, repair_history
from .core.turn import Turn, TurnAssembler

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


class Conversation:
    """``Conversation(store, conversation_id, provider, tools, system=None)``.

    ``options`` are per-call options passed to every ``create_stream`` (effort, max_tokens...).
    ``display`` is "auto" (live display in a notebook, plain text in a terminal), True or False.
    """

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
        self.session_id: str = store.session_id(conversation_id)
        self._history: list[Message] = list(store.load(conversation_id))
        if system is not None and not any(isinstance(m, SystemMessage) for m in self._history):
            self._save(SystemMessage(system))
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
        self.repaired = repair_history(self._history, is_read_only=self.is_read_only)
        return self.repaired

    def reload(self) -> Repaired:
        """Read the store again (another process may have written to it)."""
        self._history = list(self.store.load(self.id))
        return self.repair()

    # acting ----------------------------------------------------------------

    def send(self, text: str | Sequence[ContentPart] | UserMessage) -> Turn | None:
        """Add a user message and run the loop until the model answers without calls."""
        message = text if isinstance(text, UserMessage) else UserMessage(
            text if isinstance(text, str) else list(text)
        )
        self._save(message)
        return self._loop()

    def resume(self, *, rerun_read_only: bool = False) -> Turn | None:
        """Carry on after an interruption, without a new user message.

        With ``rerun_read_only=True`` the interrupted calls of read-only tools run again and their
        real results are saved; calls that may have side effects are never re-run: the model is
        told they were interrupted and decides.
        """
        repaired = self.reload()
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
            repaired = self.repair()
            turn = self._stream_turn(repaired.messages, step)
            if turn.message.has_content:
                self._save(turn.message)  # before its tools run
            calls = turn.message.tool_calls or []
            if not calls:
                return turn
            for call in calls:
                self._save(self.tools.run(call))  # each result as it comes back
        self.repair()
        return turn

    def _stream_turn(self, messages: list[Message], step: int) -> Turn:
        from .notebook.live import live_display

        tools = self.tools.definitions() or None
        asm = TurnAssembler()
        started = time.time()
        t0 = time.monotonic()
        first: float | None = None
        show: Callable[[TurnAssembler, bool], None] = live_display(self.display)
        stream = self.provider.create_stream(
            messages, tools, session_id=self.session_id, **self.options
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
            self.records.append(
                TurnRecord(partial, started, time.monotonic() - t0, first, step, error=_describe(exc))
            )
            show(asm, True)
            raise
        finally:
            stream.close()
        show(asm, True)
        self.records.append(TurnRecord(turn, started, time.monotonic() - t0, first, step))
        return turn

    def _keep_lost_turn(self, partial: Turn, exc: BaseException) -> None:
        keep = getattr(self.store, "save_lost_turn", None)
        if keep is None or not (partial.message.content or partial.message.tool_calls or partial.message.reasoning):
            return
        try:
            keep(self.id, partial, _describe(exc))
        except Exception:  # the side table is for inspection; never mask the real failure
            pass

    # display ---------------------------------------------------------------

    def view(self) -> Any:
        """A widget: the history before and after repair, and the interrupted calls."""
        from .notebook.widgets import HistoryView

        return HistoryView(self)

    def __repr__(self) -> str:
        return (
            f"<Conversation {self.id!r}: {len(self._history)} messages, "
            f"{len(self.repaired.interrupted)} interrupted, provider={getattr(self.provider, 'id', '?')!r}>"
        )


def _describe(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "KeyboardInterrupt: stopped by the user"
    kind = getattr(exc, "kind", None)
    prefix = f"{type(exc).__name__}({kind})" if kind is not None else type(exc).__name__
    return f"{prefix}: {exc}"
