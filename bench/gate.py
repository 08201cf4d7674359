"""The gate's cost: uncontended acquire+release, and the resume storm against the ideal.

- ``gate uncontended``: one thread, ``Gate.acquire()`` + ``release()`` in a loop, against a
  bare ``threading.Lock`` (the floor: one lock is the least a thread-safe gate can take).
  Target: within 10x of the lock (the gate takes its lock, stamps times, counts waits).
- ``resume storm``: N conversations start at once through a registry connection with
  ``max_concurrent`` slots (gate, retry, watchdog, real Chat adapter) against a local server
  (its own process) that answers each request after a fixed latency. The ideal is ``slots``
  requests always in flight: ``slots / one request's time``, that time measured alone in the
  same run (plain httpx, one request after another: the latency plus what the machine adds to
  every request, about 3 ms on a 2-core VM that idles while the server sleeps, which no gate
  can win back). Target: within 10% of the ideal, and never more requests in flight than slots.
- the same storm through our bare adapter behind a ``threading.Semaphore`` (no FIFO, no
  wrappers), and through plain httpx requests behind one (no providerkit at all): what is left
  between the ideal and the transport's own per-request cost. Storms are interleaved round by
  round; medians.
- the storm at 250 ms a request (information), a provider-like latency.

Run: ``python -m bench.gate`` (``--conversations N``, ``--latency S``, ``--slots N``, ``--rounds N``).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from bench.harness import print_rows, row

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


def _serve(latency: float, port_q: Any) -> None:
    """The server process: every POST is answered with one short Chat stream after ``latency``
    seconds; ``GET /stats`` returns the requests in flight at the peak and in total."""
    lock = threading.Lock()
    state = {"in_flight": 0, "peak": 0, "total": 0}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # TCP_NODELAY, as API servers set it: without it the body, written after the headers,
        # waits for the client's delayed ACK (40 ms) on every reused connection
        disable_nagle_algorithm = True

        def log_message(self, *a: Any) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            with lock:
                body = json.dumps(state).encode()
                if self.path.endswith("reset"):
                    state["peak"] = state["total"] = 0
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("content-length") or 0))
            with lock:
                state["in_flight"] += 1
                state["total"] += 1
                state["peak"] = max(state["peak"], state["in_flight"])
            try:
                time.sleep(latency)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(_BODY)))
                self.end_headers()
                self.wfile.write(_BODY)
            finally:
                with lock:
                    state["in_flight"] -= 1

    class Quiet(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request: Any, client_address: Any) -> None:
            pass

    httpd = Quiet(("127.0.0.1", 0), Handler)
    port_q.put(httpd.server_address[1])
    httpd.serve_forever()


class Server:
    """A local server with a fixed latency, in its own process (so it takes neither a core's
    time slice nor the GIL from the conversations being measured)."""

    def __init__(self, latency: float) -> None:
        ctx = multiprocessing.get_context("spawn")
        q = ctx.Queue()
        self.proc = ctx.Process(target=_serve, args=(latency, q), daemon=True)
        self.proc.start()
        self.base = f"http://127.0.0.1:{q.get(timeout=60)}"
        self.url = f"{self.base}/v1"

    def stats(self, reset: bool = False) -> dict[str, int]:
        with urllib.request.urlopen(f"{self.base}/stats{'/reset' if reset else ''}", timeout=10) as r:  # noqa: S310
            return json.loads(r.read())

    def close(self) -> None:
        self.proc.terminate()
        self.proc.join(10)


def _per_op(fn: Any, n: int) -> float:
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        fn(n)
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def gate_overhead(n: int = 200_000) -> dict[str, Any]:
    from providerkit_nb.wrappers import create_gate

    gate = create_gate(4)
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
    return row("gate uncontended acquire+release vs a bare Lock", o * 1e9, f * 1e9, target="<= 10x a bare Lock",
               limit=10, unit="ns")


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


def storm(conversations: int = 200, latency: float = 0.05, slots: int = 4, rounds: int = 3) -> list[dict[str, Any]]:
    """Three ways through the same storm, interleaved round by round (medians of the rates):
    ours (registry connection: gate, retry, watchdog, Chat adapter), our bare adapter behind a
    ``threading.Semaphore``, and plain httpx requests behind a Semaphore (no providerkit)."""
    import httpx

    import providerkit_nb as pk

    server = Server(latency)
    reg = pk.Registry({"local": {"preset": "openai", "base_url": server.url, "api_key": "sk-bench",
                                 "max_concurrent": slots}})
    provider = reg.provider("local/m")
    bare = pk.openai(model="m", base_url=server.url, api_key="sk-bench")
    client = httpx.Client(limits=httpx.Limits(max_connections=slots))
    sem = threading.Semaphore(slots)
    body = {"model": "m", "messages": HISTORY, "stream": True}

    def ours(i: int) -> None:
        pk.collect_turn(provider.create_stream(HISTORY, session_id=f"conv-{i}"))

    def semaphore(i: int) -> None:
        with sem:
            pk.collect_turn(bare.create_stream(HISTORY, session_id=f"conv-{i}"))

    def plain(i: int) -> None:
        with sem, client.stream("POST", f"{server.url}/chat/completions", json=body) as r:
            for line in r.iter_lines():
                if line.startswith("data: {"):
                    json.loads(line[6:])

    ways = {"ours": ours, "semaphore": semaphore, "httpx": plain}
    rates: dict[str, list[float]] = {k: [] for k in ways}
    alone: list[float] = []
    peak = 0
    try:
        for fn in ways.values():
            fn(-1)  # warm up: imports, first connection
        names = list(ways)
        for r in range(rounds):
            for _ in range(max(5, 2 * slots)):  # one request's time, with nothing else running
                t0 = time.perf_counter()
                plain(-1)
                alone.append(time.perf_counter() - t0)
            for k in names[r % 3:] + names[: r % 3]:
                server.stats(reset=True)
                rates[k].append(_storm(ways[k], conversations))
                if k == "ours":
                    peak = max(peak, server.stats()["peak"])
    finally:
        reg.close()
        bare.close()
        client.close()
        server.close()
    med = {k: statistics.median(v) for k, v in rates.items()}
    one = statistics.median(alone)
    ideal = slots / one
    first = row(f"resume storm ({conversations} conversations, {slots} slots, {latency * 1000:g} ms) vs ideal "
                f"(slots / one request alone)",
                med["ours"], ideal, target=">= 0.9x ideal", limit=0.9, better="higher", unit="conv/s",
                note=f"peak in flight {peak} (must be {slots}); one request alone took {one * 1000:.1f} ms "
                     f"(slots / latency would be {slots / latency:.0f} conv/s: {med['ours'] * latency / slots:.2f}x); "
                     f"plain httpx behind a Semaphore reaches {med['httpx'] / ideal:.2f}x ideal")
    if peak != slots:
        first["ok"] = False
    return [
        first,
        row("resume storm vs our bare adapter behind a Semaphore", med["ours"], med["semaphore"],
            target=">= 0.9x semaphore", limit=0.9, better="higher", unit="conv/s"),
        row("resume storm vs plain httpx behind a Semaphore (info)", med["ours"], med["httpx"], better="higher",
            unit="conv/s", note="no providerkit at all: what the transport alone reaches"),
    ]


def storm_slow(conversations: int = 100, latency: float = 0.25, slots: int = 4) -> dict[str, Any]:
    """The storm at a provider-like latency (information: what the fixed per-request cost
    weighs when requests take as long as real ones)."""
    import providerkit_nb as pk

    server = Server(latency)
    reg = pk.Registry({"local": {"preset": "openai", "base_url": server.url, "api_key": "sk-bench",
                                 "max_concurrent": slots}})
    provider = reg.provider("local/m")
    try:
        pk.collect_turn(provider.create_stream(HISTORY))
        rate = _storm(lambda i: pk.collect_turn(provider.create_stream(HISTORY, session_id=f"conv-{i}")),
                      conversations)
    finally:
        reg.close()
        server.close()
    return row(f"resume storm ({conversations} conversations, {slots} slots, {latency * 1000:g} ms) vs slots / latency (info)",
               rate, slots / latency, better="higher", unit="conv/s")


def run(conversations: int = 200, latency: float = 0.05, slots: int = 4, rounds: int = 3) -> list[dict[str, Any]]:
    return [gate_overhead(), *storm(conversations, latency, slots, rounds),
            storm_slow(max(20, conversations // 2), 0.25, slots)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conversations", type=int, default=200)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--slots", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    print_rows(run(args.conversations, args.latency, args.slots, args.rounds))


if __name__ == "__main__":
    main()
