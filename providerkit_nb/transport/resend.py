"""Sending a request again, once, when a kept-alive connection was lost before any answer.

A server may close a kept-alive connection at any moment, even one it advertised with
``Keep-Alive: timeout=5, max=100`` (llama.cpp's server closes after every streamed reply; so
does a proxy with a short idle timeout). A request written to such a connection just before its
close arrives gets no byte of response: a reset, a broken pipe, or an end of stream where the
status line should be. RFC 9112, section 9.3.1, lets a client send such a request again on a
new connection; a model call changes nothing on the server but its cost, and no byte of it was
produced, so it is sent again at once on a fresh connection, once, without counting as a retry
and without waiting. Never once a byte of the response arrived, never after a hang-up of our
own (Stop, the watchdog), and never when it cannot be told the connection was a reused one.

Both senders go through ``send_resending``. What each attempt did is recorded in an
``Attempt`` bound to the sending thread by the connection classes the senders build
(``hangup.py``): whether the request went out on a pooled connection, whether a byte came back,
and, on the second attempt, that every idle pooled connection is to be set aside so a new one
opens. A client or transport the caller built has none of these hooks: its requests are never
sent twice.
"""

from __future__ import annotations

import errno
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["Attempt", "current_attempt", "lost_before_answer", "send_resending"]

_R = TypeVar("_R")
_local = threading.local()


@dataclass(slots=True)
class Attempt:
    """One try at sending a request, as the connection classes saw it."""

    fresh_only: bool = False  # set aside every idle pooled connection: open a new one
    reused: bool | None = None  # the request went out on a pooled connection (None: not seen)
    answered: bool = False  # a byte of the response arrived


def current_attempt() -> Attempt | None:
    return getattr(_local, "attempt", None)


@contextmanager
def _attempt(fresh_only: bool) -> Iterator[Attempt]:
    prev = getattr(_local, "attempt", None)
    a = Attempt(fresh_only=fresh_only)
    _local.attempt = a
    try:
        yield a
    finally:
        _local.attempt = prev


_DISCONNECT_NAMES = frozenset({"ConnectionResetError", "BrokenPipeError", "ConnectionAbortedError", "RemoteDisconnected"})
_DISCONNECT_ERRNOS = frozenset(
    getattr(errno, n) for n in ("ECONNRESET", "EPIPE", "ECONNABORTED") if hasattr(errno, n)
)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception, its causes and contexts, and exceptions carried in their args (urllib3's
    ProtocolError holds the socket error there), at most 12 of them."""
    seen: list[BaseException] = []
    todo = [exc]
    while todo and len(seen) < 12:
        e = todo.pop(0)
        if any(e is s for s in seen):
            continue
        seen.append(e)
        yield e
        todo += [x for x in (e.__cause__, e.__context__, *e.args) if isinstance(x, BaseException)]


def _names(e: BaseException) -> set[str]:
    return {c.__name__ for c in type(e).__mro__}


def _is_disconnect(e: BaseException) -> bool:
    names = _names(e)
    if names & _DISCONNECT_NAMES:
        return True
    if isinstance(e, OSError) and e.errno in _DISCONNECT_ERRNOS:
        return True
    # httpcore: the connection ended where the status line should have been
    return "RemoteProtocolError" in names and "without sending a response" in str(e)


def lost_before_answer(exc: BaseException, attempt: Attempt) -> bool:
    """Did this attempt go out on a reused connection that closed before a byte of answer?"""
    if attempt.reused is not True or attempt.answered:
        return False
    # (a status line cut short is http.client's BadStatusLine and httpcore's read bytes: neither
    # is a disconnect here; RemoteDisconnected is the status line that never began)
    return any(_is_disconnect(e) for e in _chain(exc))


def send_resending(send: Callable[[], _R], hangup: Any = None) -> _R:
    """``send()``; sent again at once on a fresh connection when the first attempt was lost
    before any answer on a reused connection (and the caller did not hang up)."""
    with _attempt(fresh_only=False) as first:
        try:
            return send()
        except Exception as exc:
            if not lost_before_answer(exc, first) or getattr(hangup, "aborted", False):
                raise
    with _attempt(fresh_only=True):
        return send()
