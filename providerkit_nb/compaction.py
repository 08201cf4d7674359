"""When a conversation outgrows its window: the decision, the cut, the summarised history."""

from .core.compaction import (
    ContextOverflow,
    apply_compaction,
    conversation_tokens,
    estimate_tokens,
    guess_context_window,
    history_budget_tokens,
    needs_compaction,
    parse_context_overflow,
    pick_cut,
)

__all__ = [
    "ContextOverflow",
    "apply_compaction",
    "conversation_tokens",
    "estimate_tokens",
    "guess_context_window",
    "history_budget_tokens",
    "needs_compaction",
    "parse_context_overflow",
    "pick_cut",
]
