"""A small real MCP server written with the SDK's own server class, for the tests and notebook 06.

Run over stdio (``python demo_server.py``) or streamable HTTP
(``python demo_server.py --http PORT``). Notes live in the folder named by DEMO_NOTES_DIR. Before a
tool with ``delay`` (or the tool named by DEMO_SLOW, for 60 s) sleeps it writes ``started-<tool>`` (holding the server's pid) there, and a
tool cancelled by the client writes ``cancelled-<tool>``, so a test can see both from outside.
With ``DEMO_START=crash`` it fails as it starts, with a traceback on stderr.
``write_note_blocking`` sleeps in plain blocking code, as most synchronous tools do: a
cancellation cannot end it, and the note is written when the sleep ends if the process lives.
"""

from __future__ import annotations

import base64
import os
import sys
import time
from pathlib import Path

import anyio
from mcp.server import MCPServer
from mcp.types import (
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)

NOTES = Path(os.environ.get("DEMO_NOTES_DIR", ".")).resolve()
# A 1x1 red PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)

if os.environ.get("DEMO_START") == "crash":  # a server whose own start fails (its configuration)
    raise RuntimeError(f"DEMO_NOTES_DIR {str(NOTES)!r} is not a folder of notes")

server = MCPServer("demo-notes")


async def _wait(tool: str, delay: float) -> None:
    if os.environ.get("DEMO_SLOW") == tool:  # this server runs that tool slowly, whatever the arguments
        delay = max(delay, 60.0)
    if delay <= 0:
        return
    (NOTES / f"started-{tool}").write_text(str(os.getpid()))
    try:
        await anyio.sleep(delay)
    except BaseException:
        (NOTES / f"cancelled-{tool}").write_text(str(os.getpid()))
        raise


@server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
async def read_note(name: str, delay: float = 0.0) -> str:
    """Read a note by name."""
    await _wait("read_note", delay)
    path = NOTES / f"{name}.txt"
    return path.read_text() if path.exists() else f"(no note named {name})"


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False))
async def write_note(name: str, text: str, delay: float = 0.0) -> str:
    """Write (replace) a note."""
    await _wait("write_note", delay)
    (NOTES / f"{name}.txt").write_text(text)
    return f"wrote {len(text)} characters to {name}"


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False))
def write_note_blocking(name: str, text: str, delay: float = 0.0) -> str:
    """Write (replace) a note after a blocking wait: plain synchronous code, which the SDK runs in
    a worker thread that a cancellation cannot stop (so the server lives until it returns)."""
    if delay > 0:
        (NOTES / "started-write_note_blocking").write_text(str(os.getpid()))
        time.sleep(delay)
    (NOTES / f"{name}.txt").write_text(text)
    return f"wrote {len(text)} characters to {name}"


@server.tool()
async def add(a: int, b: int) -> int:
    """Add two integers (no annotations at all)."""
    return a + b


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def picture() -> list[TextContent | ImageContent]:
    """A caption and a tiny picture."""
    return [
        TextContent(type="text", text="one red pixel"),
        ImageContent(type="image", data=base64.b64encode(PIXEL).decode(), mime_type="image/png"),
    ]


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def document() -> EmbeddedResource:
    """A note embedded as a resource."""
    return EmbeddedResource(
        type="resource",
        resource=TextResourceContents(uri="note://readme", mime_type="text/plain", text="embedded text"),
    )


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def stats() -> dict[str, int]:
    """Counts, as structured content."""
    return {"notes": len(list(NOTES.glob("*.txt"))), "answer": 42}


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def broken() -> str:
    """Always fails."""
    raise ValueError("the disk is on fire")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def big(n: int) -> TextContent:
    """n characters of text."""
    return TextContent(type="text", text="x" * n)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
