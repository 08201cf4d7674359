"""The upstream Gemini recordings, one case per interaction, read in place with yaml.safe_load.

Handles the three storage forms the recordings use: plain strings, gzip ``!!binary`` bodies
(with their Content-Encoding header), and pydantic-ai's ``parsed_body`` mappings.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

GEMINI_HOST = "generativelanguage.googleapis.com"


def _upstream() -> Path:
    """The suite's own answer (tests/conftest.py's UPSTREAM), needed at collection time."""
    spec = importlib.util.spec_from_file_location("_pk_suite_conftest", Path(__file__).parents[1] / "conftest.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return Path(mod.UPSTREAM)


UPSTREAM = _upstream()


@dataclass
class Case:
    path: Path
    index: int
    url: str
    request: dict[str, Any]
    status: int
    body: bytes  # decoded (never gzip)
    headers: dict[str, str]

    @property
    def id(self) -> str:
        return f"{self.path.parent.name}/{self.path.stem}#{self.index}"

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")


def _request_body(rq: dict[str, Any]) -> dict[str, Any]:
    if "parsed_body" in rq:
        return rq["parsed_body"]
    b = rq.get("body")
    if isinstance(b, bytes):
        b = b.decode("utf-8")
    return json.loads(b) if b else {}


def _response_body(rs: dict[str, Any]) -> bytes:
    if "parsed_body" in rs:
        return json.dumps(rs["parsed_body"]).encode()
    s = rs["body"].get("string")
    raw = s.encode("utf-8") if isinstance(s, str) else (s or b"")
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return raw


def gemini_cases(upstream: Path) -> Iterator[Case]:
    for path in sorted(upstream.glob("*/*.yaml")):
        text = path.read_text(encoding="utf-8")
        if GEMINI_HOST not in text:
            continue
        data = yaml.safe_load(text)
        for i, it in enumerate(data["interactions"]):
            rq, rs = it["request"], it["response"]
            if GEMINI_HOST not in rq["uri"]:
                continue
            headers = {
                k.lower(): v[0] for k, v in (rs.get("headers") or {}).items()
                if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")
            }
            yield Case(path, i, rq["uri"], _request_body(rq), rs["status"]["code"], _response_body(rs), headers)


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
        status, body, hdrs = case_or_status.status, case_or_status.body, case_or_status.headers
    else:
        status, body, hdrs = case_or_status, b"".join(pieces or []), headers or {}
    chunks = pieces if pieces is not None else [body]

    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        return httpx.Response(status, headers=hdrs, stream=PieceStream(chunks))

    return httpx.MockTransport(handler)
