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
