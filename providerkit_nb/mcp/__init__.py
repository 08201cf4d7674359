"""MCP servers as tools of a Conversation (the official ``mcp`` SDK, imported only here).

``mcp_tools(server)`` starts or connects to a server and returns its tools; ``hints`` holds what
their annotations mean for approval and for the repair after a crash.
"""

from __future__ import annotations

from .client import MCPServerError, ServerConnection
from .hints import HINTS, SPEC_DEFAULTS, decide_read_only, hint_summary
from .tools import MCPTools, mcp_tools

__all__ = [
    "HINTS",
    "SPEC_DEFAULTS",
    "MCPServerError",
    "MCPTools",
    "ServerConnection",
    "decide_read_only",
    "hint_summary",
    "mcp_tools",
]
