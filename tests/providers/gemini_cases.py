"""The upstream Gemini recordings (through the shared loader) and ways to serve them."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from .cassette_loader import UPSTREAM, Case, cases

__all__ = ["UPSTREAM", "Case", "gemini_cases", "rechunk", "PieceStream", "serving"]


def gemini_cases(upstream: Path = UPSTREAM) -> list[Case]:
    """One case per Gemini interaction, in file order."""
    return cases(upstream, wire="gemini")


def rechunk(data: bytes, seed: int, max_piece: int = 7) -> list[bytes]:
    """The same bytes in random small pieces (1..max_piece), so CRLFs and frames split."""
    rnd = random.Random(seed)
    out, i = [], 0
    while i < len(data):
        n = rnd.randint(1, max_piece)
        out.append(data[i : i + n])
        i += n
    return out


class PieceStream(httpx.SyncByteStream):
    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    def __iter__(self) -> Iterator[bytes]:
        yield from self.pieces


def serving(case_or_status: Any, pieces: list[bytes] | None = None, *, headers: dict[str, str] | None = None,
            seen: list[httpx.Request] | None = None) -> httpx.MockTransport:
    """A transport answering every request with one recorded response (optionally re-chunked)."""
    if isinstance(case_or_status, Case):
        c = case_or_status
        status, body, hdrs = c.status, c.body, {"content-type": c.content_type()}
    else:
        status, body, hdrs = case_or_status, b"".join(pieces or []), headers or {}
    chunks = pieces if pieces is not None else [body]

    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        return httpx.Response(status, headers=hdrs, stream=PieceStream(chunks))

    return httpx.MockTransport(handler)
