"""Turning what a provider said (status, headers, body, in-band error frames, transport
failures) into a ProviderError of the right kind.

FIRST CUT: status-only classification. The wording families, the classification order and
every Retry-After form from the behaviour reference belong here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..core.errors import BODY_LIMIT, ErrorKind, ProviderError

__all__ = ["classify_http", "retry_after_from_headers", "http_error", "stream_error", "scrub"]


def scrub(text: str, secrets: Iterable[str]) -> str:
    """Remove credentials from text that may echo them back."""
    for s in secrets:
        if s and len(s) >= 4:
            text = text.replace(s, "***")
    return text


def classify_http(status: int, body: str = "", headers: Mapping[str, str] | None = None) -> ErrorKind:
    if status in (401, 403):
        return ErrorKind.AUTH
    if status == 404:
        return ErrorKind.MODEL
    if status == 408:
        return ErrorKind.TIMEOUT
    if status == 429:
        return ErrorKind.RATE
    if status >= 500 or status in (409, 425, 529):
        return ErrorKind.OVERLOAD
    if 400 <= status < 500:
        return ErrorKind.INVALID
    return ErrorKind.UNKNOWN


def retry_after_from_headers(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    if not headers:
        return None
    value = headers.get("retry-after")
    if value is not None:
        try:
            return max(0.0, float(value))
        except ValueError:
            return None
    return None


def http_error(
    provider: str,
    status: int,
    headers: Mapping[str, str] | None,
    body: str,
    *,
    secrets: Iterable[str] = (),
) -> ProviderError:
    body = scrub(body, secrets)
    kind = classify_http(status, body, headers)
    message = f"{provider} {status}: {body[:500]}" if body.strip() else f"{provider} {status}"
    return ProviderError(
        provider,
        kind,
        message,
        status=status,
        retry_after=retry_after_from_headers(headers),
        body=body[:BODY_LIMIT],
    )


def stream_error(provider: str, payload: Any, *, secrets: Iterable[str] = ()) -> ProviderError:
    """An error frame inside a 200 stream; unknown kinds are floored to overload."""
    import json

    text = scrub(payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False), secrets)
    return ProviderError(provider, ErrorKind.OVERLOAD, f"{provider}: stream error: {text[:500]}", body=text)
