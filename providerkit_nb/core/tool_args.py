"""Tool-call arguments as the model wrote them, turned into an object without ever raising.

Canonical messages keep ``arguments`` as the raw text the model produced. Wires that must send
an object back (Anthropic ``input``, Gemini ``args``) need one even when the text is blank, two
objects glued together, cut off mid-string, or double-escaped; ``parse_tool_args`` recovers what
it can, the same way every time, so a replayed history is always sendable and stable.
"""

from __future__ import annotations

import json
import re
import secrets
import zlib
from typing import Any, cast

from .json_input import read_json

__all__ = ["parse_tool_args", "is_complete_json", "normalize_tool_id"]

_DECODER = json.JSONDecoder()
_WS = " \t\r\n"
_LITERAL_U = re.compile(r"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})")
_DANGLING_U = re.compile(r"\\u[0-9a-fA-F]{0,3}$")


def parse_tool_args(raw: Any) -> dict[str, Any]:
    """The arguments object, or the most that can be salvaged from ``raw`` (``{}`` at worst).

    1. blank -> ``{}``; 2. valid JSON -> that object (a non-object -> ``{}``);
    3. several objects glued together -> the last one that parses;
    4. cut-off JSON -> every complete ``"key": "string"`` pair, plus the string value the text
       was cut in (numbers, booleans and nested objects of a cut-off text are dropped);
    5. always: literal ``\\uXXXX`` left in string values by double escaping become characters.
    """
    if isinstance(raw, dict):
        return cast(dict[str, Any], _heal(raw))
    if not isinstance(raw, str) or not raw.strip():
        return {}
    try:
        value = read_json(raw)
    except ValueError:
        pass
    else:
        return cast(dict[str, Any], _heal(value)) if isinstance(value, dict) else {}
    last = _last_object(raw)
    if last is not None:
        return cast(dict[str, Any], _heal(last))
    return cast(dict[str, Any], _heal(_salvage(raw)))


def is_complete_json(raw: str | None) -> bool:
    """Non-blank and parses: the stream delivered every fragment of the arguments."""
    if not raw or not raw.strip():
        return False
    try:
        read_json(raw)
    except ValueError:
        return False
    return True


def _last_object(raw: str) -> dict[str, Any] | None:
    """From the last ``{`` backwards, the first suffix that is exactly one JSON object."""
    end = len(raw.rstrip(_WS))
    pos = raw.rfind("{")
    while pos >= 0:
        try:
            value, stop = _DECODER.raw_decode(raw, pos)
        except ValueError:
            pass
        else:
            if stop >= end and isinstance(value, dict):
                return value
        pos = raw.rfind("{", 0, pos)
    return None


def _strip_dangling_escape(s: str) -> str:
    m = _DANGLING_U.search(s)
    if m is not None:
        before = s[: m.start()]
        if (len(before) - len(before.rstrip("\\"))) % 2 == 0:  # the backslash is not escaped
            return before
    trailing = len(s) - len(s.rstrip("\\"))
    if trailing % 2 == 1:
        return s[:-1]
    return s


def _tokens(s: str) -> list[tuple[str, str]]:
    """("str", body) / ("open", body) / (punctuation, "") / ("lit", "") tokens of JSON-ish text."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(s)
    while i < n:
        ch = s[i]
        if ch == '"':
            j = i + 1
            while j < n:
                c = s[j]
                if c == "\\":
                    j += 2
                elif c == '"':
                    break
                else:
                    j += 1
            if j >= n:
                out.append(("open", s[i + 1 :]))
                break
            out.append(("str", s[i + 1 : j]))
            i = j + 1
        elif ch in ":,{}[]":
            out.append((ch, ""))
            i += 1
        elif ch in _WS:
            i += 1
        else:
            j = i
            while j < n and s[j] not in ':,{}[]"' and s[j] not in _WS:
                j += 1
            out.append(("lit", ""))
            i = j
    return out


def _unescape(body: str) -> str:
    try:
        return cast(str, json.loads(f'"{body}"'))  # a JSON string literal decodes to a str
    except ValueError:
        return body


def _salvage(raw: str) -> dict[str, Any]:
    toks = _tokens(_strip_dangling_escape(raw))
    out: dict[str, Any] = {}
    n = len(toks)
    for k in range(n - 2):
        if toks[k][0] != "str" or toks[k + 1][0] != ":":
            continue
        kind, body = toks[k + 2]
        if kind == "str" and k + 3 < n and toks[k + 3][0] in (",", "}"):
            out[_unescape(toks[k][1])] = _unescape(body)
        elif kind == "open" and k + 3 == n:
            out[_unescape(toks[k][1])] = _unescape(body)
    return out


def _heal_text(s: str) -> str:
    if "\\u" not in s:
        return s

    def sub(m: re.Match[str]) -> str:
        if m.group(3) is not None:
            code = int(m.group(3), 16)
            if 0xD800 <= code <= 0xDFFF:
                return m.group(0)  # a lone surrogate is no character: leave the text alone
            return chr(code)
        high, low = int(m.group(1), 16), int(m.group(2), 16)
        return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))

    return _LITERAL_U.sub(sub, s)


def _heal(value: Any) -> Any:
    if isinstance(value, str):
        return _heal_text(value)
    if isinstance(value, dict):
        return {k: _heal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_heal(v) for v in value]
    return value


def normalize_tool_id(call_id: str | None, prefix: str = "call_pk_") -> str:
    """An id every wire accepts: blank -> a fresh one; longer than 64 -> 48 chars + "_" + hash.

    The hash is CRC-32 of the whole id, so the same long id always maps to the same short one
    (results keep matching their calls) and the result fits the Responses 64-character limit.
    """
    cid = (call_id or "").strip()
    if not cid:
        alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
        return prefix + "".join(secrets.choice(alphabet) for _ in range(8))
    if len(cid) > 64:
        return f"{cid[:48]}_{zlib.crc32(cid.encode('utf-8')):08x}"
    return cid
