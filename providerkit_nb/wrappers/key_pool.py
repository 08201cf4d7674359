"""Several API keys for one connection: free keys in turn, the paid key last.

A key that fails is benched for a time that depends on why: a throttle for the server's
Retry-After (or a minute), an exhausted quota for the server's reset (or an hour), a refused
credential for 12 hours (accounts get reinstated), an overloaded or silent server for a
minute. Failures that would fail the same way on every key (a bad request, a cut connection,
a context overflow) are raised at once and bench nothing. A pool of one key never benches it.

Rotation happens only before the first chunk reaches the caller; after that the answer is
committed to its key, and a failure propagates without benching anyone.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.errors import (
    ErrorKind,
    NoAvailableKeyError,  # noqa: F401 (defined at the bottom, kept importable here)
    ProviderError,
)
from ..core.messages import Message
from ..core.tools import ToolDefinition
from ..core.turn import Chunk, Turn
from ..providers.base import ChunkStream, Provider
from ..wire.options import CallOptions
from ._base import Ask, RelayStream, Signed, constructor, read_head, relay
from .retry import server_wait

__all__ = ["with_key_pool", "KeyPoolProvider", "NoAvailableKeyError", "bench_for"]

MIN_BENCH = 1.0
MAX_BENCH = 12 * 3600.0
_FIXED = {ErrorKind.AUTH: MAX_BENCH, ErrorKind.TIMEOUT: 60.0, ErrorKind.OVERLOAD: 60.0}
_FROM_HINT = {ErrorKind.RATE: 60.0, ErrorKind.QUOTA: 3600.0}


def bench_for(err: BaseException, now: Callable[[], float] = time.time) -> float | None:
    """Seconds to bench a key after ``err``, or None when another key would fail the same way."""
    if not isinstance(err, ProviderError):
        return None
    if err.kind in _FROM_HINT:
        hint = server_wait(err, now)
        wait = _FROM_HINT[err.kind] if hint is None else hint
        return min(MAX_BENCH, max(MIN_BENCH, wait))
    return _FIXED.get(err.kind)


@dataclass(slots=True)
class _Key:
    secret: str
    label: str  # "free 1", "paid": what the views and errors show, never the key
    until: float = 0.0  # benched until (the pool's clock)
    kind: str | None = None

    def __repr__(self) -> str:
        return f"<key {self.label}>"


class KeyPoolProvider(Signed):
    def __init__(
        self,
        factory: Callable[..., Provider],
        keys: Sequence[str],
        paid_key: str | None = None,
        instance_session_id: str | None = None,
        *,
        label: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        on_evict: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        if isinstance(keys, str):
            raise TypeError("with_key_pool takes a list of keys, not one string: keys=[key1, key2]")
        free = [k for k in keys if k]
        self._keys = [_Key(k, f"free {i + 1}") for i, k in enumerate(free)]
        self._paid = _Key(paid_key, "paid") if paid_key else None
        if not self._keys and self._paid is None:
            raise ValueError(
                f"with_key_pool({label or 'keys'}) needs at least one key (blank keys from unset "
                "environment variables are left out)"
            )
        super().__init__(factory, instance_session_id, "with_key_pool")
        self._clock = clock
        self._on_evict = on_evict
        self._lock = threading.Lock()
        self._cursor = itertools.count()
        self._providers: dict[str, Provider] = {}
        first = self._keys[0] if self._keys else self._paid
        assert first is not None
        probe = self._provider(first)  # constructing an adapter does no I/O
        self._id = label or probe.id
        self._model = probe.model

    @property
    def size(self) -> int:
        return len(self._keys) + (1 if self._paid else 0)

    def __repr__(self) -> str:
        return f"<KeyPoolProvider id={self._id!r} model={self._model!r} keys={self.size}>"

    def status(self) -> list[dict[str, Any]]:
        now = self._clock()
        with self._lock:
            return [
                {"key": k.label, "benched_for": max(0.0, k.until - now), "kind": k.kind if k.until > now else None}
                for k in [*self._keys, *([self._paid] if self._paid else [])]
            ]

    # the pool ------------------------------------------------------------------------

    def _provider(self, key: _Key) -> Provider:
        """One provider per key, built on first use with the pool's session id (so the
        prompt cache follows the conversation, not the key)."""
        with self._lock:
            p = self._providers.get(key.secret)
            if p is None:
                p = self._providers[key.secret] = self.build(key.secret)
            return p

    def _candidates(self) -> list[_Key]:
        now = self._clock()
        with self._lock:
            n = len(self._keys)
            start = next(self._cursor) % n if n else 0
            order = self._keys[start:] + self._keys[:start]
            out = [k for k in order if k.until <= now]
            if self._paid is not None and self._paid.until <= now:
                out.append(self._paid)
        return out

    def _none_left(self, last: BaseException | None) -> NoAvailableKeyError:
        now = self._clock()
        with self._lock:
            untils = [k.until for k in [*self._keys, *([self._paid] if self._paid else [])] if k.until > now]
        wait = max(0.0, min(untils) - now) if untils else None
        err = NoAvailableKeyError(
            self.id,
            ErrorKind.RATE,
            f"No {self._id} API key available (all rate-limited or denied)"
            + (f"; the first returns in {wait:.0f}s" if wait is not None else ""),
            retry_after=wait,
            cause=last,
        )
        return err

    def _failed(self, key: _Key, err: BaseException) -> bool:
        """Bench ``key`` if the failure is the key's; True to try the next key."""
        if self.size <= 1:
            return False
        secs = bench_for(err)
        if secs is None:
            return False
        with self._lock:
            key.until = self._clock() + secs
            key.kind = err.kind.value if isinstance(err, ProviderError) else None
        if self._on_evict is not None:
            self._on_evict({"key": key.label, "kind": key.kind, "for": secs})
        return True

    def _open(self, messages: list[Message], tools: list[ToolDefinition] | None, opts: CallOptions) -> ChunkStream:
        def body(stream: RelayStream) -> Iterator[Chunk]:
            candidates = self._candidates()
            if not candidates:
                raise self._none_left(None)
            last: BaseException | None = None
            for key in candidates:
                s = self._provider(key).open_stream(messages, tools, opts)
                stream.inner = s
                stream.info["key"] = key.label
                try:
                    head = read_head(s)
                except BaseException as exc:
                    s.close()  # hang up before the next key opens
                    if not isinstance(exc, Exception) or not self._failed(key, exc):
                        raise
                    last = exc
                    continue
                yield from relay(head, s)  # committed to this key from here on
                return
            raise self._none_left(last)

        return RelayStream(body, provider=self.id)

    def whole(self, ask: Ask, opts: CallOptions) -> Turn:
        candidates = self._candidates()
        last: BaseException | None = None
        for key in candidates:
            try:
                return ask(self._provider(key))
            except Exception as exc:
                if not self._failed(key, exc):
                    raise
                last = exc
        raise self._none_left(last)

    def close(self) -> None:
        for p in list(self._providers.values()):
            close = getattr(p, "close", None)
            if close is not None:
                close()


with_key_pool = constructor(KeyPoolProvider, "with_key_pool", """Rotate ``keys`` (then ``paid_key``) before the
first chunk; bench a key by failure kind.

``factory(api_key=..., instance_session_id=...)`` builds the provider for a key, e.g.
``lambda **kw: pk.openai(model="gpt-5-mini", **kw)``. Every provider gets the same
``instance_session_id`` (one is made up when not given), so the session survives rotation.
""")
