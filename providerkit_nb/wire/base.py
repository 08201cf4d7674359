"""What every wire module hands out: an imported request, a break in a wire-shaped request, and
what the wire can carry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.errors import ErrorKind, ProviderError
from ..core.messages import Message
from ..core.tools import ToolDefinition

__all__ = ["ImportedRequest", "WireProblem", "Supports"]


@dataclass(slots=True)
class ImportedRequest:
    """A recorded or foreign request read back into canonical form (importers return this)."""

    messages: list[Message]
    tools: list[ToolDefinition] | None
    options: dict[str, Any]  # CallOptions names only
    model: str | None = None
    stream: bool = True


@dataclass(slots=True)
class WireProblem:
    """A break in a request written in a wire's own shape: ``at`` is the place the provider
    would name (Anthropic's ``messages.N``, a Responses ``input`` position), with its wording."""

    rule: str
    at: int
    message: str
    provider_wording: str


@dataclass(frozen=True, slots=True)
class Supports:
    """What a wire can carry, which its conversion reads (a part it cannot carry is refused
    before anything is sent, never dropped).

    ``files``: the file types a user message may carry (None: any type, inline); ``tool_images``:
    whether a tool result can hold images in place (else they follow it as a user turn);
    ``schemas``: what becomes of a tool's JSON schema; ``reasoning``: what of a turn's reasoning
    goes back; ``json_forms``: how ``json=`` can be asked for, first choice first.
    """

    files: frozenset[str] | None
    tool_images: bool
    schemas: str
    reasoning: str
    json_forms: tuple[str, ...]

    def check_file(self, provider: str, mime: str, why: str) -> None:
        """Refuse a file this wire cannot carry; ``why`` says what to do instead."""
        if self.files is not None and mime not in self.files:
            raise ProviderError(provider, ErrorKind.INVALID, why)
