"""Streaming throughput of the Gemini wire: ours vs the floor vs the google-genai SDK.

One local HTTP server on 127.0.0.1 answers every request with the same 20,000-chunk
``streamGenerateContent?alt=sse`` body (text parts with cumulative usage, CRLF framing, a
signature and a finishReason on the last chunk, as Gemini sends them). Timed, best of N:

- floor: httpx ``iter_lines`` + ``json.loads`` of every ``data:`` line (no turn assembly);
- ours: ``GeminiProvider`` + ``collect_turn`` (SSE reader, parser, assembler);
- peer: the ``google-genai`` SDK's ``generate_content_stream`` over the same server.

Times are the client process's CPU seconds (the server is another process), best of N with the
contenders interleaved, so a busy machine does not skew the ratios. Targets: ours at most 1.5x
the floor, and faster than the SDK.
Run: ``python -m bench.stream_gemini`` (``--chunks N``, ``--repeat N``).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "gemini-2.5-flash"


def make_body(chunks: int) -> bytes:
    out = []
    for i in range(chunks):
        part: dict[str, Any] = {"text": f"token {i} "}
        cand: dict[str, Any] = {"content": {"parts": [part], "role": "model"}, "index": 0}
        if i == chunks - 1:
            part["thoughtSignature"] = "CiIB0e2Kb6Syj1a961EfbWv4W5C8RgAA/hGleV9VYJtnJFh4"
            cand["finishReason"] = "STOP"
        frame = {
            "candidates": [cand],
            "usageMetadata": {"promptTokenCount": 34, "candidatesTokenCount": i + 1, "totalTokenCount": 35 + i,
                              "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 34}], "thoughtsTokenCount": 12},
            "modelVersion": MODEL,
            "responseId": "beHBaJfEMIi-qtsP3769-Q8",
        }
        out.append(b"data: " + json.dumps(frame, separators=(",", ":")).encode() + b"\r\n\r\n")
    return b"".join(out)


def _serve(body: bytes, port_q: Any) -> None:
    """The server process: answers every POST with ``body``, in 16 KiB writes."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            view = memoryview(body)
            for i in range(0, len(view), 16384):
                self.wfile.write(view[i : i + 16384])

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port_q.put(httpd.server_port)
    httpd.serve_forever()


class _Server:
    """A real server on 127.0.0.1, in its own process so it takes no CPU from the client."""

    def __init__(self, body: bytes) -> None:
        ctx = multiprocessing.get_context("fork")
        q = ctx.Queue()
        self.proc = ctx.Process(target=_serve, args=(body, q), daemon=True)
        self.proc.start()
        self.url = f"http://127.0.0.1:{q.get(timeout=30)}"

    def __enter__(self) -> _Server:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.proc.terminate()
        self.proc.join(10)


def _floor(url: str, chunks: int) -> Callable[[], int]:
    import httpx

    client = httpx.Client()
    target = f"{url}/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}

    def run() -> int:
        n = 0
        with client.stream("POST", target, json=body, headers={"x-goog-api-key": "bench"}) as r:
            for line in r.iter_lines():
                if line.startswith("data:"):
                    json.loads(line[5:])
                    n += 1
        assert n == chunks
        return n

    return run


def _ours(url: str, chunks: int) -> Callable[[], int]:
    import providerkit_nb as pk
    from providerkit_nb.providers.gemini import GeminiProvider

    p = GeminiProvider(model=MODEL, api_key="bench", base_url=url)
    history = [pk.UserMessage("hi")]

    def run() -> int:
        turn = pk.collect_turn(p.create_stream(history))
        assert turn.finish_reason == "stop" and turn.message.content.endswith(f"token {chunks - 1} ")
        assert turn.message.reasoning_items is not None
        return chunks

    return run


def _sdk(url: str, chunks: int) -> Callable[[], int] | None:
    try:
        from google import genai
        from google.genai import types
    except ImportError:
        return None
    client = genai.Client(api_key="bench", http_options=types.HttpOptions(base_url=url))

    def run() -> int:
        text = []
        for resp in client.models.generate_content_stream(model=MODEL, contents="hi"):
            if resp.text:
                text.append(resp.text)
        assert "".join(text).endswith(f"token {chunks - 1} ")
        return chunks

    return run


def _best(fns: list[Callable[[], int]], repeat: int) -> list[float]:
    """Best client CPU time of each (the server runs in another process), the runs
    interleaved: CPU time, not wall time, so other work on a busy machine does not count."""
    for fn in fns:
        fn()  # warm: connections, imports
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for k, fn in enumerate(fns):
            t = time.process_time()
            fn()
            best[k] = min(best[k], time.process_time() - t)
    return best


def run(chunks: int = 20000, repeat: int = 5) -> list[dict[str, Any]]:
    """Rows ``{name, ours, floor_or_peer, ratio, target, ok}``: client CPU seconds, best of
    ``repeat``."""
    rows: list[dict[str, Any]] = []
    with _Server(make_body(chunks)) as srv:
        ours, floor = _best([_ours(srv.url, chunks), _floor(srv.url, chunks)], repeat)
        rows.append({"name": f"gemini stream {chunks} chunks vs floor (httpx iter_lines + json.loads)",
                     "ours": ours, "floor_or_peer": floor, "ratio": ours / floor, "target": "<= 1.5",
                     "ok": ours / floor <= 1.5})
        sdk = _sdk(srv.url, chunks)
        if sdk is not None:
            (peer,) = _best([sdk], max(1, repeat // 2))  # the SDK is slow: fewer rounds
            rows.append({"name": f"gemini stream {chunks} chunks vs google-genai SDK",
                         "ours": ours, "floor_or_peer": peer, "ratio": ours / peer, "target": "< 1.0",
                         "ok": ours < peer})
        else:
            rows.append({"name": "gemini stream vs google-genai SDK", "ours": ours, "floor_or_peer": None,
                         "ratio": None, "target": "< 1.0", "ok": None})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    for r in run(a.chunks, a.repeat):
        peer = "n/a (google-genai not installed)" if r["floor_or_peer"] is None else f"{r['floor_or_peer']:.3f}s"
        ratio = "n/a" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        print(f"{r['name']}: ours {r['ours']:.3f}s, other {peer}, ratio {ratio} (target {r['target']}) "
              f"{'OK' if r['ok'] else ('--' if r['ok'] is None else 'MISSED')}")


if __name__ == "__main__":
    main()
