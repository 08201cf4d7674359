"""A process running a Conversation whose model calls an MCP tool; the test SIGKILLs it mid-call.

``python convo_child.py STORE BASE_URL NOTES_DIR`` (the MCP server runs as this process's child;
which tool is called is the model's choice, i.e. the test's scripted answer)."""

from __future__ import annotations

import sys
from pathlib import Path

import providerkit_nb as pk

store_path, base_url, notes = sys.argv[1:4]
demo = str(Path(__file__).resolve().parent / "servers" / "demo_server.py")
tools = pk.mcp_tools([sys.executable, demo], read_only="annotations", env={"DEMO_NOTES_DIR": notes})
provider = pk.openai(model="test-model", base_url=base_url, api_key="test-key")
convo = pk.Conversation(pk.NotebookStore(store_path), "crash", provider, pk.ToolRegistry(tools), display=False)
convo.send("Read note k.")
