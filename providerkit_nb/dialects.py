"""Histories written in a provider's own request shape, read into canonical messages."""

from .wire.anthropic import from_anthropic_messages
from .wire.gemini import from_gemini_contents
from .wire.openai_chat import from_openai_messages
from .wire.openai_responses import from_responses_input

__all__ = ["from_anthropic_messages", "from_gemini_contents", "from_openai_messages", "from_responses_input"]
