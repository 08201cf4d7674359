"""Every error the library raises, under one base: ``except providerkit_nb.errors.Error``."""

from .conversation.approval import ApprovalDeferred, ApprovalError, SettleError
from .conversation.facade import SystemPromptChanged
from .core.errors import Error, ErrorKind, ProviderError, StepLimitReached, is_retryable
from .core.json_input import JsonInputError
from .core.messages import MessageFormatError
from .core.tool_run import ToolTimeout
from .core.usage import BudgetExceeded
from .core.validate import Problem
from .local.server import LocalModelError
from .mcp.client import MCPServerError
from .store.base import (
    ConversationBusy,
    NotAStoreError,
    StoreCorruptError,
    StoreError,
    StoreLockedError,
    StoreReadOnlyError,
    StoreVersionError,
)
from .store.corrupt import StoreCorruptWarning
from .testing.replay import CassetteError
from .transcripts import FormatUnavailable
from .transcripts.base import (
    MultipleThreads,
    TranscriptError,
    TranscriptNotFound,
    TranscriptTruncated,
)
from .transport.classify import classify
from .wrappers.key_pool import NoAvailableKeyError
from .wrappers.pg_gate import GateError

__all__ = [
    "ApprovalDeferred",
    "ApprovalError",
    "BudgetExceeded",
    "CassetteError",
    "ConversationBusy",
    "Error",
    "ErrorKind",
    "FormatUnavailable",
    "GateError",
    "JsonInputError",
    "LocalModelError",
    "MCPServerError",
    "MessageFormatError",
    "MultipleThreads",
    "NoAvailableKeyError",
    "NotAStoreError",
    "Problem",
    "ProviderError",
    "SettleError",
    "StepLimitReached",
    "StoreCorruptError",
    "StoreCorruptWarning",
    "StoreError",
    "StoreLockedError",
    "StoreReadOnlyError",
    "StoreVersionError",
    "SystemPromptChanged",
    "ToolTimeout",
    "TranscriptError",
    "TranscriptNotFound",
    "TranscriptTruncated",
    "classify",
    "is_retryable",
]
