"""One server-sent-events reader for every wire.

It works on raw byte reads, so it owns line splitting: CRLF, CR and LF endings, a CRLF split
across two reads (requests' ``iter_lines`` gets that wrong), multi-line ``data:``, comments,
``event:`` lines, a last frame with no blank line after it, and a bare JSON object outside SSE
framing (Gemini appends its error Status that way). ``[DONE]`` is passed on as data: for some
wires it is the end signal. Frames over 8 MiB are refused instead of buffered forever.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..core.errors import ErrorKind, ProviderError

__all__ = ["SSEEvent", "iter_sse", "iter_json_array", "MAX_FRAME_BYTES"]

MAX_FRAME_BYTES = 8 * 1024 * 1024


@dataclass(slots=True)
class SSEEvent:
    event: str | None
    data: str

    def json(self) -> Any:
        return json.loads(self.data)


def _too_big(provider: str) -> ProviderError:
    return ProviderError(
        provider,
        ErrorKind.INVALID,
        f"{provider}: a stream frame exceeded {MAX_FRAME_BYTES // (1024 * 1024)} MiB; refusing to buffer it",
    )


def iter_sse(chunks: Iterable[bytes], provider: str = "stream") -> Iterator[SSEEvent]:
    """Yield one SSEEvent per dispatched frame of a byte stream."""
    decode = codecs.getincrementaldecoder("utf-8")("replace").decode
    pending = ""  # the unfinished last line of the previous read
    skip_lf = False  # the previous read ended in CR: a leading LF now belongs to it
    data: list[str] = []
    bare: list[str] = []
    event: str | None = None
    size = 0

    for raw in chunks:
        text = decode(raw)
        if not text:
            continue
        if skip_lf:
            skip_lf = False
            if text[0] == "\n":
                text = text[1:]
                if not text:
                    continue
        if "\r" in text:
            skip_lf = text[-1] == "\r"
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        if pending:
            text = pending + text
        lines = text.split("\n")
        pending = lines.pop()
        if len(pending) > MAX_FRAME_BYTES:
            raise _too_big(provider)
        for line in lines:
            if not line:
                if data:
                    yield SSEEvent(event, "\n".join(data))
                    data = []
                elif bare:
                    yield SSEEvent(event, "\n".join(bare))
                    bare = []
                event = None
                size = 0
                continue
            head = line[:5]
            if head == "data:":
                value = line[6:] if line[5:6] == " " else line[5:]
                data.append(value)
                size += len(value)
                if size > MAX_FRAME_BYTES:
                    raise _too_big(provider)
            elif line[0] == ":":
                continue  # a comment: keep-alive
            elif line[:6] == "event:":
                event = line[6:].strip()
            elif line[:3] == "id:" or line[:6] == "retry:":
                continue
            elif bare or line.lstrip()[:1] in ("{", "["):
                bare.append(line)
                size += len(line)
                if size > MAX_FRAME_BYTES:
                    raise _too_big(provider)
            # any other line is a field we do not use

    tail = decode(b"", True)
    if tail:
        pending += tail.replace("\r\n", "\n").replace("\r", "\n")
    for line in pending.split("\n") if pending else ():
        if line[:5] == "data:":
            data.append(line[6:] if line[5:6] == " " else line[5:])
        elif line[:6] == "event:":
            event = line[6:].strip()
        elif line and (bare or line.lstrip()[:1] in ("{", "[")):
            bare.append(line)
    if data:
        yield SSEEvent(event, "\n".join(data))
    elif bare:
        yield SSEEvent(event, "\n".join(bare))


def iter_json_array(chunks: Iterable[bytes], provider: str = "stream") -> Iterator[Any]:
    """Elements of a body that is one JSON array (Gemini's stream without ``alt=sse``)."""
    body = b"".join(chunks)
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise ProviderError(
            provider, ErrorKind.NETWORK, f"{provider}: the JSON stream ended before the turn did ({exc})"
        ) from exc
    if isinstance(data, list):
        yield from data
    else:
        yield data
