"""The watchdog's clocks against a real server that stalls, pings, or trickles."""

from __future__ import annotations

import threading
import time

import pytest

import providerkit_nb as pk
from providerkit_nb.core.errors import is_retryable
from providerkit_nb.core.turn import TextDelta
from providerkit_nb.wrappers import create_gate

from .helpers import HISTORY, WIRE_TRANSPORTS, WIRES, chat, sigint_when, wait_until
from .server import Empty, KeepAlive, Ok, StallBody, StallHeaders, Trickle

pytestmark = pytest.mark.timeout(60)

CLOCK = 0.3
SLACK = 0.25  # the monitor's own latency plus the hang-up, on a loaded 2-core machine


def _fails_with_timeout(provider, low: float, high: float) -> pk.ProviderError:
    t0 = time.monotonic()
    with pytest.raises(pk.ProviderError) as ei:
        pk.collect_turn(provider.create_stream(HISTORY))
    took = time.monotonic() - t0
    assert ei.value.kind == "timeout"
    assert ei.value.is_transient and is_retryable(ei.value)
    assert low <= took <= high, took
    return ei.value


@pytest.mark.parametrize(("wire", "transport"), WIRE_TRANSPORTS)
def test_first_byte_clock_fires_on_a_server_that_never_answers(server, wire, transport):
    p = pk.with_watchdog(WIRES[wire](server, StallHeaders(), transport=transport), first_byte=CLOCK, idle=5)
    err = _fails_with_timeout(p, CLOCK, CLOCK + SLACK)
    assert "first_byte" in str(err)
    assert wait_until(lambda: server.in_flight == 0 and server.client_hangups == 1)
    p.close()


@pytest.mark.parametrize(("wire", "transport"), WIRE_TRANSPORTS)
def test_idle_clock_fires_when_only_keepalives_arrive(server, wire, transport):
    """Keep-alive comments (Chat, Responses), ping events (Anthropic) and blank lines (Gemini)
    arrive every 50 ms: bytes, but no parsed chunk, so they must not reset the idle clock."""
    p = pk.with_watchdog(WIRES[wire](server, KeepAlive(every=0.05), transport=transport), first_byte=5, idle=CLOCK)
    err = _fails_with_timeout(p, CLOCK, CLOCK + SLACK)
    assert "without a chunk" in str(err)
    assert wait_until(lambda: server.in_flight == 0)
    p.close()


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_idle_clock_fires_after_headers_and_some_content(server, wire):
    p = pk.with_watchdog(WIRES[wire](server, StallBody(before=2)), first_byte=5, idle=CLOCK)
    s = p.create_stream(HISTORY)
    got = []
    t0 = time.monotonic()
    with pytest.raises(pk.ProviderError) as ei:
        for c in s:
            if isinstance(c, TextDelta):
                got.append(c.text)
    assert ei.value.kind == "timeout"
    assert got == ["p0 ", "p1 "]  # what streamed before the silence was delivered
    assert CLOCK <= time.monotonic() - t0 <= CLOCK + SLACK + 0.1
    p.close()


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_total_clock_bounds_a_trickling_turn(server, wire):
    """Chunks every 50 ms keep the idle clock happy; only the total clock can end it."""
    p = pk.with_watchdog(WIRES[wire](server, Trickle(every=0.05, count=200)), first_byte=5, idle=CLOCK, total=0.6)
    err = _fails_with_timeout(p, 0.6, 0.6 + SLACK)
    assert "longer than 0.6s" in str(err)
    p.close()


def test_a_retry_after_a_fired_clock_succeeds(server):
    inner = chat(server, StallHeaders(), KeepAlive(), Ok(text="third time"))
    sleeps: list[float] = []
    p = pk.with_retry(pk.with_watchdog(inner, first_byte=CLOCK, idle=CLOCK), attempts=3, sleep=sleeps.append)
    turn = pk.collect_turn(p.create_stream(HISTORY))
    assert turn.message.content == "third time"
    assert len(sleeps) == 2
    outcomes = ["client hung up", "client hung up", "ok"]
    assert wait_until(lambda: [s.outcome for s in server.requests_for(inner.base_url)] == outcomes)
    p.close()


def test_a_slow_consumer_is_not_a_silent_server(server):
    """The idle clock waits while the caller holds a chunk."""
    p = pk.with_watchdog(chat(server, Ok(pieces=3)), idle=0.2)
    texts = []
    stream = p.create_stream(HISTORY)
    for c in stream:
        if isinstance(c, TextDelta):
            texts.append(c.text)
            time.sleep(0.3)  # longer than the idle clock
    assert "".join(texts) == "Hello there"
    assert stream.info["watchdog"].fired is None  # the body may all be buffered: a firing shows only here
    p.close()


def test_callers_own_interrupt_stays_an_interrupt(server):
    p = pk.with_watchdog(chat(server, StallBody(before=1)), first_byte=5, idle=5)
    sigint_when(lambda: server.in_flight == 1, settle=0.15)
    with pytest.raises(KeyboardInterrupt):
        pk.collect_turn(p.create_stream(HISTORY))
    assert wait_until(lambda: server.in_flight == 0)
    p.close()


def test_clocks_start_when_the_gate_grants_the_slot(server):
    """Gate outside watchdog: a call that waits 0.6 s for its slot does not spend its 0.4 s
    first-byte clock in the queue."""
    gate = create_gate(1)
    slow = pk.with_gate(pk.with_watchdog(chat(server, Ok(delay=0.6)), first_byte=5), gate)
    quick = pk.with_gate(pk.with_watchdog(chat(server, Ok(delay=0.2)), first_byte=0.4), gate)
    holder = threading.Thread(target=lambda: pk.collect_turn(slow.create_stream(HISTORY)))
    holder.start()
    assert wait_until(lambda: gate.in_use == 1)
    s = quick.create_stream(HISTORY)
    turn = pk.collect_turn(s)  # waited ~0.6 s in line, then 0.2 s for its answer
    holder.join(5)
    assert turn.message.content == "Hello there"
    assert s.info["gate_wait"] >= 0.5

    # The wrong order, for contrast: clocks running while in line fire.
    wrong = pk.with_watchdog(pk.with_gate(chat(server, Ok(delay=0.2)), gate), first_byte=0.4)
    holder = threading.Thread(target=lambda: pk.collect_turn(slow.create_stream(HISTORY)))
    holder.start()
    assert wait_until(lambda: gate.in_use == 1)
    with pytest.raises(pk.ProviderError) as ei:
        pk.collect_turn(wrong.create_stream(HISTORY))
    assert ei.value.kind == "timeout"
    holder.join(5)
    assert gate.in_use == 0
    for p in (slow, quick, wrong):
        p.close()


# --------------------------------------------------------------------------- requireContent


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_empty_turn_is_overload(server, wire):
    p = pk.with_watchdog(WIRES[wire](server, Empty("stop")))
    with pytest.raises(pk.ProviderError) as ei:
        pk.collect_turn(p.create_stream(HISTORY))
    assert ei.value.kind == "overload" and "no content" in str(ei.value)
    p.close()


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_empty_turn_cut_by_the_output_cap_is_invalid(server, wire):
    p = pk.with_watchdog(WIRES[wire](server, Empty("length")))
    with pytest.raises(pk.ProviderError) as ei:
        pk.collect_turn(p.create_stream(HISTORY))
    assert ei.value.kind == "invalid" and "Raise max_tokens" in str(ei.value)
    p.close()


def test_empty_stop_after_a_tool_result_passes(server):
    history = [
        {"role": "user", "content": "read it"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "read", "arguments": "{}"}]},
        {"role": "tool", "tool_call_id": "c1", "name": "read", "content": "done"},
    ]
    p = pk.with_watchdog(chat(server, Empty("stop")))
    turn = pk.collect_turn(p.create_stream(history))
    assert turn.message.content == "" and turn.finish_reason == "stop"
    p.close()


def test_require_content_off_passes_an_empty_turn(server):
    p = pk.with_watchdog(chat(server, Empty("stop")), require_content=False)
    assert pk.collect_turn(p.create_stream(HISTORY)).finish_reason == "stop"
    p.close()


def test_an_empty_turn_is_retried(server):
    inner = chat(server, Empty("stop"), Ok(text="there it is"))
    p = pk.with_retry(pk.with_watchdog(inner), sleep=lambda s: None)
    assert pk.collect_turn(p.create_stream(HISTORY)).message.content == "there it is"
    assert len(server.requests_for(inner.base_url)) == 2
    p.close()


def test_bad_clock_values_are_refused():
    p = pk.openai(model="m", api_key="sk-x", base_url="http://127.0.0.1:9/v1")
    for kw in ({"idle": 0}, {"first_byte": -1}, {"total": "5"}, {"idle": None}):
        with pytest.raises(ValueError, match="seconds"):
            pk.with_watchdog(p, **kw)
    with pytest.raises(TypeError, match="wraps a Provider"):
        pk.with_watchdog(object())
