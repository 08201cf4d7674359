"""validate_history: say what is wrong with a history before a provider does.

The generic rules (``core.validate``) are exactly the breaks ``repair_history`` fixes, so a
repaired history always validates clean. With ``wire=...`` the rules of that wire's module run
too: each wire module keeps ``RULES`` (rule id and the provider's own wording) and ``check``,
which judges the history as that wire would send it (its own conversion, in the same module).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from ..core.messages import Message, ensure_messages
from ..core.validate import Problem
from ..core.validate import check as generic_check

__all__ = ["validate_history", "WIRES"]

# wire name -> (the module that holds its rules, dialect or None)
WIRES: dict[str, tuple[str, str | None]] = {
    "openai_chat": ("providerkit_nb.wire.openai_chat", None),
    "openai": ("providerkit_nb.wire.openai_chat", None),
    "deepseek": ("providerkit_nb.wire.openai_chat", "deepseek"),
    "responses": ("providerkit_nb.wire.openai_responses", None),
    "openai_responses": ("providerkit_nb.wire.openai_responses", None),
    "anthropic": ("providerkit_nb.wire.anthropic", None),
    "gemini": ("providerkit_nb.wire.gemini", None),
}


def _wire_check(wire: str) -> tuple[Callable[..., list[Problem]], str | None]:
    spec = WIRES.get(wire)
    if spec is None:
        raise ValueError(f"unknown wire {wire!r}; known wires: {', '.join(sorted(WIRES))}")
    full, dialect = spec
    try:
        module = importlib.import_module(full)
    except ModuleNotFoundError as exc:
        if exc.name != full:
            raise
        raise ValueError(
            f"no rules for wire {wire!r} yet (module {full} is missing); "
            f"known wires: {', '.join(sorted(WIRES))}"
        ) from exc
    check: Callable[..., list[Problem]] = module.check
    return check, dialect


def validate_history(messages: Sequence[Message | dict[str, Any]], wire: str | None = None) -> list[Problem]:
    """Problems in message order; an empty list means every generic rule (and the wire's) holds.

    Accepts message objects or canonical dicts. ``wire`` is one of ``WIRES``'s names.
    """
    check = dialect = None
    if wire is not None:
        check, dialect = _wire_check(wire)  # fail before any work on an unknown wire
    msgs = ensure_messages(messages)
    found = generic_check(msgs)
    if check is not None:
        if dialect is not None and "dialect" in inspect.signature(check).parameters:
            found.extend(check(msgs, dialect=dialect))
        else:
            found.extend(check(msgs))
    return found
