"""Foreign transcripts, one module per source format: ``detect`` cheaply, ``load`` read-only.

``load(source, format=None, thread=None)`` picks the format (or takes the one named) and returns a
``Transcript``. The order of ``FORMATS`` is the order detection tries: the specific formats
first, the loose provider dialects and our own canonical JSON last.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from .base import Marker, MultipleThreads, Source, Transcript, TranscriptError

__all__ = [
    "FORMATS",
    "Marker",
    "MultipleThreads",
    "Source",
    "Transcript",
    "TranscriptError",
    "detect",
    "load",
    "format_module",
]

# format name -> module (relative to this package)
FORMATS: dict[str, str] = {
    # part 1
    "claude_code": ".claude_code",
    "codex": ".codex",
    "openai_agents": ".openai_agents",
    "vercel_ui": ".vercel_ui",
    # part 2
    "pydantic_ai": ".pydantic_ai",
    "langchain": ".langchain",
    "langgraph_sqlite": ".langgraph_sqlite",
    "langgraph_postgres": ".langgraph_postgres",
    "llm_logs": ".llm_logs",
    # provider dialects and our own JSON/JSONL (loose: tried last)
    "responses": ".provider_dialects",
    "anthropic": ".provider_dialects",
    "gemini": ".provider_dialects",
    "openai_chat": ".provider_dialects",
    "canonical": ".canonical",
}


def format_module(name: str) -> ModuleType:
    if name not in FORMATS:
        raise TranscriptError(f"unknown transcript format {name!r}; known: {', '.join(FORMATS)}")
    return importlib.import_module(FORMATS[name], __name__)


def detect(source: Any) -> str:
    """The name of the first format that recognises the source; TranscriptError listing the
    formats tried when none does."""
    src = source if isinstance(source, Source) else Source(source)
    if src.path is not None and not src.path.exists():
        raise TranscriptError(f"{src.name}: no such file")
    for name in FORMATS:
        if format_module(name).detect(src, name):
            return name
    raise TranscriptError(
        f"{src.name}: not a transcript of any known format (tried {', '.join(FORMATS)}); "
        "pass format=... if you know it"
    )


def load(source: Any, *, format: str | None = None, thread: str | None = None) -> Transcript:
    """Load a transcript read-only; ``thread`` picks one of a source that holds several
    (without it such a source raises ``MultipleThreads`` listing them)."""
    src = source if isinstance(source, Source) else Source(source)
    name = format or detect(src)
    return format_module(name).load(src, name, thread=thread)
