"""Tokens and money: price a turn, sum a session, stop at a budget."""

from .core.usage import BudgetExceeded, Rate, UsageTracker, cost_usd

__all__ = ["BudgetExceeded", "Rate", "UsageTracker", "cost_usd"]
