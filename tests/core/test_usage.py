"""cost_usd and UsageTracker, with expectations worked out by hand from the rates each
test states, not read back from the code."""

from __future__ import annotations

import pytest

import providerkit_nb.usage as pk_usage
from providerkit_nb.core.turn import Usage
from providerkit_nb.usage import Rate

RATE = Rate(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)


def test_cost_prices_each_input_token_once() -> None:
    # 1000 input of which 600 cached and 200 written: 200 miss
    u = Usage(input_tokens=1000, cached_input_tokens=600, cache_write_tokens=200, output_tokens=100)
    want = (200 * 3.0 + 600 * 0.3 + 200 * 3.75 + 100 * 15.0) / 1e6
    assert pk_usage.cost_usd(u, RATE) == pytest.approx(want)


def test_cache_write_defaults_to_the_input_price_and_cache_read_too() -> None:
    u = Usage(input_tokens=1000, cached_input_tokens=500, cache_write_tokens=100, output_tokens=0)
    assert pk_usage.cost_usd(u, Rate(2.0, 8.0)) == pytest.approx(1000 * 2.0 / 1e6)


def test_cost_clamps_nonsense_counts() -> None:
    u = Usage(input_tokens=100, cached_input_tokens=500, output_tokens=-5)
    assert pk_usage.cost_usd(u, RATE) == pytest.approx(100 * 0.3 / 1e6)  # cached clamped to input


def test_reported_cost_wins_even_when_zero_and_without_a_rate_nothing_is_guessed() -> None:
    assert pk_usage.cost_usd(Usage(10, 0, 0, 10, reported_cost_usd=0.0), RATE) == 0.0
    assert pk_usage.cost_usd(Usage(10, 0, 0, 10, reported_cost_usd=0.25), None) == 0.25
    assert pk_usage.cost_usd(Usage(10, 0, 0, 10), None) is None


def test_rate_from_a_mapping_and_validation() -> None:
    assert Rate.coerce({"input": 1, "output": 2, "cached_input": 0.1}) == Rate(1, 2, 0.1)
    with pytest.raises(ValueError, match="unknown"):
        Rate.coerce({"inputs": 1})
    with pytest.raises(ValueError, match="finite"):
        Rate(-1, 2)


def test_tracker_sums_tokens_cost_and_savings() -> None:
    t = pk_usage.UsageTracker(rate=RATE)
    t.add(Usage(1000, 800, 0, 50))
    t.add(Usage(2000, 1500, 0, 70))
    assert t.totals == Usage(3000, 2300, 0, 120)
    assert t.cost_usd == pytest.approx((700 * 3.0 + 2300 * 0.3 + 120 * 15.0) / 1e6)
    assert t.savings_usd == pytest.approx(2300 * (3.0 - 0.3) / 1e6)
    assert t.calls == 2


def test_tracker_without_a_rate_counts_reported_bills_only() -> None:
    t = pk_usage.UsageTracker()
    t.add(Usage(10, 0, 0, 10, reported_cost_usd=0.5)).add(Usage(10, 0, 0, 10))
    assert t.cost_usd == 0.5 and t.savings_usd == 0.0
    t.add(Usage(1_000_000, 0, 0, 0), rate={"input": 1.0, "output": 0.0})  # a rate for this call only
    assert t.cost_usd == pytest.approx(1.5)


def test_subtract_rolls_back_and_clamps_at_zero() -> None:
    t = pk_usage.UsageTracker(rate=RATE)
    u = Usage(1000, 500, 0, 100)
    t.add(u)
    t.subtract(u)
    assert t.totals == Usage() and t.cost_usd == pytest.approx(0.0) and t.savings_usd == pytest.approx(0.0)
    t.subtract(u)
    assert t.totals == Usage() and t.cost_usd == 0.0 and t.calls == 0


def test_budget() -> None:
    t = pk_usage.UsageTracker(rate=Rate(1.0, 1.0), budget_usd=0.002)
    assert not t.is_over_budget()
    t.add(Usage(1000, 0, 0, 0))
    assert not t.is_over_budget() and t.is_over_budget(0.001)
    t.add(Usage(1000, 0, 0, 0))
    assert t.is_over_budget()  # cost >= budget
    assert not pk_usage.UsageTracker().is_over_budget()  # no budget: never over
    t.reset()
    assert t.totals == Usage() and not t.is_over_budget()
