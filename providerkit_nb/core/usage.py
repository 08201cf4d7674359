"""What calls cost: a price per million tokens, the cost of one turn's usage, and a tracker
that sums a session (with cache savings and an optional budget).

No price tables ship: prices change every month and differ per account, so the caller states
the ``Rate`` it pays. A provider-reported bill (OpenRouter) wins over any rate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import (
    BudgetExceeded,  # noqa: F401 (defined at the bottom, kept importable here)
    )
from .renamed import CallableNumber, renamed, renamed_init_keywords, renamed_keywords
from .turn import Usage

__all__ = ["Rate", "cost_usd", "add_usage", "subtract_usage", "UsageTracker", "BudgetExceeded"]


@dataclass(frozen=True, slots=True)
class Rate:
    """USD per million tokens. ``cache_read`` prices cached input; ``cache_write`` prices
    cache writes (Anthropic), falling back to ``input`` when not given."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None

    def __post_init__(self) -> None:
        for name in ("input", "output", "cache_read", "cache_write"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v) or v < 0):
                raise ValueError(f"Rate.{name} must be a finite number >= 0 (USD per million tokens), got {v!r}")

    @classmethod
    def coerce(cls, value: Rate | Mapping[str, float] | None) -> Rate | None:
        """A Rate, or a mapping with ``input``/``output`` and optionally ``cache_read``
        (also spelled ``cached_input``) and ``cache_write``."""
        if value is None or isinstance(value, Rate):
            return value
        if not isinstance(value, Mapping):
            raise TypeError(f"a rate is a Rate or a mapping of USD per million tokens, got {type(value).__name__}")
        known = {"input", "output", "cache_read", "cached_input", "cache_write"}
        unknown = set(value) - known
        if unknown:
            raise ValueError(f"rate: unknown field(s) {sorted(unknown)}; known: {sorted(known)}")
        read = value.get("cache_read", value.get("cached_input"))
        return cls(float(value.get("input", 0.0)), float(value.get("output", 0.0)), read, value.get("cache_write"))

    @property
    def read(self) -> float:
        return self.input if self.cache_read is None else self.cache_read


def cost_usd(usage: Usage, rate: Rate | Mapping[str, float] | None) -> float | None:
    """The cost of one usage record: the provider's own bill when it stated one (even 0),
    else priced at ``rate`` (None without a rate). Cached and written tokens are subsets of
    the input, so each input token is billed once, at its own price."""
    if usage.reported_cost_usd is not None:
        return usage.reported_cost_usd
    r = Rate.coerce(rate)
    if r is None:
        return None
    total_in = max(0, usage.input_tokens)
    cached = min(max(0, usage.cached_input_tokens), total_in)
    written = max(0, usage.cache_write_tokens)
    miss = max(0, total_in - cached - written)
    write_rate = r.input if r.cache_write is None else r.cache_write
    return (miss * r.input + cached * r.read + written * write_rate + max(0, usage.output_tokens) * r.output) / 1e6


def add_usage(a: Usage, b: Usage) -> Usage:
    """Token sums (the reported bill and reasoning subset are per call, not summed here)."""
    return Usage(
        a.input_tokens + b.input_tokens,
        a.cached_input_tokens + b.cached_input_tokens,
        a.cache_write_tokens + b.cache_write_tokens,
        a.output_tokens + b.output_tokens,
    )


def subtract_usage(a: Usage, b: Usage) -> Usage:
    """``a - b``, each field clamped at 0 (a rollback never makes a negative count)."""
    return Usage(
        max(0, a.input_tokens - b.input_tokens),
        max(0, a.cached_input_tokens - b.cached_input_tokens),
        max(0, a.cache_write_tokens - b.cache_write_tokens),
        max(0, a.output_tokens - b.output_tokens),
    )


@renamed_init_keywords(max_usd="budget_usd")  # UsageTracker(max_usd=) of 0.x still works
@dataclass(slots=True)
class UsageTracker:
    """Running totals for a session: tokens, cost and what the cache saved.

    ``add(usage, rate)`` prices with ``rate`` when given, else counts the provider's reported
    bill (or nothing). ``subtract`` undoes an ``add`` (a rolled-back turn), clamping at 0.
    ``budget_usd`` is an optional budget: ``is_over_budget()`` is true once ``cost_usd`` reaches it.
    ``unreported`` counts finished turns whose server reported no usage (``add_unreported``):
    their tokens and cost are unknown, never zero, so the totals cover only the other turns.
    """

    rate: Rate | Mapping[str, float] | None = None  # the default for add() without one
    budget_usd: float | None = None
    totals: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    savings_usd: float = 0.0
    calls: int = 0
    last: Usage | None = None
    unreported: int = 0

    def __post_init__(self) -> None:
        self.rate = Rate.coerce(self.rate)
        if self.budget_usd is not None and (not math.isfinite(self.budget_usd) or self.budget_usd < 0):
            raise ValueError(f"budget_usd must be a finite number >= 0, got {self.budget_usd!r}")
        self.cost_usd = CallableNumber(self.cost_usd)

    def _priced(self, usage: Usage, rate: Rate | Mapping[str, float] | None) -> tuple[float, float]:
        r = Rate.coerce(rate) if rate is not None else self.rate
        if r is None:
            return (usage.reported_cost_usd or 0.0), 0.0
        assert isinstance(r, Rate)
        cost = cost_usd(usage, r) or 0.0  # a reported bill still wins over the rate
        cached = min(max(0, usage.cached_input_tokens), max(0, usage.input_tokens))
        return cost, cached * (r.input - r.read) / 1e6

    def add(self, usage: Usage | None, rate: Rate | Mapping[str, float] | None = None) -> UsageTracker:
        if usage is None:
            return self
        cost, saved = self._priced(usage, rate)
        self.totals = add_usage(self.totals, usage)
        self.cost_usd = CallableNumber(self.cost_usd + cost)
        self.savings_usd += saved
        self.calls += 1
        self.last = usage
        return self

    def add_unreported(self) -> UsageTracker:
        """A finished turn whose server reported no usage."""
        self.unreported += 1
        return self

    @property
    def reported(self) -> bool:
        """Did every turn counted report its usage (so the totals are the whole)?"""
        return self.unreported == 0

    def subtract(self, usage: Usage | None, rate: Rate | Mapping[str, float] | None = None) -> UsageTracker:
        if usage is None:
            return self
        cost, saved = self._priced(usage, rate)
        self.totals = subtract_usage(self.totals, usage)
        self.cost_usd = CallableNumber(max(0.0, self.cost_usd - cost))
        self.savings_usd = max(0.0, self.savings_usd - saved)
        self.calls = max(0, self.calls - 1)
        return self

    @renamed_keywords("UsageTracker.is_over_budget", max_usd="budget_usd")
    def is_over_budget(self, budget_usd: float | None = None) -> bool:
        """Has the cost reached ``budget_usd`` (default: the tracker's own budget)? Never
        true without a budget."""
        limit = self.budget_usd if budget_usd is None else budget_usd
        return limit is not None and self.cost_usd >= limit

    def check_budget(self) -> None:
        """Raise :class:`BudgetExceeded` if the budget is reached (call it before a call)."""
        if self.is_over_budget():
            assert self.budget_usd is not None
            raise BudgetExceeded(self.cost_usd, self.budget_usd, self.calls)

    def reset(self) -> None:
        self.totals = Usage()
        self.cost_usd = CallableNumber(0.0)
        self.savings_usd = 0.0
        self.calls = 0
        self.unreported = 0
        self.last = None

    def to_dict(self) -> dict[str, Any]:
        return {**self.totals.to_dict(), "calls": self.calls, "cost_usd": float(self.cost_usd),
                "cache_savings_usd": self.savings_usd, "budget_usd": self.budget_usd,
                "not_reported_turns": self.unreported}

    if not TYPE_CHECKING:  # the 0.x spellings: they work, with a warning; a checker sees the new ones

        @property
        def cost(self) -> float:
            renamed("UsageTracker.cost", "UsageTracker.cost_usd")
            return float(self.cost_usd)

        @property
        def savings(self) -> float:
            renamed("UsageTracker.savings", "UsageTracker.savings_usd")
            return self.savings_usd

        def cache_savings_usd(self) -> float:
            renamed("UsageTracker.cache_savings_usd()", "UsageTracker.savings_usd")
            return self.savings_usd

        @property
        def max_usd(self) -> float | None:
            renamed("UsageTracker.max_usd", "UsageTracker.budget_usd")
            return self.budget_usd

        @max_usd.setter
        def max_usd(self, value: float | None) -> None:
            renamed("UsageTracker.max_usd", "UsageTracker.budget_usd")
            self.budget_usd = value

