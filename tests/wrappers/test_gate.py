"""The FIFO gate: order, limits, interrupts, and the slot held by a real stream."""

from __future__ import annotations

import threading
import time

import pytest

import providerkit_nb as pk
import providerkit_nb.wrappers as pk_wrappers
from providerkit_nb.wrappers import create_gate
from providerkit_nb.wrappers.gate import Gate

from .helpers import HISTORY, chat, sigint_when, wait_until
from .server import KeepAlive, Ok, StallBody

pytestmark = pytest.mark.timeout(60)


def test_public_names_and_validation():
    g = create_gate(3)
    assert isinstance(g, pk_wrappers.Gate) and g.in_use == 0 and g.queued == 0 and g.limit == 3
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="whole number of slots"):
            create_gate(bad)
    with pytest.raises(RuntimeError, match="more times than acquire"):
        g.release()


def test_a_late_caller_cannot_barge_past_the_queue():
    """The case threading.Semaphore gets wrong: release() then an immediate acquire() from
    the releasing thread must queue behind the five waiters, not jump them."""
    gate = create_gate(1)
    assert gate.acquire()
    order: list[int] = []

    def waiter(i: int) -> None:
        gate.acquire()
        order.append(i)
        gate.release()

    threads = []
    for i in range(5):
        t = threading.Thread(target=waiter, args=(i,))
        t.start()
        threads.append(t)
        assert wait_until(lambda n=i + 1: gate.queued == n)
    gate.release()
    assert gate.acquire(timeout=5)  # queued behind all five
    order.append(99)
    gate.release()
    for t in threads:
        t.join(5)
    assert order == [0, 1, 2, 3, 4, 99]
    assert gate.in_use == 0 and gate.queued == 0


def test_timeout_leaves_the_queue_and_counts():
    gate = create_gate(1)
    with gate:
        t0 = time.monotonic()
        assert gate.acquire(timeout=0.1) is False
        assert time.monotonic() - t0 >= 0.09
        assert gate.acquire(timeout=0) is False
        assert gate.queued == 0 and gate.in_use == 1
    st = gate.status()
    assert st["timeouts"] == 2 and st["in_use"] == 0


def test_status_shows_longest_wait_and_per_call_waits():
    gate = create_gate(1)
    slot = gate.slot()
    assert slot.acquire()
    waiting = gate.slot()
    t = threading.Thread(target=waiting.acquire)
    t.start()
    assert wait_until(lambda: gate.queued == 1)
    time.sleep(0.15)
    st = gate.status()
    assert st["queued"] == 1 and st["in_use"] == 1
    assert st["longest_wait"] >= 0.14
    slot.release()
    slot.release()  # idempotent: gives back nothing twice
    t.join(5)
    assert waiting.state == "held" and waiting.wait >= 0.14
    st = gate.status()
    assert st["recent_waits"][-1] == pytest.approx(waiting.wait)
    assert st["max_wait"] >= 0.14 and st["longest_wait"] == 0.0
    waiting.release()
    assert gate.in_use == 0


def test_200_threads_through_4_slots_fifo_and_never_more_than_4_in_flight(server):
    """Real HTTP calls: the server counts what is in flight; arrival order is fixed by
    starting each thread only once the previous one has arrived at the gate."""
    gate = create_gate(4)
    provider = pk.with_gate(chat(server, Ok(delay=0.03, pieces=2)), gate)
    granted: dict[int, int] = {}
    errors: list[BaseException] = []

    def call(i: int) -> None:
        try:
            s = provider.create_stream(HISTORY)
            turn = pk.collect_turn(s)
            assert turn.message.content == "Hello there"
            granted[i] = s.info["gate_granted"]
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = []
    for i in range(200):
        t = threading.Thread(target=call, args=(i,))
        t.start()
        threads.append(t)
        assert wait_until(lambda n=i + 1: gate.status()["arrived"] == n)
    for t in threads:
        t.join(30)
    assert not errors
    assert server.peak == 4  # the cap was reached and never passed
    assert server.total == 200
    assert [granted[i] for i in range(200)] == list(range(200))  # granted in arrival order
    assert gate.in_use == 0 and gate.queued == 0
    provider.close()


def _holder(provider):
    """Hold a slot with a real stalled stream in another thread."""
    s = provider.create_stream(HISTORY)
    box: dict = {}

    def run() -> None:
        try:
            for _ in s:
                pass
        except BaseException as exc:
            box["exc"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return s, t, box


def test_sigint_while_waiting_leaves_the_queue_and_holds_nothing(server):
    gate = create_gate(1)
    holder_provider = pk.with_gate(chat(server, StallBody(before=1)), gate)
    hs, ht, box = _holder(holder_provider)
    assert wait_until(lambda: server.in_flight == 1 and gate.in_use == 1)

    waiter_provider = pk.with_gate(chat(server, Ok()), gate)
    sigint_when(lambda: gate.queued == 1)
    with pytest.raises(KeyboardInterrupt):
        pk.collect_turn(waiter_provider.create_stream(HISTORY))
    assert gate.queued == 0 and gate.in_use == 1  # the holder still has its slot
    assert gate.status()["interrupted"] == 1

    hs.close()  # from this thread, while the holder reads: hangs up
    ht.join(5)
    assert isinstance(box.get("exc"), pk.ProviderError)
    assert gate.in_use == 0
    assert wait_until(lambda: server.in_flight == 0 and server.connections == 0)
    # nothing was handed away wrongly: the next caller gets the slot at once
    assert gate.acquire(timeout=0)
    gate.release()
    holder_provider.close()
    waiter_provider.close()


@pytest.mark.parametrize("transport", ["httpx", "requests"])
def test_sigint_while_streaming_releases_the_slot_and_hangs_up(server, transport):
    gate = create_gate(1)
    provider = pk.with_gate(pk.with_watchdog(chat(server, KeepAlive(before=1), transport=transport)), gate)
    sigint_when(lambda: server.in_flight == 1, settle=0.15)
    with pytest.raises(KeyboardInterrupt):
        pk.collect_turn(provider.create_stream(HISTORY))
    assert gate.in_use == 0 and gate.queued == 0
    assert wait_until(lambda: server.in_flight == 0 and server.connections == 0)
    assert server.client_hangups == 1
    provider.close()


def test_slot_taken_on_first_read_and_released_on_every_ending(server):
    gate = create_gate(1)
    ok = pk.with_gate(chat(server, Ok()), gate)
    s = ok.create_stream(HISTORY)
    assert gate.in_use == 0  # nothing happens until the stream is read
    next(s)
    assert gate.in_use == 1
    list(s)  # exhausted
    assert gate.in_use == 0

    s = ok.create_stream(HISTORY)
    next(s)
    s.close()  # closed early
    assert gate.in_use == 0

    from .server import Cut

    cut = pk.with_gate(chat(server, Cut(before=1)), gate)
    with pytest.raises(pk.ProviderError) as ei:
        pk.collect_turn(cut.create_stream(HISTORY))
    assert ei.value.kind == "network"
    assert gate.in_use == 0

    unread = ok.create_stream(HISTORY)
    unread.close()  # never read: nothing taken, nothing given back
    assert gate.in_use == 0
    assert gate.acquire(timeout=0)
    gate.release()
    ok.close()
    cut.close()


def test_gate_complete_holds_a_slot_for_the_whole_call(server):
    gate = create_gate(2)
    p = pk.with_gate(chat(server, Ok(delay=0.2)), gate)
    seen: list = []
    t = threading.Thread(target=lambda: seen.append(p.complete(HISTORY).message.content))
    t.start()
    assert wait_until(lambda: server.in_flight == 1)
    seen.append(gate.in_use)
    t.join(5)
    assert seen == [1, "Hello there"] and gate.in_use == 0
    p.close()


def test_gate_is_not_a_semaphore():
    assert not isinstance(create_gate(1), threading.Semaphore)
    assert isinstance(create_gate(1), Gate)


def test_gate_counts_number_arrivals_and_grants_and_keep_the_longest_wait():
    # the counters both gates (in-process and PostgreSQL) report through status()
    from providerkit_nb.wrappers.gate import GateCounts

    c = GateCounts()
    assert [c.arrive(), c.arrive(), c.arrive()] == [0, 1, 2]
    assert [c.grant(0.5), c.grant(0.25)] == [0, 1]
    c.time_out()
    c.interrupt()
    assert c.counts() == {"arrived": 3, "granted": 2, "timeouts": 1, "interrupted": 1, "max_wait": 0.5}
    assert GateCounts.waits([0.5, 0.25]) == {"recent_waits": [0.5, 0.25], "mean_wait": 0.375}
    assert GateCounts.waits([]) == {"recent_waits": [], "mean_wait": 0.0}
