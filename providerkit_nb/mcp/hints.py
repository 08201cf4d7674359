"""What an MCP tool's annotations say, and whether this library counts the tool as read-only.

The four hints of the MCP spec (revision 2025-03-26 on) are kept exactly as the server sent them:
a hint the server left out stays absent (the spec's default applies, and is shown as such). The
read-only decision is the user's: by default no MCP tool counts as read-only (the spec says a
client must not trust the hints of a server it does not trust); ``read_only="annotations"``
trusts this server's ``readOnlyHint``; a set of names vouches for those tools only.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

__all__ = ["HINTS", "SPEC_DEFAULTS", "ReadOnly", "hints_of", "decide_read_only", "hint_summary", "hints_line"]

HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
# What a hint means when the server leaves it out (spec text, 2025-03-26 and later).
SPEC_DEFAULTS: dict[str, bool] = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}

ReadOnly = None | str | Collection[str]


def hints_of(annotations: Mapping[str, Any] | None) -> dict[str, Any]:
    """The four hints present in a tool's ``annotations`` (wire names), nothing else, nothing added."""
    if not isinstance(annotations, Mapping):
        return {}
    return {k: annotations[k] for k in HINTS if k in annotations}


def effective(hints: Mapping[str, Any], name: str) -> bool:
    """A hint's value with the spec default applied (a non-boolean counts as absent)."""
    value = hints.get(name)
    return value if isinstance(value, bool) else SPEC_DEFAULTS[name]


def check_read_only(read_only: Any, server: str) -> None:
    """Refuse a ``read_only=`` that is none of the three forms, naming the server."""
    if read_only is None or read_only == "annotations":
        return
    if isinstance(read_only, str) or not isinstance(read_only, Collection) or not all(
        isinstance(n, str) for n in read_only
    ):
        raise ValueError(
            f"MCP server {server}: read_only= must be None, 'annotations' or a set of tool names, "
            f"not {read_only!r}"
        )


def decide_read_only(
    name: str, hints: Mapping[str, Any], read_only: ReadOnly, *, names: Collection[str] = ()
) -> tuple[bool, str]:
    """``(is_read_only, reason)`` for one tool; ``names`` are other names it goes by (prefixed)."""
    if read_only is None:
        return False, "not vouched for (read_only=None): no MCP tool counts as read-only"
    if read_only == "annotations":
        value = hints.get("readOnlyHint")
        if value is True:
            return True, "the server's readOnlyHint is true (trusted: read_only='annotations')"
        if "readOnlyHint" not in hints:
            return False, "readOnlyHint absent (spec default: false)"
        return False, f"the server's readOnlyHint is {json.dumps(value)}"
    assert not isinstance(read_only, str)
    if name in read_only or any(n in read_only for n in names):
        return True, "named in read_only="
    return False, "not named in read_only="


def hints_line(hints: Mapping[str, Any] | None, source: str = "") -> str:
    """What approval shows under a call: where the tool runs and its hints as sent, destructive
    marked (empty for a tool without hints, i.e. a local one)."""
    if hints is None:
        return ""
    sent = ", ".join(f"{k}={json.dumps(v)}" for k, v in hints.items())
    where = f" ({source})" if source else ""
    return f"MCP tool{where}: {hint_summary(hints)}" + (f" [{sent}]" if sent else "")


def hint_summary(hints: Mapping[str, Any] | None) -> str:
    """One short line for a prompt or a widget: what the hints say, destructive marked."""
    if hints is None:
        return ""
    if effective(hints, "readOnlyHint"):
        said = "read-only"
    elif effective(hints, "destructiveHint"):
        said = "DESTRUCTIVE"
    else:
        said = "changes things (not destructive)"
    if "readOnlyHint" not in hints and "destructiveHint" not in hints:
        said += " (no hints sent: spec defaults)"
    extra = []
    if effective(hints, "idempotentHint") and not effective(hints, "readOnlyHint"):
        extra.append("idempotent")
    if "openWorldHint" in hints and hints["openWorldHint"] is False:
        extra.append("closed world")
    return said + (f", {', '.join(extra)}" if extra else "")
