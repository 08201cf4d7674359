"""Memory: peak RSS while collecting a 50 MB streamed turn, against the size of the message.

A local server on 127.0.0.1 (its own process) streams one Chat Completions turn whose text is
50 MB, in deltas of 1 KiB. A fresh child process imports everything, notes its resident size,
collects the turn with ``collect_turn`` and reads its peak resident size
(``VmHWM``, the kernel's high-water mark); the growth is compared with the size of the assembled message (its
canonical JSON, as a store would save it). Target: under 3x. The least a reader can hold is
the message once, plus, at the end, its pieces and the joined text side by side (2x).

Information rows: the same turn read by the floor (httpx ``iter_lines`` + ``json.loads``,
keeping the text pieces and joining them), and a 50 MB stream of short deltas ("token 123 ",
as models send them), where each piece's object header outweighs its text.

Run: ``python -m bench.memory`` (``--mb N``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.harness import Server, print_rows, row
from bench.stream_chat import HISTORY, MODEL, chat_body

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 3.0
BIG = "token {i:08d} " + "x" * 1009  # 1 KiB per delta
SMALL = "token {i} "


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak() -> int:
    """This process's peak resident size. VmHWM, not getrusage's ru_maxrss: Linux carries
    ru_maxrss over fork and exec, so a child of a big parent would report the parent's size."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def _child(url: str, reader: str) -> dict[str, Any]:
    """Runs in the measured process: read the stream once, report resident growth."""
    import providerkit_nb as pk
    from providerkit_nb.core.messages import dump_message
    from providerkit_nb.providers.openai_chat import OpenAIChatProvider

    if reader == "ours":
        p = OpenAIChatProvider(model=MODEL, api_key="bench", base_url=f"{url}/v1")
        base, before = _rss(), _peak()
        message = pk.collect_turn(p.create_stream(HISTORY)).message
        peak = _peak()
    else:
        import httpx

        client = httpx.Client()
        body = {"model": MODEL, "messages": HISTORY, "stream": True}
        base, before = _rss(), _peak()
        pieces = []
        with client.stream("POST", f"{url}/v1/chat/completions", json=body) as r:
            for line in r.iter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    choices = json.loads(line[6:])["choices"]
                    if choices and choices[0]["delta"].get("content"):
                        pieces.append(choices[0]["delta"]["content"])
        text = "".join(pieces)
        peak = _peak()
        message = pk.AssistantMessage(text)
        del pieces
    return {"growth": peak - base, "peak_before": before - base, "message": len(dump_message(message).encode())}


def measure(url: str, reader: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "bench.memory", "--child", url, reader], cwd=ROOT,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])


def run(mb: int = 50) -> list[dict[str, Any]]:
    """Rows: peak resident growth (bytes) against the message size."""
    rows = []
    big = mb * 2**20 // len(BIG.format(i=0))
    with Server(chat_body, big, BIG) as srv:
        ours, floor = measure(srv.url, "ours"), measure(srv.url, "floor")
        stream = srv.size
    rows.append(row(f"memory: collect a {mb} MB turn (1 KiB deltas), peak RSS growth vs message", ours["growth"],
                    ours["message"], target=f"< {LIMIT:g}x message", limit=LIMIT, unit="B",
                    note=f"stream {stream / 2**20:.0f} MiB"))
    rows.append(row(f"memory: floor (iter_lines + json.loads + join), {mb} MB turn", floor["growth"], floor["message"],
                    unit="B", note="the same turn read by the floor"))
    small = mb * 2**20 * 10000 // len(chat_body(10000, SMALL))  # short deltas for a stream of `mb` MB
    with Server(chat_body, small, SMALL) as srv:
        short = measure(srv.url, "ours")
        stream = srv.size
    rows.append(row(f"memory: collect a {stream / 2**20:.0f} MB stream of short deltas, peak RSS growth vs message",
                    short["growth"], short["message"], target="info", unit="B",
                    note=f"{small} deltas of about {len(SMALL.format(i=small // 2))} characters"))
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.memory", description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=int, default=50)
    ap.add_argument("--child", nargs=2, metavar=("URL", "READER"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(_child(*a.child)))
        return
    print_rows(run(a.mb))


if __name__ == "__main__":
    main()
