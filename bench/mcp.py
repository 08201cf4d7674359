"""MCP tools: what one call over stdio costs, and how long ``pk.mcp_tools`` takes to the tool list.

- one call of ``add`` through ``ToolRegistry.run`` to a real MCP server (``bench/mcp_server.py``,
  the SDK's own server, a child process over stdio), against calling the same Python function
  directly, and against the same function as a local tool through ``ToolRegistry.run`` (the
  registry's own cost: argument checks and the worker thread that enforces the timeout);
- the same call with the SDK's own async client (``ClientSession.call_tool`` in a loop of
  ``asyncio.run``): the floor for what the synchronous bridge (background loop, worker thread,
  the registry's checks) adds;
- ``pk.mcp_tools(...)`` until the tool list is back (spawn, handshake, ``tools/list``), against
  the floor of starting the same interpreter with the SDK's server imported and letting it exit.

Wall-clock medians of interleaved rounds (the server is another process, so CPU time of this one
would leave its share out). Run: ``python -m bench.mcp`` (``--rounds N --calls N``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import providerkit_nb as pk
from bench.harness import print_rows, row
from bench.mcp_server import add

ROOT = Path(__file__).resolve().parent.parent
# run as a module: a script in bench/ would import this file as `mcp` instead of the SDK
SERVER = [sys.executable, "-m", "bench.mcp_server"]
ENV = {"PYTHONPATH": str(ROOT)}


def _per_call(fn: Any, calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - started) / calls


async def _sdk_calls(calls: int) -> float:
    """Per-call seconds of ``call_tool`` on the SDK's async client, after one warm-up call."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=SERVER[0], args=SERVER[1:], env=ENV)
    async with stdio_client(params) as streams, ClientSession(streams[0], streams[1]) as session:
        await session.initialize()
        await session.list_tools()
        await session.call_tool("add", {"a": 2, "b": 40})
        started = time.perf_counter()
        for _ in range(calls):
            await session.call_tool("add", {"a": 2, "b": 40})
        return (time.perf_counter() - started) / calls


def run(rounds: int = 5, calls: int = 300, starts: int = 3) -> list[dict[str, Any]]:
    call = pk.ToolCall("call_1", "add", json.dumps({"a": 2, "b": 40}))
    local = pk.ToolRegistry([pk.tool(add)])
    t_direct, t_local, t_mcp = [], [], []
    with pk.mcp_tools(SERVER, env=ENV) as tools:
        remote = pk.ToolRegistry(tools)
        assert remote.run(call).content == "42"  # warm: the first call loads the server's call path
        for r in range(rounds):
            contenders = [("direct", lambda: add(2, 40)), ("local", lambda: local.run(call)), ("mcp", lambda: remote.run(call))]
            contenders = contenders[r % 3:] + contenders[: r % 3]
            for name, fn in contenders:
                n = calls * 100 if name == "direct" else calls
                {"direct": t_direct, "local": t_local, "mcp": t_mcp}[name].append(_per_call(fn, n))
    t_sdk, t_ours = [], []
    with pk.mcp_tools(SERVER, env=ENV) as tools:
        remote = pk.ToolRegistry(tools)
        remote.run(call)
        for r in range(rounds):
            for which in (("ours", "sdk") if r % 2 == 0 else ("sdk", "ours")):
                if which == "sdk":
                    t_sdk.append(asyncio.run(_sdk_calls(calls)))
                else:
                    t_ours.append(_per_call(lambda: remote.run(call), calls))
    t_start, t_floor = [], []
    for r in range(starts):
        for which in (("mcp", "floor") if r % 2 == 0 else ("floor", "mcp")):
            started = time.perf_counter()
            if which == "mcp":
                with pk.mcp_tools(SERVER, env=ENV) as tools:
                    t_start.append(time.perf_counter() - started)
            else:
                subprocess.run([sys.executable, "-c", "import mcp.server"], check=True, cwd=ROOT)
                t_floor.append(time.perf_counter() - started)
    direct, local_s, mcp_s = (statistics.median(x) for x in (t_direct, t_local, t_mcp))
    ours_s, sdk_s = statistics.median(t_ours), statistics.median(t_sdk)
    start, floor = statistics.median(t_start), statistics.median(t_floor)
    return [
        row("MCP call over stdio vs the function called directly", mcp_s, direct),
        row("MCP call over stdio vs the same function as a local tool", mcp_s, local_s),
        row("MCP call, synchronous (ours) vs the SDK's async client", ours_s, sdk_s,
            target="< 1.5x", limit=1.5),
        row("pk.mcp_tools to the tool list vs starting python with the SDK", start, floor,
            target="< 5x the interpreter start", limit=5.0),
    ]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--calls", type=int, default=300)
    p.add_argument("--starts", type=int, default=3)
    a = p.parse_args()
    print_rows(run(a.rounds, a.calls, a.starts))


if __name__ == "__main__":
    main()
