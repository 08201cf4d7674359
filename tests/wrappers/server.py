"""A real HTTP/1.1 server on 127.0.0.1 that misbehaves on request.

Each scenario gets its own base URL (``server.url(...)``); the wire is read from the request
path (``/chat/completions``, ``/messages``, ``/responses``, ``:streamGenerateContent``), so
one scenario answers in whatever dialect the adapter speaks. A scenario is a list of
behaviours consumed one per request (the last one repeats), so "429 then success" is
``server.url(Status(429, retry_after=0.05), Ok())``.

The server counts requests in flight (and the peak), all requests, and open connections, and
notices a client hanging up while it stalls.
"""

from __future__ import annotations

import itertools
import json
import select
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# --------------------------------------------------------------------------- behaviours


@dataclass
class Ok:
    """A normal streamed answer: ``pieces`` of text, ``gap`` seconds apart."""

    text: str = "Hello there"
    pieces: int = 3
    delay: float = 0.0  # before the headers
    gap: float = 0.0  # between content frames
    finish: str = "stop"


@dataclass
class StallHeaders:
    """Read the request, then say nothing (no status line) until the client hangs up."""

    limit: float = 30.0


@dataclass
class StallBody:
    """Send 200 and headers (and ``before`` content pieces), then say nothing."""

    before: int = 0
    limit: float = 30.0


@dataclass
class KeepAlive:
    """Send 200, then only keep-alive comments / pings every ``every`` seconds, forever."""

    every: float = 0.05
    before: int = 0  # content pieces before the keep-alives start
    limit: float = 30.0


@dataclass
class Trickle:
    """Content pieces every ``every`` seconds, ``count`` of them, then a normal end."""

    every: float = 0.1
    count: int = 50


@dataclass
class Status:
    """A non-200 answer (429 with Retry-After, 529 overloaded, 401, ...)."""

    code: int
    retry_after: float | str | None = None
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class StreamError:
    """200, ``before`` content pieces, then the wire's in-stream error frame."""

    before: int = 0
    message: str = "Overloaded"
    code: int = 529


@dataclass
class Cut:
    """200, ``before`` content pieces, then drop the connection without an end."""

    before: int = 1


@dataclass
class Empty:
    """A finished turn with no content (``finish`` stop or length)."""

    finish: str = "stop"


@dataclass
class ByKey:
    """Choose the behaviour by the credential the request carries (for key pools and tokens)."""

    by_key: dict[str, Any]
    default: Any = field(default_factory=Ok)

    def pick(self, headers: dict[str, str]) -> Any:
        auth = headers.get("authorization", "").removeprefix("Bearer ").strip()
        key = auth or headers.get("x-api-key", "") or headers.get("x-goog-api-key", "")
        return self.by_key.get(key, self.default)


def credential(seen: Seen) -> str:
    """The key a request carried, as the server saw it."""
    h = seen.headers
    return h.get("authorization", "").removeprefix("Bearer ").strip() or h.get("x-api-key", "") or h.get("x-goog-api-key", "")


# --------------------------------------------------------------------------- wire frames


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data) if not isinstance(data, str) else data}\n\n".encode()


class _Wire:
    name = ""

    def start(self, model: str) -> list[bytes]:
        return []

    def whole(self, model: str, text: str, finish: str) -> Any:
        raise NotImplementedError(f"{self.name}: no non-streaming answer in the test server")

    def text(self, piece: str) -> bytes:
        raise NotImplementedError

    def end(self, finish: str, out_tokens: int) -> list[bytes]:
        raise NotImplementedError

    def keepalive(self) -> bytes:
        return b": keep-alive\n\n"

    def error(self, message: str, code: int) -> bytes:
        raise NotImplementedError


class _Chat(_Wire):
    name = "chat"

    def text(self, piece: str) -> bytes:
        return _sse({"id": "c1", "object": "chat.completion.chunk", "model": "m",
                     "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})

    def start(self, model: str) -> list[bytes]:
        return [_sse({"id": "c1", "object": "chat.completion.chunk", "model": model,
                      "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                   "finish_reason": None}]})]

    def end(self, finish: str, out_tokens: int) -> list[bytes]:
        return [
            _sse({"id": "c1", "object": "chat.completion.chunk", "model": "m",
                  "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}),
            _sse({"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [],
                  "usage": {"prompt_tokens": 5, "completion_tokens": out_tokens,
                            "total_tokens": 5 + out_tokens}}),
            _sse("[DONE]"),
        ]

    def error(self, message: str, code: int) -> bytes:
        return _sse({"error": {"message": message, "code": code, "type": "server_error"}})

    def whole(self, model: str, text: str, finish: str) -> Any:
        return {"id": "c1", "object": "chat.completion", "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                             "finish_reason": finish}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}}


class _Anthropic(_Wire):
    name = "anthropic"

    def start(self, model: str) -> list[bytes]:
        return [
            _sse({"type": "message_start", "message": {
                "id": "msg_1", "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": 5, "output_tokens": 1}}}, "message_start"),
            _sse({"type": "content_block_start", "index": 0,
                  "content_block": {"type": "text", "text": ""}}, "content_block_start"),
        ]

    def text(self, piece: str) -> bytes:
        return _sse({"type": "content_block_delta", "index": 0,
                     "delta": {"type": "text_delta", "text": piece}}, "content_block_delta")

    def keepalive(self) -> bytes:
        return _sse({"type": "ping"}, "ping")

    def end(self, finish: str, out_tokens: int) -> list[bytes]:
        reason = {"stop": "end_turn", "length": "max_tokens"}.get(finish, finish)
        return [
            _sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
            _sse({"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": None},
                  "usage": {"output_tokens": out_tokens}}, "message_delta"),
            _sse({"type": "message_stop"}, "message_stop"),
        ]

    def whole(self, model: str, text: str, finish: str) -> Any:
        return {"id": "msg_1", "type": "message", "role": "assistant", "model": model,
                "content": [{"type": "text", "text": text}],
                "stop_reason": {"stop": "end_turn", "length": "max_tokens"}.get(finish, finish),
                "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 3}}

    def error(self, message: str, code: int) -> bytes:
        kind = "overloaded_error" if code == 529 else "api_error"
        return _sse({"type": "error", "error": {"type": kind, "message": message}}, "error")


class _Responses(_Wire):
    name = "responses"

    def __init__(self) -> None:
        self.seq = itertools.count()
        self.model = "m"

    def _ev(self, kind: str, **body: Any) -> bytes:
        return _sse({"type": kind, "sequence_number": next(self.seq), **body}, kind)

    def _response(self, status: str, text: str = "", out_tokens: int = 0, finish: str = "stop") -> dict:
        r: dict[str, Any] = {"id": "resp_1", "object": "response", "status": status,
                             "model": self.model, "output": []}
        if status == "completed" or status == "incomplete":
            r["output"] = [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                            "content": [{"type": "output_text", "text": text, "annotations": []}]}] if text else []
            r["usage"] = {"input_tokens": 5, "output_tokens": out_tokens, "total_tokens": 5 + out_tokens,
                          "input_tokens_details": {"cached_tokens": 0},
                          "output_tokens_details": {"reasoning_tokens": 0}}
            if status == "incomplete":
                r["incomplete_details"] = {"reason": "max_output_tokens"}
        return r

    def start(self, model: str) -> list[bytes]:
        self.model = model
        self.text_so_far = ""
        return [
            self._ev("response.created", response=self._response("in_progress")),
            self._ev("response.output_item.added", output_index=0, item={
                "type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress", "content": []}),
            self._ev("response.content_part.added", output_index=0, content_index=0, item_id="msg_1",
                     part={"type": "output_text", "text": "", "annotations": []}),
        ]

    def text(self, piece: str) -> bytes:
        self.text_so_far = getattr(self, "text_so_far", "") + piece
        return self._ev("response.output_text.delta", item_id="msg_1", output_index=0,
                        content_index=0, delta=piece)

    def end(self, finish: str, out_tokens: int) -> list[bytes]:
        text = getattr(self, "text_so_far", "")
        status = "incomplete" if finish == "length" else "completed"
        return [
            self._ev("response.output_text.done", item_id="msg_1", output_index=0, content_index=0, text=text),
            self._ev("response.output_item.done", output_index=0, item={
                "type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]} if text else {
                "type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": []}),
            self._ev(f"response.{status}", response=self._response(status, text, out_tokens, finish)),
        ]

    def error(self, message: str, code: int) -> bytes:
        r = self._response("failed")
        r["error"] = {"code": "server_error", "message": message}
        return self._ev("response.failed", response=r)


class _Gemini(_Wire):
    name = "gemini"

    def text(self, piece: str) -> bytes:
        return _sse({"candidates": [{"content": {"parts": [{"text": piece}], "role": "model"}, "index": 0}],
                     "modelVersion": "m"})

    def end(self, finish: str, out_tokens: int) -> list[bytes]:
        reason = {"stop": "STOP", "length": "MAX_TOKENS"}.get(finish, "STOP")
        return [_sse({"candidates": [{"content": {"parts": [{"text": ""}], "role": "model"},
                                      "finishReason": reason, "index": 0}],
                      "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": out_tokens,
                                        "totalTokenCount": 5 + out_tokens},
                      "modelVersion": "m"})]

    def keepalive(self) -> bytes:
        return b"\r\n"

    def error(self, message: str, code: int) -> bytes:
        return _sse({"error": {"code": 503 if code == 529 else code, "message": message, "status": "UNAVAILABLE"}})


def _wire_for(path: str) -> _Wire:
    p = path.split("?", 1)[0]
    if p.endswith("/chat/completions"):
        return _Chat()
    if p.endswith("/messages"):
        return _Anthropic()
    if p.endswith("/responses"):
        return _Responses()
    if ":streamGenerateContent" in p or ":generateContent" in p:
        return _Gemini()
    raise LookupError(p)


def _status_body(wire: str, code: int, body: Any) -> Any:
    if body is not None:
        return body
    if code == 529:
        return {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    if code == 429:
        return {"error": {"message": "Rate limit reached for requests", "type": "requests",
                          "code": "rate_limit_exceeded"}}
    if code in (401, 403):
        return {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                          "code": "invalid_api_key"}}
    return {"error": {"message": f"status {code}", "type": "server_error"}}


# --------------------------------------------------------------------------- server


@dataclass
class Seen:
    """One request as the server saw it."""

    scenario: str
    path: str
    headers: dict[str, str]
    body: Any
    started: float
    ended: float | None = None
    outcome: str = ""
    open_before: int = 0  # earlier requests of this scenario whose client had not hung up yet


class _Scenario:
    def __init__(self, behaviours: list[Any]) -> None:
        self.behaviours = behaviours
        self.i = 0
        self.lock = threading.Lock()

    def next(self) -> Any:
        with self.lock:
            b = self.behaviours[min(self.i, len(self.behaviours) - 1)]
            self.i += 1
            return b


class TestServer:
    """Start with ``start()`` (the fixture does), stop with ``stop()``."""

    __test__ = False  # not a pytest test class

    def __init__(self) -> None:
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.scenarios: dict[str, _Scenario] = {}
        self._ids = itertools.count()
        self.in_flight = 0
        self.peak = 0
        self.total = 0
        self.connections = 0
        self.client_hangups = 0
        self.seen: list[Seen] = []
        self.live: dict[int, tuple[Seen, socket.socket]] = {}

    # lifecycle ----------------------------------------------------------------

    def start(self) -> TestServer:
        server = self

        class Handler(_Handler):
            owner = server

        httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="test-http-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)

    @property
    def port(self) -> int:
        assert self._httpd is not None
        return self._httpd.server_address[1]

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # scenarios ------------------------------------------------------------------

    def scenario(self, *behaviours: Any) -> str:
        """A fresh prefix answering with ``behaviours`` in turn (the last repeats)."""
        if not behaviours:
            behaviours = (Ok(),)
        sid = f"s{next(self._ids)}"
        self.scenarios[sid] = _Scenario(list(behaviours))
        return sid

    def url(self, *behaviours: Any, suffix: str = "/v1") -> str:
        """A base URL for an adapter: ``pk.openai(base_url=server.url(Ok()))``."""
        return f"{self.origin}/{self.scenario(*behaviours)}{suffix}"

    def requests_for(self, base_url: str) -> list[Seen]:
        sid = base_url[len(self.origin) + 1:].split("/", 1)[0]
        with self.lock:
            return [s for s in self.seen if s.scenario == sid]

    def wait_for(self, predicate: Any, timeout: float = 5.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate():
                return True
            time.sleep(0.005)
        return predicate()

    # counters ----------------------------------------------------------------------

    def _enter(self, seen: Seen, sock: socket.socket) -> None:
        with self.lock:
            seen.open_before = sum(
                1 for other, osock in self.live.values()
                if other.scenario == seen.scenario and not _sock_gone(osock)
            )
            self.live[id(seen)] = (seen, sock)
            self.in_flight += 1
            self.total += 1
            self.peak = max(self.peak, self.in_flight)
            self.seen.append(seen)

    def _leave(self, seen: Seen, outcome: str) -> None:
        with self.lock:
            self.live.pop(id(seen), None)
            self.in_flight -= 1
            seen.ended = time.monotonic()
            seen.outcome = outcome

    def reset_counters(self) -> None:
        with self.lock:
            self.peak = self.in_flight
            self.total = 0
            self.seen.clear()


def _sock_gone(sock: socket.socket) -> bool:
    """The client closed its end (EOF waiting), or the socket is dead."""
    try:
        r, _, _ = select.select([sock], [], [], 0)
        if r:
            return sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True
    return False


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client closing an idle keep-alive connection is not news


class _Hangup(Exception):
    pass


class _GaveUp(Exception):
    pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    owner: TestServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.owner.lock:
            self.owner.connections += 1

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        with self.owner.lock:
            self.owner.connections -= 1

    # helpers --------------------------------------------------------------------------

    def _client_gone(self) -> bool:
        return _sock_gone(self.connection)

    def _sleep(self, seconds: float) -> None:
        """Sleep, but notice a hang-up or a server stop."""
        end = time.monotonic() + seconds
        while True:
            if self.owner.stopping.is_set() or self._client_gone():
                raise _Hangup
            left = end - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(0.01, left))

    def _chunk(self, data: bytes) -> None:
        if self._client_gone():
            raise _Hangup
        try:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        except OSError as exc:
            raise _Hangup from exc

    def _headers(self, code: int = 200, extra: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("cache-control", "no-cache")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.flush()

    def _end(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    # the request ------------------------------------------------------------------------

    def do_POST(self) -> None:
        owner = self.owner
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        parts = self.path.split("/", 2)
        sid = parts[1] if len(parts) > 1 else ""
        scenario = owner.scenarios.get(sid)
        seen = Seen(sid, self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.monotonic())
        owner._enter(seen, self.connection)
        outcome = "ok"
        try:
            if scenario is None:
                self._plain(404, {"error": {"message": f"no scenario {sid!r}"}})
                outcome = "404"
                return
            wire = _wire_for(self.path)
            model = (body or {}).get("model") or "m"
            self._streaming = (body or {}).get("stream") is True or ":streamGenerateContent" in self.path
            b = scenario.next()
            if isinstance(b, ByKey):
                b = b.pick(seen.headers)
            self._serve(b, wire, model)
        except _Hangup:
            outcome = "client hung up"
            with owner.lock:
                owner.client_hangups += 1
            self.close_connection = True
        except _GaveUp:
            outcome = "server gave up"
            self.close_connection = True
        except OSError:
            outcome = "client hung up"
            with owner.lock:
                owner.client_hangups += 1
            self.close_connection = True
        finally:
            owner._leave(seen, outcome)

    def _plain(self, code: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _pieces(self, text: str, n: int) -> list[str]:
        n = max(1, min(n, len(text)))
        size = -(-len(text) // n)
        return [text[i:i + size] for i in range(0, len(text), size)]

    def _serve(self, b: Any, wire: _Wire, model: str) -> None:
        if isinstance(b, Status):
            headers = dict(b.headers)
            if b.retry_after is not None:
                headers["retry-after"] = str(b.retry_after)
            self._plain(b.code, _status_body(wire.name, b.code, b.body), headers)
            return
        if isinstance(b, StallHeaders):
            self._sleep(b.limit)
            raise _GaveUp
        if isinstance(b, Ok) and b.delay:
            self._sleep(b.delay)
        if isinstance(b, Ok) and not self._streaming:
            self._plain(200, wire.whole(model, b.text, b.finish))
            return
        self._headers()
        for frame in wire.start(model):
            self._chunk(frame)
        self._stream_body(b, wire)

    def _stream_body(self, b: Any, wire: _Wire) -> None:
        """What follows the stream's opening frames, as the behaviour says."""
        if isinstance(b, Ok):
            pieces = self._pieces(b.text, b.pieces)
            for i, piece in enumerate(pieces):
                if i and b.gap:
                    self._sleep(b.gap)
                self._chunk(wire.text(piece))
            for frame in wire.end(b.finish, len(pieces)):
                self._chunk(frame)
            self._end()
        elif isinstance(b, Trickle):
            for i in range(b.count):
                self._chunk(wire.text(f"t{i} "))
                self._sleep(b.every)
            for frame in wire.end("stop", b.count):
                self._chunk(frame)
            self._end()
        elif isinstance(b, StallBody):
            for i in range(b.before):
                self._chunk(wire.text(f"p{i} "))
            self._sleep(b.limit)
            raise _GaveUp
        elif isinstance(b, KeepAlive):
            for i in range(b.before):
                self._chunk(wire.text(f"p{i} "))
            end = time.monotonic() + b.limit
            while time.monotonic() < end:
                self._chunk(wire.keepalive())
                self._sleep(b.every)
            raise _GaveUp
        elif isinstance(b, StreamError):
            for i in range(b.before):
                self._chunk(wire.text(f"p{i} "))
            self._chunk(wire.error(b.message, b.code))
            self._end()
        elif isinstance(b, Cut):
            for i in range(b.before):
                self._chunk(wire.text(f"p{i} "))
            # Drop the connection mid-body: no terminating chunk.
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        elif isinstance(b, Empty):
            for frame in wire.end(b.finish, 3):
                self._chunk(frame)
            self._end()
        else:  # pragma: no cover - a test wrote a behaviour this server does not know
            raise TypeError(f"unknown behaviour {b!r}")
