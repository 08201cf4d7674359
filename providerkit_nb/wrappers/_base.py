"""What every wrapper shares: the identity of the provider it wraps, and a stream made of
other streams.

A wrapper's stream reads from an inner stream (or, for retries and key pools, from one inner
stream after another). ``abort()``, the byte times and the response pass through to the stream
being read now, so a watchdog outside a retry still hangs up the live connection; and any end
(exhausted, failed, interrupted) closes the stream, which runs its close hooks (a gate releases
its slot that way).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, cast

from ..core.turn import (
    Chunk,
    ReasoningDelta,
    ReasoningDetailsDelta,
    ReasoningItemsDelta,
    TextDelta,
    ToolCallDelta,
)
from ..providers.base import ChunkStream, Provider

__all__ = ["Wrapper", "RelayStream", "shows", "read_head"]


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
