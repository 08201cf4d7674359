"""Streaming throughput: our collect_turn vs the floor vs the vendor SDKs, per wire.

For each wire a local server on 127.0.0.1 (its own process) serves one long stream (20,000
chunks by default) in that wire's own format, and the readers take it in interleaved rounds:

- floor: httpx ``iter_lines`` + ``json.loads`` of every ``data:`` line, nothing else;
- ours: the wire's provider + ``collect_turn`` (SSE reader, parser, assembler, checks);
- peers: the official SDK for that wire reading the same server (openai, anthropic,
  google-genai), one row per way of reading.

With the ``fast-json`` extra (orjson), ours parses each event with orjson where the SSE reader
found the read safe for it (one check per read, ``core.fastjson.trusted_loads``), else with the
standard library; the floor keeps ``json.loads``, as a plain loop would. The note of each row
says which parser ours used.

The figure is the median of the client's CPU seconds per stream (the server's work is in
another process, so it is the same bytes for every reader and counts for none); the wall-clock
median is kept in each row's note. Targets: ours at most 1.2x the floor, and faster than each
SDK. A wire joins by adding its ``bench/stream_<wire>.py`` module (a ``BENCH``) to ``WIRES``.

Run: ``python -m bench.stream`` (``--wire NAME``, ``--chunks N``, ``--rounds N``).
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any

from bench.harness import HOW_BENCH, Reader, Server, WireBench, interleave, print_rows, row

WIRES = {
    "openai_chat": "bench.stream_chat",
    "openai_responses": "bench.stream_responses",
    "anthropic": "bench.stream_anthropic",
    "gemini": "bench.stream_gemini",
}
FLOOR_LIMIT = 1.2


def bench_for(wire: str) -> WireBench:
    return importlib.import_module(WIRES[wire]).BENCH


def run_wire(wire: str, chunks: int = 20000, rounds: int = 7, peer_rounds: int = 3) -> list[dict[str, Any]]:
    b = bench_for(wire)
    with Server(b.body, chunks) as srv:
        readers: dict[str, Reader] = {"floor": b.floor(srv.url), "ours": b.ours(srv.url)}
        missing = []
        for label, make in b.peers.items():
            peer = make(srv.url)
            if peer is None:
                missing.append(label)
            else:
                readers[label] = peer
        med = interleave(readers, rounds, fewer={n: peer_rounds for n in readers if n not in ("floor", "ours")})
    ours = med["ours"]

    from providerkit_nb.core import fastjson

    parser = "orjson (fast-json extra)" if fastjson._orjson_loads is not None else "json (stdlib)"

    def note(other: str) -> str:
        return (f"wall {ours.wall * 1e3:.0f} ms vs {med[other].wall * 1e3:.0f} ms; stream {srv.size / 2**20:.1f} MiB; "
                f"ours parses events with {parser}")

    rows = [row(f"stream {wire} {chunks} chunks vs floor (httpx iter_lines + json.loads)", ours.cpu,
                med["floor"].cpu, target=f"<= {FLOOR_LIMIT}x floor", limit=FLOOR_LIMIT, note=note("floor"))]
    for label in b.peers:
        if label in missing:
            rows.append(row(f"stream {wire} vs {label} (SDK not installed)", ours.cpu, None, target="< 1x SDK",
                            note=HOW_BENCH))
            continue
        rows.append(row(f"stream {wire} {chunks} chunks vs {label}", ours.cpu, med[label].cpu,
                        target="< 1x SDK", limit=1.0, note=note(label)))
    return rows


def run(
    chunks: int = 20000, rounds: int = 7, wires: list[str] | None = None, peer_rounds: int = 3
) -> list[dict[str, Any]]:
    """Rows for every wire (CPU seconds per stream, medians; the SDKs, ten to forty times
    slower, take part in ``peer_rounds`` of the rounds)."""
    out: list[dict[str, Any]] = []
    for wire in wires or list(WIRES):
        out += run_wire(wire, chunks, rounds, peer_rounds)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.stream", description=__doc__.split("\n")[0])
    ap.add_argument("--wire", choices=list(WIRES), action="append", help="only this wire (repeatable)")
    ap.add_argument("--chunks", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--peer-rounds", type=int, default=3)
    a = ap.parse_args(argv)
    print_rows(run(a.chunks, a.rounds, a.wire, a.peer_rounds))


if __name__ == "__main__":
    main()
