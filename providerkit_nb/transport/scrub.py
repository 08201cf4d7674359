"""Removing credentials from text that may echo them back (error bodies, frames, messages)."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["scrub"]

_KEY_SHAPES = re.compile(
    r"sk-ant-[A-Za-z0-9_\-]{8,}|sk-(?:proj-|or-v1-)?[A-Za-z0-9_\-]{16,}|AIza[0-9A-Za-z_\-]{30,}"
    r"|gsk_[A-Za-z0-9]{16,}|xai-[A-Za-z0-9]{16,}|(?<=[?&]key=)[^&\s\"']+|(?<=Bearer )[A-Za-z0-9._\-]{16,}"
)


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """Remove credentials from text that may echo them back: the known keys, and anything
    shaped like a vendor key, a bearer token or a ``?key=`` parameter."""
    for s in secrets:
        if s and len(s) >= 4 and s in text:
            text = text.replace(s, "***")
    return _KEY_SHAPES.sub("***", text)
