"""The upstream OpenAI Responses recordings (through the shared cassette loader), and small
helpers to serve a body, whole or in seeded random pieces, and to write a Responses stream."""

from __future__ import annotations

import json
from typing import Any

import httpx

from .cassette_loader import Case, ChoppedStream, cases

__all__ = ["CASES", "Case", "serving", "sse"]

CASES: list[Case] = cases(wire="openai_responses")


class _Whole(httpx.SyncByteStream):
    def __init__(self, body: bytes) -> None:
        self.body = body

    def __iter__(self):  # type: ignore[no-untyped-def]
        yield self.body


def serving(status: int, body: bytes, *, seed: int | None = None, seen: list[httpx.Request] | None = None,
            content_type: str = "text/event-stream") -> httpx.MockTransport:
    """A transport (the seam, not a mock of our code) answering every request with ``body``,
    whole or, with ``seed``, in random pieces of 1..17 bytes; ``seen`` collects the requests."""

    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        stream = _Whole(body) if seed is None else ChoppedStream(body, seed)
        return httpx.Response(status, headers={"content-type": content_type}, stream=stream)

    return httpx.MockTransport(handler)


def sse(*events: dict[str, Any]) -> bytes:
    """A Responses stream written out: ``event:`` line = type, one ``data:`` line each."""
    return "".join(f"event: {e.get('type')}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
