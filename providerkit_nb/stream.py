"""What a provider streams and how a turn is put back together: for writing a wire of your own."""

from .core.tools import ToolDefinition
from .core.turn import (
    Chunk,
    Finish,
    ModelInfo,
    Notice,
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
from .providers.base import CallOptions, ChunkStream, Provider

__all__ = [
    "CallOptions",
    "Chunk",
    "ChunkStream",
    "Finish",
    "ModelInfo",
    "Notice",
    "Provider",
    "ReasoningDelta",
    "ReasoningDetailsDelta",
    "ReasoningItemsDelta",
    "TextDelta",
    "ToolCallDelta",
    "ToolDefinition",
    "Turn",
    "TurnAssembler",
    "Usage",
    "UsageUpdate",
    "collect_turn",
]
