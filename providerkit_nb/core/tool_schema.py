"""JSON schemas for tools: built from a function's type hints, and checked without a dependency.

The checker covers the subset the ``@tool`` decorator produces (and most hand-written tool
schemas use): ``type`` (a name or a list of names), ``properties``, ``required``,
``additionalProperties`` (bool or schema), ``items``, ``enum``, ``const`` and ``anyOf``. Keywords
it does not know are ignored, as JSON Schema itself does; the provider validated the call's
shape loosely at best, so this is the last line before a tool runs.
"""

from __future__ import annotations

import enum
import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Any

__all__ = [
    "check_value",
    "schema_from_function",
    "schema_for_type",
    "parse_docstring",
    "enum_parameters",
]

_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


def _type_ok(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False  # True is an int in Python, never in JSON
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    kinds = _PY_TYPES.get(name)
    return True if kinds is None else isinstance(value, kinds)


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def check_value(value: Any, schema: Any, path: str = "$") -> list[str]:
    """Every violation as ``"<path>: <what is wrong>"``; an empty list means the value fits."""
    if not isinstance(schema, dict) or not schema:
        return []
    none_fits = _check_any_of(value, schema, path)
    if none_fits:
        return none_fits
    wrong_type = _check_type(value, schema, path)
    if wrong_type:
        return wrong_type  # the keywords below would only repeat it
    errors = _check_const_enum(value, schema, path)
    if isinstance(value, dict):
        errors.extend(_check_object(value, schema, path))
    elif isinstance(value, list):
        errors.extend(_check_array(value, schema, path))
    return errors


def _check_any_of(value: Any, schema: dict[str, Any], path: str) -> list[str]:
    """When no ``anyOf`` branch fits: that, then the errors of the branch that came closest."""
    any_of = schema.get("anyOf")
    if not isinstance(any_of, list) or not any_of:
        return []
    branches = [check_value(value, s, path) for s in any_of]
    if not all(branches):
        return []
    best = min(branches, key=len)
    return [f"{path}: matches none of the {len(any_of)} allowed shapes", *best]


def _check_type(value: Any, schema: dict[str, Any], path: str) -> list[str]:
    t = schema.get("type")
    if t is None:
        return []
    names = t if isinstance(t, list) else [t]
    if any(_type_ok(value, n) for n in names):
        return []
    return [f"{path}: expected {' or '.join(names)}, got {_type_name(value)}"]


def _check_const_enum(value: Any, schema: dict[str, Any], path: str) -> list[str]:
    errors: list[str] = []
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: must be {schema['const']!r}")
    enum_values = schema.get("enum")
    if isinstance(enum_values, list) and value not in enum_values:
        errors.append(f"{path}: {value!r} is not one of {enum_values!r}")
    return errors


def _check_object(value: dict[str, Any], schema: dict[str, Any], path: str) -> list[str]:
    props = schema.get("properties") or {}
    errors = [
        f"{path}: missing required property {key!r}"
        for key in schema.get("required") or ()
        if key not in value
    ]
    extra_schema = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in props:
            errors.extend(check_value(item, props[key], f"{path}.{key}"))
        elif extra_schema is False:
            allowed = ", ".join(props) or "none"
            errors.append(f"{path}: unexpected property {key!r} (allowed: {allowed})")
        elif isinstance(extra_schema, dict):
            errors.extend(check_value(item, extra_schema, f"{path}.{key}"))
    return errors


def _check_array(value: list[Any], schema: dict[str, Any], path: str) -> list[str]:
    items = schema.get("items")
    if not isinstance(items, dict):
        return []
    errors: list[str] = []
    for j, item in enumerate(value):
        errors.extend(check_value(item, items, f"{path}[{j}]"))
    return errors


# --------------------------------------------------------------------------- from type hints


_SIMPLE: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _literal_type(values: tuple[Any, ...]) -> dict[str, Any]:
    names = {_type_name(v) for v in values}
    out: dict[str, Any] = {}
    if len(names) == 1:
        out["type"] = names.pop()
    elif names <= {"integer", "number"}:
        out["type"] = "number"
    out["enum"] = list(values)
    return out


def schema_for_type(tp: Any) -> dict[str, Any]:
    """The JSON schema of one annotation (str, int, float, bool, list[X], dict[str, X],
    Literal[...], Enum subclasses, X | None, unions, Annotated[X, "description"], Any)."""
    plain = _plain_schema(tp)
    if plain is not None:
        return plain
    build = _BY_ORIGIN.get(typing.get_origin(tp))
    if build is not None:
        return build(typing.get_args(tp))
    raise TypeError(
        f"cannot build a JSON schema for {tp!r}; use str, int, float, bool, list, dict, "
        "Literal, an Enum, or pass input_schema to define_tool"
    )


def _plain_schema(tp: Any) -> dict[str, Any] | None:
    """The schema of an annotation that is not generic (no ``[...]``), or None for one that is."""
    if tp is inspect.Parameter.empty or tp is Any or tp is object:
        return {}
    if tp is None or tp is type(None):
        return {"type": "null"}
    if tp in _SIMPLE:
        return {"type": _SIMPLE[tp]}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _literal_type(tuple(m.value for m in tp))
    if tp is list or tp is tuple or tp is set or tp is frozenset:
        return {"type": "array"}
    if tp is dict:
        return {"type": "object"}
    return None


def _annotated(args: tuple[Any, ...]) -> dict[str, Any]:
    inner = schema_for_type(args[0])
    notes = [a for a in args[1:] if isinstance(a, str)]
    if notes:
        inner["description"] = " ".join(notes)
    return inner


def _array(args: tuple[Any, ...]) -> dict[str, Any]:
    return {"type": "array", "items": schema_for_type(args[0])} if args else {"type": "array"}


def _tuple(args: tuple[Any, ...]) -> dict[str, Any]:
    if len(args) == 2 and args[1] is ...:
        return _array(args)  # tuple[X, ...] is a list of X; a fixed tuple is only an array
    return {"type": "array"}


def _dict(args: tuple[Any, ...]) -> dict[str, Any]:
    if args and args[0] is not str:
        raise TypeError(f"dict keys must be str in a tool schema, got {args[0]!r}")
    out: dict[str, Any] = {"type": "object"}
    if len(args) == 2 and args[1] is not Any:
        out["additionalProperties"] = schema_for_type(args[1])
    return out


def _union(args: tuple[Any, ...]) -> dict[str, Any]:
    non_null = [a for a in args if a is not type(None)]
    nullable = len(non_null) < len(args)
    if len(non_null) == 1:
        inner = schema_for_type(non_null[0])
        return _nullable(inner) if nullable else inner
    branches = [schema_for_type(a) for a in non_null]
    if nullable:
        branches.append({"type": "null"})
    return {"anyOf": branches}


# what builds the schema of a generic annotation, by its origin (typing.get_origin)
_BY_ORIGIN: dict[Any, Callable[[tuple[Any, ...]], dict[str, Any]]] = {
    typing.Annotated: _annotated,
    typing.Literal: _literal_type,
    list: _array,
    set: _array,
    frozenset: _array,
    tuple: _tuple,
    dict: _dict,
    typing.Union: _union,
    types.UnionType: _union,
}


def _nullable(inner: dict[str, Any]) -> dict[str, Any]:
    t = inner.get("type")
    if isinstance(t, str) and "anyOf" not in inner:
        out = dict(inner, type=[t, "null"])
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
        return out
    if not inner:
        return inner  # Any already allows null
    return {"anyOf": [inner, {"type": "null"}]}


_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Params)\s*:\s*$")
_OTHER_SECTION = re.compile(r"^\s*(Returns|Return|Raises|Yields|Examples?|Notes?)\s*:\s*$")
_ARG_LINE = re.compile(r"^\s*\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_SPHINX = re.compile(r"^\s*:param\s+(?:[\w\[\], |]+\s+)?(\w+)\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """(description, {param: description}) from a Google-style or Sphinx-style docstring."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    desc: list[str] = []
    params: dict[str, str] = {}
    mode = "desc"
    current: str | None = None
    for line in lines:
        m = _SPHINX.match(line)
        if m:
            current, mode = m.group(1), "params"
            params[current] = m.group(2).strip()
            continue
        if _SECTION.match(line):
            mode, current = "args", None
            continue
        if _OTHER_SECTION.match(line) or line.strip().startswith((":return", ":raises", ":rtype")):
            mode, current = "skip", None
            continue
        if mode == "desc":
            desc.append(line)
        elif mode in ("args", "params"):
            m = _ARG_LINE.match(line) if mode == "args" else None
            indent = len(line) - len(line.lstrip())
            if m and (indent <= 4 or current is None):
                current = m.group(1)
                params[current] = m.group(2).strip()
            elif current is not None and line.strip():
                params[current] = f"{params[current]} {line.strip()}".strip()
    description = "\n".join(desc).strip()
    # keep the first paragraph(s) only up to the sections: that is what the model reads
    return description, params


def schema_from_function(fn: Callable[..., Any]) -> tuple[str, dict[str, Any]]:
    """(description, input schema) for a plain function whose parameters are the tool's inputs.

    A parameter with a default is not required; its default is recorded when it is plain JSON.
    """
    description, param_docs = parse_docstring(fn.__doc__)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:  # forward references that do not resolve
        raise TypeError(f"cannot read the type hints of {fn.__qualname__}: {exc}") from exc
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, param in inspect.signature(fn).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(
                f"{fn.__qualname__}: *args/**kwargs cannot be described to a model; "
                "name every input as a parameter"
            )
        if param.kind is param.POSITIONAL_ONLY:
            raise TypeError(f"{fn.__qualname__}: parameter {name!r} must accept a keyword")
        prop = schema_for_type(hints.get(name, inspect.Parameter.empty))
        if name in param_docs and "description" not in prop:
            prop["description"] = param_docs[name]
        if param.default is param.empty:
            required.append(name)
        elif isinstance(param.default, str | int | float | bool | type(None)):
            prop["default"] = param.default
        elif isinstance(param.default, enum.Enum):
            prop["default"] = param.default.value
        properties[name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return description, schema


def enum_parameters(fn: Callable[..., Any]) -> dict[str, type[enum.Enum]]:
    """Parameters annotated with an Enum (or an optional one): the model sends the value, the
    function expects the member, so the decorator converts."""
    hints = typing.get_type_hints(fn)
    out: dict[str, type[enum.Enum]] = {}
    for name, tp in hints.items():
        if typing.get_origin(tp) in (typing.Union, types.UnionType):
            non_null = [a for a in typing.get_args(tp) if a is not type(None)]
            tp = non_null[0] if len(non_null) == 1 else None
        if isinstance(tp, type) and issubclass(tp, enum.Enum) and name != "return":
            out[name] = tp
    return out
