"""Streaming throughput of the Gemini wire: ours vs the floor vs the google-genai SDK.

The stream is ``streamGenerateContent?alt=sse`` as Gemini sends it: one text part per frame
with cumulative ``usageMetadata``, CRLF framing, and a signature plus ``finishReason`` on the
last frame. Readers (each a factory taking the server URL, as ``bench/stream.py``'s table wants):

- floor: httpx ``iter_lines`` + ``json.loads`` of every ``data:`` line (no turn assembly);
- ours: ``GeminiProvider`` + ``collect_turn`` (SSE reader, parser, assembler);
- peer: the ``google-genai`` SDK's ``generate_content_stream`` over the same server.

``bench/stream.py`` runs these in its wire table (wall-clock medians). Run alone, this script
measures the client's CPU seconds instead, with the server in another process and the readers
interleaved, so a busy machine does not skew the ratios. Targets: ours at most 1.5x the floor,
and faster than the SDK.

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
PATH = f"/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"
SIGNATURE = "CiIB0e2Kb6Syj1a961EfbWv4W5C8RgAA/hGleV9VYJtnJFh4"
Reader = Callable[[], int]


def gemini_body(chunks: int) -> bytes:
    out = []
    for i in range(chunks):
        part: dict[str, Any] = {"text": f"token {i} "}
        cand: dict[str, Any] = {"content": {"parts": [part], "role": "model"}, "index": 0}
        if i == chunks - 1:
            part["thoughtSignature"] = SIGNATURE
            cand["finishReason"] = "STOP"
        frame = {
            "candidates": [cand],
            "usageMetadata": {"promptTokenCount": 34, "candidatesTokenCount": i + 1, "totalTokenCount": 47 + i,
                              "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 34}], "thoughtsTokenCount": 12},
            "modelVersion": MODEL,
            "responseId": "beHBaJfEMIi-qtsP3769-Q8",
        }
        out.append(b"data: " + json.dumps(frame, separators=(",", ":")).encode() + b"\r\n\r\n")
    return b"".join(out)


def gemini_floor(url: str) -> Reader:
    import httpx

    client = httpx.Client()
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}

    def run() -> int:
        n = 0
        with client.stream("POST", url + PATH, json=body, headers={"x-goog-api-key": "bench"}) as r:
            for line in r.iter_lines():
                if line.startswith("data:"):
                    json.loads(line[5:])
                    n += 1
        return n

    return run


def gemini_ours(url: str) -> Reader:
    import providerkit_nb as pk
    from providerkit_nb.providers.gemini import GeminiProvider

    p = GeminiProvider(model=MODEL, api_key="bench", base_url=url)
    history = [pk.UserMessage("hi")]

    def run() -> int:
        turn = pk.collect_turn(p.create_stream(history))
        m = turn.message
        assert turn.finish_reason == "stop" and m.content.startswith("token 0 token 1 ")
        assert m.reasoning_items.items[0]["signature"] == SIGNATURE
        assert turn.usage.output_tokens == turn.usage.reasoning_tokens + m.content.count("token")
        return len(m.content)

    return run


def gemini_sdk(url: str) -> Reader | None:
    try:
        from google import genai
        from google.genai import types
    except ImportError:
        return None
    client = genai.Client(api_key="bench", http_options=types.HttpOptions(base_url=url))

    def run() -> int:
        n = 0
        for resp in client.models.generate_content_stream(model=MODEL, contents="hi"):
            text = resp.text
            if text:
                n += len(text)
        return n

    return run


# --------------------------------------------------------------------------- standalone run


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


def _best(fns: list[Reader], repeat: int) -> list[float]:
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
    with _Server(gemini_body(chunks)) as srv:
        ours, floor = _best([gemini_ours(srv.url), gemini_floor(srv.url)], repeat)
        rows.append({"name": f"gemini {chunks} chunks vs floor (httpx iter_lines + json.loads), CPU",
                     "ours": ours, "floor_or_peer": floor, "ratio": ours / floor, "target": "<= 1.5",
                     "ok": ours / floor <= 1.5})
        sdk = gemini_sdk(srv.url)
        if sdk is not None:
            (peer,) = _best([sdk], max(1, repeat // 2))  # the SDK is slow: fewer rounds
            rows.append({"name": f"gemini {chunks} chunks vs google-genai SDK streaming, CPU",
                         "ours": ours, "floor_or_peer": peer, "ratio": ours / peer, "target": "< 1.0",
                         "ok": ours < peer})
        else:
            rows.append({"name": "gemini vs google-genai SDK (not installed)", "ours": ours,
                         "floor_or_peer": None, "ratio": None, "target": "< 1.0", "ok": None})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    for r in run(a.chunks, a.repeat):
        other = "n/a" if r["floor_or_peer"] is None else f"{r['floor_or_peer']:.3f}s"
        ratio = "n/a" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        verdict = "--" if r["ok"] is None else ("OK" if r["ok"] else "MISSED")
        print(f"{r['name']}: ours {r['ours']:.3f}s, other {other}, ratio {ratio} (target {r['target']}) {verdict}")


if __name__ == "__main__":
    main()
