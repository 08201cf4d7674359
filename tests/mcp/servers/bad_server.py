"""A deliberately broken MCP server over stdio, speaking JSON-RPC by hand (no SDK), one fault per
mode: ``silent`` never answers the handshake; ``garbage`` answers it, then answers a tool call
with a line that is not JSON; ``badschema`` lists one good tool and one whose input schema is
not an object schema; ``exit`` exits in the middle of a call; ``chatty`` writes a log line to
stdout (the usual mistake: a print() in a stdio server) and one to stderr before the handshake,
and never answers."""

from __future__ import annotations

import json
import sys

MODE = sys.argv[1]
GOOD = {"name": "echo", "description": "Echo.", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}
BROKEN = {"name": "broken_schema", "description": "Bad.", "inputSchema": {"type": "object", "properties": {"x": {"type": 12}}}}


def send(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


if MODE == "chatty":
    print("Starting the notes server on stdio...", flush=True)
    sys.stderr.write("chatty: config loaded from ./notes.toml\n")
    sys.stderr.flush()

for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if MODE in ("silent", "chatty"):
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
            "serverInfo": {"name": f"bad-{MODE}", "version": "0"}}})
    elif method == "tools/list":
        tools = [GOOD, BROKEN] if MODE == "badschema" else [GOOD]
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": tools}})
    elif method == "tools/call":
        if MODE == "garbage":
            sys.stdout.write("this is not json {{{\n")
            sys.stdout.flush()
        elif MODE == "exit":
            sys.stderr.write("bad-exit: giving up\n")
            sys.exit(3)
        else:
            text = msg["params"]["arguments"].get("text", "")
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}})
