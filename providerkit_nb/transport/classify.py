"""Turning what a provider said into a ProviderError of the right kind.

The kinds are decided here; the wait and reset a failure announces are read by
``retry_after.py`` and credentials are removed by ``scrub.py``. One place decides, so every wire
and wrapper agrees: an HTTP status with its body and headers
(``http_error``), an error frame inside a 200 stream (``stream_error``), or any exception a
caller caught (``classify`` / ``as_provider_error``). The order matters and is fixed: the body
is read before the status for client errors, because vendors put quota exhaustion behind 400,
402, 403 and 429 alike, and only the wording tells them apart.

Nothing here imports httpx or requests: exceptions are recognised by class name and errno, so
the core can classify without the network stack.
"""

from __future__ import annotations

import errno as _errno
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..core.errors import BODY_LIMIT, ErrorKind, ProviderError
from ..core.json_input import JsonInputError, read_json
from ..core.overflow import is_context_overflow
from .retry_after import rate_limit_info, should_retry
from .scrub import scrub

__all__ = [
    "classify",
    "classify_http",
    "as_provider_error",
    "http_error",
    "stream_error",
    "is_transport_failure",
    "is_abort",
    "reduce_html",
    "error_message_of",
]

MESSAGE_LIMIT = 500

# --------------------------------------------------------------------------- wording families

_I = re.IGNORECASE

CONTEXT = re.compile(
    r"context[ _]length[ _]exceeded|maximum context length|context window|prompt is too long"
    r"|input is too long|too many (?:input )?tokens|reduce the length of the (?:messages|prompt|input)"
    r"|input length and `?max_tokens`? exceed context limit|exceed(?:s|ed)? (?:the )?context limit"
    r"|exceeds? the (?:model's )?maximum (?:number of |input |prompt |context )?(?:tokens|length|context)",
    _I,
)
ENTITLEMENT = re.compile(
    r"plan (?:does not|doesn't) (?:include|support)|not included (?:in|with) your [\w .-]{0,40}plan"
    r"|upgrade to [\w .-]{1,30} or higher|upgrade to [\w .-]{1,30} plan"
    r"|requires? (?:the |a |an )?[\w .-]{1,30} plan|requires? (?:a )?subscription|subscription_required"
    r"|upgrade for access|no api access"
    r"|OAuth authentication is currently not allowed for this organization|usage[_ ]not[_ ]included",
    _I,
)
QUOTA = re.compile(
    r"insufficient_quota|exceeded your current quota|insufficient (?:balance|credits?)"
    r"|credit balance is too low|(?:no|any|out of) credits|(?:credits?|balance) (?:is )?depleted"
    r"|usage limits? (?:reached|exceeded|hit)|reached your (?:usage|weekly|monthly|daily) limit"
    r"|(?:weekly|monthly|daily|plan) usage limit|usage_limit_reached|usage limit has been reached"
    r"|purchase extra usage|upgrade your plan|quota[^.]{0,40}?(?:exhausted|exceeded|will be refreshed)"
    r"|balance (?:is )?(?:too low|not enough|insufficient)|billing_error|arrears?"
    r"|余额不足|欠费|额度不足|额度已用完",
    _I,
)
MODEL = re.compile(
    r"\bmodels?\b[^\n]{0,40}?(?:not found|does not exist|unknown)|no model named|unsupported model"
    r"|supported API model names are|unknown model|is not a valid model ID",
    _I,
)
AUTH = re.compile(
    r"invalid[_ ]?(?:x-api-key|api[_ ]key|token|credentials?)|api[_ ]key (?:is )?(?:not valid|invalid|incorrect)"
    r"|incorrect api key|unauthori[sz]ed|UNAUTHENTICATED|PERMISSION_DENIED"
    r"|authentication (?:failed|invalid|error)|authentication_error"
    r"|account (?:is )?(?:disabled|suspended|deactivated|banned)"
    r"|unrecognizedclient|unauthorizedexception|accessdeniedexception|expired[_ ]?token|invalid_grant"
    r"|OAuth token has been revoked|perhaps your object identifier is invalid",
    _I,
)
_CONTENT_I = re.compile(
    r"content[_ ]filter|content policy|cyber[_ ]?policy|\bsafety\b|PROHIBITED_CONTENT|\bblocked\b|refusal"
    r"|policy violation|misalignment|bio[_ ]?policy|violat\w* (?:our|the) usage polic"
    r"|maximum of \d+ PDF pages|PDF specified is password protected|images? exceeds? [^\n]{0,40}maximum"
    r"|image dimensions exceed",
    _I,
)
_CONTENT_CS = re.compile(r"invalid_prompt")
RATE = re.compile(
    r"rate[ _-]?limit|too[ _-]many[ _-]requests|resource[ _]?exhausted|throttl(?:e|ed|ing)"
    r"|(?:requests|tokens) per (?:second|sec|minute|min)",
    _I,
)
_OVERLOAD_I = re.compile(
    r"overloaded(?:_error)?|unavailable|internal error|capacity|server is busy|high demand"
    r"|\"code\":\s*5\d\d\b|(?:try|retry) your request again",
    _I,
)
_OVERLOAD_CS = re.compile(r"\bINTERNAL\b")
# A setting of the request or of the server, refused with a 5xx: changing it is the fix, a retry
# is not. llama.cpp started without --jinja answers a request with tools (or a tool_choice) with
# 500 (tools/server/server-common.cpp); llama-cpp-python answers a field its request model does not
# take with 500 and pydantic's validation error (llama_cpp/server/app.py); vLLM answers an
# unsupported tool_choice on its Responses API with 501 (vllm-project/vllm#53626).
SETTING = re.compile(
    r"tools param requires --jinja flag|Unsupported param: tool_choice"
    r"|\d+ validation errors?:?\s*\{'type': '\w+', 'loc': \('body',"
    r"|Only 'auto' or 'none' tool_choice is supported",
    _I,
)
_TIMEOUT = re.compile(r"timed out|timeout", _I)

_ABORT_NAMES = frozenset({"AbortError", "APIUserAbortError"})
_ABORT_TEXT = re.compile(
    r"client closed request|client cancel(?:l)?ed request|request cancel(?:l)?ed by client", _I
)

# Exception classes (by name, anywhere in the MRO) that mean "the connection failed".
_TRANSPORT_NAMES = frozenset(
    {
        "APIConnectionError",
        "APIConnectionTimeoutError",
        "TransportError",  # httpx base (its timeouts are caught first as timeouts)
        "NetworkError",
        "ConnectError",
        "ReadError",
        "WriteError",
        "CloseError",
        "RemoteProtocolError",
        "LocalProtocolError",
        "ProxyError",
        "StreamClosed",
        "ProtocolError",  # urllib3
        "NewConnectionError",
        "MaxRetryError",
        "ChunkedEncodingError",  # requests
        "ConnectionError",  # builtin and requests
        "IncompleteRead",
        "RemoteDisconnected",
        "SSLError",
        "CertificateError",
        "gaierror",
        "herror",
    }
)
_TIMEOUT_NAMES = frozenset(
    {"TimeoutError", "TimeoutException", "ReadTimeout", "ConnectTimeout", "WriteTimeout", "PoolTimeout",
     "Timeout", "ConnectTimeoutError", "ReadTimeoutError", "timeout", "APITimeoutError"}
)
_TRANSPORT_ERRNOS = frozenset(
    getattr(_errno, n)
    for n in ("ECONNRESET", "ECONNREFUSED", "ECONNABORTED", "ETIMEDOUT", "EPIPE", "ENETUNREACH",
              "ENETDOWN", "EHOSTUNREACH", "EHOSTDOWN", "ENOTCONN", "ESHUTDOWN")
    if hasattr(_errno, n)
)
_TRANSPORT_CODES = frozenset(
    {
        "ECONNRESET", "ECONNREFUSED", "ECONNABORTED", "ETIMEDOUT", "EPIPE", "ENETUNREACH", "ENETDOWN",
        "ENOTFOUND", "EHOSTUNREACH", "EAI_AGAIN", "ERR_STREAM_PREMATURE_CLOSE",
        "UNABLE_TO_VERIFY_LEAF_SIGNATURE", "UNABLE_TO_GET_ISSUER_CERT", "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
        "CERT_SIGNATURE_FAILURE", "CERT_HAS_EXPIRED", "CERT_NOT_YET_VALID", "DEPTH_ZERO_SELF_SIGNED_CERT",
        "SELF_SIGNED_CERT_IN_CHAIN", "ERR_TLS_CERT_ALTNAME_INVALID", "HOSTNAME_MISMATCH",
        "ERR_SSL_WRONG_VERSION_NUMBER",
    }
)
_TRANSPORT_TEXT = re.compile(
    r"failed to fetch|fetch failed|network ?error|network connection (?:was )?lost|load failed"
    r"|unable to connect|socket hang up|socket (?:connection )?(?:was )?closed"
    r"|connection (?:error|closed|refused|reset|lost|aborted)|premature close"
    r"|stream (?:ended|closed) unexpectedly|und_err|name or service not known"
    r"|temporary failure in name resolution|nodename nor servname|server disconnected"
    r"|peer closed connection|incomplete chunked read",
    _I,
)
CAUSE_DEPTH = 5

# --------------------------------------------------------------------------- error pages and messages

_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def reduce_html(text: str) -> str | None:
    """An HTML error page (a proxy's 502 or a CDN's 504) reduced to its title, else None."""
    head = text.lstrip()[:200].lower()
    if not (head.startswith("<!doctype") or head.startswith("<html") or "<title" in text[:4000].lower()):
        return None
    m = _TITLE.search(text)
    if m is None:
        return "HTML error page"
    return " ".join(m.group(1).split()) or "HTML error page"


def _find_error_obj(data: Any) -> dict[str, Any] | None:
    """The dict holding the error fields in any vendor envelope (OpenAI, Anthropic, Gemini,
    Responses, OpenRouter, Groq)."""
    if isinstance(data, list) and data:
        data = data[0]  # Gemini JSON-array streams wrap their error Status in a list
    if not isinstance(data, dict):
        return None
    resp = data.get("response")
    if isinstance(resp, dict) and isinstance(resp.get("error"), dict):
        found: dict[str, Any] = resp["error"]
        return found
    err = data.get("error")
    if isinstance(err, dict):
        return err
    if isinstance(err, str):
        return {"message": err, **{k: v for k, v in data.items() if k != "error"}}
    return data


def error_message_of(body: str) -> str | None:
    """The human sentence inside a JSON error body, if there is one."""
    try:
        data = read_json(body)
    except JsonInputError:
        return None
    obj = _find_error_obj(data)
    if obj is None:
        return None
    msg = obj.get("message")
    if isinstance(msg, str) and msg.strip():
        raw = None
        meta = obj.get("metadata")
        if isinstance(meta, dict) and isinstance(meta.get("raw"), str):
            raw = meta["raw"]  # OpenRouter: "Provider returned error" hides the real reason here
        return f"{msg} ({raw[:300]})" if raw else msg
    return None


# --------------------------------------------------------------------------- classification


def _client(status: int | None) -> bool:
    """No status (an error frame in a stream) or a 4xx: the body's wording decides first."""
    return status is None or status < 500


def _says(*patterns: re.Pattern[str]) -> Callable[[int | None, str], bool]:
    """A step that holds when the text matches any of ``patterns``."""
    return lambda status, text: bool(text) and any(p.search(text) for p in patterns)


def _client_says(*patterns: re.Pattern[str]) -> Callable[[int | None, str], bool]:
    """A step that holds for a client error (or no status) whose text matches any of ``patterns``."""
    return lambda status, text: bool(text) and _client(status) and any(p.search(text) for p in patterns)


def _status_is(*statuses: int) -> Callable[[int | None, str], bool]:
    return lambda status, text: status in statuses


def _context_said(status: int | None, text: str) -> bool:
    return bool(text) and _client(status) and (CONTEXT.search(text) is not None or is_context_overflow(text))


def _auth(status: int | None, text: str) -> bool:
    return status in (401, 403) or (bool(text) and AUTH.search(text) is not None)


def _overloaded_status(status: int | None, text: str) -> bool:
    return status is not None and (status in (529, 409, 425) or status >= 500)


def _other_http_error(status: int | None, text: str) -> bool:
    return status is not None and status >= 400


# Steps 4-12 of the classification order, first match wins: (kind, does it hold for this status
# and text). A step that reads the text does not hold for an empty one.
_TEXT_STEPS: tuple[tuple[ErrorKind, Callable[[int | None, str], bool]], ...] = (
    (ErrorKind.TIMEOUT, _status_is(408)),
    (ErrorKind.CONTEXT, _context_said),
    (ErrorKind.ENTITLEMENT, _client_says(ENTITLEMENT)),
    (ErrorKind.QUOTA, _client_says(QUOTA)),
    (ErrorKind.MODEL, _says(MODEL)),
    (ErrorKind.AUTH, _auth),
    (ErrorKind.QUOTA, _status_is(402)),
    (ErrorKind.MODEL, _status_is(404)),
    (ErrorKind.RATE, _status_is(429)),
    (ErrorKind.CONTENT, _says(_CONTENT_I, _CONTENT_CS)),
    (ErrorKind.INVALID, _says(SETTING)),
    (ErrorKind.OVERLOAD, _overloaded_status),
    (ErrorKind.RATE, _says(RATE)),
    (ErrorKind.OVERLOAD, _says(_OVERLOAD_I, _OVERLOAD_CS)),
    (ErrorKind.TIMEOUT, _says(_TIMEOUT)),
    (ErrorKind.INVALID, _other_http_error),
)


def _text_kind(status: int | None, text: str) -> ErrorKind:
    """Steps 4-12 of the classification order, on a status and the text it came with."""
    for kind, holds in _TEXT_STEPS:
        if holds(status, text):
            return kind
    return ErrorKind.UNKNOWN


def classify_http(status: int | None, body: str = "", headers: Mapping[str, str] | None = None) -> ErrorKind:
    """The kind for an HTTP status and its body text (HTML pages count by their title)."""
    title = reduce_html(body) if body else None
    return _text_kind(status, title if title is not None else body)


def _names(exc: BaseException) -> set[str]:
    return {c.__name__ for c in type(exc).__mro__}


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and len(out) < CAUSE_DEPTH + 1 and cur not in out:
        out.append(cur)
        cur = cur.__cause__ or cur.__context__
    return out


def is_abort(exc: BaseException) -> bool:
    """The caller stopped it (Stop button, KeyboardInterrupt, a client-side cancel)."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    if isinstance(exc, ProviderError):
        return exc.kind is ErrorKind.ABORTED
    if _names(exc) & _ABORT_NAMES or getattr(exc, "code", None) == "ABORT_ERR":
        return True
    return bool(_ABORT_TEXT.search(str(exc)))


def _one_transport(exc: BaseException) -> ErrorKind | None:
    names = _names(exc)
    if names & _TIMEOUT_NAMES:
        return ErrorKind.TIMEOUT
    if names & _TRANSPORT_NAMES:
        return ErrorKind.NETWORK
    err_no = getattr(exc, "errno", None)
    if isinstance(exc, OSError) and err_no in _TRANSPORT_ERRNOS:
        return ErrorKind.TIMEOUT if err_no == _errno.ETIMEDOUT else ErrorKind.NETWORK
    code = getattr(exc, "code", None)
    if isinstance(code, str) and (code in _TRANSPORT_CODES or (code.startswith("UND_ERR_") and code != "UND_ERR_ABORTED")):
        return ErrorKind.NETWORK
    if _TRANSPORT_TEXT.search(str(exc)):
        return ErrorKind.NETWORK
    return None


def is_transport_failure(exc: BaseException) -> ErrorKind | None:
    """NETWORK or TIMEOUT when the exception (or a cause up to 5 levels down) is a connection
    failure; None otherwise, and None when an abort sits anywhere in the chain."""
    chain = _chain(exc)
    if any(is_abort(e) for e in chain):
        return None
    for e in chain:
        kind = _one_transport(e)
        if kind is not None:
            return kind
    return None


def _status_of(err: Any) -> int | None:
    for attr in ("status", "status_code", "http_status"):
        v = getattr(err, attr, None)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    resp = getattr(err, "response", None)
    v = getattr(resp, "status_code", None)
    return v if isinstance(v, int) else None


def _body_text_of(err: Any) -> str:
    parts = [str(err)]
    for attr in ("body", "error"):
        v = getattr(err, attr, None)
        if v is None or v is err:
            continue
        try:
            parts.append(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str))
        except Exception:
            parts.append(str(v))
    return " ".join(parts)


def classify(err_or_status: Any, body: Any = None) -> ErrorKind:
    """The kind of any failure: a ProviderError, an exception from any HTTP stack or SDK, or an
    HTTP status with its body. Never raises."""
    try:
        return _classify(err_or_status, body)
    except Exception:  # pragma: no cover - classification must not fail the caller
        return ErrorKind.UNKNOWN


def _classify(err: Any, body: Any) -> ErrorKind:
    if isinstance(err, ProviderError):
        return err.kind
    text = "" if body is None else body if isinstance(body, str) else json.dumps(body, ensure_ascii=False, default=str)
    if isinstance(err, bool):
        err = None
    if err is None or isinstance(err, int):
        return classify_http(err, text)
    if isinstance(err, str):
        return classify_http(None, err + (" " + text if text else ""))
    if isinstance(err, BaseException):
        if is_abort(err):
            return ErrorKind.ABORTED
        transport = is_transport_failure(err)
        if transport is not None:
            return transport
        if _names(err) & {"TimeoutError", "APITimeoutError"}:
            return ErrorKind.TIMEOUT
    status = _status_of(err)
    full = _body_text_of(err) + (" " + text if text else "")
    return classify_http(status, full)


# --------------------------------------------------------------------------- building errors


def _code_of(obj: dict[str, Any] | None) -> str | None:
    if not obj:
        return None
    for key in ("code", "status", "type"):
        v = obj.get(key)
        if isinstance(v, str) and v:
            return v
    return None


def _status_in(obj: dict[str, Any] | None) -> int | None:
    if not obj:
        return None
    for key in ("code", "status", "status_code"):
        v = obj.get(key)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
        if isinstance(v, str) and v.isdigit() and len(v) == 3:
            return int(v)
    return None


def http_error(
    provider: str,
    status: int,
    headers: Mapping[str, str] | None,
    body: str,
    *,
    secrets: Iterable[str] = (),
    now: float | None = None,
) -> ProviderError:
    """The error for a non-2xx answer, built once, with everything the caller can act on."""
    body = scrub(body or "", secrets)
    title = reduce_html(body)
    kind = _text_kind(status, title if title is not None else body)
    if title is not None:
        said = title
    else:
        said = error_message_of(body) or body.strip()
    said = " ".join(said.split())[:MESSAGE_LIMIT]
    message = f"{provider} {status}: {said}" if said else f"{provider} {status}"
    code = None
    if title is None and body:
        try:
            code = _code_of(_find_error_obj(read_json(body)))
        except JsonInputError:
            code = None
    retry_after, reset_at, window = rate_limit_info(headers, body, now)
    if kind not in (ErrorKind.RATE, ErrorKind.QUOTA):
        reset_at = window = None  # a 529 must not bench a model for days
    return ProviderError(
        provider,
        kind,
        message,
        status=status,
        code=code,
        retry_after=retry_after,
        reset_at=reset_at,
        window=window,
        should_retry=should_retry(headers),
        body=body[:BODY_LIMIT],
    )


def stream_error(
    provider: str,
    payload: Any,
    *,
    secrets: Iterable[str] = (),
    headers: Mapping[str, str] | None = None,
    now: float | None = None,
) -> ProviderError:
    """An error frame inside a 200 stream, in any dialect: OpenAI/OpenRouter ``{"error": ...}``,
    Anthropic ``event: error``, Responses ``response.failed``/``error``, Gemini Status, Groq
    ``event: error``. An unrecognised one is floored to overload (worth a retry, never a
    silent empty turn)."""
    if isinstance(payload, str | bytes):
        raw = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload
        try:
            payload = read_json(raw)
        except JsonInputError:  # not JSON, or nested beyond reading
            payload = {"message": raw}
    try:
        text = scrub(json.dumps(payload, ensure_ascii=False, default=str), secrets)
    except (ValueError, RecursionError):
        payload = {"message": "an error frame nested too deeply to read"}
        text = scrub(json.dumps(payload, ensure_ascii=False), secrets)
    obj = _find_error_obj(payload)
    status = _status_in(obj)
    code = _code_of(obj)
    kind = _text_kind(status, text)
    if kind is ErrorKind.UNKNOWN:
        kind = ErrorKind.OVERLOAD
    said = None
    if obj is not None and isinstance(obj.get("message"), str) and obj["message"].strip():
        said = obj["message"]
    said = scrub(" ".join((said or code or "no reason given").split()), secrets)[:MESSAGE_LIMIT]
    retry_after, reset_at, window = rate_limit_info(headers, text, now)
    if kind not in (ErrorKind.RATE, ErrorKind.QUOTA):
        reset_at = window = None
    return ProviderError(
        provider,
        kind,
        f"{provider} stream error: {said}",
        status=status,
        code=code,
        retry_after=retry_after,
        reset_at=reset_at,
        window=window,
        body=text[:BODY_LIMIT],
    )


def as_provider_error(provider: str, err: BaseException, *, secrets: Iterable[str] = ()) -> ProviderError:
    """Any exception as a ProviderError (an existing one is returned unchanged: classification
    happens once and the first provider id sticks)."""
    if isinstance(err, ProviderError):
        return err
    kind = classify(err)
    status = _status_of(err)
    body = scrub(_body_text_of(err), secrets)
    message = scrub(str(err), secrets) or type(err).__name__
    if kind in (ErrorKind.NETWORK, ErrorKind.TIMEOUT):
        message = f"{provider}: {'timed out' if kind is ErrorKind.TIMEOUT else 'no response'} ({type(err).__name__}: {message})"
    else:
        message = f"{provider}: {message}"
    headers = getattr(getattr(err, "response", None), "headers", None)
    retry_after, reset_at, window = rate_limit_info(headers if isinstance(headers, Mapping) else None, body)
    if kind not in (ErrorKind.RATE, ErrorKind.QUOTA):
        reset_at = window = None
    return ProviderError(
        provider,
        kind,
        message[: MESSAGE_LIMIT + 100],
        status=status,
        retry_after=retry_after,
        reset_at=reset_at,
        window=window,
        body=body[:BODY_LIMIT],
        cause=err,
    )
