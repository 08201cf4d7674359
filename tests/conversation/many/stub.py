"""A stub provider for the scale tests: a real OpenAI-Chat SSE server on 127.0.0.1.

Every request waits ``delay`` seconds (the provider's work), then streams its answer. A
conversation is named by its first user message (``cid=<id>``); the request's turn is the number
of assistant messages it carries. Turns before the last ask for the ``step`` tool, the last one
answers in text. The server counts requests in flight (and the peak), calls per (cid, turn), and
tool runs per (cid, step): the ``step`` tool reports each run here over HTTP (``PK_STUB_URL``), so
a run in any worker process is counted.

Also here: the top-level callables the worker processes import (the tool registry), so they
pickle by reference.
"""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.request
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import providerkit_nb as pk

URL_ENV = "PK_STUB_URL"


def _frame(obj: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    return _frame({"id": "c", "object": "chat.completion.chunk", "model": "stub",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


def _cid_of(messages: list[dict[str, Any]]) -> str:
    for m in messages:
        if m.get("role") == "user":
            c = m.get("content")
            text = c if isinstance(c, str) else " ".join(p.get("text", "") for p in c or [])
            if text.startswith("cid="):
                return text[4:].split()[0]
    return "?"


class StubProvider:
    """``StubProvider(delay, turns)``; ``url`` is the base URL for a Chat preset."""

    def __init__(self, delay: float = 0.1, turns: int = 3) -> None:
        self.delay = delay
        self.turns = turns
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.calls: Counter[tuple[str, int]] = Counter()
        self.tool_runs: Counter[tuple[str, int]] = Counter()
        self.starts: list[tuple[float, int]] = []  # (monotonic time, in flight after the start)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # as API servers do: no 40 ms delayed-ACK stalls

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name: the tool's report
                _, _, query = self.path.partition("?")
                args = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
                with outer.lock:
                    outer.tool_runs[(args.get("cid", "?"), int(args.get("n", -1)))] += 1
                self.send_response(200)
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                messages = body.get("messages", [])
                cid = _cid_of(messages)
                turn = sum(1 for m in messages if m.get("role") == "assistant")
                with outer.lock:
                    outer.in_flight += 1
                    outer.max_in_flight = max(outer.max_in_flight, outer.in_flight)
                    outer.calls[(cid, turn)] += 1
                    outer.starts.append((time.monotonic(), outer.in_flight))
                try:
                    time.sleep(outer.delay)
                    if turn < outer.turns - 1:
                        args = json.dumps({"cid": cid, "n": turn})
                        frames = [
                            _chunk({"role": "assistant", "tool_calls": [{
                                "index": 0, "id": f"call_{turn}", "type": "function",
                                "function": {"name": "step", "arguments": args}}]}),
                            _chunk({}, "tool_calls"),
                        ]
                    else:
                        frames = [_chunk({"role": "assistant", "content": f"done {cid}"}),
                                  _chunk({}, "stop")]
                    frames.append(b"data: [DONE]\n\n")
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("transfer-encoding", "chunked")
                    self.end_headers()
                    self.wfile.write(b"".join(f"{len(f):x}\r\n".encode() + f + b"\r\n" for f in frames)
                                     + b"0\r\n\r\n")
                    self.wfile.flush()
                except OSError:
                    self.close_connection = True  # the client died: its orphan ends here
                finally:
                    with outer.lock:
                        outer.in_flight -= 1

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def reset(self, delay: float, turns: int) -> None:
        with self.lock:
            self.delay, self.turns = delay, turns
            self.in_flight = self.max_in_flight = 0
            self.calls.clear()
            self.tool_runs.clear()
            self.starts.clear()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


# --------------------------------------------------------------------------- worker side


def step(cid: str, n: int) -> str:
    """Take step n of the conversation (reports the run to the stub)."""
    url = os.environ[URL_ENV]
    with urllib.request.urlopen(f"{url}/tool?cid={cid}&n={n}", timeout=10) as r:
        r.read()
    return f"step {n} done"


TOOLS = pk.ToolRegistry([pk.tool(step)])


def registry_config(url: str, limit: int, gate: dict[str, Any] | None) -> dict[str, Any]:
    conn: dict[str, Any] = {"preset": "openai", "base_url": url, "api_key": "stub-key",
                            "max_concurrent": limit, "retry": False}
    if gate is not None:
        conn["gate"] = gate
    return {"stub": conn}
