"""Tools: definitions sent to the model, and running the calls it makes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ToolDefinition"]


@dataclass(slots=True)
class ToolDefinition:
    """What a wire sends to the model: a name, a description, and a JSON object schema."""

    name: str
    description: str
    input_schema: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}
