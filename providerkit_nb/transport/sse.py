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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..core.errors import MALFORMED_CODE, MALFORMED_KIND, ErrorKind, ProviderError
from ..core.fastjson import loads as _fast_loads
from ..core.fastjson import trusted_loads
from ..core.json_input import JsonInputError, read_json

__all__ = ["SSEEvent", "StreamPosition", "iter_sse", "iter_json_array", "loads_data", "MAX_FRAME_BYTES"]

MAX_FRAME_BYTES = 8 * 1024 * 1024
_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _std_loads(data: str) -> Any:
    """The C scanner called directly, without the two whitespace regex passes of
    ``json.loads`` around it (a third cheaper); anything it does not take (leading whitespace,
    not JSON, nested too deeply) goes to ``read_json``, so errors are one ValueError."""
    try:
        return _SCAN(data, 0)[0]
    except (StopIteration, ValueError, RecursionError):
        return read_json(data)  # the rare case, read the one safe way: a JsonInputError (ValueError)


def loads_data(data: str) -> Any:
    """``json.loads`` for one event's data, the same values, cheaper: orjson when it is
    installed and trusted with the text (``core.fastjson``), else the standard library's
    scanner; errors are the usual ValueError."""
    return _fast_loads(data, _std_loads)


@dataclass(slots=True)
class SSEEvent:
    """One dispatched frame. ``fast`` is a parser the reader found safe for ``data`` (orjson,
    checked once per read, see ``core.fastjson.trusted_loads``), or None; ``json()`` reads the
    data the same way whichever it is."""

    event: str | None
    data: str
    fast: Callable[[str], Any] | None = None

    def json(self) -> Any:
        fast = self.fast
        if fast is not None:
            try:
                return fast(self.data)
            except ValueError:
                pass  # what orjson refuses, the standard library decides
        return loads_data(self.data)

    def decode(self) -> Any:
        """The event's JSON as the wires' parsers read it: ``NOT_JSON`` for a keep-alive or other
        text that is not JSON; JSON nested beyond reading raises (a malformed response)."""
        try:
            return self.json()
        except JsonInputError as exc:
            if exc.too_deep:
                raise
            return NOT_JSON
        except ValueError:
            return NOT_JSON


NOT_JSON: Any = object()  # SSEEvent.decode: the data was not JSON


def _too_big(provider: str) -> ProviderError:
    return ProviderError(
        provider,
        ErrorKind.INVALID,
        f"{provider}: a stream frame exceeded {MAX_FRAME_BYTES // (1024 * 1024)} MiB; refusing to buffer it",
    )


def _slow_frame(frame: str, provider: str) -> SSEEvent | None:
    """One frame (no blank line inside) read line by line: event names, multi-line data,
    comments, ids, and a bare JSON object outside SSE framing."""
    data: list[str] = []
    bare: list[str] = []
    event: str | None = None
    for line in frame.split("\n"):
        if not line:
            continue
        if line[:5] == "data:":
            data.append(line[6:] if line[5:6] == " " else line[5:])
        elif line[0] == ":":
            continue  # a comment: keep-alive
        elif line[:6] == "event:":
            event = line[6:].strip()
        elif line[:3] == "id:" or line[:6] == "retry:":
            continue
        elif bare or line.lstrip()[:1] in ("{", "["):
            bare.append(line)
        # any other line is a field we do not use
    if data:
        return SSEEvent(event, "\n".join(data))
    if bare:
        return SSEEvent(event, "\n".join(bare))
    return None


class StreamPosition:
    """How far a reader got: the number of the event handed out last (1-based), that event, and
    whether the bytes ended cleanly. Error messages name the event from it."""

    __slots__ = ("n", "event", "done")

    def __init__(self) -> None:
        self.n = 0
        self.event: SSEEvent | None = None
        self.done = False


def iter_sse(
    chunks: Iterable[bytes], provider: str = "stream", pos: StreamPosition | None = None
) -> Iterator[SSEEvent]:
    """Yield one SSEEvent per dispatched frame of a byte stream.

    Reads are decoded incrementally and normalised to LF (a CR that ends one read and the LF
    that starts the next count as one line end); whole frames are cut on blank lines. A frame
    that is a single ``data: ...`` line (nearly all of them) takes a fast path; anything else
    is read line by line.
    """
    if pos is None:
        pos = StreamPosition()
    decode = codecs.getincrementaldecoder("utf-8")("replace").decode
    parts: list[str] = []  # the unfinished last frame, as read (joined only once it ends)
    size = 0
    skip_lf = False  # the previous read ended in CR: a leading LF now belongs to it

    for raw in chunks:
        text = decode(raw)
        if not text:
            continue
        if skip_lf or "\r" in text:
            text, skip_lf = _to_lf(text, skip_lf)
            if not text:
                continue
        if parts:
            if text.find("\n\n") < 0 and not (text[0] == "\n" and parts[-1][-1] == "\n"):
                parts.append(text)  # still inside one frame: no rescans of what came before
                size += len(text)
                if size > MAX_FRAME_BYTES:
                    raise _too_big(provider)
                continue
            parts.append(text)
            text = "".join(parts)
            parts = []
        cut = text.rfind("\n\n")
        rest = text[cut + 2 :] if cut >= 0 else text
        size = len(rest)
        if size > MAX_FRAME_BYTES:
            raise _too_big(provider)
        parts = [rest] if rest else []
        if cut >= 0:
            events, too_big = _frames(text[:cut], trusted_loads(text), provider)  # one check per read
            for ev in events:
                pos.n += 1
                pos.event = ev
                yield ev
            if too_big:
                raise _too_big(provider)

    pending = "".join(parts)
    tail = decode(b"", True)
    if tail:
        pending += tail.replace("\r\n", "\n").replace("\r", "\n")
    for frame in pending.split("\n\n") if pending else ():
        last = _slow_frame(frame, provider)
        if last is not None:
            pos.n += 1
            pos.event = last
            yield last
    pos.done = True


def _to_lf(text: str, skip_lf: bool) -> tuple[str, bool]:
    """One read with its line ends made LF, and whether it ended in a CR (then an LF that
    starts the next read is the second half of that line end, not a blank line)."""
    if skip_lf and text[0] == "\n":
        text = text[1:]
    if "\r" not in text:
        return text, False
    return text.replace("\r\n", "\n").replace("\r", "\n"), text[-1] == "\r"


def _frames(block: str, fast: Callable[[str], Any] | None, provider: str) -> tuple[list[SSEEvent], bool]:
    """The events of the whole frames in one read (``block``: frames cut on blank lines), and
    whether a frame after them was too big to read (the events before it are still handed out
    first). Two shapes take a fast path: one ``data:`` line, and one ``event:`` line with one
    ``data:`` line (Anthropic, Responses); any other frame is read line by line. A list, not a
    generator: this is the hot path, and a list costs less per event than delegating."""
    Event = SSEEvent
    out: list[SSEEvent] = []
    add = out.append
    for frame in block.split("\n\n"):
        if frame[:6] == "data: " and "\n" not in frame:
            ev = Event(None, frame[6:], fast)
        elif (
            (cut3 := frame.partition("\ndata: "))[1]
            and frame[:6] == "event:"
            and "\n" not in cut3[2]
            and "\n" not in cut3[0]
        ):  # "event: name" + one data line: what _slow_frame would make of it
            ev = Event(cut3[0][6:].strip(), cut3[2], fast)
        elif not frame:
            continue
        else:
            if len(frame) > MAX_FRAME_BYTES:
                return out, True
            slow = _slow_frame(frame, provider)
            if slow is None:
                continue
            slow.fast = fast  # its data is lines of this text joined by LFs
            ev = slow
        add(ev)
    return out, False


def iter_json_array(chunks: Iterable[bytes], provider: str = "stream") -> Iterator[Any]:
    """Elements of a body that is one JSON array (Gemini's stream without ``alt=sse``).

    A body cut short is a cut stream (``network``); a body that is empty, not UTF-8, or not
    JSON before its end is a malformed response (``MALFORMED_KIND``).
    """
    body = b"".join(chunks)
    text = body.decode("utf-8", "replace")
    if not text.strip():
        raise ProviderError(
            provider, MALFORMED_KIND, f"{provider} stream: the response body was empty (an empty 200)",
            code=MALFORMED_CODE,
        )
    try:
        data = read_json(body)
    except JsonInputError as exc:
        if exc.truncated:  # it stopped where the bytes stopped: a cut
            raise ProviderError(
                provider, ErrorKind.NETWORK, f"{provider}: the JSON stream ended before the turn did ({exc})"
            ) from exc
        raise _not_json(provider, f"not JSON ({exc})", text) from exc
    if isinstance(data, list):
        yield from data
    else:
        yield data


def _not_json(provider: str, why: str, text: str) -> ProviderError:
    from .scrub import scrub  # a key-shaped string in a body never reaches a message

    head = scrub(" ".join(text[:200].split()))[:120]
    return ProviderError(
        provider, MALFORMED_KIND, f"{provider} stream: the JSON-array body is {why}; it begins: {head}",
        code=MALFORMED_CODE, body=scrub(text[:2000]),
    )
