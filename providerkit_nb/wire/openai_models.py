"""What OpenAI's own reasoning models accept as an effort level, shared by the Chat and
Responses wires so that "do not think" means the same thing on both."""

from __future__ import annotations

import re

__all__ = ["openai_effort_level", "effort_from_level"]

# gpt-5 and its mini/nano/codex variants have no "none" level: "minimal" is their lowest.
_MINIMAL_ONLY = re.compile(r"^gpt-5(-mini|-nano|-codex|-chat-latest)?(-\d{4}-\d{2}-\d{2})?$")
_O_SERIES = re.compile(r"^o\d")


def openai_effort_level(model: str, effort: str) -> str:
    """The level to send for a canonical effort. ``none`` must still differ from silence, so a
    model without a ``none`` level gets its lowest one; ``max`` is ``high``."""
    name = model.rsplit("/", 1)[-1].lower()
    if effort == "none":
        if _MINIMAL_ONLY.match(name):
            return "minimal"
        if _O_SERIES.match(name):
            return "low"
        return "none"
    return "high" if effort == "max" else effort


def effort_from_level(level: str | None) -> str | None:
    """Back from a sent level to the canonical effort (for importers)."""
    return {"minimal": "none", "xhigh": "max"}.get(level or "", level)
