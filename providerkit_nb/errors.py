"""Every error the library raises, under one base: ``except providerkit_nb.errors.Error``.

The classes are defined at the bottom of the package (``core``) and only named here, so that
``import providerkit_nb.errors`` (or catching one) loads no store, reader or HTTP client.
``classify`` reads a transport failure, so it is loaded on first use.
"""

from typing import TYPE_CHECKING, Any

from .core.errors import (
    ApprovalDeferred,
    ApprovalError,
    BudgetExceeded,
    CassetteError,
    ConversationBusy,
    Error,
    ErrorKind,
    FormatUnavailable,
    GateError,
    JsonInputError,
    LocalModelError,
    MCPServerError,
    MessageFormatError,
    MultipleThreads,
    NoAvailableKeyError,
    NotAStoreError,
    Problem,
    ProviderError,
    SettleError,
    StepLimitReached,
    StoreCorruptError,
    StoreCorruptWarning,
    StoreError,
    StoreLockedError,
    StoreReadOnlyError,
    StoreVersionError,
    SystemPromptChanged,
    ToolTimeout,
    TranscriptError,
    TranscriptNotFound,
    TranscriptTruncated,
    is_retryable,
)
from .core.lazy import claim_home

if TYPE_CHECKING:
    from .transport.classify import classify

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

claim_home(globals(), [n for n in __all__ if n != "classify"])


def __getattr__(name: str) -> Any:
    if name == "classify":
        from .transport.classify import classify

        return classify
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
