"""The call options every wire takes, and the table each wire keeps of where they go.

A call's options have one name on every wire (``CallOptions``, spelled as the vendor SDKs spell
them). Each wire module keeps one ``OPTIONS`` table of ``Option`` rows: a row says where its
option sits in that wire's request body and how the value is spelled there, and both directions
read the same row, so building a request and importing a recorded one can never disagree.
Adding an option is a ``CallOptions`` field and one row per wire (a row may refuse the option
with the wire's reason).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from ..core.errors import ErrorKind, ProviderError
from ..core.structured import JSON_FORMS, JSON_WITH_TOOLS, JsonFormat, json_format

__all__ = [
    "CallOptions",
    "EFFORTS",
    "SERVICE_TIERS",
    "Option",
    "OptionTable",
    "merge_body",
    "refused",
    "left_out",
]

EFFORTS = ("none", "low", "medium", "high", "max")
SERVICE_TIERS = ("auto", "default", "flex", "priority", "scale")


@dataclass(slots=True, kw_only=True)
class CallOptions:
    """Per-call options, with the same names on every wire (as the vendor SDKs spell them);
    keyword-only, so adding an option never shifts another."""

    session_id: str | None = None
    model: str | None = None
    effort: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: list[str] | str | None = None  # one stop string is taken as a list of one
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    extra_body: dict[str, Any] | None = None
    # structured output: a schema dict, an object with model_json_schema(), or "object"
    json: JsonFormat | dict[str, Any] | str | Any = None
    json_with_tools: str | None = None  # "response_format" | "prompt" when tools are offered
    avoid_json_form: str | None = None  # a JSON form not to use (a reply in it did not fit)
    service_tier: str | None = None  # Chat and Responses only; refused on Anthropic and Gemini
    strip_reasoning: bool | None = None  # None: strip replayed reasoning when effort is "none"
    on_activity: Callable[[], None] | None = None  # called on the headers and every body read

    def __post_init__(self) -> None:
        if self.effort is not None and self.effort not in EFFORTS:
            raise ValueError(f"effort must be one of {EFFORTS} or None, got {self.effort!r}")
        self.json = json_format(self.json)
        if self.json_with_tools is not None and self.json_with_tools not in JSON_WITH_TOOLS:
            raise ValueError(f"json_with_tools must be one of {JSON_WITH_TOOLS} or None, got {self.json_with_tools!r}")
        if self.avoid_json_form is not None and self.avoid_json_form not in JSON_FORMS:
            raise ValueError(f"avoid_json_form must be one of {JSON_FORMS} or None, got {self.avoid_json_form!r}")
        if self.service_tier is not None and self.service_tier not in SERVICE_TIERS:
            raise ValueError(f"service_tier must be one of {SERVICE_TIERS} or None, got {self.service_tier!r}")
        if self.on_activity is not None and not callable(self.on_activity):
            raise TypeError("on_activity must be a callable taking no arguments")
        if isinstance(self.stop, str):
            self.stop = [self.stop]
        if isinstance(self.tool_choice, str) and self.tool_choice not in ("auto", "none", "required"):
            self.tool_choice = {"name": self.tool_choice}

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))


# --------------------------------------------------------------------------- the table


def _as_is(value: Any, *_: Any) -> Any:
    return value


Send = Callable[[Any, Any], Any]  # (canonical value, the request's plan) -> body value, None: left out
Back = Callable[[Any], Any]  # body value -> canonical value, None: not imported
Write = Callable[[dict[str, Any], Any, Any], None]  # (body, canonical value, plan): several fields
Read = Callable[[Mapping[str, Any]], Any]  # body -> canonical value or None


@dataclass(frozen=True, slots=True)
class Option:
    """One option on one wire.

    ``path`` is where the value sits in the body (dotted: ``generationConfig.topP``), ``send``
    spells a canonical value for the wire (None leaves it out: an option the request does not
    take in this case) and ``back`` reads a recorded value into canonical form (None: not
    imported); ``also`` are paths read back when ``path`` holds nothing (older field names). An
    option that fills several fields, or none the same way twice, gives ``write`` and ``read``
    instead (``always``: called even when the option is not set). The plan is the wire's own object of what the request was resolved to (model,
    tools, the server's ways); only that wire's rows read it.
    """

    name: str  # the CallOptions field
    path: str = ""
    send: Send = _as_is
    back: Back = _as_is
    also: tuple[str, ...] = ()
    write: Write | None = None
    read: Read | None = None
    always: bool = False  # written even when the option is not set (its absence says something)
    refuse: Callable[[Any, Any], str | None] | None = None  # (value, plan) -> why this wire cannot take it


def refused(name: str, why: Callable[[Any], str], *, when: Callable[[Any, Any], bool] | None = None) -> Option:
    """A row for an option this wire does not take: asking for it (``when`` it applies) is an
    INVALID error worded by ``why(plan)``, before anything is converted; a recording never
    holds it."""

    def refuse(value: Any, plan: Any) -> str | None:
        return why(plan) if when is None or when(value, plan) else None

    return Option(name, write=lambda body, value, plan: None, read=lambda body: None, refuse=refuse)


def left_out(name: str) -> Option:
    """A row for an option this wire has no field for and leaves out, as it always has (the
    comment beside the row says why)."""
    return Option(name, write=lambda body, value, plan: None, read=lambda body: None)


def _get(body: Mapping[str, Any], path: str, key: Callable[[Mapping[str, Any], str], Any]) -> Any:
    node: Any = body
    for part in path.split("."):
        if not isinstance(node, Mapping):
            return None
        node = key(node, part)
        if node is None:
            return None
    return node


def _put(body: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    node = body
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value


def plain_key(node: Mapping[str, Any], key: str) -> Any:
    return node.get(key)


@dataclass(frozen=True, slots=True)
class OptionTable:
    """A wire's rows, in the order they fill a body. ``key`` reads one field of a recorded body
    (Gemini's reads either spelling of a name)."""

    rows: tuple[Option, ...]
    key: Callable[[Mapping[str, Any], str], Any] = plain_key

    def check(self, opts: CallOptions, plan: Any) -> None:
        """Refuse what this wire cannot take (a ``refused`` row), before any work is done."""
        for row in self.rows:
            value = getattr(opts, row.name)
            if row.refuse is not None and value is not None:
                why = row.refuse(value, plan)
                if why is not None:
                    raise ProviderError(plan.provider, ErrorKind.INVALID, why)

    def write(self, body: dict[str, Any], opts: CallOptions, plan: Any) -> None:
        """Every option ``opts`` sets, into ``body`` where this wire takes it (``check`` first)."""
        self.check(opts, plan)
        for row in self.rows:
            value = getattr(opts, row.name)
            if value is None and not row.always:
                continue
            if row.write is not None:
                row.write(body, value, plan)
                continue
            sent = row.send(value, plan)
            if sent is not None:
                _put(body, row.path, sent)

    def read(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """The options a recorded ``body`` states, by their canonical names."""
        out: dict[str, Any] = {}
        for row in self.rows:
            if row.read is not None:
                value = row.read(body)
            else:
                value = self.at(body, row.path, *row.also)
                if value is not None:
                    value = row.back(value)
            if value is not None:
                out[row.name] = value
        return out

    def at(self, body: Mapping[str, Any], *paths: str) -> Any:
        """The first of ``paths`` that holds a value in ``body``."""
        for path in paths:
            value = _get(body, path, self.key)
            if value is not None:
                return value
        return None

    def row(self, name: str) -> Option:
        return next(r for r in self.rows if r.name == name)


def merge_body(body: dict[str, Any], extra: dict[str, Any] | None) -> dict[str, Any]:
    """Lay ``extra_body`` over what the wire built: nested objects merge key by key (so
    ``{"generationConfig": {...}}`` adds to Gemini's config instead of erasing max tokens and
    thinking); any other value, lists included, replaces. Neither argument is changed."""
    if not extra:
        return body
    out = dict(body)
    for key, value in extra.items():
        old = out.get(key)
        if isinstance(value, dict) and isinstance(old, dict):
            out[key] = merge_body(old, value)
        else:
            out[key] = value
    return out
