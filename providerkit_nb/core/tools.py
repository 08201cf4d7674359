"""Tools: definitions sent to the model, and running the calls it makes.

``ToolRegistry.run(call)`` always returns a tool message, never raises for anything the model
or the tool did wrong (bad JSON, unknown tool, arguments that break the schema, an exception,
a timeout): the model reads what went wrong and decides, and the loop that saves each message
as it happens keeps going. Only KeyboardInterrupt (and SystemExit) get through, because a
person pressing Stop must always win: the tool runs on the calling thread, so Stop reaches it.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, overload

from .json_input import JsonInputError, read_json
from .messages import ImagePart, ToolCall, ToolMessage, _encode
from .renamed import renamed_keywords

__all__ = ["ToolDefinition", "Tool", "ToolOutput", "ToolResult", "ToolRegistry", "define_tool", "tool"]

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

# what the model is told after a call that failed or was stopped, by whether the tool only reads
# (every tool source says the same: local tools here, MCP tools in mcp/tools.py)
AGAIN_READ_ONLY = "It changes nothing, so it is safe to call again (perhaps with a smaller request)."
AGAIN_MAY_HAVE_RUN = "It may have partly run, so check its effect before calling it again."


@dataclass(slots=True)
class ToolDefinition:
    """What a wire sends to the model: a name, a description, and a JSON object schema."""

    name: str
    description: str
    input_schema: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}


_P = ParamSpec("_P")
_R = TypeVar("_R")


@dataclass(slots=True)
class Tool:
    """A tool the model may call. ``run`` takes the arguments object (a dict).

    ``read_only`` is False unless the tool says so: it decides what the model is told about a
    call that was interrupted (safe to call again, or check its effect first). A tool from
    elsewhere (an MCP server) names it in ``source``, keeps the hints it came with as plain data
    in ``hints`` (for approval and the views) and why it counts as read-only or not in
    ``read_only_reason``; ``stop`` is called when Stop or the timeout lands while it runs (to
    cancel work the tool started outside this process).
    """

    name: str
    description: str
    input_schema: dict[str, Any]
    run: Callable[[dict[str, Any]], Any] = field(repr=False)
    read_only: bool = False
    timeout: float = 60.0
    func: Callable[..., object] | None = field(default=None, repr=False, compare=False)
    source: str = "local"
    hints: dict[str, Any] | None = None
    read_only_reason: str = ""
    stop: Callable[[], None] | None = field(default=None, repr=False, compare=False)

    @property
    def definition(self) -> ToolDefinition:
        return ToolDefinition(self.name, self.description, self.input_schema)

    if not TYPE_CHECKING:  # the 0.x spelling: it works, with a warning; a checker sees read_only

        @property
        def is_read_only(self) -> bool:
            from .renamed import renamed

            renamed("Tool.is_read_only", "Tool.read_only")
            return self.read_only

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """A decorated function stays callable as itself; a defined tool takes its dict."""
        if self.func is not None:
            return self.func(*args, **kwargs)
        return self.run(*args, **kwargs)


@renamed_keywords("define_tool", is_read_only="read_only")
def define_tool(
    name: str,
    description: str,
    input_schema: dict[str, Any],
    run: Callable[[dict[str, Any]], Any],
    *,
    read_only: bool = False,
    timeout: float = 60.0,
) -> Tool:
    """A tool from an explicit JSON object schema; ``run(arguments: dict)`` does the work.

    Set ``read_only=True`` only on a tool that changes nothing.
    """
    return _make(name, description, input_schema, run, read_only, timeout, None)


def _make(
    name: str,
    description: str,
    input_schema: dict[str, Any],
    run: Callable[[dict[str, Any]], Any],
    read_only: bool,
    timeout: float,
    func: Callable[..., object] | None,
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
    return Tool(name, description or "", input_schema, run, bool(read_only), float(timeout), func)


@overload
def tool(fn: Callable[_P, _R], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    timeout: float = 60.0,
) -> Callable[[Callable[_P, _R]], Tool]: ...


def tool(
    fn: Callable[..., object] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    timeout: float = 60.0,
) -> Tool | Callable[[Callable[..., object]], Tool]:
    """Make a tool from a function: its parameters (type hints) are the input schema, its
    docstring the description (``Args:`` or ``:param:`` lines describe the parameters).

    Use as ``@tool`` or ``@tool(read_only=True, timeout=10)``. A parameter with a default is
    optional. The decorated name is a ``Tool`` that can still be called like the function.
    """

    def wrap(f: Callable[..., object]) -> Tool:
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
    "late" (it returned after its timeout, where it could not be stopped), "interrupted" (a
    tool from elsewhere lost its server mid-call).
    """

    message: ToolMessage
    kind: str
    seconds: float = 0.0
    # an exception raised in the tool: its traceback, the tool's own frames only (for a person:
    # the live display and the call's mark show it; the model reads the one-line message)
    traceback: str | None = None

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


TRACEBACK_LIMIT = 20_000  # characters of a tool's traceback kept (the end, where the error is)


def _tool_traceback(error: BaseException) -> str:
    """The traceback of an exception raised in a tool, as Python prints it, without the
    library's frames around the tool (only what the tool's author wrote, and what it called)."""
    import traceback

    from .errors import user_traceback

    text = "".join(traceback.format_exception(type(error), error, user_traceback(error.__traceback__)))
    if len(text) > TRACEBACK_LIMIT:
        text = f"[{len(text) - TRACEBACK_LIMIT} characters cut]\n" + text[-TRACEBACK_LIMIT:]
    return text


def _short(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class ToolRegistry:
    """The tools of a conversation, in a stable order (the order is part of the cached prompt)."""

    @overload
    def __init__(self, tools: Iterable[Tool] = ()) -> None: ...

    @overload
    def __init__(self, tools: Iterable[Tool | Callable[..., object]]) -> None: ...

    def __init__(self, tools: Iterable[Tool | Callable[..., object]] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            self.register(t)

    def register(self, t: Tool | Callable[..., object]) -> Tool:
        """Add a tool (a plain function is turned into one with ``tool``); names are unique."""
        if not isinstance(t, Tool):
            if not callable(t):
                raise TypeError(f"not a tool: {t!r}; use @tool or define_tool")
            t = tool(t)
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
        return t.read_only if t is not None else False

    def check_arguments(self, name: str, arguments: dict[str, Any]) -> list[str]:
        """What is wrong with ``arguments`` under the input schema of the tool ``name``, one
        ``"<path>: <what>"`` per problem (empty: they fit; an unknown tool has no schema to
        break). The same check ``invoke`` makes before a call runs."""
        t = self._tools.get(name)
        if t is None:
            return []
        from .tool_schema import check_value

        return check_value(arguments, t.input_schema)

    def definitions(self, allow: Iterable[str] | None = None) -> list[ToolDefinition]:
        """Definitions in registration order (optionally only the names in ``allow``)."""
        if allow is None:
            return [t.definition for t in self._tools.values()]
        keep = set(allow)
        return [t.definition for t in self._tools.values() if t.name in keep]

    def run(
        self,
        call: ToolCall | dict[str, Any],
        *,
        timeout: float | None = None,
        notify: Callable[[str], None] | None = None,
    ) -> ToolMessage:
        """Run one call and return its tool message; see ``invoke`` for what can go wrong."""
        return self.invoke(call, timeout=timeout, notify=notify).message

    def invoke(
        self,
        call: ToolCall | dict[str, Any],
        *,
        timeout: float | None = None,
        notify: Callable[[str], None] | None = None,
    ) -> ToolResult:
        """Run one call; every failure of the model or the tool becomes the message's content.

        The tool runs on the calling thread, like a plain function call in a cell, so the Stop
        button (KeyboardInterrupt) lands inside it and stops it where it runs. Its timeout (the
        tool's own, or ``timeout``) raises ``ToolTimeout`` inside it too (see ``tool_run``);
        a tool that could not be stopped in time (blocked in C code) and returns anyway gives a
        result of kind "late" that says so, and ``notify`` (if given) hears, from another thread,
        that it is still running and what to do. KeyboardInterrupt and SystemExit propagate.
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
            args = read_json(raw) if raw.strip() else {}
        except JsonInputError as exc:
            where = f" at character {exc.pos}" if exc.pos is not None else ""
            return ToolResult(
                ToolMessage(
                    cid,
                    name,
                    f"Error: the arguments for {name} are not valid JSON ({exc.reason.removeprefix('not valid JSON: ')}{where}). "
                    "The tool did not run. Call it again with the arguments as one "
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
        problems = self.check_arguments(name, args)
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
        return self._execute(t, cid, args, limit, notify)

    @staticmethod
    def _execute(
        t: Tool, cid: str, args: dict[str, Any], limit: float, notify: Callable[[str], None] | None
    ) -> ToolResult:
        from .tool_run import ToolTimeout, run_here

        started = time.monotonic()
        try:
            outcome = run_here(lambda: t.run(args), limit, t.name, notify)
        except (KeyboardInterrupt, ToolTimeout) as stopped:
            if t.stop is not None:
                try:
                    t.stop()  # cancel the work where it runs; Stop itself must still win
                except Exception:
                    pass
            if isinstance(stopped, KeyboardInterrupt):
                raise
            after = " " + (AGAIN_READ_ONLY if t.read_only else AGAIN_MAY_HAVE_RUN)
            return ToolResult(
                ToolMessage(
                    cid,
                    t.name,
                    f"Error: {t.name} did not finish within {limit:g} s, so it was stopped where it "
                    f"was running.{after}",
                ),
                "timeout",
                time.monotonic() - started,
            )
        except Exception as error:
            after = " Check the arguments, or try another way." if t.read_only else " " + AGAIN_MAY_HAVE_RUN
            return ToolResult(
                ToolMessage(cid, t.name, f"Error: {t.name} failed with {_short(error)}.{after}"),
                "failed",
                time.monotonic() - started,
                _tool_traceback(error),
            )
        seconds = time.monotonic() - started
        value = outcome.value
        text = value.text if isinstance(value, ToolOutput) else _result_text(value)
        if outcome.late:
            return ToolResult(
                ToolMessage(
                    cid,
                    t.name,
                    f"[{t.name} finished late: it ran {seconds:.1f} s, past its timeout of "
                    f"{limit:g} s, where it could not be stopped. Its result:]\n{text}",
                ),
                "late",
                seconds,
            )
        if isinstance(value, ToolOutput):
            kind = value.kind if value.kind in ("failed", "timeout", "interrupted") else "ok"
            return ToolResult(ToolMessage(cid, t.name, value.text, value.images or None), kind, seconds)
        return ToolResult(ToolMessage(cid, t.name, text), "ok", seconds)
