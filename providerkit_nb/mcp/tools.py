"""``mcp_tools(server)``: an MCP server's tools as this library's ``Tool`` objects.

Each tool keeps what the server said about it (its four hints, as plain data), where it comes
from (``source``), and whether it counts as read-only and why (see ``hints``). A call returns a
tool message in every case the model should hear about: the server's content blocks as text and
images, ``structuredContent`` as JSON text, ``isError`` as a failure the model reads, and a
server that exits or garbles a message mid-call as an interrupted call with the repair's text.
"""

from __future__ import annotations

import base64
import json
import warnings
from collections.abc import Sequence
from typing import Any

from ..core.messages import ImagePart
from ..core.repair import INTERRUPTED_MAY_HAVE_RUN, INTERRUPTED_READ_ONLY
from ..core.tools import AGAIN_MAY_HAVE_RUN, AGAIN_READ_ONLY, Tool, ToolOutput, define_tool
from .client import CallFailure, MCPServerError, ServerConnection
from .hints import check_read_only, decide_read_only, hints_of

__all__ = ["mcp_tools", "MCPTools", "MCPServerError", "MAX_RESULT_CHARS", "MAX_IMAGE_BYTES"]

MAX_RESULT_CHARS = 100_000  # text of one result the model reads; more is cut, and it says so
MAX_IMAGE_BYTES = 5_000_000  # base64 characters of images in one result


class MCPTools(list[Tool]):
    """The tools of one MCP server (a list, so ``ToolRegistry([*local, *mcp])`` takes them).

    ``server`` is the connection; ``skipped`` lists ``(name, reason)`` for tools that could not
    be offered to a model (a broken input schema, a name providers refuse). ``close()`` or a
    ``with`` block ends the server."""

    def __init__(self, tools: Sequence[Tool], server: ServerConnection, skipped: list[tuple[str, str]]):
        super().__init__(tools)
        self.server = server
        self.skipped = skipped

    def close(self) -> None:
        self.server.close()

    def __enter__(self) -> MCPTools:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        names = ", ".join(t.name for t in self)
        return f"<MCPTools from {self.server.title}: {names or '(none)'}>"


def mcp_tools(
    server: str | Sequence[str],
    *,
    read_only: None | str | Sequence[str] | set[str] | frozenset[str] = None,
    timeout: float = 60,
    name_prefix: str | None = None,
    env: dict[str, str] | None = None,
) -> MCPTools:
    """Start (or connect to) an MCP server and return its tools.

    ``server``: a command line (a list, or a string split like a shell does; the server runs as a
    child process over stdio) or an ``http(s)://`` URL (streamable HTTP). ``read_only``: None (no
    tool counts as read-only), ``"annotations"`` (trust this server's ``readOnlyHint``) or a set
    of tool names you vouch for. ``timeout`` bounds the handshake and every call; ``name_prefix``
    goes before every tool name (so two servers' tools cannot clash, and a stored conversation
    names its server); ``env`` adds environment variables for a child process.
    """
    conn = ServerConnection(server, timeout=timeout, env=env)
    check_read_only(read_only, conn.title)
    if name_prefix is not None and not isinstance(name_prefix, str):
        raise TypeError("mcp_tools: name_prefix must be a string")
    try:
        listed = conn.start()
    except BaseException:
        conn.close()
        raise
    names = [getattr(t, "name", "") for t in listed]
    if read_only is not None and read_only != "annotations":
        prefix = name_prefix or ""
        unknown = sorted(n for n in read_only if n not in names and n[len(prefix):] not in names)
        if unknown:
            conn.close()
            raise ValueError(
                f"MCP server {conn.title} has no tool named {', '.join(map(repr, unknown))} "
                f"(read_only=); its tools: {', '.join(names) or '(none)'}"
            )
    tools: list[Tool] = []
    skipped: list[tuple[str, str]] = []
    for listed_tool in listed:
        made = _make_tool(conn, listed_tool, read_only, name_prefix or "", float(timeout))
        if isinstance(made, Tool):
            tools.append(made)
        else:
            skipped.append((str(getattr(listed_tool, "name", "?")), made))
    for name, reason in skipped:
        warnings.warn(
            f"MCP server {conn.title}: tool {name!r} left out: {reason}", stacklevel=2
        )
    return MCPTools(tools, conn, skipped)


def _schema_problem(schema: Any) -> str | None:
    if not isinstance(schema, dict):
        return f"its input schema is not a JSON object ({type(schema).__name__})"
    if schema.get("type", "object") != "object":
        return f"its input schema has type {schema.get('type')!r}, not 'object'"
    try:
        from jsonschema import exceptions, validators

        validators.validator_for(schema).check_schema(schema)
    except exceptions.SchemaError as exc:
        return f"its input schema is not a valid JSON Schema ({exc.message[:200]})"
    except Exception as exc:  # a $schema URI the library does not know, a recursion...
        return f"its input schema could not be read ({type(exc).__name__})"
    return None


def _make_tool(
    conn: ServerConnection, listed: Any, read_only: Any, prefix: str, timeout: float
) -> Tool | str:
    mcp_name = getattr(listed, "name", None)
    if not isinstance(mcp_name, str) or not mcp_name:
        return "it has no name"
    schema = getattr(listed, "input_schema", None)
    problem = _schema_problem(schema)
    if problem:
        return problem + "; ask the server's author to fix its tools/list"
    ann = getattr(listed, "annotations", None)
    sent = ann.model_dump(by_alias=True, exclude_unset=True) if ann is not None else None
    hints = hints_of(sent)
    name = prefix + mcp_name
    ro, reason = decide_read_only(name, hints, read_only, names=(mcp_name,))

    def run(arguments: dict[str, Any]) -> ToolOutput:
        answer = conn.call(mcp_name, arguments, timeout)
        return _output(conn, name, answer, ro)

    try:
        tool = define_tool(
            name,
            getattr(listed, "description", None) or getattr(listed, "title", None) or "",
            schema,  # type: ignore[arg-type]  # checked by _schema_problem
            run,
            read_only=ro,
            timeout=timeout + 10.0,  # the call itself gives up at `timeout` and says why
        )
    except ValueError as exc:
        return str(exc)
    tool.source = f"mcp:{conn.name or conn.label}"
    tool.hints = hints
    tool.read_only_reason = reason
    tool.stop = conn.cancel_calls
    return tool


def _output(conn: ServerConnection, name: str, answer: Any, read_only: bool) -> ToolOutput:
    if isinstance(answer, CallFailure):
        return _failure_output(conn, name, answer, read_only)
    texts, images, notes = _blocks(getattr(answer, "content", None) or [])
    structured = getattr(answer, "structured_content", None)
    if structured is not None and not _already_said(structured, texts):
        texts.append(json.dumps(structured, ensure_ascii=False, sort_keys=True))
    text = "\n".join(texts) if texts else ("" if images else "(no output)")
    if len(text) > MAX_RESULT_CHARS:
        text = (
            text[:MAX_RESULT_CHARS]
            + f"\n[cut: the result was {len(text)} characters; only the first {MAX_RESULT_CHARS} "
            "are shown. Ask for less (a narrower query, a page).]"
        )
    if notes:
        text += ("\n" if text else "") + "\n".join(notes)
    if getattr(answer, "is_error", False):
        return ToolOutput(f"Error: {name} (MCP server {conn.title}) reported a failure: {text}", images or None, "failed")
    return ToolOutput(text, images or None)


def _already_said(structured: Any, texts: list[str]) -> bool:
    """True when a text block already carries the structured content (servers are asked to send
    both; a bare value may come back wrapped as ``{"result": value}``)."""
    wrapped = structured.get("result") if isinstance(structured, dict) and len(structured) == 1 else None
    for t in texts:
        if wrapped is not None and t == (wrapped if isinstance(wrapped, str) else None):
            return True
        try:
            value = json.loads(t)
        except ValueError:
            continue
        if value == structured or (wrapped is not None and value == wrapped):
            return True
    return False


def _blocks(content: list[Any]) -> tuple[list[str], list[ImagePart], list[str]]:
    texts: list[str] = []
    images: list[ImagePart] = []
    notes: list[str] = []
    image_chars = 0

    def image(mime: str, data: str) -> None:
        nonlocal image_chars
        if image_chars + len(data) > MAX_IMAGE_BYTES:
            notes.append(f"[an image ({mime}) was left out: the images of this result exceed {MAX_IMAGE_BYTES} bytes]")
            return
        image_chars += len(data)
        images.append(ImagePart(mime, data))

    for block in content:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(str(getattr(block, "text", "")))
        elif kind == "image":
            image(str(getattr(block, "mime_type", "image/png")), str(getattr(block, "data", "")))
        elif kind == "resource":
            res = getattr(block, "resource", None)
            uri = str(getattr(res, "uri", ""))
            mime = getattr(res, "mime_type", None) or "application/octet-stream"
            if getattr(res, "text", None) is not None:
                texts.append(f"[resource {uri}]\n{res.text}")  # type: ignore[union-attr]  # has text: not None
            elif mime.startswith("image/") and getattr(res, "blob", None):
                image(mime, str(res.blob))  # type: ignore[union-attr]  # has a blob: not None
            else:
                size = len(base64.b64decode(getattr(res, "blob", "") or "", validate=False))
                notes.append(f"[resource {uri}: {mime}, {size} bytes, not shown]")
        elif kind == "resource_link":
            texts.append(f"[resource link {getattr(block, 'uri', '')}: {getattr(block, 'name', '')}]")
        else:
            notes.append(f"[a {kind or 'content'} block was left out: only text and images are passed on]")
    return texts, images, notes


def _failure_output(conn: ServerConnection, name: str, failure: CallFailure, read_only: bool) -> ToolOutput:
    where = f"MCP server {conn.title}"
    if failure.kind in ("gone", "protocol"):
        what = "exited (or closed the connection)" if failure.kind == "gone" else failure.detail
        said = f" {failure.detail}" if failure.kind == "gone" and failure.detail else ""
        again = INTERRUPTED_READ_ONLY if read_only else INTERRUPTED_MAY_HAVE_RUN
        return ToolOutput(
            f"Error: {where} {what} while running {name}; it will be started again on the "
            f"next call.{said} {again}",
            kind="interrupted",
        )
    if failure.kind == "timeout":
        again = (
            AGAIN_READ_ONLY
            if read_only
            else "It may still be running or have partly run, so check its effect before calling it again."
        )
        return ToolOutput(f"Error: {where} did not answer {name}: {failure.detail}. {again}", kind="timeout")
    if failure.kind == "stopped":
        return ToolOutput(f"Error: {name} was stopped: {failure.detail}.", kind="interrupted")
    after = "" if read_only else " " + AGAIN_MAY_HAVE_RUN
    return ToolOutput(f"Error: {where} refused {name}: {failure.detail}.{after}", kind="failed")

