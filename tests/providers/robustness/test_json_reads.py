"""Every JSON read of outside data in transport/ and providers/ goes through the one safe
reader (core.json_input.read_json): error bodies, whole bodies, the rare frame the hot path's
C scanner does not take, and tool arguments or results from a history. A text nested beyond
the interpreter's stack is then a clear error or a salvage, never a raw RecursionError."""

from __future__ import annotations

import ast
from pathlib import Path

import httpx
import pytest

import providerkit_nb as pk
from providerkit_nb.core.errors import ProviderError
from providerkit_nb.transport.classify import error_message_of, http_error, stream_error
from providerkit_nb.transport.retry_after import retry_after_from_body
from providerkit_nb.wire.options import CallOptions

PACKAGE = Path(__file__).resolve().parents[2] / "providerkit_nb"
DEEP = "[" * 100_000 + "]" * 100_000


def _json_loads_calls(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("loads", "load") and isinstance(node.func.value, ast.Name) and node.func.value.id == "json"
    ]


def test_no_module_of_the_wires_reads_json_its_own_way() -> None:
    found = {
        str(p.relative_to(PACKAGE)): lines
        for folder in ("transport", "providers")
        for p in sorted((PACKAGE / folder).rglob("*.py"))
        if (lines := _json_loads_calls(p))
    }
    assert found == {}, f"json.loads outside read_json: {found}"


def test_a_deep_error_body_is_read_like_any_other_unreadable_body() -> None:
    assert error_message_of(DEEP) is None
    assert retry_after_from_body(DEEP) == (None, None)
    err = http_error("openai", 429, {}, DEEP)
    assert isinstance(err, ProviderError) and err.code is None and err.status == 429
    err = stream_error("openai", DEEP)
    assert isinstance(err, ProviderError)


def test_gemini_builds_a_request_from_a_history_with_deep_tool_arguments_and_results() -> None:
    msgs = [
        pk.UserMessage("hi"),
        pk.AssistantMessage(tool_calls=[pk.ToolCall("c1", "f", DEEP)]),
        pk.ToolMessage("c1", "f", DEEP),
    ]
    body = pk.gemini(model="m", api_key="k").build_request(msgs, None, CallOptions(), stream=True).body
    call = body["contents"][1]["parts"][0]["functionCall"]
    assert call["name"] == "f" and call["args"] == {}  # nothing whole to salvage
    assert body["contents"][2]["parts"][0]["functionResponse"]["response"] == {"output": DEEP}


@pytest.mark.parametrize(
    ("make", "frame"),
    [
        (lambda t: pk.openai(model="m", api_key="k", transport=t), b"data: " + DEEP.encode() + b"\n\n"),
        (lambda t: pk.anthropic(model="m", api_key="k", transport=t), b"event: message_start\ndata: " + DEEP.encode() + b"\n\n"),
        (lambda t: pk.responses(model="m", api_key="k", transport=t), b"data: " + DEEP.encode() + b"\n\n"),
        (lambda t: pk.gemini(model="m", api_key="k", transport=t), b"data: " + DEEP.encode() + b"\n\n"),
    ],
)
def test_a_deep_stream_frame_is_a_malformed_response(make, frame) -> None:
    transport = httpx.MockTransport(  # an in-process stand-in for the server: the frame is what matters
        lambda r: httpx.Response(200, headers={"content-type": "text/event-stream"}, content=frame)
    )
    provider = make(transport)
    with pytest.raises(ProviderError) as info:
        pk.collect_turn(provider.create_stream([pk.UserMessage("hi")]))
    assert info.value.kind.value == "overload" or "malformed" in str(info.value.code or "")
    assert "nested too deeply" in str(info.value)
