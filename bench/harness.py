"""What every benchmark shares: a local server in its own process, interleaved timing, rows.

- ``Server``: a real HTTP server on 127.0.0.1 in a separate process (so its work takes no CPU
  from the process being measured), answering every POST with one body built in that process
  by ``builder(*args)``, sent as chunked transfer in 16 KiB writes, the way the APIs stream.
- ``interleave``: runs the contenders in rounds, the order rotated each round so a noisy
  neighbour hits all of them alike, and reports each one's median client CPU and wall time.
- ``row``: one result row; ``bench/__main__.py`` prints, saves and charts them.
"""

from __future__ import annotations

import multiprocessing
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["HOW_BENCH", "HOW_PG", "Server", "Timing", "WireBench", "interleave", "row", "print_rows"]

WRITE = 16384

# What a row that could not run says about enabling it (``make bench`` does both).
HOW_BENCH = "make bench installs it (or: pip install -e '.[bench]')"
HOW_PG = ('make bench starts a local server (or: eval "$(scripts/pg-test-server.sh start)", '
          "which sets PROVIDERKIT_PG_DSN)")


def _serve(builder: Callable[..., bytes], args: tuple[Any, ...], port_q: Any) -> None:
    body = builder(*args)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # as API servers do (see bench/gate.py)

        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            view = memoryview(body)
            write = self.wfile.write
            for i in range(0, len(view), WRITE):
                piece = view[i : i + WRITE]
                write(b"%x\r\n" % len(piece) + piece + b"\r\n")
            write(b"0\r\n\r\n")

        def log_message(self, *args: Any) -> None:
            pass

    class Quiet(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request: Any, client_address: Any) -> None:
            pass  # a client that hangs up early is not news

    httpd = Quiet(("127.0.0.1", 0), Handler)
    port_q.put((httpd.server_port, len(body)))
    httpd.serve_forever()


class Server:
    """``with Server(builder, *args) as srv:`` serves ``builder(*args)`` at ``srv.url``.

    ``builder`` must be a module-level function (the server process imports it).
    """

    def __init__(self, builder: Callable[..., bytes], *args: Any) -> None:
        ctx = multiprocessing.get_context("spawn")  # no inherited threads or buffers
        q = ctx.Queue()
        self.proc = ctx.Process(target=_serve, args=(builder, args, q), daemon=True)
        self.proc.start()
        port, self.size = q.get(timeout=120)
        self.url = f"http://127.0.0.1:{port}"

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.proc.terminate()
        self.proc.join(10)


@dataclass(frozen=True, slots=True)
class Timing:
    """Medians over the rounds: client CPU seconds (every thread of this process, none of the
    server's) and wall seconds."""

    cpu: float
    wall: float


def interleave(
    contenders: dict[str, Callable[[], Any]], rounds: int, warm: int = 1, fewer: dict[str, int] | None = None
) -> dict[str, Timing]:
    """Median CPU and wall time of each contender over ``rounds`` interleaved rounds. A name in
    ``fewer`` runs only in that many of the rounds (spread over the run): for peers ten times
    slower than us, whose medians need fewer samples to tell the difference."""
    for _ in range(warm):
        for fn in contenders.values():
            fn()  # connections, imports, caches
    names = list(contenders)
    cpu: dict[str, list[float]] = {n: [] for n in names}
    wall: dict[str, list[float]] = {n: [] for n in names}
    plan = {n: set(range(rounds)) for n in names}
    for n, k in (fewer or {}).items():
        k = max(1, min(k, rounds))
        plan[n] = {round(i * (rounds - 1) / max(1, k - 1)) for i in range(k)} if k > 1 else {rounds // 2}
    for r in range(rounds):
        k = r % len(names)
        for n in names[k:] + names[:k]:
            if r not in plan[n]:
                continue
            c0, w0 = time.process_time(), time.perf_counter()
            contenders[n]()
            wall[n].append(time.perf_counter() - w0)
            cpu[n].append(time.process_time() - c0)
    return {n: Timing(statistics.median(cpu[n]), statistics.median(wall[n])) for n in names}


def row(
    name: str,
    ours: float | None,
    other: float | None,
    *,
    target: str = "info",
    limit: float | None = None,
    better: str = "lower",
    on: str = "ratio",
    unit: str = "s",
    ratio: float | None = None,
    note: str | None = None,
) -> dict[str, Any]:
    """One result. ``limit`` and ``better`` make ``target`` checkable: the ratio (``on="ratio"``)
    or our own figure (``on="ours"``) must be at most (``better="lower"``) or at least
    (``better="higher"``) the limit. Without a limit the row is information only (ok None)."""
    if ratio is None and ours is not None and other:
        ratio = ours / other
    value = ratio if on == "ratio" else ours
    ok: bool | None = None
    if limit is not None and value is not None:
        ok = value <= limit if better == "lower" else value >= limit
    out = {"name": name, "ours": ours, "floor_or_peer": other, "ratio": ratio, "target": target, "ok": ok,
           "unit": unit, "limit": limit, "better": better, "on": on}
    if note:
        out["note"] = note
    return out


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "s":
        if value >= 1:
            return f"{value:.2f} s"
        if value >= 1e-3:
            return f"{value * 1e3:.1f} ms"
        return f"{value * 1e6:.1f} us"
    if unit == "B":
        return f"{value / 2**20:.1f} MiB"
    return f"{value:,.1f} {unit}" if value < 1000 else f"{value:,.0f} {unit}"


def verdict(ok: bool | None) -> str:
    return "info" if ok is None else ("pass" if ok else "MISS")


def cli(run: Callable[..., list[dict[str, Any]]], prog: str, argv: list[str] | None, **defaults: int) -> int:
    """A benchmark module's own command line: one ``--name N`` per keyword of ``run``, the table,
    and exit status 1 when a target was missed."""
    import argparse

    parser = argparse.ArgumentParser(prog=prog)
    for name, value in defaults.items():
        parser.add_argument(f"--{name}", type=int, default=value)
    rows = run(**vars(parser.parse_args(argv)))
    print_rows(rows)
    return 0 if all(r["ok"] is not False for r in rows) else 1


def print_rows(rows: list[dict[str, Any]]) -> None:
    """The table: what was measured, our figure, the floor or peer, the ratio, target, verdict."""
    w = max([len(r["name"]) for r in rows] + [9])
    print(f"{'measured':<{w}}  {'ours':>12}  {'floor/peer':>12}  {'ratio':>8}  {'target':<22} result")
    for r in rows:
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        print(f"{r['name']:<{w}}  {fmt(r['ours'], r.get('unit', 's')):>12}  "
              f"{fmt(r['floor_or_peer'], r.get('unit', 's')):>12}  {ratio:>8}  {r['target']:<22} {verdict(r['ok'])}")


Reader = Callable[[], Any]


@dataclass(frozen=True)
class WireBench:
    """One wire's part of the streaming benchmark. ``body`` is a module-level builder (it runs
    in the server process); ``floor``, ``ours`` and each of ``peers`` take the server URL and
    return a zero-argument reader that consumes the whole stream once (and checks what it got).
    A peer factory returns None when its SDK is not installed."""

    body: Callable[[int], bytes]
    floor: Callable[[str], Reader]
    ours: Callable[[str], Reader]
    peers: dict[str, Callable[[str], Reader | None]]
