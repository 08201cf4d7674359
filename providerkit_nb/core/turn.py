"""Stream chunks, usage, turns, and putting a streamed turn back together.

Every wire's adapter turns its own events into the provider-neutral chunks below; the
assembler is the one place that knows how fragments combine, so all wires agree on the rules.
A turn is only returned once its end signal (``Finish``) has arrived: a half-written answer
never becomes a message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .errors import MALFORMED_CODE, MALFORMED_KIND, ErrorKind, ProviderError
from .html import USAGE_NOT_REPORTED
from .messages import AssistantMessage, ReasoningItems, ToolCall

__all__ = [
    "TextDelta",
    "ReasoningDelta",
    "ToolCallDelta",
    "ReasoningDetailsDelta",
    "ReasoningItemsDelta",
    "UsageUpdate",
    "ModelInfo",
    "Notice",
    "Finish",
    "Chunk",
    "Usage",
    "Turn",
    "TurnAssembler",
    "collect_turn",
    "name_the_wire",
    "FINISH_REASONS",
]

FINISH_REASONS = ("stop", "length", "tool_calls", "content_filter")


# --------------------------------------------------------------------------- chunks


@dataclass(slots=True)
class TextDelta:
    text: str


@dataclass(slots=True)
class ReasoningDelta:
    """Readable reasoning text (summaries, DeepSeek reasoning_content, Gemini thoughts)."""

    text: str


@dataclass(slots=True)
class ToolCallDelta:
    """A fragment of a tool call. ``index`` None means "continue the current call" unless the
    fragment names a different call (another id, or another name without an id)."""

    index: int | None = None
    id: str | None = None
    name: str | None = None
    arguments: str | None = None
    thought_signature: str | None = None


@dataclass(slots=True)
class ReasoningDetailsDelta:
    """OpenRouter's opaque reasoning_details entries; appended in order, replayed verbatim."""

    items: list[Any]


@dataclass(slots=True)
class ReasoningItemsDelta:
    """Signed provider-owned reasoning state (complete items), appended in stream order."""

    provider: str
    items: list[Any]


@dataclass(slots=True)
class UsageUpdate:
    """Usage so far or final; the last one wins (never summed)."""

    usage: Usage


@dataclass(slots=True)
class ModelInfo:
    """The model that actually answered (it may differ from the one asked for)."""

    model: str


@dataclass(slots=True)
class Notice:
    """Something the reader of this turn must know about how it was asked for or answered: the
    JSON form a server took, a tool choice it could not take, a forced call that was not made.
    ``kind`` names it ("json_form", "tool_choice", "forced_call", ...), ``text`` says it in
    words, ``value`` is the machine-readable part when there is one. Never part of the message."""

    kind: str
    text: str
    value: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {"kind": self.kind, "text": self.text}
        if self.value is not None:
            d["value"] = self.value
        return d

    @classmethod
    def from_dict(cls, d: Any) -> Notice | None:
        """A stored notice, or None when it is not one (a record written by hand, damaged)."""
        if not isinstance(d, dict) or not isinstance(d.get("kind"), str) or not isinstance(d.get("text"), str):
            return None
        value = d.get("value")
        return cls(d["kind"], d["text"], value if isinstance(value, str) else None)


@dataclass(slots=True)
class Finish:
    """The wire's own end signal arrived; ``reason`` is one of FINISH_REASONS."""

    reason: str


Chunk = (
    TextDelta
    | ReasoningDelta
    | ToolCallDelta
    | ReasoningDetailsDelta
    | ReasoningItemsDelta
    | UsageUpdate
    | ModelInfo
    | Notice
    | Finish
)


# --------------------------------------------------------------------------- usage and turn


@dataclass(slots=True)
class Usage:
    """Token counts with one meaning on every wire.

    ``input_tokens`` counts the whole prompt, cache reads and writes included;
    ``output_tokens`` includes reasoning. The cached, cache-write and reasoning figures are
    subsets of those, never additions.
    """

    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    reported_cost_usd: float | None = None

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "input_tokens": self.input_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "output_tokens": self.output_tokens,
            "reasoning_tokens": self.reasoning_tokens,
        }
        if self.reported_cost_usd is not None:
            d["reported_cost_usd"] = self.reported_cost_usd
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Usage:
        known = {f for f in cls.__dataclass_fields__}
        extra = set(d) - known
        if extra:
            raise ValueError(f"usage: unknown field(s) {sorted(extra)}")
        return cls(**d)

    def __add__(self, other: Usage) -> Usage:
        """For totals across turns (never across chunks of one turn)."""
        cost = None
        if self.reported_cost_usd is not None or other.reported_cost_usd is not None:
            cost = (self.reported_cost_usd or 0.0) + (other.reported_cost_usd or 0.0)
        return Usage(
            self.input_tokens + other.input_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.output_tokens + other.output_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            cost,
        )


@dataclass(slots=True)
class Turn:
    """One assistant turn as the provider gave it: the message to save, plus its accounting.

    ``finish_reason`` is None only on a snapshot of a turn that has not finished. ``usage`` is
    None when the server reported none (every view then says "not reported by the server", never
    zero). ``notices`` are what the reader must know about how the turn was asked for and
    answered (see ``Notice``); metadata, not part of the turn's data.
    ``shown_live`` is set by a live display that already drew it, so a cell ending in
    ``convo.send(...)`` shows the answer once (not part of the turn's data).
    """

    message: AssistantMessage
    usage: Usage | None = None
    finish_reason: str | None = None
    model: str | None = None
    notices: list[Notice] = field(default_factory=list, compare=False)
    shown_live: bool = field(default=False, repr=False, compare=False)

    @property
    def finished(self) -> bool:
        return self.finish_reason is not None

    def notice(self, kind: str) -> Notice | None:
        """The last notice of ``kind``, or None."""
        return next((n for n in reversed(self.notices) if n.kind == kind), None)

    def __repr__(self) -> str:
        usage = repr(self.usage) if self.usage is not None else (
            f"<{USAGE_NOT_REPORTED}>" if self.finished else "None"
        )
        bits = [f"message={self.message!r}", f"usage={usage}", f"finish_reason={self.finish_reason!r}",
                f"model={self.model!r}"]
        if self.notices:
            bits.append(f"notices={self.notices!r}")
        return f"Turn({', '.join(bits)})"

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "message": self.message.to_dict(),
            "usage": self.usage.to_dict() if self.usage is not None else None,
            "finish_reason": self.finish_reason,
            "model": self.model,
        }
        if self.notices:
            d["notices"] = [n.to_dict() for n in self.notices]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Turn:
        usage = d.get("usage")
        notices = [n for n in (Notice.from_dict(x) for x in d.get("notices") or ()) if n is not None]
        return cls(
            message=AssistantMessage.from_dict(d["message"]),
            usage=Usage.from_dict(usage) if usage is not None else None,
            finish_reason=d.get("finish_reason"),
            model=d.get("model"),
            notices=notices,
        )

    def _repr_html_(self) -> str:  # pragma: no cover - exercised by notebook views
        from .html import turn_html

        return turn_html(self)

    def _ipython_display_(self) -> None:
        """Drawn already by the live display of the send that made it: nothing more to show."""
        if self.shown_live:
            return
        from IPython import display as ipd

        show: Any = ipd.display  # IPython's display and HTML are untyped
        html: Any = ipd.HTML
        show(html(self._repr_html_()))


# --------------------------------------------------------------------------- assembly


@dataclass(slots=True)
class _CallBuilder:
    id: str | None = None
    name: str | None = None
    parts: list[str] = field(default_factory=list)
    thought_signature: str | None = None


class TurnAssembler:
    """Feeds on chunks and can show the turn so far at any moment.

    Rules: tool-call fragments group by index; the last stated id and name win (so a server
    that repeats the name on every fragment does not produce "read_fileread_file"); argument
    fragments concatenate; a fragment without an index continues the current call unless it
    names another one; reasoning_details and reasoning_items append in stream order; the last
    usage wins.
    """

    __slots__ = (
        "_text",
        "_reasoning",
        "_calls",
        "_order",
        "_current",
        "_details",
        "_items",
        "_items_provider",
        "usage",
        "finish_reason",
        "model",
        "notices",
        "chunks",
        "_dispatch",
    )

    def __init__(self) -> None:
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[Any, _CallBuilder] = {}
        self._order: list[Any] = []
        self._current: Any = None
        self._details: list[Any] | None = None
        self._items: list[Any] | None = None
        self._items_provider: str | None = None
        self.usage: Usage | None = None
        self.finish_reason: str | None = None
        self.model: str | None = None
        self.notices: list[Notice] = []
        self.chunks = 0
        self._dispatch: dict[type, Callable[[Any], None]] = {
            TextDelta: self._on_text,
            ReasoningDelta: self._on_reasoning,
            ToolCallDelta: self._on_call,
            ReasoningDetailsDelta: self._on_details,
            ReasoningItemsDelta: self._on_items,
            UsageUpdate: self._on_usage,
            ModelInfo: self._on_model,
            Notice: self.notices.append,
            Finish: self._on_finish,
        }

    # feeding ---------------------------------------------------------------

    def feed(self, chunk: Chunk) -> None:
        handler = self._dispatch.get(type(chunk))
        if handler is None:
            raise TypeError(f"not a stream chunk: {chunk!r}")
        self.chunks += 1
        handler(chunk)

    def _on_text(self, c: TextDelta) -> None:
        if c.text:
            self._text.append(c.text)

    def _on_reasoning(self, c: ReasoningDelta) -> None:
        if c.text:
            self._reasoning.append(c.text)

    def _on_call(self, c: ToolCallDelta) -> None:
        key: int | tuple[str, int] | None = c.index
        if key is None:
            cur = self._calls.get(self._current) if self._current is not None else None
            starts_new = cur is None or (
                (c.id is not None and cur.id is not None and c.id != cur.id)
                or (c.id is None and c.name is not None and cur.name is not None and c.name != cur.name)
            )
            if starts_new:
                key = ("pos", len(self._order))
            else:
                key = self._current
        b = self._calls.get(key)
        if b is None:
            b = self._calls[key] = _CallBuilder()
            self._order.append(key)
        self._current = key
        if c.id:
            b.id = c.id
        if c.name:
            b.name = c.name
        if c.arguments:
            b.parts.append(c.arguments)
        if c.thought_signature:
            b.thought_signature = c.thought_signature

    def _on_details(self, c: ReasoningDetailsDelta) -> None:
        if c.items:
            if self._details is None:
                self._details = []
            self._details.extend(c.items)

    def _on_items(self, c: ReasoningItemsDelta) -> None:
        if not c.items:
            return
        if self._items_provider is not None and self._items_provider != c.provider:
            raise ValueError(
                f"reasoning items from two providers in one turn ({self._items_provider!r} and "
                f"{c.provider!r}); a turn comes from one provider"
            )
        self._items_provider = c.provider
        if self._items is None:
            self._items = []
        self._items.extend(c.items)

    def _on_usage(self, c: UsageUpdate) -> None:
        self.usage = c.usage

    def _on_model(self, c: ModelInfo) -> None:
        if c.model:
            self.model = c.model

    def _on_finish(self, c: Finish) -> None:
        self.finish_reason = c.reason

    # reading ---------------------------------------------------------------

    @property
    def finished(self) -> bool:
        return self.finish_reason is not None

    @property
    def text_pieces(self) -> list[str]:
        """The text fragments so far (not a copy): live displays print only what is new."""
        return self._text

    @property
    def reasoning_pieces(self) -> list[str]:
        return self._reasoning

    @property
    def call_count(self) -> int:
        return len(self._order)

    def _tool_calls(self, *, strict: bool) -> list[ToolCall] | None:
        if not self._order:
            return None
        calls: list[ToolCall] = []
        for pos, key in enumerate(self._order):
            b = self._calls[key]
            if not b.name:
                if strict:
                    raise ProviderError(
                        "stream",
                        MALFORMED_KIND,
                        f"tool call {pos} (id {b.id!r}) arrived without a name; the server sent an "
                        "unusable call",
                        code=MALFORMED_CODE,
                    )
                name = ""
            else:
                name = b.name
            calls.append(
                ToolCall(
                    id=b.id or f"call_{pos}",
                    name=name,
                    arguments="".join(b.parts),
                    thought_signature=b.thought_signature,
                )
            )
        return calls

    def _message(self, *, strict: bool) -> AssistantMessage:
        return AssistantMessage(
            content="".join(self._text),
            reasoning="".join(self._reasoning) if self._reasoning else None,
            reasoning_details=list(self._details) if self._details is not None else None,
            reasoning_items=ReasoningItems(self._items_provider, list(self._items))
            if self._items is not None and self._items_provider is not None
            else None,
            tool_calls=self._tool_calls(strict=strict),
        )

    def _finish_reason(self) -> str | None:
        reason = self.finish_reason
        if reason == "stop" and self._order:
            return "tool_calls"  # some wires say STOP on a turn that made calls
        return reason

    def snapshot(self) -> Turn:
        """The turn so far, for display. Not a message to save unless ``finished``."""
        return Turn(self._message(strict=False), self.usage, self._finish_reason(), self.model, list(self.notices))

    def turn(self) -> Turn:
        """The finished turn. Raises if the end signal never came."""
        if self.finish_reason is None:
            raise ProviderError(
                "stream", ErrorKind.NETWORK, "the stream ended before the turn did"
            )
        return Turn(self._message(strict=True), self.usage, self._finish_reason(), self.model, list(self.notices))


def _attach_partial(exc: BaseException, asm: TurnAssembler) -> None:
    try:
        exc.partial = asm.snapshot()  # type: ignore[attr-defined]  # any exception carries the turn so far
    except Exception:  # pragma: no cover - an exception type that refuses attributes
        pass


def name_the_wire(err: ProviderError, wire: str) -> None:
    """The assembler's own errors (it does not know the wire) get the wire that was read."""
    err.provider = wire
    if not err.message.startswith(wire):
        err.message = f"{wire}: {err.message}"
        err.args = (err.message,)


def collect_turn(stream: Iterable[Chunk]) -> Turn:
    """Read one turn to its end and return it, or raise with ``err.partial`` set.

    The stream is closed in every case (exhausted, failed, interrupted), which closes the HTTP
    response and releases any gate slot held for it.
    """
    asm = TurnAssembler()
    feed = asm.feed
    text, keep = TextDelta, asm._text.append  # text, nearly every chunk, without a call
    n = 0
    try:
        for chunk in stream:
            if type(chunk) is text:
                n += 1
                if chunk.text:
                    keep(chunk.text)
            else:
                feed(chunk)
        asm.chunks, n = asm.chunks + n, 0
        return asm.turn()
    except BaseException as exc:
        asm.chunks += n
        _attach_partial(exc, asm)
        wire = getattr(stream, "provider", None)
        if isinstance(exc, ProviderError) and exc.provider == "stream" and isinstance(wire, str) and wire:
            name_the_wire(exc, wire)
        raise
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
