"""with_retry against a real server: what is retried, how long it waits, and what never is."""

from __future__ import annotations

import random
import time

import pytest

import providerkit_nb as pk
from providerkit_nb.core.turn import TextDelta
from providerkit_nb.errors import is_retryable
from providerkit_nb.wrappers.retry import server_wait

from .helpers import HISTORY, WIRES, chat
from .server import Cut, Ok, StallHeaders, Status, StreamError

pytestmark = pytest.mark.timeout(60)



@pytest.mark.parametrize("wire", sorted(WIRES))
def test_429_waits_exactly_the_servers_retry_after(server, wire):
    inner = WIRES[wire](server, Status(429, retry_after=0.05), Ok(text="after the wait"))
    sleeps: list[float] = []
    p = pk.with_retry(inner, sleep=sleeps.append)
    assert pk.collect_turn(p.create_stream(HISTORY)).message.content == "after the wait"
    assert sleeps == [0.05]
    assert len(server.requests_for(inner.base_url)) == 2
    p.close()


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_529_overloaded_backs_off_with_full_jitter(server, wire):
    inner = WIRES[wire](server, Status(529), Status(529), Ok())
    sleeps: list[float] = []
    p = pk.with_retry(inner, attempts=3, base=1.0, cap=30.0, sleep=sleeps.append, rng=random.Random(7))
    assert pk.collect_turn(p.create_stream(HISTORY)).message.content == "Hello there"
    assert len(sleeps) == 2
    assert 0 <= sleeps[0] < 1.0 and 0 <= sleeps[1] < 2.0  # below min(cap, base * 2**(n-1))
    p.close()


def test_a_server_wait_longer_than_the_cap_gives_up_at_once(server):
    inner = chat(server, Status(429, retry_after=120), Ok())
    sleeps: list[float] = []
    p = pk.with_retry(inner, cap=30.0, sleep=sleeps.append)
    t0 = time.monotonic()
    with pytest.raises(pk.ProviderError) as ei:
        pk.collect_turn(p.create_stream(HISTORY))
    assert ei.value.kind == "rate" and ei.value.retry_after == 120
    assert sleeps == [] and time.monotonic() - t0 < 1
    assert len(server.requests_for(inner.base_url)) == 1
    p.close()


def test_max_wait_can_allow_a_longer_server_wait(server):
    inner = chat(server, Status(429, retry_after=45), Ok())
    sleeps: list[float] = []
    p = pk.with_retry(inner, cap=30.0, max_wait=60.0, sleep=sleeps.append)
    assert pk.collect_turn(p.create_stream(HISTORY)).finish_reason == "stop"
    assert sleeps == [45.0]
    p.close()


@pytest.mark.parametrize("code", [400, 401, 404])
def test_errors_that_a_retry_cannot_fix_are_not_retried(server, code):
    inner = chat(server, Status(code), Ok())
    sleeps: list[float] = []
    p = pk.with_retry(inner, sleep=sleeps.append)
    with pytest.raises(pk.ProviderError) as ei:
        pk.collect_turn(p.create_stream(HISTORY))
    assert ei.value.status == code and not is_retryable(ei.value)
    assert sleeps == [] and len(server.requests_for(inner.base_url)) == 1
    p.close()


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_after_the_first_chunk_a_failure_propagates_and_nothing_repeats(server, wire):
    inner = WIRES[wire](server, Cut(before=2), Ok())
    p = pk.with_retry(inner, sleep=lambda s: None)
    texts = []
    with pytest.raises(pk.ProviderError) as ei:
        for c in p.create_stream(HISTORY):
            if isinstance(c, TextDelta) and c.text:
                texts.append(c.text)
    assert ei.value.kind == "network"
    assert texts == ["p0 ", "p1 "]
    assert len(server.requests_for(inner.base_url)) == 1
    p.close()


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_an_in_stream_error_before_any_content_is_retried(server, wire):
    inner = WIRES[wire](server, StreamError(before=0), Ok(text="second"))
    p = pk.with_retry(inner, sleep=lambda s: None)
    assert pk.collect_turn(p.create_stream(HISTORY)).message.content == "second"
    assert len(server.requests_for(inner.base_url)) == 2
    p.close()


def test_each_abandoned_attempt_is_closed_before_the_next_opens(server):
    inner = chat(server, StallHeaders(), StallHeaders(), Ok())
    p = pk.with_retry(pk.with_watchdog(inner, first_byte=0.2), sleep=lambda s: None)
    assert pk.collect_turn(p.create_stream(HISTORY)).finish_reason == "stop"
    seen = server.requests_for(inner.base_url)
    assert len(seen) == 3
    # When each new request arrived, the client had already hung up on the earlier ones.
    assert [s.open_before for s in seen] == [0, 0, 0]
    p.close()


def test_attempts_run_out_and_the_last_error_is_raised(server):
    inner = chat(server, Status(503))
    calls: list[dict] = []
    p = pk.with_retry(inner, attempts=4, sleep=lambda s: None, on_retry=calls.append)
    with pytest.raises(pk.ProviderError) as ei:
        pk.collect_turn(p.create_stream(HISTORY))
    assert ei.value.status == 503
    assert len(server.requests_for(inner.base_url)) == 4
    assert [c["attempt"] for c in calls] == [1, 2, 3]
    assert all(c["error"].kind == "overload" for c in calls)
    p.close()


def test_complete_is_retried_too(server):
    inner = chat(server, Status(529), Ok(text="whole"))
    p = pk.with_retry(inner, sleep=lambda s: None)
    assert p.complete(HISTORY).message.content == "whole"
    p.close()


def test_an_interrupt_during_the_backoff_is_not_retried(server):
    inner = chat(server, Status(529), Ok())

    def sleep(seconds: float) -> None:
        raise KeyboardInterrupt

    p = pk.with_retry(inner, sleep=sleep)
    with pytest.raises(KeyboardInterrupt):
        pk.collect_turn(p.create_stream(HISTORY))
    assert len(server.requests_for(inner.base_url)) == 1
    p.close()


def test_a_hang_up_cuts_the_backoff_short(server):
    """A watchdog outside the retry fires during a long backoff: the wait ends at once."""
    inner = chat(server, Status(529), Ok())
    p = pk.with_watchdog(pk.with_retry(inner, base=20.0, rng=random.Random(3)), total=0.3)
    t0 = time.monotonic()
    with pytest.raises(pk.ProviderError) as ei:
        pk.collect_turn(p.create_stream(HISTORY))
    assert ei.value.kind == "timeout"
    assert isinstance(ei.value.__cause__, pk.ProviderError) and ei.value.__cause__.status == 529
    assert time.monotonic() - t0 < 1.0
    assert len(server.requests_for(inner.base_url)) == 1
    p.close()


def test_server_wait_reads_retry_after_and_reset():
    now = 1_000_000.0
    e = pk.ProviderError("p", "rate", "slow down", retry_after=3.0, reset_at=now + 10)
    assert server_wait(e, lambda: now) == 10.0  # the binding reset wins over Retry-After
    assert server_wait(pk.ProviderError("p", "rate", "x", retry_after=2.5), lambda: now) == 2.5
    assert server_wait(pk.ProviderError("p", "overload", "x"), lambda: now) is None
    assert server_wait(ValueError("x")) is None


def test_reset_far_away_gives_up_at_once():
    """A weekly window's reset (in the error the adapter built) beats a short Retry-After."""
    p = pk.with_retry(pk.openai(model="m", api_key="sk-x", base_url="http://127.0.0.1:9/v1"))
    far = pk.ProviderError("p", "rate", "weekly limit", retry_after=60, reset_at=time.time() + 3 * 86400)
    near = pk.ProviderError("p", "rate", "per minute", retry_after=1)
    assert p.should_retry(near) and not p.should_retry(far)


def test_bad_settings_are_refused():
    p = pk.openai(model="m", api_key="sk-x", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ValueError, match="attempts"):
        pk.with_retry(p, attempts=0)
    with pytest.raises(ValueError, match="base"):
        pk.with_retry(p, base=-1)


class _CallerBug(Exception):
    pass


@pytest.mark.parametrize("wire", sorted(WIRES))
@pytest.mark.parametrize("on_call", [2, 4], ids=["first-body-read", "mid-stream"])
@pytest.mark.parametrize("error", [AttributeError, _CallerBug])
def test_a_raising_on_activity_callback_comes_out_as_it_is_and_is_never_retried(server, wire, on_call, error):
    # the callback runs inside the body reads, i.e. inside the parser guard: its exception is
    # the caller's bug, not a garbled response, so it is neither "overload" nor retried
    inner = WIRES[wire](server, Ok(pieces=6), Ok(pieces=6))
    raised: list[BaseException] = []
    calls = [0]

    def on_activity() -> None:
        calls[0] += 1
        if calls[0] == on_call:  # call 1 is the headers; later ones are body reads
            exc = error("the caller's own bug")
            raised.append(exc)
            raise exc

    p = pk.with_retry(inner, sleep=lambda s: None)
    with pytest.raises(error) as ei:
        pk.collect_turn(p.create_stream(HISTORY, on_activity=on_activity))
    assert ei.value is raised[0]
    assert not isinstance(ei.value, pk.ProviderError)
    assert len(server.requests_for(inner.base_url)) == 1
    p.close()
