"""JSON from outside the library (transcript files, JSONL lines, store rows, error bodies), read
one way.

``json.loads`` raises ``RecursionError`` on a document nested deeper than the interpreter's
stack (some thousands of ``[``): not a ValueError, so it slipped past every ``except
ValueError`` around a read. :func:`read_json` turns that, and every other way a text is not
JSON, into one :class:`JsonInputError` (a ValueError) that says where, and whether the text
simply stops before the document ends (``truncated``: the usual shape of a file after a crash
mid-write). :func:`complete_elements` keeps what is whole of such a file.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import (
    JsonInputError,  # noqa: F401 (defined at the bottom, kept importable here)
)

__all__ = ["JsonInputError", "read_json", "complete_elements"]

_DECODER = json.JSONDecoder()
_LITERALS = ("true", "false", "null")
_WS = " \t\r\n"


def _is_cut(exc: json.JSONDecodeError) -> bool:
    """Does the decoder stop because the text ran out (not because of a wrong character)?"""
    doc, pos = exc.doc, exc.pos
    if exc.msg.startswith("Unterminated string"):
        return True  # a string that never closes runs to the end of the text
    rest = doc[pos:].strip()
    return not rest or any(word.startswith(rest) for word in _LITERALS)


def read_json(text: str | bytes | bytearray) -> Any:
    """``json.loads`` that raises only :class:`JsonInputError` (a ValueError) on bad input."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if not _is_cut(exc):
            raise JsonInputError(f"not valid JSON: {exc.msg}", pos=exc.pos, line=exc.lineno, column=exc.colno) from None
        doc = exc.doc
        end = len(doc.rstrip())  # where the text stops: the cut
        line = doc.count("\n", 0, end) + 1
        column = end - (doc.rfind("\n", 0, end) + 1) + 1
        raise JsonInputError(
            "the JSON stops before the document ends (cut short)", pos=end, line=line, column=column, truncated=True
        ) from None
    except RecursionError:
        raise JsonInputError("the JSON is nested too deeply to read", too_deep=True) from None
    except (ValueError, TypeError) as exc:  # not UTF-8, or not text at all
        raise JsonInputError(f"not readable as JSON text ({exc})") from None


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def complete_elements(text: str) -> tuple[list[Any] | dict[str, Any] | None, int]:
    """The complete top-level elements of a JSON array (or members of an object) that is cut
    short, and how many there are; an element the cut went through is left out, never guessed
    at. ``(None, 0)`` when the text is neither an array nor an object."""
    i = _skip(text, 0)
    if i >= len(text) or text[i] not in "[{":
        return None, 0
    is_list = text[i] == "["
    items: list[Any] = []
    members: dict[str, Any] = {}
    i += 1
    try:
        while True:
            i = _skip(text, i)
            if i >= len(text) or text[i] in "]}":
                break
            key = None
            if not is_list:
                key, i = _DECODER.raw_decode(text, i)
                i = _skip(text, i)
                if not isinstance(key, str) or text[i : i + 1] != ":":
                    break
                i = _skip(text, i + 1)
            value, i = _DECODER.raw_decode(text, i)
            i = _skip(text, i)
            if text[i : i + 1] not in (",", "]" if is_list else "}"):
                break  # a number or literal the cut may have shortened: not known to be whole
            if is_list:
                items.append(value)
            else:
                members[str(key)] = value
            if text[i] != ",":
                break
            i += 1
    except (ValueError, RecursionError):
        pass  # the element the cut went through
    return (items, len(items)) if is_list else (members, len(members))
