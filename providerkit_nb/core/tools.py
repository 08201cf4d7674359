"""Tools: definitions sent to the model, and running the calls it makes.

``ToolRegistry.run(call)`` always returns a tool message, never raises for anything the model
or the tool did wrong (bad JSON, unknown tool, arguments that break the schema, an exception,
a timeout): the model reads what went wrong and decides, and the loop that saves each message
as it happens keeps going. Only KeyboardInterrupt (and SystemExit) get through, because a
person pressing Stop must always win.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from .messages import ImagePart, ToolCall, ToolMessage, _encode

__all__ = ["ToolDefinition", "Tool", "ToolOutput", "ToolResult", "ToolRegistry", "define_tool", "tool"]

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(slots=True)
class ToolDefinition:
    """What a wire sends to the model: a name, a description, and a JSON object schema."""

    name: str
    description: str
    input_schema: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}


@dataclass(slots=True)
class Tool:
    """A tool the model may call. ``run`` takes the arguments object (a dict).

    ``is_read_only`` is False unless the tool says so: it decides what the model is told about a
    call that was interrupted (safe to call again, or check its effect first). A tool from
    elsewhere (an MCP server) names it in ``source``, keeps the hints it came with as plain data
    in ``hints`` (for approval and the views) and why it counts as read-only or not in
    ``read_only_reason``; ``stop`` is called when Stop arrives while it runs (to cancel work
    the tool started outside this process).
    """

    name: str
    description: str
    input_schema: dict[str, Any]
    run: Callable[[dict[str, Any]], Any] = field(repr=False)
    is_read_only: bool = False
    timeout: float = 60.0
    func: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    source: str = "local"
    hints: dict[str, Any] | None = None
    read_only_reason: str = ""
    stop: Callable[[], None] | None = field(default=None, repr=False, compare=False)

    @property
    def definition(self) -> ToolDefinition:
        return ToolDefinition(self.name, self.description, self.input_schema)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """A decorated function stays callable as itself; a defined tool takes its dict."""
        if self.func is not None:
            return self.func(*args, **kwargs)
        return self.run(*args, **kwargs)


def define_tool(
    name: str,
    description: str,
    input_schema: dict[str, Any],
    run: Callable[[dict[str, Any]], Any],
    is_read_only: bool = False,
    timeout: float = 60.0,
) -> Tool:
    """A tool from an explicit JSON object schema; ``run(arguments: dict)`` does the work.

    Set ``is_read_only=True`` only on a tool that changes nothing.
    """
    return _make(name, description, input_schema, run, is_read_only, timeout, None)


def _make(
    name: str,
    description: str,
    input_schema: dict[str, Any],
    run: Callable[[dict[str, Any]], Any],
    is_read_only: bool,
    timeout: float,
    func: Callable[..., Any] | None,
) -> Tool:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(
            f"tool name {name!r} is not accepted by every provider: use 1-64 letters, digits, "
            "'_' or '-'"
        )
    if not isinstance(input_schema, dict) or input_schema.get("type", "object") != "object":
        raise ValueError(
            f"tool {name!r}: input_schema must be a JSON object schema ({{'type': 'object', ...}})"
        )
    if not callable(run):
        raise TypeError(f"tool {name!r}: run must be callable")
    if not isinstance(timeout, int | float) or not math.isfinite(timeout) or timeout <= 0:
        raise ValueError(f"tool {name!r}: timeout must be a finite number of seconds > 0")
    return Tool(name, description or "", input_schema, run, bool(is_read_only), float(timeout), func)


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    timeout: float = 60.0,
) -> Any:
    """Make a tool from a function: its parameters (type hints) are the input schema, its
    docstring the description (``Args:`` or ``:param:`` lines describe the parameters).

    Use as ``@tool`` or ``@tool(read_only=True, timeout=10)``. A parameter with a default is
    optional. The decorated name is a ``Tool`` that can still be called like the function.
    """

    def wrap(f: Callable[..., Any]) -> Tool:
        from .tool_schema import enum_parameters, schema_from_function

        doc, schema = schema_from_function(f)
        enums = enum_parameters(f)

        def run(arguments: dict[str, Any]) -> Any:
            for key, cls in enums.items():
                if arguments.get(key) is not None:
                    arguments = {**arguments, key: cls(arguments[key])}
            return f(**arguments)

        return _make(
            name or f.__name__,
            description if description is not None else doc,
            schema,
            run,
            read_only,
            timeout,
            f,
        )

    return wrap if fn is None else wrap(fn)


# --------------------------------------------------------------------------- running


@dataclass(slots=True)
class ToolOutput:
    """What a tool returns when a value is not enough: text, images, and how it went.

    ``kind`` is "ok", "failed" (the tool itself says it failed), "timeout" or "interrupted" (the work was
    cut off outside this process, e.g. the server running it exited); the text is what the
    model reads either way.
    """

    text: str
    images: list[ImagePart] | None = None
    kind: str = "ok"


@dataclass(slots=True)
class ToolResult:
    """How a call went: the message to save, plus what happened (for logs and views).

    ``kind`` is "ok", "unknown_tool", "invalid_json", "invalid_input", "failed", "timeout" or
    "interrupted".
    """

    message: ToolMessage
    kind: str
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.kind == "ok"


def _result_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return "(no output)"
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, dict | list | tuple | bool | int | float):
        try:
            return _encode(value)
        except (TypeError, ValueError):
            return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return str(value)


def _short(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class ToolRegistry:
    """The tools of a conversation, in a stable order (the order is part of the cached prompt)."""

    def __init__(self, tools: Iterable[Tool | Callable[..., Any]] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            self.register(t)

    def register(self, t: Tool | Callable[..., Any]) -> Tool:
        """Add a tool (a plain function is turned into one with ``tool``); names are unique."""
        if not isinstance(t, Tool):
            if not callable(t):
                raise TypeError(f"not a tool: {t!r}; use @tool or define_tool")
            t = cast(Tool, tool(t))
        if t.name in self._tools:
            raise ValueError(f"a tool named {t.name!r} is already registered")
        self._tools[t.name] = t
        return t

    def get(self, name: str) -> Tool:
        try:
            return self._tools[name]
        except KeyError:
            raise KeyError(
                f"no tool named {name!r}; registered tools: {', '.join(self._tools) or '(none)'}"
            ) from None

    def has(self, name: str) -> bool:
        return name in self._tools

    __contains__ = has

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def names(self) -> list[str]:
        return list(self._tools)

    def is_read_only(self, name: str) -> bool:
        """For ``repair_history(is_read_only=...)``: an unknown tool counts as not read-only."""
        t = self._tools.get(name)
        return t.is_read_only if t is not None else False

    def definitions(self, allow: Iterable[str] | None = None) -> list[ToolDefinition]:
        """Definitions in registration order (optionally only the names in ``allow``)."""
        if allow is None:
            return [t.definition for t in self._tools.values()]
        keep = set(allow)
        return [t.definition for t in self._tools.values() if t.name in keep]

    def run(self, call: ToolCall | dict[str, Any], *, timeout: float | None = None) -> ToolMessage:
        """Run one call and return its tool message; see ``invoke`` for what can go wrong."""
        return self.invoke(call, timeout=timeout).message

    def invoke(self, call: ToolCall | dict[str, Any], *, timeout: float | None = None) -> ToolResult:
        """Run one call; every failure of the model or the tool becomes the message's content.

        The tool runs in a worker thread so its timeout (the tool's own, or ``timeout``) can
        be enforced. A timed-out tool cannot be killed: its thread is left to finish in the
        background and whatever it returns is discarded. KeyboardInterrupt while waiting, or
        raised by the tool, propagates.
        """
        if isinstance(call, dict):
            call = ToolCall.from_dict(call)
        name, cid = call.name, call.id
        t = self._tools.get(name)
        if t is None:
            available = ", ".join(self._tools) or "(none)"
            return ToolResult(
                ToolMessage(
                    cid,
                    name,
                    f"Error: there is no tool named {name!r}. Available tools: {available}. "
                    "Call one of those, or answer without a tool.",
                ),
                "unknown_tool",
            )
        raw = call.arguments
        try:
            args = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as exc:
            return ToolResult(
                ToolMessage(
                    cid,
                    name,
                    f"Error: the arguments for {name} are not valid JSON ({exc.msg} at character "
                    f"{exc.pos}). The tool did not run. Call it again with the arguments as one "
                    "JSON object that matches its schema.",
                ),
                "invalid_json",
            )
        if not isinstance(args, dict):
            return ToolResult(
                ToolMessage(
                    cid,
                    name,
                    f"Error: the arguments for {name} must be a JSON object, not "
                    f"{type(args).__name__}. The tool did not run. Call it again with a JSON "
                    "object that matches its schema.",
                ),
                "invalid_json",
            )
        from .tool_schema import check_value

        problems = check_value(args, t.input_schema)
        if problems:
            return ToolResult(
                ToolMessage(
                    cid,
                    name,
                    f"Error: invalid arguments for {name}: {'; '.join(problems)}. The tool did not "
                    "run. Fix the arguments and call it again.",
                ),
                "invalid_input",
            )
        limit = t.timeout if timeout is None else timeout
        if not math.isfinite(limit) or limit <= 0:
            raise ValueError("timeout must be a finite number of seconds > 0")
        return self._execute(t, cid, args, limit)

    @staticmethod
    def _execute(t: Tool, cid: str, args: dict[str, Any], limit: float) -> ToolResult:
        import contextvars
        import threading  # here, not at the top: ``import providerkit_nb`` stays light

        box: dict[str, Any] = {}
        done = threading.Event()

        def work() -> None:
            try:
                box["value"] = t.run(args)
            except BaseException as exc:  # handed to the waiting thread, which decides
                box["error"] = exc
            finally:
                done.set()

        ctx = contextvars.copy_context()
        started = time.monotonic()
        worker = threading.Thread(target=ctx.run, args=(work,), name=f"tool:{t.name}", daemon=True)
        worker.start()
        try:
            finished = done.wait(limit)
        except KeyboardInterrupt:
            if t.stop is not None:
                try:
                    t.stop()  # cancel the work where it runs; Stop itself must still win
                except Exception:
                    pass
            raise
        if not finished:
            after = (
                " It changes nothing, so it is safe to call again (perhaps with a smaller request)."
                if t.is_read_only
                else " It may still be running or have partly run, so check its effect before "
                "calling it again."
            )
            return ToolResult(
                ToolMessage(
                    cid,
                    t.name,
                    f"Error: {t.name} did not finish within {limit:g} s, so it was abandoned and "
                    f"its result will be discarded.{after}",
                ),
                "timeout",
                time.monotonic() - started,
            )
        seconds = time.monotonic() - started
        error = box.get("error")
        if error is not None:
            if not isinstance(error, Exception):
                raise error  # KeyboardInterrupt, SystemExit: never turned into a message
            after = (
                " Check the arguments, or try another way."
                if t.is_read_only
                else " It may have partly run, so check its effect before calling it again."
            )
            return ToolResult(
                ToolMessage(cid, t.name, f"Error: {t.name} failed with {_short(error)}.{after}"),
                "failed",
                seconds,
            )
        value = box.get("value")
        if isinstance(value, ToolOutput):
            kind = value.kind if value.kind in ("failed", "timeout", "interrupted") else "ok"
            return ToolResult(ToolMessage(cid, t.name, value.text, value.images or None), kind, seconds)
        return ToolResult(ToolMessage(cid, t.name, _result_text(value)), "ok", seconds)
