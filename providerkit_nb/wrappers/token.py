"""Signed-in access tokens that expire: load, refresh when expired, save, and share.

``TokenSource(load, refresh, save)`` loads the stored credential on every call (another
process or notebook may have refreshed it), refreshes only when it has expired, and lets
concurrent callers share one refresh. A refresh the server refuses (400/401/403) reloads
storage first: if another context saved a newer credential meanwhile it is used; otherwise
the credential is dead and the error says to sign in again. A network failure is raised as
it is, and the stored credential is kept.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import ErrorKind, ProviderError
from ..core.messages import Message
from ..core.tools import ToolDefinition
from ..core.turn import Chunk, Turn
from ..providers.base import ChunkStream, Provider
from ..wire.options import CallOptions
from ._base import Ask, RelayStream, Signed, constructor, read_head, relay

__all__ = ["Credential", "TokenSource", "with_token", "TokenProvider"]


@dataclass(slots=True)
class Credential:
    """An access token, the refresh token that renews it, and when it expires (epoch seconds)."""

    access_token: str = field(repr=False)
    refresh_token: str | None = field(default=None, repr=False)
    expires_at: float | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    def expired(self, now: float, early: float = 0.0) -> bool:
        return self.expires_at is not None and now >= self.expires_at - early

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"access_token": self.access_token}
        if self.refresh_token is not None:
            d["refresh_token"] = self.refresh_token
        if self.expires_at is not None:
            d["expires_at"] = self.expires_at
        if self.extra:
            d["extra"] = dict(self.extra)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Credential:
        if not isinstance(d, dict) or not d.get("access_token"):
            raise ValueError("a credential needs at least an access_token")
        return cls(d["access_token"], d.get("refresh_token"), d.get("expires_at"), dict(d.get("extra") or {}))

    @classmethod
    def coerce(cls, value: Any) -> Credential | None:
        if value is None or isinstance(value, Credential):
            return value
        if isinstance(value, dict):
            return cls.from_dict(value)
        raise TypeError(f"a token source's load/refresh must give a Credential or a dict, got {type(value).__name__}")


def _refused(err: BaseException) -> bool:
    """The token endpoint said no (as opposed to: could not be reached)."""
    status = getattr(err, "status", None) or getattr(err, "status_code", None)
    if status in (400, 401, 403):
        return True
    return isinstance(err, ProviderError) and err.kind is ErrorKind.AUTH


class TokenSource:
    """``load() -> Credential | dict | None``, ``refresh(cred) -> Credential | dict``,
    ``save(cred)``. ``early`` refreshes that many seconds before the stated expiry."""

    def __init__(
        self,
        load: Callable[[], Any],
        refresh: Callable[[Credential], Any],
        save: Callable[[Credential], None] | None = None,
        *,
        early: float = 0.0,
        clock: Callable[[], float] = time.time,
        name: str = "token",
    ) -> None:
        self._load = load
        self._refresh = refresh
        self._save = save
        self.early = early
        self._clock = clock
        self.name = name
        self._lock = threading.Lock()
        self._latest: Credential | None = None  # kept when there is no storage to save to
        self.refreshes = 0

    def __repr__(self) -> str:
        return f"<TokenSource {self.name!r} refreshes={self.refreshes}>"

    def _current(self) -> Credential | None:
        stored = Credential.coerce(self._load())
        latest = self._latest
        if latest is not None and (stored is None or (latest.expires_at or 0) > (stored.expires_at or 0)):
            return latest
        return stored

    def _usable(self, cred: Credential | None) -> bool:
        return cred is not None and not cred.expired(self._clock(), self.early)

    def get_token(self, *, force: bool = False, stale: str | None = None) -> str:
        """A usable access token. ``force`` refreshes even if not expired (after a 401),
        unless the token now stored differs from ``stale``, the one that was refused."""
        cred = self._current()
        if not force and self._usable(cred):
            assert cred is not None
            return cred.access_token
        with self._lock:  # one refresh at a time; the others wait and then find it done
            cred = self._current()
            fresh_enough = self._usable(cred) and (not force or (cred is not None and cred.access_token != stale))
            if fresh_enough:
                assert cred is not None
                return cred.access_token
            if cred is None or not cred.refresh_token:
                raise ProviderError(
                    self.name, ErrorKind.AUTH,
                    f"{self.name}: no usable credential stored and nothing to refresh it with; sign in again",
                    code="setup_required",
                )
            try:
                new = Credential.coerce(self._refresh(cred))
            except Exception as exc:
                if not _refused(exc):
                    raise  # network trouble: keep the credential, try again later
                again = Credential.coerce(self._load())
                if again is not None and again.access_token != cred.access_token and self._usable(again):
                    return again.access_token  # another context refreshed first
                raise ProviderError(
                    self.name, ErrorKind.AUTH,
                    f"{self.name}: the refresh token was refused; sign in again",
                    code="refresh_dead", cause=exc,
                ) from exc
            assert new is not None
            if not new.refresh_token:
                new.refresh_token = cred.refresh_token  # servers that do not rotate it
            if self._save is not None:
                self._save(new)  # saved before use, so a crash never loses a rotated token
            self._latest = new
            self.refreshes += 1
            return new.access_token


class TokenProvider(Signed):
    def __init__(
        self,
        factory: Callable[..., Provider],
        token_source: TokenSource,
        instance_session_id: str | None = None,
    ) -> None:
        if not isinstance(token_source, TokenSource):
            raise TypeError("with_token needs a TokenSource(load, refresh, save)")
        super().__init__(factory, instance_session_id, "with_token")
        self.token_source = token_source
        self._anonymous = token_source.name
        self._lock = threading.Lock()
        self._built: tuple[str, Provider] | None = None

    def _provider(self, token: str) -> Provider:
        """The provider for ``token``: rebuilt only when the token changes."""
        with self._lock:
            if self._built is None or self._built[0] != token:
                p = self.build(token)
                self._built = (token, p)
                self._id, self._model = p.id, p.model
            return self._built[1]

    def _open(self, messages: list[Message], tools: list[ToolDefinition] | None, opts: CallOptions) -> ChunkStream:
        def body(stream: RelayStream) -> Iterator[Chunk]:
            token = self.token_source.get_token()
            s = self._provider(token).open_stream(messages, tools, opts)
            stream.inner = s
            try:
                head = read_head(s)
            except ProviderError as exc:
                s.close()
                if exc.kind is not ErrorKind.AUTH:
                    raise
                # Refused before anything streamed: refresh once (unless another caller
                # already did) and try again.
                token = self.token_source.get_token(force=True, stale=token)
                s = self._provider(token).open_stream(messages, tools, opts)
                stream.inner = s
                try:
                    head = read_head(s)
                except BaseException:
                    s.close()
                    raise
            yield from relay(head, s)

        return RelayStream(body, provider=self.id)

    def whole(self, ask: Ask, opts: CallOptions) -> Turn:
        token = self.token_source.get_token()
        try:
            return ask(self._provider(token))
        except ProviderError as exc:
            if exc.kind is not ErrorKind.AUTH:
                raise
            token = self.token_source.get_token(force=True, stale=token)
            return ask(self._provider(token))

    def __repr__(self) -> str:
        return f"<TokenProvider id={self.id!r} model={self._model!r}>"


with_token = constructor(TokenProvider, "with_token", """A provider that signs each call with
``token_source``'s current token.

``factory(api_key=token, instance_session_id=...)`` builds the provider for a token; the
same session id goes to every provider built, so a refresh does not start a new session.
""")
