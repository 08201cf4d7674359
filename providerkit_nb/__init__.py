"""providerkit_nb: talk to LLM providers from a notebook without ever losing a conversation.

The core (messages, turns, repair, tools, errors) is imported eagerly because it is light;
everything that pulls in httpx, pandas, ipywidgets or a database driver is imported on first
use, so ``import providerkit_nb`` stays fast in a fresh kernel.
"""

from __future__ import annotations

import importlib
from typing import Any

from .core.errors import ErrorKind, ProviderError, is_backup_eligible, is_retryable, is_transient
from .core.messages import (
    AssistantMessage,
    FilePart,
    ImagePart,
    Message,
    ReasoningItems,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    UserMessage,
    dumps,
    loads,
)
from .core.repair import INTERRUPTED_MAY_HAVE_RUN, INTERRUPTED_READ_ONLY, Repaired, repair_history
from .core.tools import ToolDefinition
from .core.turn import (
    Finish,
    ModelInfo,
    ReasoningDelta,
    ReasoningDetailsDelta,
    ReasoningItemsDelta,
    TextDelta,
    ToolCallDelta,
    Turn,
    TurnAssembler,
    Usage,
    UsageUpdate,
    collect_turn,
)

__version__ = "0.2.0"  # the one place the version lives (pyproject reads it)

# name -> module that defines it, imported on first attribute access.
_LAZY: dict[str, str] = {
    # core, heavier parts
    "validate_history": "providerkit_nb.providers.factory",  # loads the wire adapter first
    "Problem": "providerkit_nb.core.validate",
    "define_tool": "providerkit_nb.core.tools",
    "tool": "providerkit_nb.core.tools",
    "Tool": "providerkit_nb.core.tools",
    "ToolRegistry": "providerkit_nb.core.tools",
    "ToolOutput": "providerkit_nb.core.tools",
    # structured output, usage and cost, compaction
    "parse_json_answer": "providerkit_nb.core.structured",
    "JsonAnswer": "providerkit_nb.core.structured",
    "JsonFormat": "providerkit_nb.core.structured",
    "schema_prompt": "providerkit_nb.core.structured",
    "is_strict_schema": "providerkit_nb.core.structured",
    "strip_reasoning": "providerkit_nb.core.messages",
    "Rate": "providerkit_nb.core.usage",
    "cost_usd": "providerkit_nb.core.usage",
    "UsageTracker": "providerkit_nb.core.usage",
    "BudgetExceeded": "providerkit_nb.core.usage",
    "JsonReply": "providerkit_nb.core.structured",
    "needs_compaction": "providerkit_nb.core.compaction",
    "history_budget_tokens": "providerkit_nb.core.compaction",
    "pick_cut": "providerkit_nb.core.compaction",
    "apply_compaction": "providerkit_nb.core.compaction",
    "guess_context_window": "providerkit_nb.core.compaction",
    "parse_context_overflow": "providerkit_nb.core.compaction",
    "ContextOverflow": "providerkit_nb.core.compaction",
    # seam, transport, wires
    "Provider": "providerkit_nb.providers.base",
    "ChunkStream": "providerkit_nb.providers.base",
    "classify": "providerkit_nb.transport.classify",
    "openai": "providerkit_nb.providers.factory",
    "responses": "providerkit_nb.providers.factory",
    "anthropic": "providerkit_nb.providers.factory",
    "gemini": "providerkit_nb.providers.factory",
    "preset": "providerkit_nb.providers.factory",
    "PRESETS": "providerkit_nb.providers.factory",
    "from_openai_messages": "providerkit_nb.providers.openai_chat",
    "from_responses_input": "providerkit_nb.providers.openai_responses",
    "from_anthropic_messages": "providerkit_nb.providers.anthropic",
    "from_gemini_contents": "providerkit_nb.providers.gemini",
    # resilience
    "create_gate": "providerkit_nb.wrappers.gate",
    "Gate": "providerkit_nb.wrappers.gate",
    "with_gate": "providerkit_nb.wrappers.gate",
    "with_watchdog": "providerkit_nb.wrappers.watchdog",
    "with_retry": "providerkit_nb.wrappers.retry",
    "with_key_pool": "providerkit_nb.wrappers.key_pool",
    "with_token": "providerkit_nb.wrappers.token",
    "with_backup_models": "providerkit_nb.wrappers.backup",
    "TokenSource": "providerkit_nb.wrappers.token",
    "Registry": "providerkit_nb.registry",
    "PostgresGate": "providerkit_nb.wrappers.pg_gate",
    # many conversations at once
    "resume_many": "providerkit_nb.many",
    "send_many": "providerkit_nb.many",
    "ConversationMaker": "providerkit_nb.many",
    "ConversationBusy": "providerkit_nb.store.base",
    # stores
    "Store": "providerkit_nb.store.base",
    "MemoryStore": "providerkit_nb.store.memory",
    "NotebookStore": "providerkit_nb.store.sqlite",
    "PostgresStore": "providerkit_nb.store.postgres",
    "StoreCorruptError": "providerkit_nb.store.base",
    "StoreCorruptWarning": "providerkit_nb.store.corrupt",
    "MessageFormatError": "providerkit_nb.core.messages",
    "read_jsonl": "providerkit_nb.store.jsonl",
    "write_jsonl": "providerkit_nb.store.jsonl",
    # notebook
    "Conversation": "providerkit_nb.notebook.conversation",
    "history_frame": "providerkit_nb.notebook.frames",
    "changes_frame": "providerkit_nb.notebook.frames",
    "interrupted_frame": "providerkit_nb.notebook.frames",
    "turns_frame": "providerkit_nb.notebook.frames",
    "usage_frame": "providerkit_nb.notebook.frames",
    "gate_frame": "providerkit_nb.notebook.frames",
    "HistoryView": "providerkit_nb.notebook.widgets",
    "StoreBrowser": "providerkit_nb.notebook.widgets",
    "show_frame": "providerkit_nb.notebook.frames",
    "tools_frame": "providerkit_nb.notebook.frames",
    "mcp_tools": "providerkit_nb.mcp",
    "MCPServerError": "providerkit_nb.mcp",
    "ApprovalWidget": "providerkit_nb.notebook.approval",
    "SettleError": "providerkit_nb.approval",
    "ApprovalError": "providerkit_nb.approval",
    "DENIED_TEXT": "providerkit_nb.approval",
    "CallMark": "providerkit_nb.store.call_marks",
    "inspect": "providerkit_nb.notebook.inspect",
    "Inspection": "providerkit_nb.notebook.inspect",
    "TranscriptError": "providerkit_nb.transcripts.base",
    "simulate": "providerkit_nb.simulate",
    "export": "providerkit_nb.transcripts.export",
}

__all__ = [
    "AssistantMessage",
    "ErrorKind",
    "FilePart",
    "Finish",
    "INTERRUPTED_MAY_HAVE_RUN",
    "INTERRUPTED_READ_ONLY",
    "ImagePart",
    "Message",
    "ModelInfo",
    "ProviderError",
    "ReasoningDelta",
    "ReasoningDetailsDelta",
    "ReasoningItems",
    "ReasoningItemsDelta",
    "Repaired",
    "SystemMessage",
    "TextDelta",
    "TextPart",
    "ToolCall",
    "ToolCallDelta",
    "ToolDefinition",
    "ToolMessage",
    "Turn",
    "TurnAssembler",
    "Usage",
    "UsageUpdate",
    "UserMessage",
    "collect_turn",
    "dumps",
    "is_backup_eligible",
    "is_retryable",
    "is_transient",
    "loads",
    "repair_history",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'providerkit_nb' has no attribute {name!r}")
    mod = importlib.import_module(module)
    value = mod if name == "simulate" and module.endswith(".simulate") else getattr(mod, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
