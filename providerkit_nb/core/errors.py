"""The library's errors: one base (``Error``), and ProviderError with kinds named for the fix.

Classification of HTTP statuses, bodies and transport failures lives in
``providerkit_nb.transport.classify``; this module only holds the shape every layer shares, so
the core can raise and inspect errors without importing any network code.
"""

from __future__ import annotations

import os
import types
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from .messages import ToolCall

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
    Retried; ``providerkit_nb.wrappers.with_backup_models`` asks another model."""
    RATE = "rate"
    """A per-minute throttle. Wait ``retry_after`` seconds (``pk.with_retry`` does), lower the
    gate's ``max_concurrent``, or spread the load over keys (``providerkit_nb.wrappers.with_key_pool``)."""
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

# --------------------------------------------------------------------------- every other error
# Each layer raises these; they are defined here, at the bottom, so that catching one (or
# ``import providerkit_nb.errors``) loads no store, transcript reader or HTTP client.


def _clip(text: str, limit: int = 160) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


class ApprovalError(Error, RuntimeError):
    """A question about a call could not be asked or its answer was not understood."""


class ApprovalDeferred(Error):
    """Under ``Approval.deferring()`` a call that needs a person's answer ends the loop instead
    of waiting for it (a button's callback must never wait): the call stays "asking" in the
    store, and ``answer`` then ``resume`` carry on."""

    def __init__(self, call: ToolCall) -> None:
        super().__init__(f"call {call.id!r} ({call.name}) waits for your answer")
        self.call = call


class SettleError(Error, ValueError):
    """``settle`` was given a call that is not an open interrupted call, or a wrong action."""


class SystemPromptChanged(Error, ValueError):
    """``system=`` differs from the system message the stored conversation already starts with.

    Reopening a conversation with another prompt would silently keep the old one (the store is
    append-only); pass ``replace_system=True`` to start using the new one from the next call."""

    def __init__(self, conversation_id: str, stored: str, given: str) -> None:
        super().__init__(
            f"conversation {conversation_id!r} was started with another system prompt.\n"
            f"  stored: {_clip(stored)}\n  given:  {_clip(given)}\n"
            "Pass replace_system=True to use the new one from the next call, or system=None to keep the stored one."
        )
        self.stored = stored
        self.given = given


class JsonInputError(Error, ValueError):
    """Text that is not readable JSON. ``reason`` says why in words; ``pos`` is the character
    offset where reading stopped (``line``/``column`` the same place, 1-based); ``truncated`` is
    true when the text ends before the document does; ``too_deep`` when it is nested beyond
    reading."""

    def __init__(
        self, reason: str, *, pos: int | None = None, line: int | None = None, column: int | None = None,
        truncated: bool = False, too_deep: bool = False,
    ) -> None:
        where = f" at line {line}, column {column} (char {pos})" if pos is not None else ""
        super().__init__(f"{reason}{where}")
        self.reason = reason
        self.pos = pos
        self.line = line
        self.column = column
        self.truncated = truncated
        self.too_deep = too_deep


class MessageFormatError(Error, ValueError):
    """A message dict that is not canonical. ``path`` locates the bad field the way a JSON
    document of messages spells it, e.g. ``[3].tool_calls[0].arguments``."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.path = path


class ToolTimeout(BaseException):
    """Raised inside a tool whose timeout fired (a BaseException, like KeyboardInterrupt)."""


class BudgetExceeded(ProviderError):
    """Raised before a call when the session's spend has reached its budget: nothing was sent.
    Kind ``quota`` (never retried, never walked to a backup model)."""

    def __init__(self, spent: float, budget: float, calls: int) -> None:
        super().__init__(
            "budget",
            ErrorKind.QUOTA,
            f"budget of ${budget:.4f} reached (${spent:.4f} spent over {calls} call(s)); nothing was sent. "
            "Raise usage.budget_usd, or reset the tracker, to go on.",
        )
        self.spent = spent
        self.budget = budget


@dataclass(slots=True)
class Problem:
    """One break: which rule, at which message, what to do, and how the provider words it."""

    rule: str
    index: int
    message: str
    provider_wording: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return f"message {self.index}: {self.rule}: {self.message}"


class LocalModelError(Error):
    """The local server could not be started (the extra is missing, or the server failed)."""


class MCPServerError(Error, RuntimeError):
    """An MCP server could not be started, did not answer, or sent something unusable.

    The message names the server, what happened and what to do."""


class StoreError(Error):
    """A store could not do what was asked. The message names the file or server and the fix."""


class NotAStoreError(StoreError):
    """The file exists but is not a providerkit store (another database, a text file)."""


class StoreCorruptError(StoreError):
    """The file is a store but SQLite reports it damaged, or a row does not decode."""


class StoreLockedError(StoreError):
    """Another process held the write lock longer than the busy timeout."""


class StoreReadOnlyError(StoreError):
    """The file or its directory cannot be written."""


class StoreVersionError(StoreError):
    """The store was written by a newer providerkit_nb than this one."""


class ConversationBusy(StoreError):
    """Another sender or resumer (this process or another) holds the conversation right now."""

    def __init__(self, message: str, conversation_id: str) -> None:
        super().__init__(message)
        self.conversation_id = conversation_id


# --------------------------------------------------------------------------- protocol


class StoreCorruptWarning(UserWarning):
    """``load(..., on_corrupt="skip")`` left rows out; the message names them."""


class CassetteError(Error, ValueError):
    """The file cannot be read as a cassette (the message says why)."""


# --------------------------------------------------------------------------- reading


class TranscriptError(Error, ValueError):
    """A source could not be read as the format asked for; the message names the source, the
    place (line, row, field) and what to do."""


class TranscriptNotFound(TranscriptError, FileNotFoundError):
    """The source path does not exist (a ``FileNotFoundError`` too, for callers that catch that)."""


class TranscriptTruncated(TranscriptError):
    """A JSON transcript that stops before its document ends (a crash mid-write). The message
    says where and which format it looks like; ``transcript`` holds what is complete (only
    whole top-level elements) as that format, or None when nothing could be read; ``inspect``
    shows it with the cut as a finding."""

    def __init__(self, message: str, transcript: Any, format: str | None) -> None:  # a transcripts.base.Transcript or None
        super().__init__(message)
        self.transcript = transcript
        self.format = format


class MultipleThreads(TranscriptError):
    """The source holds several threads and none was picked; ``threads`` lists them."""

    def __init__(self, source: str, threads: list[str]) -> None:
        self.threads = threads
        shown = ", ".join(threads[:20]) + (" ..." if len(threads) > 20 else "")
        super().__init__(
            f"{source} holds {len(threads)} threads ({shown}); pick one with thread=..."
        )


class FormatUnavailable(TranscriptError):
    """A format is registered but its module is not there (not written yet, or not installed)."""


class NoAvailableKeyError(ProviderError):
    """Every key is benched; ``retry_after`` says when the first one comes back."""


class GateError(Error, RuntimeError):
    """The shared gate's server could not be reached or answered with an error."""
