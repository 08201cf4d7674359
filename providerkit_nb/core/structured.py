"""Structured output: what a caller asks for with ``json=``, the prompt that carries a schema
where a wire cannot enforce it, and reading a JSON answer back out of a model's text.

``json=`` takes a JSON schema (a dict), any object with ``model_json_schema()`` (a pydantic
model, found by duck typing: the package never imports pydantic), or ``"object"`` for any JSON
object. Wires read the normalised :class:`JsonFormat`; only they know their field names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from .html import preview
from .tool_schema import check_value

if TYPE_CHECKING:
    from .turn import Turn

_T = TypeVar("_T")

__all__ = [
    "JSON_WITH_TOOLS",
    "JSON_FORMS",
    "JsonAnswer",
    "JsonFormat",
    "JsonReply",
    "json_format",
    "is_strict_schema",
    "JsonRequest",
    "json_request",
    "schema_prompt",
    "parse_json_answer",
    "read_answer",
]

JSON_WITH_TOOLS = ("response_format", "prompt")
# How an OpenAI wire can ask for JSON: OpenAI's json_schema; JSON mode with the schema inside it
# (llama.cpp and llama-cpp-python enforce that one) or without; or the schema in the prompt only.
JSON_FORMS = ("json_schema", "json_object_schema", "json_object", "prompt")

_PROMPT_HEAD = "Respond with a single JSON object matching this schema. No prose, no code fence."
_PROMPT_ANY = "Respond with a single JSON object. No prose, no code fence."
_PROMPT_NEWLINES = "Write a line break inside a string value as \\n. A real line break there is invalid JSON."
_NAME = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class JsonFormat:
    """What ``json=`` asked for. ``schema`` None means any JSON object; ``strict`` None means
    "strict when the schema allows it" (see :func:`is_strict_schema`); ``model`` is the object
    the answer is validated into, when one with ``model_validate`` was given."""

    name: str = "answer"
    schema: dict[str, Any] | None = None
    strict: bool | None = None
    model: Any = None

    @property
    def is_strict(self) -> bool:
        if self.schema is None:
            return False
        return self.strict if self.strict is not None else is_strict_schema(self.schema)

    @property
    def prompt(self) -> str:
        """The schema as an instruction, for wires (or tool turns) where it rides in the prompt."""
        if self.schema is None:
            return _PROMPT_ANY + "\n" + _PROMPT_NEWLINES
        return schema_prompt(self.schema)


def json_format(value: Any, *, name: str | None = None, strict: bool | None = None) -> JsonFormat | None:
    """Normalise a ``json=`` value; None stays None. Raises ValueError on anything else."""
    if value is None or isinstance(value, JsonFormat):
        return value
    if isinstance(value, str):
        if value != "object":
            raise ValueError(f"json= takes a schema dict, a model class or 'object'; got {value!r}")
        return JsonFormat(name or "answer", None, strict)
    if isinstance(value, dict):
        if value.get("type") == "json_schema" and isinstance(value.get("json_schema"), dict):
            inner = value["json_schema"]  # an OpenAI response_format, given as is
            return JsonFormat(
                _clean_name(name or inner.get("name")), inner.get("schema") or None,
                strict if strict is not None else inner.get("strict"),
            )
        return JsonFormat(_clean_name(name or value.get("title")), dict(value), strict)
    schema_of = getattr(value, "model_json_schema", None)
    if callable(schema_of):
        schema = schema_of()
        if not isinstance(schema, dict):
            raise ValueError(f"json=: {value!r}.model_json_schema() did not return a dict")
        model = value if callable(getattr(value, "model_validate", None)) else None
        return JsonFormat(_clean_name(name or getattr(value, "__name__", None) or schema.get("title")), schema, strict, model)
    raise ValueError(
        f"json= takes a JSON schema dict, an object with model_json_schema() or 'object'; got {type(value).__name__}"
    )


def _clean_name(name: Any) -> str:
    """OpenAI wants ^[a-zA-Z0-9_-]{1,64}$ for a schema name."""
    text = _NAME.sub("_", str(name or "")).strip("_")[:64]
    return text or "answer"


def is_strict_schema(node: Any) -> bool:
    """Can OpenAI enforce this schema in strict mode? Every object, a free-form one included,
    needs ``additionalProperties: false`` and every property required, all the way down;
    ``$ref`` and ``allOf`` are not taken. The one rule for ``json=`` and for tools on every
    OpenAI wire: stating ``strict`` truthfully keeps optional arguments optional."""
    if not isinstance(node, dict) or "$ref" in node or "allOf" in node:
        return False
    for key in ("anyOf", "oneOf"):
        if key in node:
            branches = node[key]
            return isinstance(branches, list) and all(is_strict_schema(b) for b in branches)
    items = node.get("items")
    if items is not None and not is_strict_schema(items):
        return False
    kind = node.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    props = node.get("properties")
    if not isinstance(props, dict):
        if "properties" in node:
            return False
        props = {}
    if "object" not in kinds and not props:
        return True  # a leaf
    if node.get("additionalProperties") is not False:
        return False
    required = node.get("required", [])
    if not isinstance(required, list) or set(required) != set(props):
        return False
    return all(is_strict_schema(p) for p in props.values())


@dataclass(frozen=True, slots=True)
class JsonRequest:
    """How one call asks an OpenAI wire for JSON: ``format`` is "json_schema", "json_object"
    or None (nothing in the request's format field), ``prompt`` the instruction appended after
    the history, or None; ``schema_inside`` puts the schema in the json_object format field too
    (where llama.cpp's and llama-cpp-python's servers read it). JSON mode (json_object) needs the
    word JSON in what the model reads, so it always comes with the prompt."""

    format: str | None
    prompt: str | None
    schema_inside: bool = False


def json_request(
    fmt: JsonFormat, *, enforce_schema: bool, prompt_only: bool = False, form: str | None = None
) -> JsonRequest:
    """The one decision both OpenAI wires make for ``json=``: the schema enforced by the server
    when it can take one (``enforce_schema``) and there is a schema; else JSON mode plus the
    instruction; ``prompt_only`` (tools with ``json_with_tools="prompt"``) the instruction alone.
    ``form`` (one of ``JSON_FORMS``) names the form outright, for a wire that negotiates it."""
    if prompt_only or form == "prompt":
        return JsonRequest(None, fmt.prompt)
    if form is not None:
        if form not in JSON_FORMS:
            raise ValueError(f"json form must be one of {JSON_FORMS}, got {form!r}")
        if form == "json_schema" and fmt.schema is not None:
            return JsonRequest("json_schema", None)
        return JsonRequest("json_object", fmt.prompt, schema_inside=form == "json_object_schema" and fmt.schema is not None)
    if enforce_schema and fmt.schema is not None:
        return JsonRequest("json_schema", None)
    return JsonRequest("json_object", fmt.prompt)


def schema_prompt(schema: dict[str, Any]) -> str:
    return _PROMPT_HEAD + "\n" + _PROMPT_NEWLINES + "\n" + json.dumps(schema, ensure_ascii=False, separators=(",", ":"))


# --------------------------------------------------------------------------- reading answers


@dataclass(frozen=True, slots=True)
class JsonAnswer:
    """A JSON answer read from a model's text: ``value`` when ``error`` is None; otherwise
    ``error`` says what could not be parsed (and ``value`` is None). ``text`` is what was read."""

    value: Any
    error: str | None
    text: str

    @property
    def ok(self) -> bool:
        return self.error is None


_FENCE = re.compile(r"^[ \t]*```[ \t]*([^\n`]*)\n(.*?)(?:^[ \t]*```|\Z)", re.MULTILINE | re.DOTALL)


def _balanced(text: str) -> str | None:
    """From the first ``{`` or ``[`` to its matching close (string contents and escapes
    skipped); None when there is no bracket; the rest of the text when it never closes."""
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return None
    start = min(starts)
    depth = 0
    in_str = False
    esc = False
    for i in range(start, len(text)):
        c = text[i]
        if in_str:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return text[start:]


def _loads(text: str) -> tuple[Any, str | None]:
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    except RecursionError:
        return None, "nested too deeply"


def parse_json_answer(text: str) -> JsonAnswer:
    """The JSON in a model's answer: the first ```json (or bare) fence, else the outermost
    balanced object or array (a label line such as ``Answer:`` before it is fine), else the
    whole text. Never raises."""
    if not isinstance(text, str):
        return JsonAnswer(None, f"expected the answer text, got {type(text).__name__}", "")
    other_code: list[tuple[int, int]] = []  # fenced blocks in another language: never JSON
    for m in _FENCE.finditer(text):
        head = m.group(1).strip()
        lang, _, rest = head.partition(" ")
        if lang.lower() not in ("", "json"):
            if lang.startswith(("{", "[")):  # ```{"a": ... : no language, JSON on the fence line
                lang, rest = "", head
            else:
                other_code.append(m.span())
                continue
        body = m.group(2)
        rest = rest.strip()
        if rest:
            value, err = _loads(rest + "\n" + body)
            if err is None:
                return JsonAnswer(value, None, rest + "\n" + body)
        value, err = _loads(body)
        if err is None:
            return JsonAnswer(value, None, body)
        return JsonAnswer(None, f"the fenced JSON block is not valid JSON: {err} ({preview(body, 80)})", body)
    searched = text
    for start, end in other_code:
        searched = searched[:start] + " " * (end - start) + searched[end:]
    candidate = _balanced(searched)
    if candidate is None:
        value, err = _loads(text.strip())
        if err is None:
            return JsonAnswer(value, None, text)
        return JsonAnswer(None, f"no JSON object in the answer ({preview(text, 80) or 'empty'})", text)
    value, err = _loads(candidate)
    if err is None:
        return JsonAnswer(value, None, candidate)
    return JsonAnswer(None, f"the JSON in the answer is not valid: {err} ({preview(candidate, 80)})", candidate)


def read_answer(text: str, fmt: JsonFormat | None) -> JsonAnswer:
    """Parse ``text`` and check it against ``fmt``: validated into ``fmt.model`` when one was
    given (its own errors reported), else checked against the schema. Never raises."""
    parsed = parse_json_answer(text)
    if not parsed.ok or fmt is None:
        return parsed
    value = parsed.value
    if fmt.schema is None:
        if not isinstance(value, dict):
            return JsonAnswer(None, f"expected a JSON object, got {type(value).__name__}", parsed.text)
        return parsed
    if fmt.model is not None:
        try:
            return JsonAnswer(fmt.model.model_validate(value), None, parsed.text)
        except Exception as exc:  # the model's own validation error, whatever its class
            return JsonAnswer(None, f"the answer does not fit {fmt.name}: {exc}", parsed.text)
    problems = check_value(value, fmt.schema)
    if problems:
        return JsonAnswer(None, f"the answer does not fit {fmt.name}: " + "; ".join(problems[:5]), parsed.text)
    return parsed


@dataclass(frozen=True, slots=True)
class JsonReply(Generic[_T]):
    """What ``Conversation.send(..., json=...)`` returns: the parsed (and validated) answer
    next to the turn it came from. ``value`` is None and ``error`` says why when the answer
    did not parse or fit; ``turn`` is always there. Unpacks as ``value, turn``."""

    value: _T | None
    turn: Turn | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def __iter__(self) -> Iterator[Any]:
        return iter((self.value, self.turn))

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        """Shown as its value (or why there is none), as a notebook user expects."""
        if self.error is not None:
            p.text(f"JsonReply(error={self.error!r})")
        else:
            p.pretty(self.value)

    def _ipython_display_(self) -> None:
        from IPython import display as ipd

        show: Any = ipd.display  # IPython's display is untyped
        if self.error is not None:
            print(f"JsonReply: no value: {self.error}")
        else:
            show(self.value)
