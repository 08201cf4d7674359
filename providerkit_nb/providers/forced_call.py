"""A forced tool call that was not made, said on the reply instead of passed over.

``tool_choice="required"`` or a named tool asks the server to make the model call; a server may
ignore it (llama.cpp's server reads an object ``tool_choice`` as its default, ``auto``, and
answers 200), or have no way to enforce it. Whatever the wire, when the asked-for call is not
in the turn, the turn carries a ``forced_call`` notice saying so: the turn metadata and the
live display show it, never silence.
"""

from __future__ import annotations

from typing import Any

from ..core.turn import Notice

__all__ = ["ForcedCall", "forced_call"]


class ForcedCall:
    """What one call forced, and the calls its turn made (fed from the stream's tool-call chunks)."""

    __slots__ = ("name", "made")

    def __init__(self, name: str | None) -> None:
        self.name = name  # the tool asked for; None: any tool ("required")
        self.made: list[str] = []

    def saw(self, name: str | None) -> None:
        if name:
            self.made.append(name)

    def notice(self, *, any_call: bool) -> Notice | None:
        """The notice for the finished turn, or None when the call was made. ``any_call``: the
        turn made a call (a stream may name it only on its first fragment)."""
        if self.name is None:
            if any_call:
                return None
            return Notice("forced_call", "forced call not made: tool_choice='required' asked for a tool call and "
                          "the turn has none (the server did not enforce it)", "none")
        if self.name in self.made:
            return None
        if not any_call:
            return Notice("forced_call", f"forced call not made: tool_choice asked for {self.name} and the turn has "
                          "no call (the server did not enforce it)", "none")
        other = ", ".join(dict.fromkeys(self.made)) or "another tool"
        return Notice("forced_call", f"forced call not made: tool_choice asked for {self.name}; the model called "
                      f"{other} instead", "other")


def forced_call(tool_choice: Any, has_tools: bool) -> ForcedCall | None:
    """The tracker for a call that forces one (``"required"`` or a named tool), else None."""
    if not has_tools or tool_choice is None:
        return None
    if tool_choice == "required":
        return ForcedCall(None)
    if isinstance(tool_choice, dict) and isinstance(tool_choice.get("name"), str):
        return ForcedCall(tool_choice["name"])
    return None
