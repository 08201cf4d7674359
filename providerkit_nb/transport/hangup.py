"""Hanging up a call from another thread, at any stage, including before the headers arrive.

A thread blocked on a socket read can only be woken by shutting that socket. Once the
response exists its socket is easy to find; before that (a server that accepted the request
and says nothing) httpx and requests keep the socket to themselves. So the senders this
project builds record, per call, the socket the request was written to: the call's
``Hangup`` is bound to the sending thread while the request goes out, and the connection
classes below attach their socket to it when they write. ``Hangup.abort()`` then shuts that
socket from any thread; ``release()`` (when the response is closed, before its connection
goes back to the pool) makes a late abort harmless to whoever uses the connection next.

The same classes tell the sending thread's ``resend.Attempt`` what its request met: a new
connection or a pooled one, and whether a byte of the response came back; and they set aside
the idle pooled connections when the attempt must go out on a fresh one.
"""

from __future__ import annotations

import functools
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .resend import current_attempt

__all__ = ["Hangup", "bound", "tracking_httpx_transport", "tracking_requests_session"]

_local = threading.local()


def _shutdown(sock: Any) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except (OSError, AttributeError):
        pass


class Hangup:
    """One call's way to hang up: ``abort()`` from any thread, at any stage of the call."""

    __slots__ = ("_lock", "_sock", "aborted", "released")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sock: Any = None
        self.aborted = False
        self.released = False

    def attach(self, sock: Any) -> None:
        """The call's request is being written to ``sock``."""
        if sock is None:
            return
        with self._lock:
            if self.released:
                return
            self._sock = sock
            if self.aborted:
                _shutdown(sock)

    def abort(self) -> None:
        with self._lock:
            if self.released:
                return
            self.aborted = True
            if self._sock is not None:
                _shutdown(self._sock)

    def release(self) -> None:
        """The call is over: forget the socket (its connection may serve another call next)."""
        with self._lock:
            self.released = True
            self._sock = None


def current() -> Hangup | None:
    return getattr(_local, "hangup", None)


@contextmanager
def bound(hangup: Hangup | None) -> Iterator[None]:
    """Bind ``hangup`` to this thread while a request is sent and its headers awaited."""
    if hangup is None:
        yield
        return
    prev = getattr(_local, "hangup", None)
    _local.hangup = hangup
    try:
        yield
    except BaseException:
        hangup.release()
        raise
    finally:
        _local.hangup = prev


# --------------------------------------------------------------------------- httpx


@functools.cache
def _httpx_backend_class() -> Any:
    import httpcore

    class TrackedStream(httpcore.NetworkStream):
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            data: bytes = self._inner.read(max_bytes, timeout)
            if data:
                a = current_attempt()
                if a is not None:
                    a.answered = True
            return data

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            h = current()
            if h is not None:
                h.attach(self._inner.get_extra_info("socket"))
            a = current_attempt()
            if a is not None and a.reused is None:
                a.reused = True  # no connection was opened for this attempt: a pooled one
            self._inner.write(buffer, timeout)

        def close(self) -> None:
            self._inner.close()

        def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> Any:
            return TrackedStream(self._inner.start_tls(ssl_context, server_hostname, timeout))

        def get_extra_info(self, info: str) -> Any:
            if info == "is_readable":
                a = current_attempt()
                if a is not None and a.fresh_only:
                    return True  # the pool takes an idle connection that reads as closed for expired
            return self._inner.get_extra_info(info)

    def _opened() -> None:
        a = current_attempt()
        if a is not None:
            a.reused = False

    class TrackingBackend(httpcore.NetworkBackend):
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def connect_tcp(self, *args: Any, **kw: Any) -> Any:
            _opened()
            return TrackedStream(self._inner.connect_tcp(*args, **kw))

        def connect_unix_socket(self, *args: Any, **kw: Any) -> Any:
            _opened()
            return TrackedStream(self._inner.connect_unix_socket(*args, **kw))

        def sleep(self, seconds: float) -> None:
            self._inner.sleep(seconds)

    return TrackingBackend


def tracking_httpx_transport(**kwargs: Any) -> Any:
    """An ``httpx.HTTPTransport`` whose connections attach their socket to the bound Hangup."""
    import httpx

    TrackingBackend = _httpx_backend_class()
    transport = httpx.HTTPTransport(**kwargs)
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if pool is not None and backend is not None:  # else: no pre-header hang-up, the response's own abort still works
        pool._network_backend = TrackingBackend(backend)
    return transport


# --------------------------------------------------------------------------- requests


@functools.cache
def _requests_adapter_class() -> Any:
    from requests.adapters import HTTPAdapter
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    # The connection class is NOT subclassed here: whatever class the pool uses at call time
    # (urllib3's own, or one a test recorder swapped in) is kept, and each connection's
    # ``request`` is wrapped on the instance. A subclass made once and cached would freeze
    # the class that happened to be current on the first call.
    def _track(conn: Any) -> Any:
        if getattr(conn, "_pk_tracked", False):
            return conn
        inner = conn.request

        def request(*args: Any, **kw: Any) -> Any:
            try:
                return inner(*args, **kw)
            finally:
                h = current()
                if h is not None:
                    h.attach(getattr(conn, "sock", None))

        try:
            conn.request = request
            conn._pk_tracked = True
        except AttributeError:  # a connection class with __slots__: no pre-header hang-up
            pass
        return conn

    def _pooled(conn: Any) -> Any:
        """Tell the attempt whether ``conn`` is a kept-alive one (a fresh-only attempt closes
        it first, so it connects anew)."""
        a = current_attempt()
        if a is not None:
            if a.fresh_only and getattr(conn, "sock", None) is not None:
                conn.close()
            a.reused = getattr(conn, "sock", None) is not None
        return _track(conn)

    class TrackedHTTPPool(HTTPConnectionPool):
        def _get_conn(self, timeout: float | None = None) -> Any:
            return _pooled(super()._get_conn(timeout))

    class TrackedHTTPSPool(HTTPSConnectionPool):
        def _get_conn(self, timeout: float | None = None) -> Any:
            return _pooled(super()._get_conn(timeout))

    class TrackingAdapter(HTTPAdapter):
        def init_poolmanager(self, *args: Any, **kw: Any) -> None:
            super().init_poolmanager(*args, **kw)
            self.poolmanager.pool_classes_by_scheme = {"http": TrackedHTTPPool, "https": TrackedHTTPSPool}

    return TrackingAdapter


def tracking_requests_session() -> Any:
    """A ``requests.Session`` whose connections attach their socket to the bound Hangup."""
    import requests

    TrackingAdapter = _requests_adapter_class()
    session = requests.Session()
    session.mount("http://", TrackingAdapter())
    session.mount("https://", TrackingAdapter())
    return session
