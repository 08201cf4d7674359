"""The MCP server bench/mcp.py starts over stdio: one plain function served by the SDK's server."""

from __future__ import annotations


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    from mcp.server import MCPServer

    server = MCPServer("bench")
    server.tool()(add)
    server.run()
