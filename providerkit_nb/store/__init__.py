"""Stores: where a conversation's messages are saved as they happen."""

from ..core.lazy import claim_home
from .base import ConversationBusy, Store, StoreCorruptError, StoreError
from .call_marks import CallMark
from .jsonl import read_jsonl, write_jsonl
from .jsonl_store import JsonlStore
from .memory import MemoryStore
from .postgres import PostgresStore
from .sqlite import NotebookStore

__all__ = [
    "CallMark",
    "ConversationBusy",
    "JsonlStore",
    "MemoryStore",
    "NotebookStore",
    "PostgresStore",
    "Store",
    "StoreCorruptError",
    "StoreError",
    "read_jsonl",
    "write_jsonl",
]

claim_home(globals(), __all__, within=__name__)
