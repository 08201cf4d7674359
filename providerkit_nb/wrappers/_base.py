"""What every wrapper shares: the identity of the provider it wraps, a stream made of other
streams, the one seam for a whole turn, and the public ``with_*`` function of each.

A wrapper's stream reads from an inner stream (or, for retries and key pools, from one inner
stream after another). ``abort()``, the byte times and the response pass through to the stream
being read now, so a watchdog outside a retry still hangs up the live connection; and any end
(exhausted, failed, interrupted) closes the stream, which runs its close hooks (a gate releases
its slot that way). A whole turn (``complete``) goes through ``Policy.whole``, where a wrapper
says how it asks the provider(s) behind it.
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ParamSpec, cast

from ..core.messages import MessageInput
from ..core.tools import ToolDefinition
from ..core.turn import (
    Chunk,
    ReasoningDelta,
    ReasoningDetailsDelta,
    ReasoningItemsDelta,
    TextDelta,
    ToolCallDelta,
    Turn,
)
from ..providers.base import ChunkStream, Provider
from ..wire.options import CallOptions

__all__ = ["Wrapper", "Policy", "Signed", "Ask", "RelayStream", "shows", "read_head", "relay", "constructor"]

_P = ParamSpec("_P")


def shows(chunk: Chunk) -> bool:
    """Something a caller sees: text, tool calls or reasoning. Once one has been handed
    over, trying again elsewhere would repeat it; model names and usage would not."""
    if isinstance(chunk, TextDelta | ReasoningDelta):
        return bool(chunk.text)
    return isinstance(chunk, ToolCallDelta | ReasoningItemsDelta | ReasoningDetailsDelta)


def read_head(stream: ChunkStream) -> list[Chunk]:
    """Read up to and including the first chunk that ``shows`` (or to the end): the part
    of a stream that may still be thrown away and tried again."""
    head: list[Chunk] = []
    for chunk in stream:
        head.append(chunk)
        if shows(chunk):
            break
    return head


def relay(head: list[Chunk], stream: ChunkStream) -> Iterator[Chunk]:
    """What was read ahead of ``stream``, then the rest of it; ``stream`` closes at any end.
    From the first chunk handed over, the wrapper is committed to this stream."""
    try:
        yield from head
        yield from stream
    finally:
        stream.close()


class RelayStream(ChunkStream):
    """A ChunkStream whose transport facts come from ``inner``, the stream being read now."""

    def __init__(self, body: Callable[[RelayStream], Iterator[Chunk]], provider: str = "") -> None:
        self.inner: ChunkStream | None = None
        self.info: dict[str, Any] = {}  # facts for the views: gate wait, attempts, key used
        # ChunkStream calls body with this very stream, which is a RelayStream
        super().__init__(cast(Callable[[ChunkStream], Iterator[Chunk]], body), provider)
        self.on_close(self._close_inner)  # first hook: hang up before anything is released

    def _close_inner(self) -> None:
        inner = self.inner
        if inner is not None:
            inner.close()

    def __iter__(self) -> RelayStream:
        # Through __next__ (not straight to the generator), so any end closes the stream.
        return self

    def __next__(self) -> Chunk:
        try:
            return next(self._gen)
        except BaseException:
            # Exhausted, failed or interrupted: hang up and run the close hooks now, not when
            # the garbage collector gets round to it.
            self.close()
            raise

    def abort(self) -> None:
        inner = self.inner
        if inner is not None:
            inner.abort()

    # Transport facts pass through; the base class's own assignments are ignored.
    @property
    def response(self) -> Any:
        inner = self.inner
        return inner.response if inner is not None else None

    @response.setter
    def response(self, value: Any) -> None:
        pass

    @property
    def opened_at(self) -> float | None:
        inner = self.inner
        return inner.opened_at if inner is not None else None

    @opened_at.setter
    def opened_at(self, value: float | None) -> None:
        pass

    @property
    def first_byte_at(self) -> float | None:
        inner = self.inner
        return inner.first_byte_at if inner is not None else None

    @first_byte_at.setter
    def first_byte_at(self, value: float | None) -> None:
        pass

    @property
    def last_byte_at(self) -> float | None:
        inner = self.inner
        return inner.last_byte_at if inner is not None else None

    @last_byte_at.setter
    def last_byte_at(self, value: float | None) -> None:
        pass


class Wrapper(Provider):
    """A Provider around another Provider; it answers to the inner provider's name."""

    def __init__(self, inner: Provider) -> None:
        if not isinstance(inner, Provider):
            raise TypeError(
                f"{type(self).__name__} wraps a Provider (such as pk.openai(...)); got "
                f"{type(inner).__name__}"
            )
        self.inner = inner

    @property
    def id(self) -> str:  # type: ignore[override]  # read-only here: the wrapper answers with what it wraps
        return self.inner.id

    @property
    def model(self) -> str:  # type: ignore[override]  # read-only here: the wrapper answers with what it wraps
        return self.inner.model

    @property
    def instance_session_id(self) -> str:  # type: ignore[override]  # read-only here: the wrapper answers with what it wraps
        return self.inner.instance_session_id

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.inner!r}>"


@dataclass(frozen=True, slots=True)
class Ask:
    """One whole turn to ask of a provider: the caller's messages, tools and options (``changes``
    laid over them, such as another model)."""

    messages: Sequence[MessageInput]
    tools: Sequence[ToolDefinition] | None
    options: dict[str, Any]

    def __call__(self, provider: Provider, **changes: Any) -> Turn:
        return provider.complete(self.messages, self.tools, **{**self.options, **changes})


class Policy(Provider):
    """A provider that asks others (the one it wraps, or one per key or token) under a policy
    of its own. ``complete`` is written once, here; each policy says in ``whole`` how it asks
    for a whole turn (a slot first, another model, another key, a refreshed token, a retry)."""

    def complete(
        self,
        messages: Sequence[MessageInput],
        tools: Sequence[ToolDefinition] | None = None,
        **options: Any,
    ) -> Turn:
        return self.whole(Ask(messages, tools, options), CallOptions(**options))

    def whole(self, ask: Ask, opts: CallOptions) -> Turn:
        """The turn ``ask`` describes (``opts``: its options, checked), under this policy."""
        raise NotImplementedError


class Signed(Policy):
    """A provider built per credential (each key of a pool, a token as it is refreshed) by
    ``factory(api_key=..., instance_session_id=...)``, every one with this wrapper's session id
    (so the prompt cache follows the conversation, not the credential). It answers to the name
    and model of what it builds (``_id``, ``_model``; ``_anonymous`` until one is built)."""

    _id: str | None = None
    _model: str = ""
    _anonymous: str = ""

    def __init__(self, factory: Callable[..., Provider], instance_session_id: str | None, who: str) -> None:
        self._factory = factory
        self._instance_session_id = instance_session_id or str(uuid.uuid4())
        self._who = who  # the public function, for errors

    def build(self, credential: str) -> Provider:
        p = self._factory(api_key=credential, instance_session_id=self._instance_session_id)
        if not isinstance(p, Provider):
            raise TypeError(f"{self._who}: factory must return a Provider, got {type(p).__name__}")
        return p

    @property
    def id(self) -> str:  # type: ignore[override]  # read-only here: the wrapper answers with what it builds
        return self._id or self._anonymous

    @property
    def model(self) -> str:  # type: ignore[override]  # read-only here: the wrapper answers with what it builds
        return self._model

    @property
    def instance_session_id(self) -> str:  # type: ignore[override]  # read-only here: one for every credential
        return self._instance_session_id


def constructor(cls: Callable[_P, Provider], name: str, doc: str) -> Callable[_P, Provider]:
    """The public ``with_*`` function of a wrapper: the class's own signature (written once, on
    the class), under the function's name and with its docstring; it returns a Provider."""

    def make(*args: _P.args, **kwargs: _P.kwargs) -> Provider:
        return cls(*args, **kwargs)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = doc
    sig = inspect.signature(cls).replace(return_annotation="Provider")
    make.__signature__ = sig  # type: ignore[attr-defined]  # help() shows the keywords
    make.__module__ = getattr(cls, "__module__", __name__)
    return make
