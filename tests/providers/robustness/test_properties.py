"""Properties of the readers under arbitrary input (hypothesis).

- The SSE reader, given any bytes cut at any points, yields the same events as for the bytes
  read whole, or raises ProviderError; nothing else.
- Each wire's frame parser, given any JSON value in place of any frame of a real recording,
  gives a turn or a ProviderError naming the wire (through the real adapter and transport).
- A 9 MiB line hits the SSE cap with a clear error instead of being buffered.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from providerkit_nb.core.errors import ProviderError
from providerkit_nb.core.turn import collect_turn
from providerkit_nb.testing.replay import wire_module
from providerkit_nb.transport.sse import iter_sse

from ..cassette_loader import OWN, Case, ChoppedStream, cases

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])

# ----------------------------------------------------------------------------- the SSE reader

_PIECES = [
    b"data: ", b"data:", b"event: ", b"event:x", b": ping", b"id: 1", b"retry: 5", b"\n", b"\r\n",
    b"\r", b"\n\n", b"{", b"}", b'{"a": 1}', b"[DONE]", b"[", b" ", "é".encode(), b"\xff", b"\xe2\x82",
    b"\x00", b"x",
]
sse_bytes = st.one_of(
    st.binary(max_size=300),
    st.lists(st.sampled_from(_PIECES), max_size=60).map(b"".join),
)


def _cut(data: bytes, sizes: list[int]) -> list[bytes]:
    out, i = [], 0
    for n in sizes:
        if i >= len(data):
            break
        out.append(data[i : i + n])
        i += n
    if i < len(data):
        out.append(data[i:])
    return out


def _read(chunks: list[bytes]) -> list[tuple[str | None, str]] | str:
    try:
        return [(e.event, e.data) for e in iter_sse(iter(chunks), "p")]
    except ProviderError as err:
        assert err.provider == "p" and err.message
        return f"error: {err.kind.value}"


@SETTINGS
@given(data=sse_bytes, sizes=st.lists(st.integers(1, 12), max_size=80))
def test_sse_reader_gives_the_same_events_however_the_bytes_are_cut(data: bytes, sizes: list[int]) -> None:
    whole = _read([data])
    assert _read(_cut(data, sizes)) == whole
    assert _read([bytes([b]) for b in data]) == whole
    if not isinstance(whole, str):
        assert all(isinstance(d, str) and (e is None or isinstance(e, str)) for e, d in whole)


def _provider_for(case: Case, body: bytes) -> tuple[Any, Any]:
    mod = wire_module(case.wire)
    assert mod is not None, case.wire
    imported = mod.import_request(case.url, case.request)

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": case.content_type()}, stream=ChoppedStream(body, 7, 4096))

    return mod.replay_provider(case.url, case.request, httpx.MockTransport(handler)), imported


@pytest.mark.timeout(60)
@pytest.mark.parametrize("shape", ["one long line", "one long frame of short lines"])
def test_a_9_mib_line_hits_the_cap_with_a_clear_error(shape: str) -> None:
    case = next(c for c in cases(OWN) + cases() if c.wire == "openai_chat" and c.streamed and c.status == 200)
    n = 9 * 1024 * 1024
    body = b"data: " + b"x" * n if shape == "one long line" else b"data: x\n" * (n // 8)
    provider, imported = _provider_for(case, body)
    with pytest.raises(ProviderError) as ei:
        collect_turn(provider.create_stream(imported.messages, imported.tools, **imported.options))
    assert ei.value.provider == provider.id
    assert "exceeded 8 MiB" in str(ei.value)


# ----------------------------------------------------------------------------- each wire's parser

_SEP = re.compile(rb"(\r\n\r\n|\n\n)")
_KEYS = [
    "type", "delta", "index", "text", "content", "choices", "candidates", "parts", "item", "response",
    "usage", "message", "content_block", "tool_calls", "function", "arguments", "name", "id", "output",
    "finish_reason", "finishReason", "stop_reason", "error", "item_id", "output_index", "call_id",
    "usageMetadata", "thinking", "signature", "partial_json", "functionCall", "args", "model",
]


def _nested(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    keys = st.sampled_from(_KEYS) | st.text(max_size=6)
    return st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=5)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 10**12) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    _nested,
    max_leaves=25,
)


def _recording(wire: str) -> Case | None:
    """A healthy streamed SSE recording of the wire with the most kinds of event (so every
    branch of the parser has a frame to be replaced), of at most 120 frames (to stay quick)."""
    found = [
        c for c in cases() + cases(OWN)
        if c.wire == wire and c.status == 200 and c.streamed and c.body.lstrip()[:1] not in (b"[", b"{")
        and len(_SEP.split(c.body)) <= 240
    ]
    return max(found, key=lambda c: (len(_event_types(_SEP.split(c.body))), c.id), default=None)


def _event_types(frames: list[bytes]) -> list[str]:
    out = set()
    for f in frames:
        m = re.search(rb'"type"\s*:\s*"([^"]+)"', f)
        if m:
            out.add(m.group(1).decode())
    return sorted(out) or ["x"]


@pytest.mark.parametrize("wire", ["openai_chat", "openai_responses", "anthropic", "gemini"])
def test_any_json_in_place_of_any_frame_gives_a_turn_or_a_provider_error(wire: str) -> None:
    case = _recording(wire)
    if case is None:
        pytest.skip(f"no streamed recording of {wire} found (upstream recordings missing?)")
    parts = _SEP.split(case.body)
    frames = list(range(0, len(parts), 2))
    types = _event_types([parts[i] for i in frames])

    @SETTINGS
    @given(
        at=st.sampled_from(frames),
        value=json_values,
        typed=st.one_of(st.none(), st.sampled_from(types)),
        event=st.booleans(),
    )
    def prop(at: int, value: Any, typed: str | None, event: bool) -> None:
        if typed is not None and isinstance(value, dict):
            value = {**value, "type": typed}  # reach the branch that event type takes
        line = b"data: " + json.dumps(value).encode()
        if event and typed is not None:
            line = b"event: " + typed.encode() + b"\n" + line
        body = b"".join(parts[:at] + [line] + parts[at + 1 :])
        provider, imported = _provider_for(case, body)
        try:
            turn = collect_turn(provider.create_stream(imported.messages, imported.tools, **imported.options))
        except ProviderError as err:
            assert err.provider == provider.id and err.message.strip(), repr(err)
        else:
            assert turn.finish_reason is not None
        finally:
            provider.close()

    prop()
