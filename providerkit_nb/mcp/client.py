"""One MCP server, spoken to synchronously: a background event loop and one session.

The SDK's client is async; a notebook cell is not (and must not need ``await`` or
``nest_asyncio``). So each server gets its own daemon thread running an asyncio loop; one task
on it holds the transport and the ``ClientSession`` open (anyio wants a context entered and left
in the same task), and each call is a coroutine handed to that loop while the caller's thread
waits, at most ``timeout`` seconds. A server that died is started again on the next call;
``close()``, the end of a ``with`` block, interpreter exit and a kernel shutdown end it. A stdio
server is started through ``transport.child_process``: when this process dies without closing it
(kill -9, a kernel restart, a crash), the server and what it started are killed at once, not
left to finish the call it was running.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import os
import shlex
import tempfile
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.errors import (
    MCPServerError,  # noqa: F401 (defined at the bottom, kept importable here)
)

__all__ = ["MCPServerError", "ServerConnection", "CallFailure"]

_GRACE = 5.0  # seconds past `timeout` before the caller stops waiting for the loop itself
_STDERR_LINES = 12  # lines of a server's stderr shown when it fails to start

# The SDK logs a line it cannot parse with its traceback; with no logging configured Python
# prints that on stderr. It is reported as this library's error instead (``_on_message``), so
# the SDK's records go only where the user's own logging configuration sends them.
logging.getLogger("mcp").addHandler(logging.NullHandler())


@dataclass(slots=True)
class CallFailure:
    """A call that got no result: ``kind`` "gone" (the server exited or the connection closed),
    "protocol" (it sent something that is not JSON-RPC), "timeout", "error" (a JSON-RPC error
    answer) or "stopped" (Stop: the request was cancelled on the wire)."""

    kind: str
    detail: str


def _leaf(exc: Exception) -> Exception:
    """The first real error inside the task groups' ExceptionGroups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        inner = exc.exceptions[0]
        if not isinstance(inner, Exception):
            break
        exc = inner
    return exc


def _unparsed(exc: Exception) -> str:
    """What the server wrote that could not be read: the line itself when the parser kept it
    (pydantic's ValidationError does), else the parser's first line."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            line = errors()[0].get("input")
        except (TypeError, ValueError, IndexError, AttributeError):
            line = None
        if isinstance(line, str | bytes):
            return f"it wrote {str(line)[:200]!r} to stdout"
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]


def _argv(server: str | Sequence[str]) -> list[str]:
    argv = shlex.split(server) if isinstance(server, str) else [str(a) for a in server]
    if not argv:
        raise ValueError("mcp_tools: the server command line is empty")
    return argv


class ServerConnection:
    """The connection to one MCP server (a stdio child process or a streamable-HTTP URL)."""

    def __init__(
        self,
        server: str | Sequence[str],
        *,
        timeout: float = 60.0,
        env: dict[str, str] | None = None,
    ) -> None:
        if isinstance(server, str) and server.startswith(("http://", "https://")):
            self.url: str | None = server
            self.argv: list[str] = []
            self.label = server
        else:
            self.url = None
            self.argv = _argv(server)
            # paths shortened to their file names: the label names the server, it is no command
            self.label = shlex.join([os.path.basename(a) if os.sep in a else a for a in self.argv])
            if len(self.label) > 80:
                self.label = self.label[:77] + "..."
        if not isinstance(timeout, int | float) or not timeout > 0:
            raise ValueError("mcp_tools: timeout must be a number of seconds > 0")
        self.timeout = float(timeout)
        self.env = dict(env or {})
        self.name: str | None = None  # the server's own name, from the handshake
        self.starts = 0
        self.tools: list[Any] = []  # mcp.types.Tool of the last listing
        self._lock = threading.RLock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._session: Any = None
        self._runner: concurrent.futures.Future[Any] | None = None
        self._stop: asyncio.Event | None = None
        self._alive = False
        self._inflight: dict[concurrent.futures.Future[Any], str] = {}
        self._protocol_error: str | None = None
        self._errlog: Any = None
        self._starting: concurrent.futures.Future[Any] | None = None  # the handshake under way
        _OPEN.add(self)

    # naming ----------------------------------------------------------------

    @property
    def title(self) -> str:
        """How messages name this server: its own name and where it runs."""
        return f"'{self.name}' ({self.label})" if self.name else f"({self.label})"

    def _stderr_text(self, size: int) -> str:
        """The last ``size`` bytes the server wrote to stderr (stripped)."""
        f = self._errlog
        if f is None:
            return ""
        try:
            f.flush()
            end = f.seek(0, os.SEEK_END)
            f.seek(max(0, end - size))
            return str(f.read().decode("utf-8", "replace").strip())
        except (OSError, ValueError):
            return ""

    def _stderr_tail(self) -> str:
        """The server's last words on stderr, on one line (for a tool result the model reads)."""
        tail = self._stderr_text(600)
        return f" Its last words on stderr: {tail[-400:]!r}." if tail else ""

    def _stderr_lines(self, n: int = _STDERR_LINES) -> str:
        """The server's last ``n`` lines on stderr, indented, for an error a person reads (a
        start failure: usually the server's own traceback or usage message)."""
        if self._errlog is None:  # not a stdio child: no stderr of its own to show
            return ""
        lines = [ln.rstrip() for ln in self._stderr_text(8192).splitlines() if ln.strip()][-n:]
        if not lines:
            return " It wrote nothing to stderr."
        shown = "\n".join(f"    | {ln[:300]}" for ln in lines)
        return f" Its last lines on stderr:\n{shown}"

    # the loop --------------------------------------------------------------

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None or not self._loop.is_running():
            loop = asyncio.new_event_loop()
            started = threading.Event()

            def run() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(started.set)
                loop.run_forever()

            self._thread = threading.Thread(target=run, name=f"mcp:{self.label[:40]}", daemon=True)
            self._thread.start()
            started.wait()
            self._loop = loop
        return self._loop

    async def _hold(self, ready: concurrent.futures.Future[Any]) -> None:
        """Open the transport and session, hand back the listing, and keep them open until told."""
        from contextlib import AsyncExitStack

        from mcp import ClientSession

        self._stop = asyncio.Event()
        try:
            async with AsyncExitStack() as stack:
                if self.url is not None:
                    from mcp.client.streamable_http import streamable_http_client

                    streams = await stack.enter_async_context(streamable_http_client(self.url))
                else:
                    from mcp import StdioServerParameters, stdio_client

                    from ..transport.child_process import dies_with_this_process

                    # through the launcher: the server dies with this process, even on SIGKILL
                    argv = dies_with_this_process(self.argv, self.env or None)
                    params = StdioServerParameters(command=argv[0], args=argv[1:], env=self.env or None)
                    streams = await stack.enter_async_context(stdio_client(params, errlog=self._errlog))
                session = await stack.enter_async_context(
                    ClientSession(
                        streams[0],
                        streams[1],
                        read_timeout_seconds=self.timeout,
                        message_handler=self._on_message,
                    )
                )
                init = await session.initialize()
                tools = await self._list(session)
                self._session = session
                self._alive = True
                ready.set_result((init, tools))
                await self._stop.wait()
        except BaseException as exc:  # handed to the caller waiting on `ready`
            if not ready.done():
                ready.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
        finally:
            self._alive = False
            self._session = None

    @staticmethod
    async def _list(session: Any) -> list[Any]:
        tools: list[Any] = []
        cursor = None
        for _ in range(100):  # a server that pages forever is cut off
            from mcp.types import PaginatedRequestParams

            page = await session.list_tools(
                params=PaginatedRequestParams(cursor=cursor) if cursor else None
            )
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    async def _on_message(self, message: Any) -> None:
        """The transport hands over what it could not parse: fail the calls waiting on it now."""
        if isinstance(message, Exception):
            self._protocol_error = f"it sent a message that is not valid JSON-RPC ({_unparsed(message)})"
            starting = self._starting
            if starting is not None and not starting.done():  # fail the handshake now, not at its timeout
                try:
                    starting.set_exception(MCPServerError(self._protocol_error))
                except concurrent.futures.InvalidStateError:
                    pass
            for fut in list(self._inflight):
                self._inflight[fut] = "protocol"
                fut.cancel()

    # starting and stopping -------------------------------------------------

    def start(self) -> list[Any]:
        """Start the server (or connect), shake hands, list its tools; raise MCPServerError."""
        with self._lock:
            if self._alive:
                return self.tools
            self._teardown()
            loop = self._ensure_loop()
            if self.url is None and self._errlog is None:
                self._errlog = tempfile.TemporaryFile()
            self._protocol_error = None
            ready: concurrent.futures.Future[Any] = concurrent.futures.Future()
            self._starting = ready
            self._runner = asyncio.run_coroutine_threadsafe(self._hold(ready), loop)
            try:
                init, tools = ready.result(self.timeout + _GRACE)
            except concurrent.futures.TimeoutError:
                self._teardown()
                raise MCPServerError(
                    f"MCP server {self.title} did not finish the handshake within {self.timeout:g} s. "
                    "Check that the command starts an MCP server (over stdio it must write only "
                    "JSON-RPC to stdout), or raise timeout=." + self._stderr_lines()
                ) from None
            except Exception as exc:
                self._teardown()
                raise MCPServerError(self._start_failure(exc)) from None
            self.starts += 1
            info = getattr(init, "server_info", None)
            self.name = getattr(info, "name", None) or self.name
            self.tools = list(tools)
            return self.tools

    def _start_failure(self, exc: Exception) -> str:
        from mcp import MCPError

        exc = _leaf(exc)
        what = f"{type(exc).__name__}: {exc}".strip()
        if isinstance(exc, OSError):
            return (
                f"MCP server {self.title} could not be started ({what}). Check the command and "
                "that the program is installed."
            )
        if self._protocol_error:
            return (
                f"MCP server {self.title}: {self._protocol_error} during the handshake. Over stdio "
                "a server must write only JSON-RPC to stdout (its logs go to stderr); it is not "
                "usable as an MCP server." + self._stderr_lines()
            )
        if isinstance(exc, MCPError) and exc.code == -32001:
            return (
                f"MCP server {self.title} did not answer the handshake within {self.timeout:g} s. "
                "Check that the command starts an MCP server (over stdio it must write only "
                "JSON-RPC to stdout), or raise timeout=." + self._stderr_lines()
            )
        if isinstance(exc, MCPError):
            return (
                f"MCP server {self.title} exited or closed the connection during the handshake "
                f"({what}). Check that the command runs on its own in a terminal." + self._stderr_lines()
            )
        return (
            f"MCP server {self.title} could not be used ({what[:300]}). Check the command or URL "
            "and that it speaks MCP." + self._stderr_lines()
        )

    def _teardown(self) -> None:
        """End the session and transport (and so the child process), bounded in time."""
        runner, loop, stop = self._runner, self._loop, self._stop
        self._runner = None
        self._alive = False
        if runner is None or loop is None or not loop.is_running():
            return
        if stop is not None:
            loop.call_soon_threadsafe(stop.set)
        try:
            runner.result(8.0)  # the SDK closes stdin, waits, then kills the process tree
        except BaseException:
            runner.cancel()
            try:
                runner.result(4.0)
            except BaseException:
                pass

    def close(self) -> None:
        """Stop the server (a child process ends) and the background loop. Idempotent."""
        with self._lock:
            self._teardown()
            loop, self._loop = self._loop, None
            if loop is not None and loop.is_running():
                loop.call_soon_threadsafe(loop.stop)
                if self._thread is not None and self._thread is not threading.current_thread():
                    self._thread.join(5.0)
            if self._errlog is not None:
                try:
                    self._errlog.close()
                except OSError:
                    pass
                self._errlog = None
            _OPEN.discard(self)

    @property
    def alive(self) -> bool:
        return self._alive

    # calling ---------------------------------------------------------------

    def call(self, name: str, arguments: dict[str, Any], timeout: float | None = None) -> Any:
        """``tools/call``; returns the CallToolResult or a ``CallFailure``, never raises for the
        server's faults (MCPServerError only when a dead server cannot be started again)."""
        limit = self.timeout if timeout is None else float(timeout)
        with self._lock:
            if not self._alive:
                self.start()
            session, loop = self._session, self._loop
        assert loop is not None
        fut = asyncio.run_coroutine_threadsafe(self._call(session, name, arguments, limit), loop)
        self._inflight[fut] = "stopped"
        if self._protocol_error is not None:  # the bad line came before this call was registered
            self._inflight[fut] = "protocol"
            fut.cancel()
        try:
            return fut.result(limit + _GRACE)
        except concurrent.futures.CancelledError:
            why = self._inflight.get(fut, "stopped")
            if why == "protocol":
                self._mark_dead()
                return CallFailure("protocol", self._protocol_error or "it sent an unreadable message")
            return CallFailure("stopped", "the request was cancelled (Stop)")
        except concurrent.futures.TimeoutError:
            fut.cancel()
            return CallFailure("timeout", f"no answer within {limit:g} s; the request was cancelled")
        except Exception as exc:
            return self._failure(exc, limit)
        except BaseException:  # Stop or the tool's timeout lands in this wait: cancel it on the wire
            fut.cancel()
            raise
        finally:
            self._inflight.pop(fut, None)

    async def _call(self, session: Any, name: str, arguments: dict[str, Any], limit: float) -> Any:
        return await session.call_tool(name, arguments, read_timeout_seconds=limit)

    def _failure(self, exc: Exception, limit: float) -> CallFailure:
        from mcp import MCPError

        exc = _leaf(exc)
        if isinstance(exc, MCPError):
            if exc.code == -32000:  # CONNECTION_CLOSED
                self._mark_dead()
                return CallFailure("gone", self._stderr_tail().strip())
            if exc.code == -32001:  # REQUEST_TIMEOUT
                return CallFailure("timeout", f"no answer within {limit:g} s; the request was cancelled")
            return CallFailure("error", f"it answered with JSON-RPC error {exc.code}: {exc.message[:500]}")
        if self._protocol_error:
            self._mark_dead()
            return CallFailure("protocol", self._protocol_error)
        self._mark_dead()  # an answer of the wrong shape: start afresh next time
        return CallFailure("protocol", f"its answer could not be read ({type(exc).__name__}: {str(exc)[:300]})")

    def _mark_dead(self) -> None:
        self._alive = False

    def cancel_calls(self) -> None:
        """Stop: cancel the calls in flight (the SDK sends ``notifications/cancelled`` for each)."""
        for fut in list(self._inflight):
            fut.cancel()  # thread-safe: the loop cancels the task, which sends the notification

    # with ------------------------------------------------------------------

    def __enter__(self) -> ServerConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "running" if self._alive else "stopped"
        return f"<MCP server {self.title}: {state}, {len(self.tools)} tools>"


_OPEN: weakref.WeakSet[ServerConnection] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    """Interpreter exit (and so a kernel shutdown): no server process is left behind."""
    for conn in list(_OPEN):
        try:
            conn.close()
        except Exception:
            pass

