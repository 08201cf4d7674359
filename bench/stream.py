"""Streaming throughput: our collect_turn vs the floor vs the vendor SDK, per wire.

A local HTTP server on 127.0.0.1 serves one long stream (>= 20,000 chunks) in the wire's own
format. Three readers take it, in interleaved rounds (floor, ours, SDK, rotated each round, so
a noisy neighbour hits all three alike), and the median of the rounds is reported:

- floor: httpx ``iter_lines`` + ``json.loads`` of every ``data:`` line, nothing else;
- ours: the wire's provider + ``collect_turn`` (SSE reader, parser, assembler);
- peer: the official SDK's streaming over the same server.

Targets: ours at most 1.5x the floor, and faster than the SDK.

A wire joins by adding a ``WireBench`` row to ``BENCHES`` (body builder, our reader, SDK
reader, the path the server answers on). Wires that keep their own script in ``bench/``
(``stream_<wire>.py`` with a ``run()`` returning the same rows) are run after, with
``--all``.

Run: ``python -m bench.stream`` (``--chunks N``, ``--rounds N``, ``--all``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reader = Callable[[], int]


@dataclass
class WireBench:
    """One wire's part of the benchmark. Each factory takes the server URL and returns a
    zero-argument reader that consumes the whole stream once and returns a count to check."""

    body: Callable[[int], bytes]
    floor: Callable[[str], Reader]
    ours: Callable[[str], Reader]
    sdk: Callable[[str], Reader | None]  # None when the SDK is not installed
    sdk_name: str


# --------------------------------------------------------------------------- server


class Server:
    """Answers every POST with the same body, as chunked transfer in 16 KiB writes."""

    def __init__(self, body: bytes, content_type: str = "text/event-stream") -> None:
        payload = body

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                self.rfile.read(int(self.headers.get("content-length") or 0))
                self.send_response(200)
                self.send_header("content-type", content_type)
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                view = memoryview(payload)
                for i in range(0, len(view), 16384):
                    piece = view[i : i + 16384]
                    self.wfile.write(b"%x\r\n" % len(piece) + piece + b"\r\n")
                self.wfile.write(b"0\r\n\r\n")

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


# --------------------------------------------------------------------------- Chat Completions

CHAT_MODEL = "gpt-4o-mini"
_CHAT_HISTORY = [{"role": "user", "content": "Tell me a long story, then read README.md."}]


def chat_body(chunks: int) -> bytes:
    """An OpenAI Chat stream as the API sends it: role chunk, text deltas (with the random
    ``obfuscation`` field), a tool call in argument fragments, finish, usage chunk, [DONE]."""
    head = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1767225600,
            "model": "gpt-4o-mini-2024-07-18", "service_tier": "default", "system_fingerprint": "fp_bench"}

    def frame(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> bytes:
        d = dict(head)
        d["choices"] = [] if delta is None else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
        d.update(extra)
        if "usage" not in extra:
            d["usage"] = None
        return b"data: " + json.dumps(d, separators=(",", ":")).encode() + b"\n\n"

    args = 100
    text = max(1, chunks - args - 4)
    out = [frame({"role": "assistant", "content": "", "refusal": None}, obfuscation="Xy")]
    out += [frame({"content": f"token {i} "}, obfuscation="AbCdEfGh"[: i % 8]) for i in range(text)]
    out.append(frame({"tool_calls": [{"index": 0, "id": "call_bench", "type": "function",
                                      "function": {"name": "read_file", "arguments": ""}}]}))
    out += [frame({"tool_calls": [{"index": 0, "function": {"arguments": '{"path": "' if i == 0 else ("ab" if i < args - 1 else '"}')}}]})
            for i in range(args)]
    out.append(frame({}, "tool_calls"))
    out.append(frame(None, usage={"prompt_tokens": 30, "completion_tokens": chunks, "total_tokens": 30 + chunks,
                                  "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                                  "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0}}))
    out.append(b"data: [DONE]\n\n")
    return b"".join(out)


def chat_floor(url: str) -> Reader:
    import httpx

    client = httpx.Client()
    body = {"model": CHAT_MODEL, "messages": _CHAT_HISTORY, "stream": True}

    def run() -> int:
        n = 0
        with client.stream("POST", f"{url}/v1/chat/completions", json=body, headers={"authorization": "Bearer bench"}) as r:
            for line in r.iter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    json.loads(line[6:])
                    n += 1
        return n

    return run


def chat_ours(url: str) -> Reader:
    import providerkit_nb as pk
    from providerkit_nb.providers.openai_chat import OpenAIChatProvider

    p = OpenAIChatProvider(model=CHAT_MODEL, api_key="bench", base_url=f"{url}/v1")

    def run() -> int:
        turn = pk.collect_turn(p.create_stream(_CHAT_HISTORY))
        assert turn.finish_reason == "tool_calls" and turn.message.tool_calls
        return len(turn.message.content)

    return run


def chat_sdk(url: str) -> Reader | None:
    try:
        import openai
    except ImportError:
        return None
    client = openai.OpenAI(api_key="bench", base_url=f"{url}/v1", max_retries=0)

    def run() -> int:
        n = 0
        stream = client.chat.completions.create(model=CHAT_MODEL, messages=_CHAT_HISTORY, stream=True)
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                n += len(chunk.choices[0].delta.content)
        return n

    return run


# --------------------------------------------------------------------------- Responses (bench/stream_responses.py)

from bench.stream_gemini import gemini_body, gemini_floor, gemini_ours, gemini_sdk  # noqa: E402
from bench.stream_responses import responses_body, responses_floor, responses_ours, responses_sdk  # noqa: E402

BENCHES: dict[str, WireBench] = {
    "openai_chat": WireBench(chat_body, chat_floor, chat_ours, chat_sdk, "openai"),
    "openai_responses": WireBench(responses_body, responses_floor, responses_ours, responses_sdk, "openai (responses)"),
    "gemini": WireBench(gemini_body, gemini_floor, gemini_ours, gemini_sdk, "google-genai"),
}

# --------------------------------------------------------------------------- running


def _interleaved(readers: dict[str, Reader], rounds: int) -> dict[str, float]:
    """Median seconds per reader over ``rounds`` rounds, order rotated each round."""
    for fn in readers.values():
        fn()  # warm: connections, imports, caches
    names = list(readers)
    times: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[: r % len(names)]
        for n in order:
            t = time.perf_counter()
            readers[n]()
            times[n].append(time.perf_counter() - t)
    return {n: statistics.median(v) for n, v in times.items()}


def run_wire(wire: str, chunks: int = 20000, rounds: int = 7) -> list[dict[str, Any]]:
    b = BENCHES[wire]
    rows: list[dict[str, Any]] = []
    with Server(b.body(chunks)) as srv:
        readers: dict[str, Reader] = {"floor": b.floor(srv.url), "ours": b.ours(srv.url)}
        sdk = b.sdk(srv.url)
        if sdk is not None:
            readers["sdk"] = sdk
        med = _interleaved(readers, rounds)
    ours, floor = med["ours"], med["floor"]
    rows.append({"name": f"{wire} {chunks} chunks vs floor (httpx iter_lines + json.loads)", "ours": ours,
                 "floor_or_peer": floor, "ratio": ours / floor, "target": "<= 1.5", "ok": ours / floor <= 1.5})
    if "sdk" in med:
        rows.append({"name": f"{wire} {chunks} chunks vs {b.sdk_name} SDK streaming", "ours": ours,
                     "floor_or_peer": med["sdk"], "ratio": ours / med["sdk"], "target": "< 1.0", "ok": ours < med["sdk"]})
    else:
        rows.append({"name": f"{wire} vs {b.sdk_name} SDK (not installed)", "ours": ours, "floor_or_peer": None,
                     "ratio": None, "target": "< 1.0", "ok": None})
    return rows


OTHER_SCRIPTS = ("bench.stream_anthropic",)


def run(chunks: int = 20000, rounds: int = 7, include_others: bool = False) -> list[dict[str, Any]]:
    """Rows ``{name, ours, floor_or_peer, ratio, target, ok}`` (seconds, medians)."""
    rows: list[dict[str, Any]] = []
    for wire in BENCHES:
        rows += run_wire(wire, chunks, rounds)
    if include_others:
        for name in OTHER_SCRIPTS:
            try:
                mod = importlib.import_module(name)
            except ImportError:
                continue
            rows += mod.run(chunks)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--all", action="store_true", help="also run the other wires' bench scripts")
    a = ap.parse_args()
    for r in run(a.chunks, a.rounds, a.all):
        other = "n/a" if r["floor_or_peer"] is None else f"{r['floor_or_peer']:.3f}s"
        ratio = "n/a" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        verdict = "--" if r["ok"] is None else ("OK" if r["ok"] else "MISSED")
        print(f"{r['name']}: ours {r['ours']:.3f}s, other {other}, ratio {ratio} (target {r['target']}) {verdict}")


if __name__ == "__main__":
    main()
