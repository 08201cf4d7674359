"""The library's errors: one base (``Error``), and ProviderError with kinds named for the fix.

Classification of HTTP statuses, bodies and transport failures lives in
``providerkit_nb.transport.classify``; this module only holds the shape every layer shares, so
the core can raise and inspect errors without importing any network code.
"""

from __future__ import annotations

import os
import types
from enum import StrEnum
from typing import Any, TypeVar

__all__ = [
    "Error",
    "ErrorKind",
    "ProviderError",
    "StepLimitReached",
    "is_retryable",
    "BODY_LIMIT",
    "MALFORMED_KIND",
    "MALFORMED_CODE",
    "short_traceback",
]

BODY_LIMIT = 2000


# A response of the wrong shape (a frame without its delta, a list where an object belongs, an
# empty 200): classified like a gateway's 5xx, so a retry before the first chunk may fix it.
MALFORMED_CODE = "malformed_response"


class ErrorKind(StrEnum):
    """What went wrong, named for the fix (a str enum, so ``kind == "rate"`` works).

    Each member's docstring says what it means and what fixes it (the docs' error table is
    written from them)."""

    ABORTED = "aborted"
    """The caller stopped it (Stop, Ctrl-C, a client-side cancel). Nothing to fix; never retried."""
    TIMEOUT = "timeout"
    """Our deadline passed, or the server answered 408. Retried; if it persists, raise the
    watchdog's clocks or the provider's ``timeout``."""
    NETWORK = "network"
    """The connection failed: socket, DNS, proxy, or a stream cut before its end. Retried;
    check the network or the ``base_url``."""
    OVERLOAD = "overload"
    """The server could not answer (5xx, 529, 409, 425, "overloaded", or a malformed response).
    Retried; ``pk.with_backup_models`` asks another model."""
    RATE = "rate"
    """A per-minute throttle. Wait ``retry_after`` seconds (``pk.with_retry`` does), lower the
    gate's ``max_concurrent``, or spread the load over keys (``pk.with_key_pool``)."""
    QUOTA = "quota"
    """The balance or the usage window is exhausted. Add credit or wait for ``reset_at``; a
    backup model or another key may still work. Never retried."""
    ENTITLEMENT = "entitlement"
    """The plan never included this model or feature. Change the plan or the model."""
    AUTH = "auth"
    """The credential is missing, wrong or expired. Fix the key or the token."""
    MODEL = "model"
    """The model id is unknown or not served here. Fix the name; a backup model may answer."""
    CONTEXT = "context"
    """The prompt is too long for the model. Compact the history (``Conversation(...,
    compact=True)``) or pick a model with a larger window."""
    CONTENT = "content"
    """A safety filter, a refusal or a blocked prompt. Change what is sent."""
    INVALID = "invalid"
    """Any other 4xx: a bug in the request. Read ``body`` for what the provider refused."""
    UNKNOWN = "unknown"
    """Nothing told the kind apart. Read ``body`` and ``status``."""


MALFORMED_KIND = ErrorKind.OVERLOAD

_TRANSIENT = frozenset({ErrorKind.TIMEOUT, ErrorKind.NETWORK, ErrorKind.OVERLOAD, ErrorKind.RATE})
_NEVER_RETRY = frozenset(
    {
        ErrorKind.QUOTA,
        ErrorKind.CONTEXT,
        ErrorKind.MODEL,
        ErrorKind.ENTITLEMENT,
        ErrorKind.CONTENT,
        ErrorKind.INVALID,
        ErrorKind.ABORTED,
    }
)


class Error(Exception):
    """Every error this library raises on purpose derives from this one, so
    ``except pk.Error`` catches what the library means and lets a bug of the caller through.

    ``cause`` is the exception behind it (the HTTP client's, the database's), kept here when
    ``send`` cuts the printed chain short (see ``short_traceback``)."""

    @property
    def cause(self) -> BaseException | None:
        kept: BaseException | None = self.__dict__.get("_cause")
        return kept if kept is not None else self.__cause__


class StepLimitReached(Error):
    """The loop ran ``max_steps`` model calls and the model still asked for tools.

    Every call it asked for has been run and its result saved, so the history is whole:
    ``convo.resume()`` goes on for another ``max_steps``. ``turn`` is the last turn (its
    ``finish_reason`` is ``tool_calls``)."""

    def __init__(self, steps: int, turn: Any) -> None:
        super().__init__(
            f"stopped after {steps} model call(s) (max_steps={steps}); the model still asked for tools. "
            "Every result is saved: convo.resume() carries on, or raise max_steps"
        )
        self.steps = steps
        self.turn = turn


class ProviderError(Error):
    """A failure talking to a provider, classified once, at the point it was understood.

    ``body`` is at most 2,000 characters of what the provider said; it never holds a credential
    (adapters scrub the key before building the error). ``partial`` is set by collect_turn when a
    turn died mid-stream: a snapshot for display, never something to save as a message.
    """

    def __init__(
        self,
        provider: str,
        kind: ErrorKind | str,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        retry_after: float | None = None,
        reset_at: float | None = None,
        window: str | None = None,
        should_retry: bool | None = None,
        body: str | None = None,
        cause: BaseException | None = None,
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.kind = ErrorKind(kind)
        self.message = message
        self.status = status
        self.code = code
        self.retry_after = retry_after  # seconds
        self.reset_at = reset_at  # epoch seconds of the binding limit's reset
        self.window = window  # "5h" | "weekly" | "monthly"
        self.should_retry = should_retry  # the server's own x-should-retry, when sent
        self.body = body[:BODY_LIMIT] if body is not None else None
        self.partial: Any = None
        if cause is not None:
            self.__cause__ = cause

    @property
    def is_transient(self) -> bool:
        if self.should_retry is not None:
            return self.should_retry
        return self.kind in _TRANSIENT

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        bits = [f"provider={self.provider!r}", f"kind={self.kind.value!r}"]
        if self.status is not None:
            bits.append(f"status={self.status}")
        if self.retry_after is not None:
            bits.append(f"retry_after={self.retry_after:g}")
        bits.append(f"message={self.message!r}")
        return f"ProviderError({', '.join(bits)})"

    def describe(self) -> dict[str, Any]:
        """A plain dict for logs, DataFrames and ``--json`` output."""
        return {
            "provider": self.provider,
            "kind": self.kind.value,
            "status": self.status,
            "code": self.code,
            "retry_after": self.retry_after,
            "reset_at": self.reset_at,
            "window": self.window,
            "message": self.message,
            "body": self.body,
        }


def is_retryable(err: BaseException, max_wait: float = 60.0) -> bool:
    """Should a retry wrapper try again? Long server waits belong to a fallback, not a sleep."""
    if isinstance(err, KeyboardInterrupt):
        return False
    if not isinstance(err, ProviderError):
        return False
    if err.should_retry is not None:
        return err.should_retry
    if err.kind in _NEVER_RETRY:
        return False
    if err.retry_after is not None and err.retry_after > max_wait:
        return False
    return err.kind in _TRANSIENT


# --------------------------------------------------------------------------- what a notebook prints

_LIBRARY = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_E = TypeVar("_E", bound=BaseException)


def library_frame(frame: types.FrameType) -> bool:
    """Is ``frame`` running this library's code?"""
    return frame.f_code.co_filename.startswith(_LIBRARY)


def user_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """``tb`` without the library's frames: the caller's code and the code the library called
    (a tool), in order."""
    kept: list[types.TracebackType] = []
    while tb is not None:
        if not library_frame(tb.tb_frame):
            kept.append(tb)
        tb = tb.tb_next
    out: types.TracebackType | None = None
    for t in reversed(kept):
        out = types.TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out


def short_traceback(exc: _E) -> _E:
    """``exc`` as a notebook should print it when it leaves ``send`` or ``resume``: the caller's
    frames and the user's own code the library ran (a tool Stop landed in), none of the
    library's, and no chained exceptions of an HTTP client or a database. Nothing is lost: the
    full traceback is ``exc.full_traceback`` and the chained exception ``exc.cause``.

    Re-raise the result from the public method (``raise short_traceback(exc)``): that frame is
    the one library frame shown."""
    full = exc.__traceback__
    chained = exc.__cause__ if exc.__cause__ is not None else (None if exc.__suppress_context__ else exc.__context__)
    try:
        exc.full_traceback = full  # type: ignore[attr-defined]
        if chained is not None:
            if isinstance(exc, Error):
                exc.__dict__.setdefault("_cause", chained)
            elif not hasattr(exc, "cause"):
                exc.cause = chained  # type: ignore[attr-defined]
    except AttributeError:  # an exception type that takes no attributes: print it as it is
        return exc
    exc.__cause__ = None
    exc.__suppress_context__ = True
    return exc.with_traceback(user_traceback(full))
