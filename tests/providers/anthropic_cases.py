"""The upstream Anthropic recordings (through the shared loader) and small stream builders.

Reading and chopping recorded bodies is the shared loader's; this module picks the Anthropic
interactions, serves whole bodies while keeping the requests sent, and writes Anthropic events.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from .cassette_loader import UPSTREAM, Case, cases, chopped_transport

__all__ = ["UPSTREAM", "Case", "anthropic_cases", "chopped", "serving", "sse", "events", "start", "text_block", "end"]


def anthropic_cases() -> list[Case]:
    return cases(wire="anthropic")


def chopped(case: Case, seed: int) -> httpx.MockTransport:
    """The case's recorded answer in seeded random small pieces."""
    return chopped_transport(case.status, case.body, seed=seed, content_type=case.content_type())


def serving(status: int, body: bytes, *, seen: list[httpx.Request] | None = None) -> httpx.MockTransport:
    """An httpx transport (the seam, not a mock of our code) answering with ``body``, keeping
    every request it was sent in ``seen``."""

    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        kind = "application/json" if body.lstrip()[:1] == b"{" else "text/event-stream"
        return httpx.Response(status, headers={"content-type": kind}, content=body)

    return httpx.MockTransport(handler)


def sse(*payloads: dict[str, Any]) -> bytes:
    """Anthropic-style SSE: an ``event:`` line naming the type, then the JSON."""
    return b"".join(
        f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads
    )


def events(*payloads: dict[str, Any]) -> list[Any]:
    """The same payloads as parsed SSE events (for calling ``parse_stream`` directly)."""
    from providerkit_nb.transport.sse import SSEEvent

    return [SSEEvent(p["type"], json.dumps(p)) for p in payloads]


def start(model: str = "claude-sonnet-4-5", **usage: int) -> dict[str, Any]:
    u = {"input_tokens": 10, "output_tokens": 1, **usage}
    return {"type": "message_start", "message": {"id": "msg_x", "type": "message", "role": "assistant", "model": model, "content": [], "usage": u}}


def text_block(index: int, *pieces: str) -> list[dict[str, Any]]:
    return [
        {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
        *({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}} for p in pieces),
        {"type": "content_block_stop", "index": index},
    ]


def end(stop_reason: str = "end_turn", **usage: int) -> list[dict[str, Any]]:
    return [
        {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None}, "usage": {"output_tokens": 5, **usage}},
        {"type": "message_stop"},
    ]
