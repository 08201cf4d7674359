"""Foreign transcripts, one module per source format: ``detect`` cheaply, ``load`` read-only.

``load(source, format=None, thread=None)`` picks the format (or takes the one named) and returns a
``Transcript``. The order of ``FORMATS`` is the order detection tries: the specific formats
first, the loose provider dialects and our own canonical JSON last.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

from ..core.messages import (
    AssistantMessage,
    ReasoningItems,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
    message_from_dict,
)
from .base import (
    Marker,
    MultipleThreads,
    Source,
    Transcript,
    TranscriptError,
    TranscriptNotFound,
    TranscriptTruncated,
)

__all__ = [
    "FORMATS",
    "Marker",
    "MultipleThreads",
    "Source",
    "Transcript",
    "TranscriptError",
    "TranscriptNotFound",
    "TranscriptTruncated",
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
    # coding agents
    "opencode": ".opencode",
    "gemini_cli": ".gemini_cli",
    # part 2
    "pydantic_ai": ".pydantic_ai",
    "langchain": ".langchain",
    "langgraph_sqlite": ".langgraph_sqlite",
    "langgraph_postgres": ".langgraph_postgres",
    "llm_logs": ".llm_logs",
    # traces
    "otel": ".otel",
    # more coding agents
    "cline": ".cline",
    # this library's own store file (NotebookStore)
    "providerkit": ".providerkit_store",
    # provider dialects and our own JSON/JSONL (loose: tried last)
    "responses": ".provider_dialects",
    "anthropic": ".provider_dialects",
    "gemini": ".provider_dialects",
    "openai_chat": ".provider_dialects",
    "canonical": ".canonical",
}


class FormatUnavailable(TranscriptError):
    """A format is registered but its module is not there (not written yet, or not installed)."""


def format_module(name: str) -> ModuleType:
    """The module that reads format ``name``."""
    if name not in FORMATS:
        raise TranscriptError(f"unknown transcript format {name!r}; known: {', '.join(FORMATS)}")
    full = f"{__name__}{FORMATS[name]}"
    try:
        return importlib.import_module(full)
    except ModuleNotFoundError as exc:
        if exc.name != full:
            raise
        raise FormatUnavailable(f"transcript format {name!r} is not available in this version") from exc


def detect(source: Any) -> str:
    """The name of the first format that recognises the source; TranscriptError listing the
    formats tried when none does."""
    src = source if isinstance(source, Source) else Source(source)
    _check_readable(src)
    tried: list[str] = []
    for name in FORMATS:
        try:
            module = format_module(name)
        except FormatUnavailable:
            continue
        tried.append(name)
        if module.detect(src, name):
            return name
    _unreadable_json(src, None)
    hint = ""
    if src.json() is not None:
        from .provider_dialects import detect_format

        try:
            detect_format(src.json())
        except ValueError as exc:
            hint = f" ({exc})"
    raise TranscriptError(
        f"{src.name}: not a transcript of any known format{hint}; tried {', '.join(tried)}; "
        "pass format=... if you know it"
    )


def _check_readable(src: Source) -> None:
    if src.path is None:
        return
    if not src.path.exists():
        raise TranscriptNotFound(f"{src.name}: no such transcript file")
    if src.path.is_dir() and _reads_dirs(src):
        return
    if not src.path.is_file():
        raise TranscriptError(f"{src.name}: not a file")
    try:
        src.head()
    except OSError as exc:
        raise TranscriptError(f"{src.name}: cannot read ({exc.strerror or exc})") from exc


def _reads_dirs(src: Source) -> bool:
    """A folder is a source only for the formats that read folders (and recognise this one)."""
    for name in FORMATS:
        try:
            module = format_module(name)
        except FormatUnavailable:
            continue
        if getattr(module, "reads_dirs", False) and module.detect(src, name):
            return True
    return False


def load(source: Any, *, format: str | None = None, thread: str | None = None) -> Transcript:
    """Load a transcript read-only; ``thread`` picks one of a source that holds several
    (without it such a source raises ``MultipleThreads`` listing them)."""
    src = source if isinstance(source, Source) else Source(source)
    if format is not None:
        _check_readable(src)
    name = format or detect(src)
    module = format_module(name)
    try:
        t: Transcript = module.load(src, name, thread=thread)
    except TranscriptError as exc:
        if format is not None and not isinstance(exc, MultipleThreads):
            _unreadable_json(src, name, thread, cause=exc)
        raise
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
        # a damaged file that slipped past the format's own checks: still this library's error
        raise TranscriptError(
            f"{src.name}: cannot be read as {name} ({type(exc).__name__}: {exc}); is it damaged?"
        ) from exc
    _check_messages(t)
    t.mark_error_results()
    return t


def _unreadable_json(src: Source, name: str | None, thread: str | None = None, cause: Exception | None = None) -> None:
    """A JSON file too deep to read, or cut short, is said so (not "no known format"); a cut
    one comes with what is whole of it, read as the format asked for or the one it looks like."""
    if src.path is None or src.head().lstrip()[:1] not in (b"[", b"{") or src.json() is not None:
        return
    err = src.json_error
    if err is None:
        return
    if err.too_deep:
        raise TranscriptError(
            f"{src.name}: {err}; no transcript nests that deep: is the file damaged?"
        ) from cause
    if not err.truncated:
        return
    from ..core.json_input import complete_elements

    kept, n = complete_elements(src.path.read_text(encoding="utf-8"))
    part = Source(kept)
    looks = name
    if looks is None and n:
        try:
            looks = detect(part)
        except TranscriptError:
            looks = None
    where = f"line {err.line}, column {err.column} (char {err.pos})"
    head = f"{src.name}: truncated: the JSON stops at {where} before the document ends (cut short, as by a crash mid-write)"
    t: Transcript | None = None
    if looks is not None and n:
        try:
            t = format_module(looks).load(part, looks, thread=thread)
        except (TranscriptError, KeyError, TypeError, AttributeError, IndexError, ValueError):
            t = None
    if t is None:
        like = f"; it looks like {looks}" if looks else ""
        raise TranscriptTruncated(f"{head}{like}; no complete element before the cut can be read", None, looks) from cause
    t.source = src.name
    _check_messages(t)
    t.mark_error_results()
    kind = "element" if isinstance(kept, list) else "member"
    said = (f"{head}; it looks like {looks}; read are the {n} complete top-level {kind}(s) before the cut "
            f"({len(t.messages)} message(s)); what the cut went through is left out")
    t.meta["truncated"] = {"line": err.line, "column": err.column, "char": err.pos, "complete": n, "text": said}
    raise TranscriptTruncated(said + "; inspect() shows them", t, looks) from cause


def _check_messages(t: Transcript) -> None:
    """Every message a format produced must be a well-typed canonical message (a field of the
    wrong type in the source is refused here, naming the message, not deep in a later view)."""
    plain = _plainly_typed
    for i, m in enumerate(t.messages):
        if plain(m):
            continue
        try:
            message_from_dict(m.to_dict(), i)
        except (ValueError, TypeError, AttributeError) as exc:
            raise TranscriptError(f"{t.source}: as {t.format}, {exc}; is the file damaged?") from exc


def _plainly_typed(m: Any) -> bool:
    """True for a message of the usual shape whose fields all have exactly the types
    ``message_from_dict`` takes (so its round trip would pass); anything else, including
    whatever it would refuse, takes the round trip, which names the field."""
    check = _PLAIN_BY_CLASS.get(type(m))
    return check is not None and check(m)


def _plain_text(m: Any) -> bool:
    return type(m.content) is str


def _plain_tool(m: Any) -> bool:
    return (type(m.tool_call_id) is str and m.tool_call_id != "" and type(m.name) is str
            and type(m.content) is str and not m.images)


def _plain_assistant(m: Any) -> bool:
    if type(m.content) is not str or m.reasoning_details is not None:
        return False
    if m.reasoning is not None and type(m.reasoning) is not str:
        return False
    if m.reasoning_items is not None and not _plain_reasoning_items(m.reasoning_items):
        return False
    calls = m.tool_calls
    if calls is None:
        return True
    return type(calls) is list and all(_plain_call(c) for c in calls)


def _plain_reasoning_items(ri: Any) -> bool:
    return type(ri) is ReasoningItems and type(ri.provider) is str and ri.provider != "" and type(ri.items) is list


def _plain_call(c: Any) -> bool:
    return (type(c) is ToolCall and type(c.id) is str and c.id != "" and type(c.name) is str
            and c.name != "" and type(c.arguments) is str
            and (c.thought_signature is None or type(c.thought_signature) is str))


_PLAIN_BY_CLASS: dict[type, Callable[[Any], bool]] = {
    UserMessage: _plain_text,
    SystemMessage: _plain_text,
    ToolMessage: _plain_tool,
    AssistantMessage: _plain_assistant,
}
