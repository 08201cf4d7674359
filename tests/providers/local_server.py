"""A real HTTP server on 127.0.0.1 that answers every POST with a canned response, written in
small chunked pieces with a flush after each (so a client really reads it across many socket
reads). requests cannot use httpx.MockTransport, so its tests need a real socket.

    with LocalServer() as srv:
        srv.answer(200, body, content_type="text/event-stream", seed=3)
        url = srv.url + "/v1/chat/completions"
"""

from __future__ import annotations

import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        srv: LocalServer = self.server.owner  # type: ignore[attr-defined]
        length = int(self.headers.get("content-length") or 0)
        srv.requests.append((self.path, dict(self.headers), self.rfile.read(length)))
        status, headers, body, seed, max_piece, cut = srv.payload
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("transfer-encoding", "chunked")
        if cut:
            self.send_header("connection", "close")
        self.end_headers()
        rng = random.Random(seed)
        i = 0
        limit = len(body) if cut is None else cut
        while i < limit:
            n = min(rng.randint(1, max_piece), limit - i)
            piece = body[i : i + n]
            self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            self.wfile.flush()
            i += n
        if cut is None:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        else:  # hang up mid-body, without the terminating chunk
            self.close_connection = True


class LocalServer:
    def __init__(self) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.owner = self  # type: ignore[attr-defined]
        self.payload: tuple[int, dict[str, str], bytes, int, int, int | None] = (200, {}, b"", 0, 64, None)
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def answer(
        self,
        status: int,
        body: bytes,
        *,
        content_type: str = "text/event-stream",
        seed: int = 0,
        max_piece: int = 64,
        headers: dict[str, str] | None = None,
        cut_at: int | None = None,
    ) -> None:
        self.payload = (status, {"content-type": content_type, **(headers or {})}, body, seed, max_piece, cut_at)

    def __enter__(self) -> LocalServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
