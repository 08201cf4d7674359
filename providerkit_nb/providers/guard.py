"""A malformed response is one ProviderError, never a raw exception from deep inside a parser.

Each wire's parser reads frames the way the vendors' SDKs do: unknown events, unknown fields
and missing optional fields (usage, index, finish reason) are passed over. What a parser cannot
pass over is a required part with the wrong shape (a frame without its ``delta``, a list where
an object belongs, a number where text belongs). This module turns every such failure into a
``ProviderError`` of one kind, ``MALFORMED_KIND``, naming the wire, the event's number in the
stream, its type, the field and a short excerpt of what was found, e.g.
``anthropic stream event 14 (content_block_delta): 'delta' missing``.

The kind is ``overload``: a 200 whose body is garbled is the same failure as a gateway's 502
(the server side could not produce a valid answer), usually transient, so ``with_retry`` tries
again while nothing has reached the caller and a fallback may then take another endpoint.

The reader counts the events into a ``StreamPosition`` (``iter_sse`` itself, or ``numbered``
for a JSON-array body). The reader checks that every chunk has the types the assembler needs
(``check_chunk``: so a float never reaches ``"".join``) inside ``guarding``, which converts a
parser's KeyError, TypeError, AttributeError, IndexError, ValueError or RecursionError, and turns
a body that ended cleanly without one event into "an empty 200" rather than a cut stream. The
cost is a type test per chunk.

The caller's own code runs inside the reading too (``on_activity`` is called on every body
read): what it raises is the caller's, not the server's. ``callers_own`` carries it past the
guard as a ``CallerRaised`` (a BaseException, so no handler meant for a bad frame takes it) and
the reader unwraps it, so the caller gets their exception as it was, and nothing retries it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..core.errors import MALFORMED_CODE, MALFORMED_KIND, Error, ErrorKind, ProviderError
from ..core.json_input import JsonInputError, read_json
from ..core.turn import (
    Chunk,
    Finish,
    ModelInfo,
    Notice,
    ReasoningDelta,
    ReasoningDetailsDelta,
    ReasoningItemsDelta,
    TextDelta,
    ToolCallDelta,
    UsageUpdate,
)
from ..transport.scrub import scrub
from ..transport.sse import SSEEvent, StreamPosition

__all__ = [
    "MALFORMED_KIND",
    "MALFORMED_CODE",
    "FrameError",
    "need",
    "where",
    "numbered",
    "check_chunk",
    "guarding",
    "malformed",
    "body_error",
    "PARSER_FAILURES",
    "CallerRaised",
    "callers_own",
    "cut_short",
]

EXCERPT = 120  # characters of the offending frame quoted in the message

# What a parser raises when a frame has the wrong shape (never a ProviderError: those pass).
PARSER_FAILURES = (
    KeyError,
    TypeError,
    AttributeError,
    IndexError,
    ValueError,
    RecursionError,
    OverflowError,
    UnicodeError,
)

_JSON_NAMES = {
    "dict": "an object",
    "list": "a list",
    "str": "a string",
    "int": "a number",
    "float": "a number",
    "bool": "a boolean",
    "NoneType": "null",
}
_NO_ATTR = re.compile(r"'(\w+)' object has no attribute")
_MISSING: Any = object()


class CallerRaised(BaseException):
    """An exception from the caller's callback, on its way out past the parser guard."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__(exc)
        self.exc = exc


def callers_own(fn: Callable[[], None]) -> Callable[[], None]:
    """``fn`` as called from inside a reader: what it raises is marked as the caller's."""

    def call() -> None:
        try:
            fn()
        except BaseException as exc:
            raise CallerRaised(exc) from None

    return call


def found(value: Any) -> str:
    """How a value reads in a message: its JSON kind and a short excerpt (never the whole)."""
    kind = _JSON_NAMES.get(type(value).__name__, type(value).__name__)
    if value is None:
        return "null"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    if len(text) > 40:
        text = text[:40] + "..."
    return f"{kind} {text}"


class FrameError(Error, ValueError):
    """Raised inside a parser when a required part of a frame is missing or has the wrong
    shape; the guard adds the wire, the event number and the excerpt. ``what`` names the part
    (a quoted wire field, or plain words for a chunk the parser built)."""

    def __init__(self, what: str, value: Any = _MISSING, expected: str = "") -> None:
        if value is _MISSING:
            detail = f"{what} missing"
        else:
            detail = f"{what}: expected {expected or 'something else'}, found {found(value)}"
        super().__init__(detail)
        self.detail = detail


def need(obj: dict[str, Any], key: str, kind: type, expected: str) -> Any:
    """``obj[key]`` when it is a ``kind``; a FrameError naming the field otherwise."""
    value = obj.get(key, _MISSING)
    if value is _MISSING:
        raise FrameError(repr(key))
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise FrameError(repr(key), value, expected)
    return value


def _detail(exc: BaseException) -> str:
    """What a parser's exception means, in words a user can act on."""
    if isinstance(exc, FrameError):
        return exc.detail
    if isinstance(exc, KeyError):
        key = exc.args[0] if exc.args else "?"
        return f"{str(key)[:40]!r} missing" if isinstance(key, str) else f"item {str(key)[:20]} missing"
    if isinstance(exc, AttributeError):
        m = _NO_ATTR.search(str(exc))
        what = _JSON_NAMES.get(m.group(1), m.group(1)) if m else "something else"
        return f"expected an object, found {what}"
    if isinstance(exc, IndexError):
        return "a list was empty or shorter than expected"
    if isinstance(exc, RecursionError):
        return "nested too deeply to read"
    text = " ".join(str(exc).split())[:160]
    if isinstance(exc, TypeError):
        return f"a value of the wrong type ({text})"
    return f"an unreadable value ({text})"


def _event_type(ev: SSEEvent) -> str | None:
    try:
        obj = read_json(ev.data)
    except JsonInputError:
        obj = None
    t = obj.get("type") if isinstance(obj, dict) else None
    if isinstance(t, str) and t:
        return t[:60]
    return ev.event[:60] if ev.event else None


def _excerpt(data: str, secrets: Iterable[str]) -> str:
    text = scrub(" ".join(data.split()), secrets)
    return text if len(text) <= EXCERPT else text[:EXCERPT] + "..."


def malformed(
    provider: str, where: str, detail: str, data: str | None = None, *, secrets: Iterable[str] = ()
) -> ProviderError:
    """The one error for a response of the wrong shape (``where``: "stream event 14 (type)")."""
    message = f"{provider} {where}: {detail}"
    body = None
    if data is not None:
        body = scrub(data, secrets)
        message += f"; the frame read: {_excerpt(data, secrets)}" if data.strip() else ""
    message = scrub(message, secrets)  # the excerpt of a value may quote a key, too
    return ProviderError(provider, MALFORMED_KIND, message, code=MALFORMED_CODE, body=body)


def where(pos: StreamPosition) -> str:
    """``stream event 14 (content_block_delta)``: the event's number and type, for messages."""
    if pos.event is None:
        return "stream"
    t = _event_type(pos.event)
    return f"stream event {pos.n} ({t})" if t else f"stream event {pos.n}"


def numbered(events: Iterable[SSEEvent], pos: StreamPosition, provider: str) -> Iterator[SSEEvent]:
    """Events that did not come from ``iter_sse`` (a JSON-array body), counted into ``pos``;
    an array with no element is an empty answer."""
    for ev in events:
        pos.n += 1
        pos.event = ev
        yield ev
    pos.done = True
    if pos.n == 0:
        raise _empty(provider)


def cut_short(provider: str) -> ProviderError:
    """A body that ended cleanly before the wire's end signal: the connection was cut mid-turn
    (a network failure, so a retry may ask again)."""
    return ProviderError(provider, ErrorKind.NETWORK, f"{provider}: the stream ended before the turn did")


def _empty(provider: str) -> ProviderError:
    return malformed(provider, "stream", "the response body held no events (an empty 200)")


_SCALAR_INDEX = (int, str, float, bool, type(None))
_USAGE_COUNTS = (
    "input_tokens",
    "cached_input_tokens",
    "cache_write_tokens",
    "output_tokens",
    "reasoning_tokens",
)


def check_chunk(c: Chunk) -> None:
    """Raise FrameError unless the chunk has the types the assembler and the views rely on."""
    if isinstance(c, TextDelta):
        if type(c.text) is not str:
            raise FrameError("the text", c.text, "a string")
    elif isinstance(c, ReasoningDelta):
        if type(c.text) is not str:
            raise FrameError("the reasoning text", c.text, "a string")
    elif isinstance(c, ToolCallDelta):
        if type(c.index) not in _SCALAR_INDEX:
            raise FrameError("the tool call's index", c.index, "a number")
        for name in ("id", "name", "arguments", "thought_signature"):
            v = getattr(c, name)
            if v is not None and type(v) is not str:
                raise FrameError(f"the tool call's {name}", v, "a string")
    elif isinstance(c, UsageUpdate):
        u = c.usage
        for name in _USAGE_COUNTS:
            v = getattr(u, name)
            if type(v) is not int:
                raise FrameError(f"usage ({name})", v, "a whole number")
        cost = u.reported_cost_usd
        if cost is not None and type(cost) not in (int, float):
            raise FrameError("usage (cost)", cost, "a number")
    elif isinstance(c, ModelInfo):
        if type(c.model) is not str:
            raise FrameError("the model name", c.model, "a string")
    elif isinstance(c, Finish):
        if type(c.reason) is not str:
            raise FrameError("the finish reason", c.reason, "a string")
    elif isinstance(c, ReasoningItemsDelta | ReasoningDetailsDelta):
        if type(c.items) is not list:
            raise FrameError("the reasoning items", c.items, "a list")
    elif isinstance(c, Notice):
        if type(c.kind) is not str or type(c.text) is not str:
            raise FrameError("a notice", c.text, "text")


class guarding:
    """``with guarding(provider, pos, secrets):`` around the loop that reads a parser's chunks
    (checking each with ``check_chunk``): any parser failure becomes the malformed error, and a
    body that ended cleanly without a single event is an empty answer, not a cut stream. A
    context manager, not a wrapping generator, so a chunk passes through no extra frame."""

    __slots__ = ("provider", "pos", "secrets")

    def __init__(self, provider: str, pos: StreamPosition, secrets: Iterable[str] = ()) -> None:
        self.provider = provider
        self.pos = pos
        self.secrets = secrets

    def __enter__(self) -> guarding:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        if exc is None:
            return
        pos = self.pos
        if isinstance(exc, ProviderError):
            if pos.n == 0 and pos.done and exc.code != MALFORMED_CODE:
                raise _empty(self.provider) from exc
            return  # the parser's own error, as it was
        if isinstance(exc, PARSER_FAILURES):
            ev = pos.event
            raise malformed(
                self.provider, where(pos), _detail(exc), ev.data if ev is not None else None, secrets=self.secrets
            ) from exc


def body_error(
    provider: str, exc: BaseException, data: Any, *, secrets: Iterable[str] = ()
) -> ProviderError:
    """The malformed error for a whole (non-streamed) response body."""
    try:
        text = json.dumps(data, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(data)[:2000]
    return malformed(provider, "response body", _detail(exc), text, secrets=secrets)
