"""Per-wire pre-flight rules: what each provider would refuse, checked locally before sending.

``validate_history(messages, wire=...)`` runs the generic rules (the breaks ``repair_history``
fixes) and then the module here that belongs to the wire. The contract for every module:

- ``RULES``: a list of the rule ids it checks, each with the provider's own wording, as
  ``(rule_id, provider_wording)`` pairs (or small objects with those two attributes). The wording
  is a stable substring of the provider's 400 message, so a local problem can be matched against
  what the provider would have said.
- ``check(messages) -> list[Problem]``: ``messages`` is a list of canonical message objects
  (``providerkit_nb.core.messages``); return one ``providerkit_nb.core.validate.Problem`` per
  break, with ``rule`` one of ``RULES``, ``index`` the message index, a ``message`` that says what
  to do, and ``provider_wording`` set. A module whose wire has dialects (DeepSeek on the OpenAI
  Chat wire) may accept a keyword ``dialect``; it is passed only when the function declares it.
- Pure: no network, no clock, no randomness, and no import heavier than the core.

Wire names map to modules: "openai_chat" and "openai" -> ``openai_chat``; "deepseek" ->
``openai_chat`` with ``dialect="deepseek"``; "responses" -> ``openai_responses``; "anthropic" ->
``anthropic``; "gemini" -> ``gemini``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["register_conversion", "conversion"]

# rules module name -> the wire adapter's own canonical -> wire conversion. The adapter passes
# it in when it is imported (providers import core, never the other way round), so a rule that
# checks "what would be sent" uses exactly what is sent.
_CONVERSIONS: dict[str, Callable[..., Any]] = {}


def register_conversion(rules_module: str, convert: Callable[..., Any]) -> None:
    """Called by a wire adapter module at import: the function its rules run on a history."""
    _CONVERSIONS[rules_module] = convert


def conversion(rules_module: str) -> Callable[..., Any]:
    """The registered conversion; a clear error when the wire's adapter was never imported."""
    try:
        return _CONVERSIONS[rules_module]
    except KeyError:
        raise LookupError(
            f"the {rules_module} rules check a history as its adapter converts it, and that "
            f"adapter is not loaded: use providerkit_nb.validate_history (it loads the adapter) "
            f"or import providerkit_nb.providers.{rules_module} first"
        ) from None
