"""Shared reader for the upstream recordings, for every wire's tests.

The reading itself is the library's (``providerkit_nb.testing.replay``: plain vcrpy YAML, pydantic-ai's
``parsed_body`` variant, gzip bodies), so tests and ``python -m providerkit_nb replay`` see the
same bytes. This module adds what tests need at collection time: where the recordings are,
one case per interaction, and transports that serve a recorded body in small pieces.

    from .cassette_loader import UPSTREAM, cassettes, cases, chopped_transport
"""

from __future__ import annotations

import importlib.util
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from providerkit_nb.testing.replay import Interaction, guess_wire, load_interactions


def _suite_upstream() -> Path:
    """tests/conftest.py's UPSTREAM (the one place that resolves it), read at collection time."""
    spec = importlib.util.spec_from_file_location("_pk_suite_conftest_loader", Path(__file__).parents[1] / "conftest.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return Path(mod.UPSTREAM)


UPSTREAM = _suite_upstream()
OWN = Path(__file__).resolve().parents[2] / "cassettes"


def cassettes(root: Path | None = None) -> list[Path]:
    """Every cassette file under ``root`` (default: the upstream set), sorted; [] if absent."""
    root = UPSTREAM if root is None else root
    if not root.is_dir():
        return []
    return sorted(p for p in root.rglob("*.yaml") if p.is_file())


@dataclass(frozen=True)
class Case:
    """One recorded interaction, with what a test needs to name and serve it."""

    path: Path
    interaction: Interaction

    @property
    def id(self) -> str:
        return f"{self.path.parent.name}/{self.path.stem}#{self.interaction.index}"

    @property
    def url(self) -> str:
        return self.interaction.url

    @property
    def request(self) -> dict[str, Any]:
        return self.interaction.request_json

    @property
    def status(self) -> int:
        return self.interaction.status

    @property
    def body(self) -> bytes:
        return self.interaction.response_body

    @property
    def text(self) -> str:
        return self.interaction.response_text

    @property
    def wire(self) -> str:
        return guess_wire(self.url)

    @property
    def streamed(self) -> bool:
        """Did the client ask for a stream? (Gemini says so in the URL, the others in the body.)"""
        if ":streamGenerateContent" in self.url:
            return True
        return bool(self.request.get("stream"))

    def content_type(self) -> str:
        return self.interaction.response_header("content-type") or (
            "text/event-stream" if self.streamed else "application/json"
        )


def cases(root: Path | None = None, wire: str | None = None) -> list[Case]:
    """One Case per interaction of every cassette (optionally only one wire's)."""
    out = []
    for path in cassettes(root):
        for it in load_interactions(path):
            c = Case(path, it)
            if wire is None or c.wire == wire:
                out.append(c)
    return out


# --------------------------------------------------------------------------- serving


class ChoppedStream(httpx.SyncByteStream):
    """A body handed out in seeded random pieces of 1..max_piece bytes, so SSE frames, CRLF
    pairs and UTF-8 characters fall across reads."""

    def __init__(self, body: bytes, seed: int, max_piece: int = 17) -> None:
        self.body = body
        self.seed = seed
        self.max_piece = max_piece

    def __iter__(self) -> Iterator[bytes]:
        rng = random.Random(self.seed)
        i = 0
        while i < len(self.body):
            n = rng.randint(1, self.max_piece)
            yield self.body[i : i + n]
            i += n


def chopped_transport(status: int, body: bytes, *, seed: int, content_type: str = "text/event-stream") -> httpx.MockTransport:
    """An httpx transport (the seam, not a mock of our code) serving ``body`` in pieces."""

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, headers={"content-type": content_type}, stream=ChoppedStream(body, seed))

    return httpx.MockTransport(handler)
