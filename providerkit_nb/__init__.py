"""providerkit_nb: talk to LLM providers from a notebook without ever losing a conversation.

``pk`` holds what a notebook user types; everything else has a named home
(``providerkit_nb.messages``, ``.stream``, ``.errors``, ``.usage``, ``.structured``,
``.compaction``, ``.dialects``, ``.store``, ``.wrappers``, ``.conversation``, ``.notebook``,
``.transcripts``, ``.testing``). Names load on first use, so ``import providerkit_nb`` pulls in
neither httpx nor pandas nor ipywidgets nor a database driver.
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

from .core.lazy import lazy_exports

__version__ = "1.0.0.dev0"  # the one place the version lives (pyproject reads it); CHANGELOG.md's current section

# name -> module that defines it, imported on first attribute access. The TYPE_CHECKING block
# below says the same to a type checker (tests/test_public_api.py keeps the two equal).
_LAZY: dict[str, str] = {
    # messages and turns
    "Message": "providerkit_nb.core.messages",
    "SystemMessage": "providerkit_nb.core.messages",
    "UserMessage": "providerkit_nb.core.messages",
    "AssistantMessage": "providerkit_nb.core.messages",
    "ToolMessage": "providerkit_nb.core.messages",
    "ToolCall": "providerkit_nb.core.messages",
    "collect_turn": "providerkit_nb.core.turn",
    "Turn": "providerkit_nb.core.turn",
    # repair and validation
    "repair_history": "providerkit_nb.core.repair",
    "Repaired": "providerkit_nb.core.repair",
    "INTERRUPTED_READ_ONLY": "providerkit_nb.core.repair",
    "INTERRUPTED_MAY_HAVE_RUN": "providerkit_nb.core.repair",
    "INTERRUPTED_STOPPED": "providerkit_nb.core.repair",
    "validate_history": "providerkit_nb.wire.validate",
    # tools
    "tool": "providerkit_nb.core.tools",
    "define_tool": "providerkit_nb.core.tools",
    "Tool": "providerkit_nb.core.tools",
    "ToolOutput": "providerkit_nb.core.tools",
    "mcp_tools": "providerkit_nb.mcp",
    "ToolRegistry": "providerkit_nb.core.tools",
    # providers
    "Provider": "providerkit_nb.providers.base",
    "openai": "providerkit_nb.providers.factory",
    "responses": "providerkit_nb.providers.factory",
    "anthropic": "providerkit_nb.providers.factory",
    "gemini": "providerkit_nb.providers.factory",
    "preset": "providerkit_nb.providers.factory",
    "PRESETS": "providerkit_nb.providers.factory",
    # resilience
    "with_gate": "providerkit_nb.wrappers.gate",
    "with_watchdog": "providerkit_nb.wrappers.watchdog",
    "with_retry": "providerkit_nb.wrappers.retry",
    "Registry": "providerkit_nb.wrappers.registry",
    # stores
    "Store": "providerkit_nb.store.base",
    "NotebookStore": "providerkit_nb.store",
    "MemoryStore": "providerkit_nb.store.memory",
    # the conversation
    "Conversation": "providerkit_nb.conversation",
    "resume_many": "providerkit_nb.conversation.many",
    # notebook views
    "HistoryView": "providerkit_nb.notebook.widgets",
    "history_frame": "providerkit_nb.notebook.frames",
    "changes_frame": "providerkit_nb.notebook.frames",
    "interrupted_frame": "providerkit_nb.notebook.frames",
    "turns_frame": "providerkit_nb.notebook.frames",
    "usage_frame": "providerkit_nb.notebook.frames",
    "tools_frame": "providerkit_nb.notebook.frames",
    # transcripts of other tools
    "inspect": "providerkit_nb.notebook.inspection",
    "export": "providerkit_nb.transcripts.export",
    # errors: one base, and the ones a notebook catches
    "Error": "providerkit_nb.core.errors",
    "ProviderError": "providerkit_nb.core.errors",
    "ErrorKind": "providerkit_nb.core.errors",
    "StoreError": "providerkit_nb.store.base",
    # traces as they arrive
    "otlp_receiver": "providerkit_nb.transcripts.otlp_receiver",
    "watch_traces": "providerkit_nb.notebook.trace_watch",
    # teaching: deterministic faults (a module)
    "simulate": "providerkit_nb.testing.simulate",
}

# Names pk had before 1.0, with their home now. They still resolve, with a DeprecationWarning,
# but are not in ``__all__`` and a type checker does not see them: write the new spelling.
_MOVED: dict[str, str] = {
    "show_frame": "providerkit_nb.notebook",
    "StepLimitReached": "providerkit_nb.errors",
    "BudgetExceeded": "providerkit_nb.errors",
    "TranscriptError": "providerkit_nb.errors",
    "ConversationBusy": "providerkit_nb.errors",
    "send_many": "providerkit_nb.conversation",
    "PostgresStore": "providerkit_nb.store",
    "create_gate": "providerkit_nb.wrappers",
    "with_backup_models": "providerkit_nb.wrappers",
    "with_token": "providerkit_nb.wrappers",
    "with_key_pool": "providerkit_nb.wrappers",
    "ImagePart": "providerkit_nb.messages",
    "TextPart": "providerkit_nb.messages",
    "FilePart": "providerkit_nb.messages",
    "ReasoningItems": "providerkit_nb.messages",
    "dumps": "providerkit_nb.messages",
    "loads": "providerkit_nb.messages",
    "strip_reasoning": "providerkit_nb.messages",
    "MessageFormatError": "providerkit_nb.messages",
    "Usage": "providerkit_nb.stream",
    "TurnAssembler": "providerkit_nb.stream",
    "TextDelta": "providerkit_nb.stream",
    "ReasoningDelta": "providerkit_nb.stream",
    "ReasoningDetailsDelta": "providerkit_nb.stream",
    "ReasoningItemsDelta": "providerkit_nb.stream",
    "ToolCallDelta": "providerkit_nb.stream",
    "UsageUpdate": "providerkit_nb.stream",
    "ModelInfo": "providerkit_nb.stream",
    "Finish": "providerkit_nb.stream",
    "ChunkStream": "providerkit_nb.stream",
    "ToolDefinition": "providerkit_nb.stream",
    "Problem": "providerkit_nb.errors",
    "classify": "providerkit_nb.errors",
    "is_retryable": "providerkit_nb.errors",
    "StoreCorruptError": "providerkit_nb.errors",
    "StoreCorruptWarning": "providerkit_nb.errors",
    "SettleError": "providerkit_nb.errors",
    "ApprovalError": "providerkit_nb.errors",
    "parse_json_answer": "providerkit_nb.structured",
    "JsonAnswer": "providerkit_nb.structured",
    "JsonFormat": "providerkit_nb.structured",
    "JsonReply": "providerkit_nb.structured",
    "schema_prompt": "providerkit_nb.structured",
    "is_strict_schema": "providerkit_nb.structured",
    "Rate": "providerkit_nb.usage",
    "cost_usd": "providerkit_nb.usage",
    "UsageTracker": "providerkit_nb.usage",
    "needs_compaction": "providerkit_nb.compaction",
    "history_budget_tokens": "providerkit_nb.compaction",
    "pick_cut": "providerkit_nb.compaction",
    "apply_compaction": "providerkit_nb.compaction",
    "guess_context_window": "providerkit_nb.compaction",
    "parse_context_overflow": "providerkit_nb.compaction",
    "ContextOverflow": "providerkit_nb.compaction",
    "from_openai_messages": "providerkit_nb.dialects",
    "from_responses_input": "providerkit_nb.dialects",
    "from_anthropic_messages": "providerkit_nb.dialects",
    "from_gemini_contents": "providerkit_nb.dialects",
    "Gate": "providerkit_nb.wrappers",
    "TokenSource": "providerkit_nb.wrappers",
    "PostgresGate": "providerkit_nb.wrappers",
    "read_jsonl": "providerkit_nb.store",
    "write_jsonl": "providerkit_nb.store",
    "CallMark": "providerkit_nb.store",
    "ConversationMaker": "providerkit_nb.conversation",
    "DENIED_TEXT": "providerkit_nb.conversation",
    "gate_frame": "providerkit_nb.notebook",
    "StoreBrowser": "providerkit_nb.notebook",
    "ApprovalWidget": "providerkit_nb.notebook",
    "Inspection": "providerkit_nb.notebook",
}

if TYPE_CHECKING:
    from .conversation import Conversation
    from .conversation.many import resume_many
    from .core.errors import Error, ErrorKind, ProviderError
    from .core.messages import (
        AssistantMessage,
        Message,
        SystemMessage,
        ToolCall,
        ToolMessage,
        UserMessage,
    )
    from .core.repair import (
        INTERRUPTED_MAY_HAVE_RUN,
        INTERRUPTED_READ_ONLY,
        INTERRUPTED_STOPPED,
        Repaired,
        repair_history,
    )
    from .core.tools import Tool, ToolOutput, ToolRegistry, define_tool, tool
    from .core.turn import Turn, collect_turn
    from .mcp import mcp_tools
    from .notebook.frames import (
        changes_frame,
        history_frame,
        interrupted_frame,
        tools_frame,
        turns_frame,
        usage_frame,
    )
    from .notebook.inspection import inspect
    from .notebook.trace_watch import watch_traces
    from .notebook.widgets import HistoryView
    from .providers.base import Provider
    from .providers.factory import PRESETS, anthropic, gemini, openai, preset, responses
    from .store import NotebookStore
    from .store.base import Store, StoreError
    from .store.memory import MemoryStore
    from .testing import simulate
    from .transcripts.export import export
    from .transcripts.otlp_receiver import otlp_receiver
    from .wire.validate import validate_history
    from .wrappers.gate import with_gate
    from .wrappers.registry import Registry
    from .wrappers.retry import with_retry
    from .wrappers.watchdog import with_watchdog

__all__ = [
    "AssistantMessage",
    "Conversation",
    "Error",
    "ErrorKind",
    "HistoryView",
    "INTERRUPTED_MAY_HAVE_RUN",
    "INTERRUPTED_READ_ONLY",
    "INTERRUPTED_STOPPED",
    "MemoryStore",
    "Message",
    "NotebookStore",
    "PRESETS",
    "Provider",
    "ProviderError",
    "Registry",
    "Repaired",
    "Store",
    "StoreError",
    "SystemMessage",
    "Tool",
    "ToolCall",
    "ToolMessage",
    "ToolOutput",
    "ToolRegistry",
    "Turn",
    "UserMessage",
    "anthropic",
    "changes_frame",
    "collect_turn",
    "define_tool",
    "export",
    "gemini",
    "history_frame",
    "inspect",
    "interrupted_frame",
    "mcp_tools",
    "openai",
    "otlp_receiver",
    "preset",
    "repair_history",
    "responses",
    "resume_many",
    "simulate",
    "tool",
    "tools_frame",
    "turns_frame",
    "usage_frame",
    "validate_history",
    "watch_traces",
    "with_gate",
    "with_retry",
    "with_watchdog",
]


_lazy_getattr, _ = lazy_exports(__name__, _LAZY, modules=frozenset({"simulate"}))


# Hidden from a type checker: with a module ``__getattr__`` in sight, mypy would take any name of
# pk (a typo too) for ``Any``. It sees the TYPE_CHECKING imports above, and nothing else.
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        home = _MOVED.get(name)
        if home is not None:
            warnings.warn(
                f"pk.{name} moved to {home}.{name} in 1.0 (see CHANGELOG.md)", DeprecationWarning, stacklevel=2
            )
            return getattr(importlib.import_module(home), name)
        if name == "is_transient":
            warnings.warn(
                "pk.is_transient(x) was replaced in 1.0 by err.is_transient (a ProviderError's property; "
                "see CHANGELOG.md); the old function goes in 1.1",
                DeprecationWarning,
                stacklevel=2,
            )
            from .core.renamed import is_transient

            return is_transient
        return _lazy_getattr(name)


def __dir__() -> list[str]:
    return list(__all__)
