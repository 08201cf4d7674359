"""Seeded damage to real recordings, the way proxies, gateways and half-broken servers do it.

A mutant is (case, kind, variant); everything random about it comes from a ``random.Random``
seeded with the suite seed and the mutant's name, so a failure replays from its printed line.
A body is cut into frames (SSE frames of a stream; the elements of a JSON-array stream; the
whole body of a non-streamed answer or an error) and one frame is damaged in one way.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# The eight kinds of the issue, plus three more found in the wild.
KINDS = (
    "drop_field",  # a frame missing its `delta`
    "list_for_object",  # a list where an object belongs
    "number_for_text",  # a number where text belongs
    "garbage_data_line",  # a garbage `data:` line
    "duplicate_frame",
    "flip_bytes",
    "empty_body",
    "wrap_in_object",  # a JSON body wrapped in another object
    "null_for_value",
    "object_for_text",
    "truncate",
)
SINGLE = frozenset({"empty_body"})  # one variant is all there is

_SEP = re.compile(r"(\r\n\r\n|\n\n|\r\r)")
_GARBAGE = (
    "data: {not json",
    "data: [1, 2",
    "data: null",
    "data: 42",
    'data: "a string"',
    "data: \ufffd\ufffd",
    "data: {}",
    "data: []",
    'data: {"type": 7}',
    "garbage without a field name",
)


@dataclass
class Mutant:
    kind: str
    body: bytes
    detail: str  # where and what, for the failure line


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    """Every (path, value) inside a JSON value, the root excluded, depth first."""
    out: list[tuple[tuple[Any, ...], Any]] = []
    if isinstance(value, dict):
        for k, v in value.items():
            out.append(((*prefix, k), v))
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.append(((*prefix, i), v))
            out.extend(_paths(v, (*prefix, i)))
    return out


def _set(root: Any, path: tuple[Any, ...], value: Any, *, delete: bool = False) -> None:
    parent = root
    for k in path[:-1]:
        parent = parent[k]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value


def _show(path: tuple[Any, ...]) -> str:
    return "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path) or "(root)"


def _damage_json(kind: str, value: Any, rng: random.Random) -> tuple[Any, str] | None:
    """One structural change to a JSON value; None when the value offers no place for it."""
    if kind == "wrap_in_object":
        return {rng.choice(["data", "result", "response", "payload"]): value}, "wrapped"
    paths = _paths(value)
    pick: Callable[[Any], bool]
    if kind == "drop_field":
        pick = lambda p: isinstance(p[0][-1], str)  # noqa: E731
    elif kind == "list_for_object":
        pick = lambda p: isinstance(p[1], dict)  # noqa: E731
    elif kind in ("number_for_text", "object_for_text"):
        pick = lambda p: isinstance(p[1], str)  # noqa: E731
    else:  # null_for_value
        pick = lambda p: p[1] is not None  # noqa: E731
    places = [p for p in paths if pick(p)]
    if not places:
        return None
    path, old = rng.choice(places)
    value = json.loads(json.dumps(value))
    if kind == "drop_field":
        _set(value, path, None, delete=True)
        return value, f"dropped {_show(path)}"
    new: Any = {
        "list_for_object": [old],
        "number_for_text": rng.choice([4.5, 7, -1, 1e308]),
        "object_for_text": {"text": old},
        "null_for_value": None,
    }[kind]
    _set(value, path, new)
    return value, f"{_show(path)} := {json.dumps(new)[:40]}"


def _frames(text: str) -> list[str]:
    """The body split into frames and separators (odd positions are separators)."""
    return _SEP.split(text)


def _data_json(frame: str) -> tuple[int, Any] | None:
    """The line index and parsed JSON of a frame's single data line, if it has one."""
    lines = frame.splitlines()
    data = [i for i, line in enumerate(lines) if line.startswith("data:")]
    if len(data) != 1:
        return None
    raw = lines[data[0]][5:].strip()
    try:
        return data[0], json.loads(raw)
    except ValueError:
        return None


def mutate(body: bytes, *, sse: bool, kind: str, rng: random.Random) -> Mutant | None:
    """One mutant of ``body`` of the given kind (None when the body has no place for it)."""
    if kind == "empty_body":
        return Mutant(kind, b"", "empty body")
    if kind == "flip_bytes":
        if not body:
            return None
        b = bytearray(body)
        spots = sorted(rng.sample(range(len(b)), min(len(b), rng.randint(1, 4))))
        for i in spots:
            b[i] ^= 1 << rng.randrange(8)
        return Mutant(kind, bytes(b), f"flipped bytes at {spots}")
    if kind == "truncate":
        if len(body) < 2:
            return None
        cut = rng.randrange(1, len(body))
        return Mutant(kind, body[:cut], f"cut at byte {cut} of {len(body)}")
    text = body.decode("utf-8", "replace")
    if not sse:
        try:
            whole = json.loads(text)
        except ValueError:
            whole = None
        if kind in ("garbage_data_line", "duplicate_frame"):
            if kind == "duplicate_frame":
                return Mutant(kind, body + body, "body sent twice")
            return Mutant(kind, b"data: {not json\n\n" + body, "garbage line before the body")
        if whole is None:
            return None
        if isinstance(whole, list) and whole and kind != "wrap_in_object":  # a JSON-array stream
            i = rng.randrange(len(whole))
            done = _damage_json(kind, whole[i], rng)
            if done is None:
                return None
            whole[i] = done[0]
            return Mutant(kind, json.dumps(whole).encode(), f"element {i}: {done[1]}")
        done = _damage_json(kind, whole, rng)
        if done is None:
            return None
        return Mutant(kind, json.dumps(done[0]).encode(), f"body: {done[1]}")
    parts = _frames(text)
    frames = [i for i in range(0, len(parts), 2) if parts[i].strip()]
    if not frames:
        return None
    if kind == "garbage_data_line":
        i = rng.choice(frames)
        line = rng.choice(_GARBAGE)
        parts.insert(i, "\n\n")
        parts.insert(i, line)
        return Mutant(kind, "".join(parts).encode(), f"{line!r} before frame {i // 2}")
    if kind == "duplicate_frame":
        i = rng.choice(frames)
        parts.insert(i + 1, "\n\n" + parts[i])
        return Mutant(kind, "".join(parts).encode(), f"frame {i // 2} twice")
    with_json = [i for i in frames if _data_json(parts[i]) is not None]
    rng.shuffle(with_json)
    for i in with_json:
        found = _data_json(parts[i])
        assert found is not None
        line_no, value = found
        done = _damage_json(kind, value, rng)
        if done is None:
            continue
        lines = parts[i].splitlines()
        lines[line_no] = "data: " + json.dumps(done[0], ensure_ascii=False)
        parts[i] = "\n".join(lines)
        return Mutant(kind, "".join(parts).encode(), f"frame {i // 2}: {done[1]}")
    return None
