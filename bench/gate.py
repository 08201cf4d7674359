"""The gate's cost: uncontended acquire+release, and the resume storm against the ideal.

- ``gate uncontended``: one thread, ``Gate.acquire()`` + ``release()`` in a loop, against a
  bare ``threading.Lock`` (the floor: one lock is the least a thread-safe gate can take).
  Target: within 10x of the lock (the gate takes its lock, stamps times, counts waits).
- ``resume storm``: N conversations start at once through a registry connection with
  ``max_concurrent`` slots (gate, retry, watchdog, real Chat adapter) against a local server
  that answers each request after a fixed latency. The ideal is ``slots / latency``
  conversations a second. Target: within 10% of the ideal.
- ``storm vs semaphore``: the same storm through a bare adapter behind a
  ``threading.Semaphore`` (no FIFO, no wrappers), for scale.

Run: ``python -m bench.gate`` (``--conversations N``, ``--latency S``, ``--slots N``).
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HISTORY = [{"role": "user", "content": "resume"}]


def _frame(obj: Any) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


_BODY = b"".join([
    _frame({"id": "c", "object": "chat.completion.chunk", "model": "m",
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Resumed."}, "finish_reason": None}]}),
    _frame({"id": "c", "object": "chat.completion.chunk", "model": "m",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    _frame({"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}),
    b"data: [DONE]\n\n",
])


class Server:
    """Answers every POST with one short Chat stream after ``latency`` seconds; counts the
    requests in flight and their peak."""

    def __init__(self, latency: float) -> None:
        owner = self
        self.lock = threading.Lock()
        self.in_flight = 0
        self.peak = 0
        self.total = 0

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                with owner.lock:
                    owner.in_flight += 1
                    owner.total += 1
                    owner.peak = max(owner.peak, owner.in_flight)
                try:
                    time.sleep(latency)
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("content-length", str(len(_BODY)))
                    self.end_headers()
                    self.wfile.write(_BODY)
                finally:
                    with owner.lock:
                        owner.in_flight -= 1

        class Quiet(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass

        self.httpd = Quiet(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _per_op(fn: Any, n: int) -> float:
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        fn(n)
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def gate_overhead(n: int = 200_000) -> dict[str, Any]:
    import providerkit_nb as pk

    gate = pk.create_gate(4)
    lock = threading.Lock()

    def ours(k: int) -> None:
        acquire, release = gate.acquire, gate.release
        for _ in range(k):
            acquire()
            release()

    def floor(k: int) -> None:
        acquire, release = lock.acquire, lock.release
        for _ in range(k):
            acquire()
            release()

    o, f = _per_op(ours, n), _per_op(floor, n)
    ratio = o / f
    return {"name": "gate uncontended acquire+release (ns)", "ours": round(o * 1e9), "floor_or_peer": round(f * 1e9),
            "ratio": round(ratio, 2), "target": "<= 10x a bare Lock", "ok": ratio <= 10}


def _storm(call: Any, conversations: int) -> float:
    start = threading.Barrier(conversations + 1)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        start.wait()
        try:
            call(i)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(conversations)]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    took = time.perf_counter() - t0
    if errors:
        raise RuntimeError(f"{len(errors)} conversations failed, first: {errors[0]!r}")
    return conversations / took


def storm(conversations: int = 400, latency: float = 0.05, slots: int = 4) -> list[dict[str, Any]]:
    import providerkit_nb as pk

    server = Server(latency)
    try:
        reg = pk.Registry({"local": {"preset": "openai", "base_url": server.url, "api_key": "sk-bench",
                                     "max_concurrent": slots}})
        provider = reg.provider("local/m")
        pk.collect_turn(provider.create_stream(HISTORY))  # warm up: imports, first connection
        server.peak = 0

        def ours(i: int) -> None:
            pk.collect_turn(provider.create_stream(HISTORY, session_id=f"conv-{i}"))

        rate = _storm(ours, conversations)
        peak = server.peak
        reg.close()

        bare = pk.openai(model="m", base_url=server.url, api_key="sk-bench")
        sem = threading.Semaphore(slots)

        def peer(i: int) -> None:
            with sem:
                pk.collect_turn(bare.create_stream(HISTORY, session_id=f"conv-{i}"))

        peer_rate = _storm(peer, conversations)
        bare.close()
    finally:
        server.close()
    ideal = slots / latency
    return [
        {"name": f"resume storm ({conversations} conversations, {slots} slots, {latency * 1000:g} ms; conv/s)",
         "ours": round(rate, 1), "floor_or_peer": round(ideal, 1), "ratio": round(rate / ideal, 3),
         "target": ">= 0.9 of ideal, peak in flight == slots", "ok": rate / ideal >= 0.9 and peak == slots},
        {"name": "resume storm vs bare adapter behind a Semaphore (conv/s)", "ours": round(rate, 1),
         "floor_or_peer": round(peer_rate, 1), "ratio": round(rate / peer_rate, 3),
         "target": ">= 0.9 of the semaphore", "ok": rate / peer_rate >= 0.9},
    ]


def run(conversations: int = 400, latency: float = 0.05, slots: int = 4) -> list[dict[str, Any]]:
    return [gate_overhead(), *storm(conversations, latency, slots)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conversations", type=int, default=400)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--slots", type=int, default=4)
    args = ap.parse_args()
    rows = run(args.conversations, args.latency, args.slots)
    for r in rows:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
