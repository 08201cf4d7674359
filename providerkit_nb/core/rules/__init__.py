"""Gemini's pre-flight rules, until they join the Gemini wire module under ``providerkit_nb.wire``."""
