"""Error classification: order, wording families, Retry-After forms, in-band frames, scrubbing.

Wordings are the providers' own, as their APIs word them in error bodies (several read from
the recordings in this repository)."""

from __future__ import annotations

import errno
import json
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

import providerkit_nb.errors as pk_errors
from providerkit_nb.core.errors import ErrorKind, ProviderError, is_retryable
from providerkit_nb.transport.classify import as_provider_error, classify, http_error, stream_error
from providerkit_nb.transport.retry_after import (
    rate_limit_info,
    retry_after_from_body,
    retry_after_from_headers,
)
from providerkit_nb.transport.scrub import scrub

NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        # quota hides behind many statuses: the body is read first for client errors
        (429, '{"error":{"code":"insufficient_quota","message":"You exceeded your current quota, please check your plan"}}', "quota"),
        (402, '{"error":{"message":"Insufficient Balance"}}', "quota"),
        (403, "Your credit balance is too low to access the API", "quota"),
        (400, '{"error":{"message":"余额不足"}}', "quota"),
        (429, "too many input tokens for context window", "context"),
        (429, "Rate limit reached: Limit 20 per minute, 1000 per day", "rate"),  # not quota
        (403, "Your plan does not include API access. Upgrade your plan.", "entitlement"),
        (400, "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens", "context"),
        (400, "Model Not Exist. The supported API model names are deepseek-chat or deepseek-reasoner", "model"),
        (400, "openai/gpt-9 is not a valid model ID", "model"),
        (404, "perhaps your object identifier is invalid", "auth"),
        (401, '{"error":{"message":"Incorrect API key provided"}}', "auth"),
        (400, "Reasoning is mandatory for this endpoint and cannot be disabled.", "invalid"),
        (400, '{"error":{"code":"invalid_prompt","message":"flagged"}}', "content"),
        (529, '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', "overload"),
        (409, "model is loading", "overload"),
        (425, "", "overload"),
        (503, "", "overload"),
        (408, "", "timeout"),
        (404, "", "model"),
        (400, "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'.", "invalid"),
        (None, "", "unknown"),
    ],
)
def test_http_classification(status: int | None, body: str, kind: str) -> None:
    assert classify(status, body) == kind


def test_html_error_page_is_reduced_to_its_title() -> None:
    page = "<!DOCTYPE html><html><head><title>504 Gateway Time-out</title></head><body>" + "x" * 5000 + "</body></html>"
    err = http_error("openai", 504, {}, page)
    assert err.kind is ErrorKind.OVERLOAD
    assert err.message == "openai 504: 504 Gateway Time-out"
    assert len(err.body) == 2000


@pytest.mark.parametrize(
    ("headers", "wait"),
    [
        ({"retry-after": "20"}, 20.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": format_datetime(datetime.fromtimestamp(NOW + 30, UTC), usegmt=True)}, 30.0),
        ({"x-ratelimit-reset-requests": "6m0s"}, 360.0),
        ({"x-ratelimit-reset-tokens": "20ms"}, 0.02),
        ({"x-ratelimit-reset": str(int(NOW + 45))}, 45.0),
        ({"anthropic-ratelimit-unified-reset": "2027-01-15T08:00:45Z"}, None),  # a date: checked below
        ({}, None),
    ],
)
def test_retry_after_forms(headers: dict[str, str], wait: float | None) -> None:
    got = retry_after_from_headers(headers, now=NOW)
    if "anthropic-ratelimit-unified-reset" in headers:
        want = datetime(2027, 1, 15, 8, 0, 45, tzinfo=UTC).timestamp() - NOW
        assert got == pytest.approx(want)
    elif wait is None:
        assert got is None
    else:
        assert got == pytest.approx(wait)


def test_retry_after_from_bodies() -> None:
    gemini = json.dumps({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": [
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}]}})
    assert retry_after_from_body(gemini, NOW)[0] == 37.0
    assert retry_after_from_body('{"error":{"resets_in_seconds":120}}', NOW) == (120.0, NOW + 120)
    # null / "" / false never read as "retry now"
    assert retry_after_from_body('{"error":{"resets_in_seconds":null,"retry_after":""}}', NOW) == (None, None)
    assert retry_after_from_body("Please try again in 2m", NOW)[0] == 120.0


def test_windows_only_for_rate_and_quota() -> None:
    weekly = {"retry-after": "60", "anthropic-ratelimit-unified-7d-utilization": "1.0",
              "anthropic-ratelimit-unified-7d-reset": str(int(NOW + 3 * 86400))}
    q = http_error("claude", 429, weekly, "weekly usage limit reached", now=NOW)
    assert (q.kind, q.retry_after, q.window, q.reset_at) == (ErrorKind.QUOTA, 60.0, "weekly", NOW + 3 * 86400)
    o = http_error("claude", 529, weekly, '{"error":{"type":"overloaded_error"}}', now=NOW)
    assert o.kind is ErrorKind.OVERLOAD and o.window is None and o.reset_at is None
    assert rate_limit_info(weekly, "", NOW)[2] == "weekly"


def test_x_should_retry_wins() -> None:
    err = http_error("openai", 500, {"x-should-retry": "false"}, "boom")
    assert err.kind is ErrorKind.OVERLOAD and err.is_transient is False and is_retryable(err) is False
    err = http_error("openai", 429, {"x-should-retry": "true", "retry-after": "5"}, "rate limit")
    assert is_retryable(err)


@pytest.mark.parametrize(
    ("payload", "kind", "status"),
    [
        ({"error": {"code": 429, "message": "Rate limit exceeded: free-models-per-min"}}, "rate", 429),  # OpenRouter
        ({"type": "error", "error": {"details": None, "type": "overloaded_error", "message": "Overloaded"}}, "overload", None),
        ({"type": "response.failed", "response": {"status": "failed", "error": {"code": "rate_limit_exceeded", "message": "slow down"}}}, "rate", None),
        ({"type": "error", "code": "context_length_exceeded", "message": "Your input exceeds the context window"}, "context", None),
        ({"error": {"code": 429, "message": "Resource has been exhausted", "status": "RESOURCE_EXHAUSTED"}}, "rate", 429),
        ({"error": {"message": "Tool call validation failed", "type": "invalid_request_error", "code": "tool_use_failed", "status_code": 400}}, "invalid", 400),
        ({"error": {"message": "something odd"}}, "overload", None),  # unknown is floored to overload
    ],
)
def test_in_band_errors(payload: dict, kind: str, status: int | None) -> None:
    err = stream_error("p", payload)
    assert (err.kind.value, err.status) == (kind, status)
    assert err.message.startswith("p stream error: ")


def test_transport_failures_walk_the_cause_chain() -> None:
    try:
        try:
            raise ConnectionResetError(errno.ECONNRESET, "reset by peer")
        except OSError as inner:
            raise RuntimeError("wrapped once") from inner
    except RuntimeError as outer:
        assert classify(outer) is ErrorKind.NETWORK
    assert classify(TypeError("x.map is not a function")) is ErrorKind.UNKNOWN
    assert classify(KeyboardInterrupt()) is ErrorKind.ABORTED
    assert classify(TimeoutError("read")) is ErrorKind.TIMEOUT
    # an abort anywhere in the chain is not a network failure
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as k:
            raise ConnectionError("connection reset") from k
    except ConnectionError as e:
        assert classify(e) is not ErrorKind.NETWORK


def test_chain_deeper_than_five_is_not_followed() -> None:
    exc: BaseException = ConnectionRefusedError(errno.ECONNREFUSED, "refused")
    for i in range(7):
        try:
            raise ValueError(f"level {i}") from exc
        except ValueError as e:
            exc = e
    assert classify(exc) is not ErrorKind.NETWORK


def test_key_is_scrubbed_from_message_and_body() -> None:
    key = "sk-proj-SECRETSECRETSECRET1234"
    body = json.dumps({"error": {"message": f"Incorrect API key provided: {key}"}})
    err = http_error("openai", 401, {}, body, secrets=[key])
    assert key not in err.message and key not in (err.body or "") and key not in repr(err)
    assert "sk-ant-api03-abcdefgh" not in scrub("x-api-key sk-ant-api03-abcdefghijkl", ())
    assert "AIzaSy" not in scrub("https://x/?key=AIzaSyA1234567890abcdefghijklmnopqrstu&alt=sse", ())


def test_provider_error_from_any_exception_keeps_first_classification() -> None:
    first = ProviderError("a", "timeout", "watchdog fired")
    assert as_provider_error("b", first) is first
    class APIStatusError(Exception):
        status_code = 429
        body = {"error": {"message": "Rate limit reached"}}
    err = as_provider_error("sdk", APIStatusError("429"))
    assert err.kind is ErrorKind.RATE and err.status == 429


def test_public_name() -> None:
    assert pk_errors.classify(402, "") == "quota"
