"""How long a failure says to wait, and when a usage window resets.

Read from the headers (``retry-after`` in seconds or as a date, the vendors' reset headers,
Anthropic's unified and ChatGPT's codex usage windows) and from the body (Gemini's
``retryDelay``, a wait stated in prose), so the retry wrapper and the backup chooser agree.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from datetime import UTC
from email.utils import parsedate_to_datetime
from typing import Any

from ..core.json_input import JsonInputError, read_json

__all__ = [
    "retry_after_from_headers",
    "retry_after_from_body",
    "rate_limit_info",
    "should_retry",
    "RESET_HEADERS",
]

RESET_HEADERS = (
    "anthropic-ratelimit-unified-reset",
    "anthropic-ratelimit-requests-reset",
    "anthropic-ratelimit-tokens-reset",
    "x-ratelimit-reset-requests",
    "x-ratelimit-reset-tokens",
    "x-ratelimit-reset",
)
_GO_DURATION = re.compile(r"^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?$")
_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")


def _get(headers: Mapping[str, str] | None, name: str) -> str | None:
    if not headers:
        return None
    v = headers.get(name)
    if v is None and not hasattr(headers, "get_list"):  # plain dicts: case-insensitive by hand
        for k, val in headers.items():
            if k.lower() == name:
                v = val
                break
    if isinstance(v, list | tuple):
        v = v[0] if v else None
    return v.strip() if isinstance(v, str) else None


def _parse_date(value: str, now: float) -> float | None:
    try:
        dt = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        dt = None
    if dt is None:
        from datetime import datetime

        try:
            dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    if dt.tzinfo is None:

        dt = dt.replace(tzinfo=UTC)
    return max(0.0, dt.timestamp() - now)


def _parse_wait(value: str, now: float, *, epoch_ok: bool) -> float | None:
    """Seconds to wait from a header value: number (epoch when large), Go duration, or date."""
    if not value:
        return None
    if _NUMBER.match(value):
        v = float(value)
        if epoch_ok and v > 1e9:
            return max(0.0, v - now)
        return v
    m = _GO_DURATION.match(value)
    if m and any(m.groups()):
        h, mi, s, ms = (float(g) if g else 0.0 for g in m.groups())
        return h * 3600 + mi * 60 + s + ms / 1000
    return _parse_date(value, now)


def retry_after_from_headers(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait: ``retry-after-ms``, ``retry-after`` (seconds, fractional, Go duration or
    HTTP date), else the first reset header that parses. None when nothing applies."""
    if not headers:
        return None
    now = time.time() if now is None else now
    ms = _get(headers, "retry-after-ms")
    if ms and _NUMBER.match(ms):
        return float(ms) / 1000
    ra = _get(headers, "retry-after")
    if ra:
        wait = _parse_wait(ra, now, epoch_ok=False)
        if wait is not None:
            return wait
    for name in RESET_HEADERS:
        v = _get(headers, name)
        if v:
            wait = _parse_wait(v, now, epoch_ok=True)
            if wait is not None:
                return wait
    return None


_RETRY_DELAY = re.compile(r'"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"')
_PROSE_WAIT = re.compile(
    r"(?:try again in|retry after|resets? (?:in|after)|retry-after:)\s*(\d+(?:\.\d+)?)\s*"
    r"(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hours?)?\b",
    re.IGNORECASE,
)


def _real_number(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int | float):
        return float(v) if math.isfinite(v) and v >= 0 else None
    if isinstance(v, str) and v.strip() and _NUMBER.match(v.strip()):
        return float(v.strip())
    return None


def retry_after_from_body(body: str, now: float | None = None) -> tuple[float | None, float | None]:
    """(wait seconds, reset epoch) stated in an error body: usage-limit fields, Gemini's
    RetryInfo ``retryDelay``, or prose such as "try again in 20s". A null, "" or false never
    reads as zero."""
    if not body:
        return None, None
    now = time.time() if now is None else now
    try:
        data = read_json(body)
    except JsonInputError:
        data = None
    for obj in (data.get("error") if isinstance(data, dict) else None, data):
        if not isinstance(obj, dict):
            continue
        v = _real_number(obj.get("resets_in_seconds"))
        if v is not None:
            return v, now + v
        t = _real_number(obj.get("resets_at"))
        if t is not None:
            return max(0.0, t - now), t
        for key in ("retry_after", "retry_after_seconds"):
            v = _real_number(obj.get(key))
            if v is not None:
                return v, now + v
    m = _RETRY_DELAY.search(body)
    if m:
        v = float(m.group(1))
        return v, now + v
    m = _PROSE_WAIT.search(body)
    if m:
        n = float(m.group(1))
        unit = (m.group(2) or "s").lower()
        mult = 0.001 if unit.startswith("ms") or unit.startswith("milli") else 3600 if unit.startswith("h") else 60 if unit.startswith("m") else 1
        v = n * mult
        return v, now + v
    return None, None


def _window_name(seconds: float) -> str | None:
    if seconds <= 600:
        return None
    if seconds <= 5.5 * 3600:
        return "5h"
    if seconds <= 7.5 * 86400:
        return "weekly"
    return "monthly"


def _header_windows(headers: Mapping[str, str], now: float) -> tuple[float | None, str | None]:
    """The binding usage window from Anthropic unified or ChatGPT codex headers."""
    best: tuple[float, float, str] | None = None  # (utilization, reset_at, window)
    for tag, window in (("5h", "5h"), ("7d", "weekly")):
        u = _real_number(_get(headers, f"anthropic-ratelimit-unified-{tag}-utilization"))
        r = _get(headers, f"anthropic-ratelimit-unified-{tag}-reset")
        if u is None or not r:
            continue
        wait = _parse_wait(r, now, epoch_ok=True)
        if wait is None or wait <= 0:
            continue
        if best is None or u > best[0]:
            best = (u, now + wait, window)
    for slot in ("primary", "secondary"):
        pct = _real_number(_get(headers, f"x-codex-{slot}-used-percent"))
        if pct is None:
            continue
        minutes = _real_number(_get(headers, f"x-codex-{slot}-window-minutes"))
        at = _real_number(_get(headers, f"x-codex-{slot}-reset-at"))
        after = _real_number(_get(headers, f"x-codex-{slot}-reset-after-seconds"))
        reset = at if at is not None else (now + after if after is not None else None)
        if reset is None or reset <= now:
            continue
        slot_window = _window_name(minutes * 60) if minutes else _window_name(reset - now)
        if best is None or pct / 100 > best[0]:
            best = (pct / 100, reset, slot_window or "5h")
    if best is None:
        return None, None
    return best[1], best[2]


def rate_limit_info(
    headers: Mapping[str, str] | None, body: str = "", now: float | None = None
) -> tuple[float | None, float | None, str | None]:
    """(retry_after seconds, reset_at epoch, window) from headers and body together.

    The retry wait is the header's, else the body's. The reset is the later of the two; a usage
    window's reset overrides retry-after's (a 60 s retry-after can sit beside a weekly window).
    """
    now = time.time() if now is None else now
    h_wait = retry_after_from_headers(headers, now)
    b_wait, b_reset = retry_after_from_body(body, now)
    h_reset, h_window = _header_windows(headers, now) if headers else (None, None)
    if h_reset is None and h_wait is not None:
        h_reset = now + h_wait
    retry_after = h_wait if h_wait is not None else b_wait
    resets = [r for r in (h_reset, b_reset) if r is not None]
    reset_at = max(resets) if resets else None
    b_window = _window_name(b_reset - now) if b_reset is not None else None
    if b_reset is not None and (h_reset is None or b_reset > h_reset):
        window = b_window or h_window
    else:
        window = h_window or (_window_name(h_reset - now) if h_reset is not None else None) or b_window
    return retry_after, reset_at, window


def should_retry(headers: Mapping[str, str] | None) -> bool | None:
    """The server's own advice (``x-should-retry``), when it gives one."""
    v = _get(headers, "x-should-retry")
    if v is None:
        return None
    v = v.lower()
    return True if v == "true" else False if v == "false" else None
