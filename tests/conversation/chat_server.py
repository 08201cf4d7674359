"""A small real OpenAI-Chat-format server on 127.0.0.1 that plays scripted answers in order.

Each answer is a list of (delay_seconds, frame) pairs written as a chunked SSE body, so a test
can make a stream slow enough to interrupt. The server records every request body and whether
the client hung up mid-answer.

``closes`` makes it behave like a server that closes a kept-alive connection after every
streamed reply while its headers still say ``Keep-Alive: timeout=5, max=100`` (and never
``Connection: close``), as llama.cpp's server does: ``"after"`` closes within ``close_delay``
seconds (a random wait up to it) of the last chunk; ``"on_next"`` closes when the next request
arrives on that connection, without a byte of answer (the race lost every time).

An answer may also be a callable taking the request body and returning an answer, for a server
whose reply depends on what was asked (a form it refuses). ``props`` is what ``GET /props``
answers (llama.cpp's server information); without it that path is a 404, as on other servers.
"""

from __future__ import annotations

import json
import random
import select
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _frame(delta: dict[str, Any] | None = None, finish: str | None = None, usage: dict | None = None) -> bytes:
    body: dict[str, Any] = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "model": "test-model"}
    body["choices"] = [] if usage else [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
    if usage:
        body["usage"] = usage
    return f"data: {json.dumps(body)}\n\n".encode()


def text_answer(pieces: list[str], gap: float = 0.0) -> list[tuple[float, bytes]]:
    out = [(0.0, _frame({"role": "assistant", "content": ""}))]
    out += [(gap, _frame({"content": p})) for p in pieces]
    out += [(0.0, _frame(finish="stop")), (0.0, _frame(usage={"prompt_tokens": 10, "completion_tokens": len(pieces)})), (0.0, b"data: [DONE]\n\n")]
    return out


def call_answer(call_id: str, name: str, arguments: str) -> list[tuple[float, bytes]]:
    return [
        (0.0, _frame({"role": "assistant", "tool_calls": [{"index": 0, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}]})),
        (0.0, _frame({"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]})),
        (0.0, _frame(finish="tool_calls")),
        (0.0, _frame(usage={"prompt_tokens": 10, "completion_tokens": 5})),
        (0.0, b"data: [DONE]\n\n"),
    ]


class Refuse:
    """An answer that is an HTTP error instead of a stream (e.g. a 400 context overflow)."""

    def __init__(self, status: int, body: bytes) -> None:
        self.status = status
        self.body = body


class ChatServer:
    def __init__(self, answers: list[Any], *, closes: str | None = None, close_delay: float = 0.002,
                 seed: int = 41, props: dict[str, Any] | None = None) -> None:
        if closes not in (None, "after", "on_next"):
            raise ValueError(f"closes must be None, 'after' or 'on_next', got {closes!r}")
        self.answers = list(answers)
        self.requests: list[dict[str, Any]] = []
        self.frames_sent: list[int] = []
        self.hung_up: list[bool] = []
        self.closes = closes
        self.close_delay = close_delay
        self.props = props
        self.gets: list[str] = []  # paths asked with GET
        self.connections = 0  # connections accepted
        self.dropped = 0  # requests that came on a connection being closed: no byte of answer
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                with outer._lock:
                    outer.connections += 1

            def _close_after_stream(self) -> None:
                """Close this kept-alive connection as the server under test does."""
                self.close_connection = True
                if outer.closes == "after":
                    with outer._lock:
                        wait = outer._rng.uniform(0.0, outer.close_delay)
                    time.sleep(wait)
                    return
                # "on_next": wait for the next request on this connection, then hang up unanswered
                readable, _, _ = select.select([self.connection], [], [], 10.0)
                if readable and self.connection.recv(1, socket.MSG_PEEK) != b"":  # a request, not EOF
                    with outer._lock:
                        outer.dropped += 1

            def do_GET(self) -> None:
                with outer._lock:
                    outer.gets.append(self.path)
                found = self.path == "/props" and outer.props is not None
                data = json.dumps(outer.props if found else {"detail": "Not Found"}).encode()
                self.send_response(200 if found else 404)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                with outer._lock:
                    n = len(outer.requests)
                    outer.requests.append(body)
                    outer.frames_sent.append(0)
                    outer.hung_up.append(False)
                    answer = outer.answers[n] if n < len(outer.answers) else text_answer(["(no more answers)"])
                if callable(answer):
                    answer = answer(body)
                if isinstance(answer, Refuse):
                    self.send_response(answer.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(answer.body)))
                    self.end_headers()
                    self.wfile.write(answer.body)
                    self.wfile.flush()
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                if outer.closes is not None:
                    self.send_header("keep-alive", "timeout=5, max=100")
                self.end_headers()
                try:
                    for delay, frame in answer:
                        if delay:
                            time.sleep(delay)
                        self.wfile.write(f"{len(frame):x}\r\n".encode() + frame + b"\r\n")
                        self.wfile.flush()
                        outer.frames_sent[n] += 1
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                    if outer.closes is not None:
                        self._close_after_stream()
                except (BrokenPipeError, ConnectionResetError):
                    outer.hung_up[n] = True
                    self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def wait(self, predicate: Any, timeout: float = 20.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate():
                return True
            time.sleep(0.02)
        return False
