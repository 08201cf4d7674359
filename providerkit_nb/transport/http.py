"""The HTTP seam: one small interface over httpx (the default) or a requests.Session.

Adapters build a ``Request`` and read a ``Response``; they never touch httpx or requests
directly, so tests swap in ``httpx.MockTransport`` or a real local server without mocking our
own code. Timeouts are always finite. ``Response.abort()`` may be called from another thread
(the watchdog does) and wakes a read that is blocked on the socket.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..core.errors import MALFORMED_CODE, MALFORMED_KIND, ErrorKind, ProviderError
from .hangup import Hangup, bound, tracking_httpx_transport, tracking_requests_session
from .resend import send_resending

__all__ = [
    "Timeout",
    "Request",
    "Response",
    "Sender",
    "HttpxSender",
    "RequestsSender",
    "make_sender",
    "DEFAULT_TIMEOUT",
]


@dataclass(frozen=True, slots=True)
class Timeout:
    """Finite socket timeouts in seconds. The watchdog owns turn-level clocks; these only stop
    a dead socket from hanging a thread forever."""

    connect: float = 10.0
    read: float = 300.0
    write: float = 60.0
    pool: float = 60.0

    @classmethod
    def coerce(cls, value: Timeout | float | int | None) -> Timeout:
        if value is None:
            return DEFAULT_TIMEOUT
        if isinstance(value, Timeout):
            return value
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ValueError(f"timeout must be a positive number of seconds or a Timeout, got {value!r}")
        v = float(value)
        return cls(connect=min(v, 10.0), read=v, write=v, pool=v)


DEFAULT_TIMEOUT = Timeout()


@dataclass(slots=True)
class Request:
    method: str
    url: str
    headers: dict[str, str] = field(repr=False)  # carries the credential: never in a repr
    body: bytes | None = field(default=None, repr=False)
    stream: bool = True
    timeout: Timeout = field(default=DEFAULT_TIMEOUT)
    hangup: Hangup | None = field(default=None, repr=False, compare=False)  # abort from any thread


class Response(Protocol):
    status: int
    headers: Mapping[str, str]

    def iter_bytes(self) -> Iterator[bytes]: ...

    def read(self) -> bytes: ...

    def close(self) -> None: ...

    def abort(self) -> None: ...


class Sender(Protocol):
    name: str

    def send(self, request: Request, provider: str) -> Response: ...

    def close(self) -> None: ...


def _shutdown(sock: Any) -> None:
    if sock is None:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


_UNDECODABLE = frozenset({"DecodingError", "DecodeError", "ContentDecodingError"})


def _transport_error(provider: str, request: Request, exc: BaseException) -> ProviderError:
    from .classify import is_transport_failure

    if {c.__name__ for c in type(exc).__mro__} & _UNDECODABLE:  # a gzip/deflate body that is damaged
        return ProviderError(
            provider, MALFORMED_KIND, f"{provider}: the response body could not be decompressed ({exc})",
            code=MALFORMED_CODE, cause=exc,
        )

    kind = is_transport_failure(exc) or ErrorKind.NETWORK
    what = "timed out" if kind is ErrorKind.TIMEOUT else "no response"
    host = request.url.split("?", 1)[0]
    return ProviderError(
        provider, kind, f"{provider}: {what} from {host} ({type(exc).__name__})", cause=exc
    )


# --------------------------------------------------------------------------- httpx


class _Response:
    """A response of either library: status and headers, the body as it arrives (``_chunks``)
    with the library's failures (``_failed``) turned into our error, and the hang-up released
    before the connection goes back to the pool."""

    __slots__ = ("_r", "status", "headers", "_provider", "_request")

    def __init__(self, r: Any, provider: str, request: Request) -> None:
        self._r = r
        self.status = r.status_code
        self.headers = r.headers
        self._provider = provider
        self._request = request

    def _chunks(self) -> Iterator[bytes]:
        raise NotImplementedError

    def _failed(self, exc: Exception) -> bool:
        """Is ``exc`` the transport failing (then it is reported as ours)?"""
        raise NotImplementedError

    def iter_bytes(self) -> Iterator[bytes]:
        try:
            yield from self._chunks()
        except Exception as exc:
            if not self._failed(exc):
                raise
            raise _transport_error(self._provider, self._request, exc) from exc

    def read(self) -> bytes:
        return b"".join(self.iter_bytes())

    def close(self) -> None:
        if self._request.hangup is not None:  # before the connection goes back to the pool
            self._request.hangup.release()
        self._r.close()


class _HttpxResponse(_Response):
    __slots__ = ()

    def _chunks(self) -> Iterator[bytes]:
        chunks: Iterator[bytes] = self._r.iter_bytes()
        return chunks

    def _failed(self, exc: Exception) -> bool:
        import httpx

        return isinstance(exc, httpx.TransportError | httpx.DecodingError | httpx.StreamClosed)

    def abort(self) -> None:
        stream = self._r.extensions.get("network_stream")
        if stream is not None:
            try:
                _shutdown(stream.get_extra_info("socket"))
            except Exception:
                pass


class HttpxSender:
    """The default sender. Pass ``transport=httpx.MockTransport(...)`` to test without sockets."""

    name = "httpx"

    def __init__(self, client: Any = None, transport: Any = None) -> None:
        import httpx

        self._own = client is None
        self.client = client or httpx.Client(
            transport=transport if transport is not None else tracking_httpx_transport(),
            follow_redirects=False,
        )

    def send(self, request: Request, provider: str) -> Response:
        import httpx

        t = request.timeout
        try:
            req = self.client.build_request(
                request.method,
                request.url,
                headers=request.headers,
                content=request.body,
                timeout=httpx.Timeout(connect=t.connect, read=t.read, write=t.write, pool=t.pool),
            )
            with bound(request.hangup):  # a kept-alive connection lost before any answer: once more
                r = send_resending(lambda: self.client.send(req, stream=True), request.hangup)
        except (httpx.TransportError, httpx.DecodingError) as exc:
            raise _transport_error(provider, request, exc) from exc
        return _HttpxResponse(r, provider, request)

    def close(self) -> None:
        if self._own:
            self.client.close()


# --------------------------------------------------------------------------- requests


class _RequestsResponse(_Response):
    __slots__ = ()

    def _chunks(self) -> Iterator[bytes]:
        # Raw reads, split into lines by our SSE reader: requests' iter_lines breaks a CRLF
        # that falls across two reads into an extra blank line, which splits events.
        raw = self._r.raw
        if getattr(raw, "chunked", False) and raw.supports_chunked_reads():
            yield from raw.read_chunked(None, decode_content=True)
        elif hasattr(raw, "read1"):
            yield from _read1_decoded(raw, self.headers.get("content-encoding"))
        else:  # pragma: no cover - old urllib3
            yield from raw.stream(65536, decode_content=True)

    def _failed(self, exc: Exception) -> bool:
        import requests

        # urllib3's ProtocolError and friends come through as they are
        return isinstance(exc, requests.RequestException | OSError) or type(exc).__module__.startswith("urllib3")

    def abort(self) -> None:
        raw = self._r.raw
        for path in (("_connection", "sock"), ("_fp", "fp", "raw", "_sock")):
            obj: Any = raw
            for attr in path:
                obj = getattr(obj, attr, None)
                if obj is None:
                    break
            if obj is not None:
                _shutdown(obj)
                return


def _read1_decoded(raw: Any, encoding: str | None) -> Iterator[bytes]:
    """Reads as bytes arrive (never waiting to fill a buffer), content-decoded. urllib3 decodes
    itself; a response object whose read1 takes no ``decode_content`` (a recorder's stub) gets
    gzip/deflate undone here, so both transports hand the SSE reader the same text."""
    try:
        piece = raw.read1(65536, decode_content=True)
        decoded = True
    except TypeError:
        piece = raw.read1(65536)
        decoded = False
    enc = (encoding or "").lower()
    inflate = None
    if not decoded and ("gzip" in enc or "deflate" in enc):
        import zlib

        inflate = zlib.decompressobj(32 + zlib.MAX_WBITS if "gzip" in enc else zlib.MAX_WBITS)
    while piece:
        yield inflate.decompress(piece) if inflate is not None else piece
        piece = raw.read1(65536, decode_content=True) if decoded else raw.read1(65536)
    if inflate is not None:
        tail = inflate.flush()
        if tail:
            yield tail


class RequestsSender:
    """An alternative sender over a ``requests.Session`` (for users who already have one)."""

    name = "requests"

    def __init__(self, session: Any = None) -> None:
        self._own = session is None
        self.session = session or tracking_requests_session()

    def send(self, request: Request, provider: str) -> Response:
        import requests

        t = request.timeout
        try:
            with bound(request.hangup):  # a kept-alive connection lost before any answer: once more
                r = send_resending(
                    lambda: self.session.request(
                        request.method,
                        request.url,
                        headers=request.headers,
                        data=request.body,
                        stream=True,
                        timeout=(t.connect, t.read),
                        allow_redirects=False,
                    ),
                    request.hangup,
                )
        except requests.RequestException as exc:
            raise _transport_error(provider, request, exc) from exc
        return _RequestsResponse(r, provider, request)

    def close(self) -> None:
        if self._own:
            self.session.close()


def make_sender(transport: Any = None) -> Sender:
    """Accept what a user would pass: nothing, "httpx", "requests", an httpx transport or
    client, a requests session, or a ready Sender."""
    if transport is None or transport == "httpx":
        return HttpxSender()
    if transport == "requests":
        return RequestsSender()
    if hasattr(transport, "send") and hasattr(transport, "name") and hasattr(transport, "close") and not _is_httpx(transport) and not _is_requests(transport):
        ready: Sender = transport
        return ready
    if _is_requests(transport):
        return RequestsSender(transport)
    import httpx

    if isinstance(transport, httpx.Client):
        return HttpxSender(client=transport)
    if isinstance(transport, httpx.BaseTransport):
        return HttpxSender(transport=transport)
    raise TypeError(
        "transport must be None, 'httpx', 'requests', an httpx.Client, an httpx transport "
        f"(such as httpx.MockTransport) or a requests.Session; got {type(transport).__name__}"
    )


def _is_httpx(obj: Any) -> bool:
    return type(obj).__module__.startswith("httpx")


def _is_requests(obj: Any) -> bool:
    mod = type(obj).__module__
    return mod.startswith("requests") and hasattr(obj, "mount")
