"""The Gemini wire on paper (Generative Language ``generateContent``): a history as ``contents``
plus ``systemInstruction`` and back, the body a call builds, and the rules behind its 400s.

What it takes care of, and why:

- Signatures. Gemini signs its reasoning with opaque ``thoughtSignature`` values that may sit on
  any part of a model turn. A signature on a ``functionCall`` travels on that call
  (``ToolCall.thought_signature``); a signature on a text or thought part is kept in
  ``reasoning_items`` (provider ``gemini``) as ``{"type": "text"|"thought", "offset", "length",
  "signature"}`` - the place of the signed part inside the message's ``content`` (or
  ``reasoning``) - so replay cuts the text at the same places and puts each signature back on
  the part it came with. A part of any other kind (code execution, generated media) is kept
  whole as ``{"type": "part", "part": {...}}`` and replayed verbatim. Dropping a signature makes
  the model re-plan (and Gemini 3 answers 400), so none is ever dropped on the way back, and
  none signed elsewhere is ever sent.
- Gemini 3 refuses a function call of the current turn that has no signature. A call that was
  never Gemini's (a history that came from another provider) gets Google's documented bypass
  value ``skip_thought_signature_validator`` instead of a 400.
- Calls without an id get ``call_<n>`` (their place in the turn). Such made-up ids are not sent
  back: Gemini pairs those calls and responses by order and name.
- A history goes as alternating *turns*: consecutive assistant messages are one model turn, a
  run of tool results one function-response turn, consecutive user messages one user turn;
  messages with nothing to send are left out (``group_turns``, which the rules read too, so
  they judge exactly what would be sent).

Pure: the HTTP request, the URL and the stream are ``providers.gemini``'s.
"""

from __future__ import annotations

import binascii
import json
import re
from base64 import b64decode
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any
from urllib.parse import urlsplit

from ..core.errors import ErrorKind, ProviderError
from ..core.json_input import JsonInputError, read_json
from ..core.messages import (
    AssistantMessage,
    FilePart,
    ImagePart,
    Message,
    ReasoningItems,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from ..core.structured import JsonFormat
from ..core.tool_args import parse_tool_args
from ..core.tools import ToolDefinition
from ..core.validate import Problem
from .base import ImportedRequest, Supports
from .options import CallOptions, Option, OptionTable, merge_body, refused

__all__ = [
    "SUPPORTS",
    "OPTIONS",
    "GeminiPlan",
    "build_body",
    "model_id",
    "is_gemini3",
    "to_gemini_contents",
    "from_gemini_contents",
    "gemini_tool_schema",
    "dump_json",
    "group_turns",
    "current_turn_start",
    "is_generated_id",
    "signed_by_gemini",
    "split_url",
    "matches",
    "import_request",
    "REPLAY_TAG",
    "BYPASS_SIGNATURE",
    "RULES",
    "Rule",
    "check",
]

REPLAY_TAG = "gemini"
BYPASS_SIGNATURE = "skip_thought_signature_validator"
_BYPASS = frozenset({BYPASS_SIGNATURE, "context_engineering_is_the_way_to_go"})
_GENERATED_ID = re.compile(r"call_\d+(?:_\d+)*")
_MAJOR = re.compile(r"gemini-(\d+)(?:\.(\d+))?", re.I)
_IMAGE_MIMES = frozenset({"image/jpeg", "image/png", "image/webp", "image/gif"})

SUPPORTS = Supports(
    files=None,  # any file type, inline as base64
    tool_images=False,  # a functionResponse is an object; its images follow it in the same turn
    schemas="reduced to Gemini's dialect (no $ref or $defs, nullable for null, enums as strings)",
    reasoning="thought signatures on the calls and parts they came with, to Gemini only",
    json_forms=("json_schema", "json_object", "prompt"),  # responseJsonSchema, the JSON mime type, the prompt
)

# effort -> Gemini 3 thinkingLevel / Gemini 2.5 thinkingBudget (absent effort sends nothing)
_LEVELS = {"none": "MINIMAL", "low": "LOW", "medium": "MEDIUM", "high": "HIGH", "max": "HIGH"}
_BUDGETS = {"none": 0, "low": 1024, "medium": 4096, "high": 8192, "max": 16384}

# keywords Gemini's schema dialect refuses (or that point outside the schema)
_DROP_KEYS = frozenset({"$schema", "$id", "$ref", "$defs", "definitions", "patternProperties", "$comment"})


# --------------------------------------------------------------------------- small helpers


def model_id(model: str) -> str:
    """A model name without the ``models/`` prefix some callers give."""
    return model[7:] if model.startswith("models/") else model


def _generation(model: str) -> tuple[int, int] | None:
    m = _MAJOR.search(model)
    if m is None:
        return None
    return int(m.group(1)), int(m.group(2) or 0)


def is_gemini3(model: str) -> bool:
    g = _generation(model)
    return g is not None and g[0] >= 3


def _thinking_config(model: str, effort: str | None) -> dict[str, Any] | None:
    """Only an explicit effort sends anything; "none" must differ from silence."""
    if effort is None:
        return None
    g = _generation(model)
    if g is not None and g < (2, 5):
        return None  # 1.x / 2.0 models do not think; a thinkingConfig is a 400 there
    cfg: dict[str, Any]
    if g is not None and g[0] >= 3:
        level = _LEVELS[effort]
        if level == "MINIMAL" and "-pro" in model.lower():
            level = "LOW"  # Gemini 3 Pro has no MINIMAL level; LOW is its least thinking
        cfg = {"thinkingLevel": level}
    else:
        budget = _BUDGETS[effort]
        if budget == 0 and "-pro" in model.lower():
            budget = 128  # 2.5 Pro cannot switch thinking off; 128 is its floor
        cfg = {"thinkingBudget": budget}
    if effort != "none":
        cfg["includeThoughts"] = True
    return cfg


_CAPITAL = re.compile(r"(?<!^)(?=[A-Z])")


@cache
def _snake(camel: str) -> str:
    return _CAPITAL.sub("_", camel).lower()


def _g(d: Mapping[str, Any], camel: str) -> Any:
    """Gemini's JSON accepts both spellings of a name (protobuf JSON); recordings carry both."""
    v = d.get(camel)
    return d.get(_snake(camel)) if v is None else v


def dump_json(value: Any) -> str:
    """Compact JSON, as call arguments and responses are kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# --------------------------------------------------------------------------- tool schemas


def gemini_tool_schema(node: Any) -> dict[str, Any]:
    """A JSON schema reduced to what Gemini accepts (applied to every tool's parameters)."""
    if not isinstance(node, dict):
        return {"type": "object", "properties": {}}
    return _schema(node)


def _union(out: dict[str, Any], key: str) -> dict[str, Any]:
    """``anyOf``/``oneOf``: one real branch (besides null) is merged in, as nullable when a null
    branch was there; several stay a union, each branch reduced."""
    branches = out.get(key)
    if not isinstance(branches, list):
        return out
    real = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")]
    if len(real) == 1 and isinstance(real[0], dict):
        del out[key]
        merged = {**out, **_schema(real[0])}
        if len(real) != len(branches):
            merged["nullable"] = True
        return merged
    out[key] = [_schema(b) if isinstance(b, dict) else b for b in branches]
    return out


def _plain_types(out: dict[str, Any]) -> None:
    """A const is a one-value enum; a list of types is its first real one, nullable when null
    was among them; enum values are strings; an array always says what it holds."""
    if "const" in out:
        out["enum"] = [str(out.pop("const"))]
    t = out.get("type")
    if isinstance(t, list):
        non_null = [x for x in t if x != "null"]
        out["type"] = non_null[0] if non_null else "string"
        if len(non_null) != len(t):
            out["nullable"] = True
    if isinstance(out.get("enum"), list):
        out["enum"] = [v if isinstance(v, str) else dump_json(v) for v in out["enum"] if v is not None]
    if out.get("type") == "array" and "items" not in out:
        out["items"] = {"type": "string"}


def _schema(node: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in node.items() if k not in _DROP_KEYS and not (k == "additionalProperties" and v is True)}
    for key in ("anyOf", "oneOf"):
        out = _union(out, key)
    _plain_types(out)
    items = out.get("items")
    if isinstance(items, dict):
        out["items"] = _schema(items)
    props = out.get("properties")
    if isinstance(props, dict):
        out["properties"] = {k: _schema(v) if isinstance(v, dict) else v for k, v in props.items()}
    extra = out.get("additionalProperties")
    if isinstance(extra, dict):
        out["additionalProperties"] = _schema(extra)
    return out


def _openapi_to_json_schema(node: Any) -> Any:
    """Gemini's OpenAPI-style ``parameters`` (types in capitals) back to JSON schema."""
    if isinstance(node, list):
        return [_openapi_to_json_schema(x) for x in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for k, v in node.items():
        if k == "type" and isinstance(v, str):
            out[k] = v.lower()
        elif k == "properties" and isinstance(v, dict):
            out[k] = {name: _openapi_to_json_schema(s) for name, s in v.items()}
        elif k in ("items", "anyOf", "oneOf", "allOf", "additionalProperties"):
            out[k] = _openapi_to_json_schema(v)
        else:
            out[k] = v
    return out


def _tool_from_declaration(decl: Mapping[str, Any]) -> ToolDefinition:
    schema = _g(decl, "parametersJsonSchema")
    if schema is None:
        params = decl.get("parameters")
        schema = _openapi_to_json_schema(params) if isinstance(params, dict) else {"type": "object", "properties": {}}
    return ToolDefinition(decl.get("name") or "", decl.get("description") or "", schema)


# --------------------------------------------------------------------------- turns


def is_generated_id(call_id: str) -> bool:
    """Ids made up for calls Gemini gave no id (``call_<n>``, and repair's ``call_<n>_<k>``):
    they are not sent back, Gemini pairs such calls and responses by order."""
    return _GENERATED_ID.fullmatch(call_id) is not None


def signed_by_gemini(m: AssistantMessage) -> bool:
    """Gemini produced this step: one of its calls carries a signature."""
    return any(c.thought_signature for c in m.tool_calls or ())


def _has_own_items(m: AssistantMessage) -> bool:
    ri = m.reasoning_items
    return ri is not None and ri.provider == REPLAY_TAG and bool(ri.items)


def _user_has_parts(m: UserMessage) -> bool:
    c = m.content
    if isinstance(c, str):
        return bool(c)
    return any(not isinstance(p, TextPart) or p.text for p in c)


def _kind(m: Message) -> str | None:
    if isinstance(m, SystemMessage):
        return None
    if isinstance(m, ToolMessage):
        return "response"
    if isinstance(m, UserMessage):
        return "user" if _user_has_parts(m) else None
    if m.content or m.tool_calls or _has_own_items(m):
        return "model"
    return None


def group_turns(messages: Sequence[Message]) -> list[tuple[str, list[int]]]:
    """The turns the Gemini wire sends: ``(kind, message indexes)``, kind one of ``user``,
    ``model``, ``response``; system messages and messages with nothing to send are left out."""
    turns: list[tuple[str, list[int]]] = []
    for i, m in enumerate(messages):
        kind = _kind(m)
        if kind is None:
            continue
        if turns and turns[-1][0] == kind:
            turns[-1][1].append(i)
        else:
            turns.append((kind, [i]))
    return turns


def current_turn_start(messages: Sequence[Message]) -> int:
    """Index of the message that opens Gemini's "current turn": the last user turn (tool
    results do not open one). Calls after it must carry their signatures on Gemini 3."""
    for kind, idx in reversed(group_turns(messages)):
        if kind == "user":
            return idx[0]
    return -1


# --------------------------------------------------------------------------- canonical -> wire


def _args_object(raw: str) -> dict[str, Any]:
    """functionCall.args must be an object: a non-object value is wrapped, broken JSON salvaged."""
    if not raw or not raw.strip():
        return {}
    try:
        value = read_json(raw)
    except JsonInputError:
        return parse_tool_args(raw)
    return value if isinstance(value, dict) else {"value": value}


def _response_object(content: str) -> dict[str, Any]:
    try:
        value = read_json(content)
    except JsonInputError:
        return {"output": content}
    return value if isinstance(value, dict) else {"output": value}


def _content_from_response(response: Any) -> str:
    """The inverse of ``_response_object``, so a recorded functionResponse round-trips."""
    if isinstance(response, dict) and len(response) == 1 and "output" in response:
        out = response["output"]
        if isinstance(out, str):
            try:
                read_json(out)
            except JsonInputError:
                return out
            return dump_json(out)  # "15" the string, not 15 the number
        return dump_json(out)
    return dump_json(response if response is not None else {})


def _inline(p: ImagePart | FilePart) -> dict[str, Any]:
    return {"inlineData": {"mimeType": p.mime_type, "data": p.data}}


def _user_parts(content: str | list[Any]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}] if content else []
    parts: list[dict[str, Any]] = []
    for p in content:
        if isinstance(p, TextPart):
            if p.text:
                parts.append({"text": p.text})
        else:  # ImagePart / FilePart: Gemini takes both inline
            parts.append(_inline(p))
    return parts


def _own_items(m: AssistantMessage) -> list[Any]:
    ri = m.reasoning_items
    if ri is None or ri.provider != REPLAY_TAG:
        return []  # signed by someone else: never sent here
    return [it for it in ri.items if isinstance(it, dict)]


def _cut(text: str, signed: list[tuple[int, int, str]], extra: dict[str, Any], *, unsigned: bool) -> list[dict[str, Any]]:
    """Split ``text`` so each signed span is its own part carrying its signature; the text
    between signed spans travels in plain parts when ``unsigned`` is set."""
    parts: list[dict[str, Any]] = []
    pos = 0
    n = len(text)
    for offset, length, sig in sorted(signed, key=lambda s: s[0]):
        start = min(max(offset, pos), n)
        end = min(start + max(length, 0), n)
        if start > pos and unsigned:
            parts.append({"text": text[pos:start], **extra})
        parts.append({"text": text[start:end], **extra, "thoughtSignature": sig})
        pos = end
    if pos < n and unsigned:
        parts.append({"text": text[pos:], **extra})
    return parts


def _call_part(call: ToolCall, sig: str | None) -> dict[str, Any]:
    fc: dict[str, Any] = {"name": call.name, "args": _args_object(call.arguments)}
    if not is_generated_id(call.id):
        fc["id"] = call.id
    part: dict[str, Any] = {"functionCall": fc}
    if sig is not None:
        part["thoughtSignature"] = sig
    return part


def _model_parts(m: AssistantMessage, sign_first_call: bool) -> list[dict[str, Any]]:
    thought_sig: list[tuple[int, int, str]] = []
    text_sig: list[tuple[int, int, str]] = []
    raw: list[dict[str, Any]] = []
    for it in _own_items(m):
        kind = it.get("type")
        if kind in ("text", "thought") and isinstance(it.get("signature"), str):
            span = (int(it.get("offset", 0)), int(it.get("length", 0)), it["signature"])
            (thought_sig if kind == "thought" else text_sig).append(span)
        elif kind == "part" and isinstance(it.get("part"), dict):
            raw.append(it["part"])
    parts: list[dict[str, Any]] = []
    if thought_sig:  # unsigned thought text is never sent back: Gemini reads nothing from it
        parts.extend(_cut(m.reasoning or "", thought_sig, {"thought": True}, unsigned=False))
    if m.content or text_sig:
        parts.extend(_cut(m.content, text_sig, {}, unsigned=True))
    parts.extend(raw)
    for j, call in enumerate(m.tool_calls or ()):
        sig = call.thought_signature
        parts.append(_call_part(call, BYPASS_SIGNATURE if sig is None and j == 0 and sign_first_call else sig))
    return parts


def _response_parts(t: ToolMessage, names: dict[str, str]) -> list[dict[str, Any]]:
    fr: dict[str, Any] = {"name": t.name or names.get(t.tool_call_id, ""), "response": _response_object(t.content)}
    if not is_generated_id(t.tool_call_id):
        fr["id"] = t.tool_call_id
    return [{"functionResponse": fr}, *(_inline(img) for img in t.images or ())]


def to_gemini_contents(
    messages: Sequence[Message], *, model: str = ""
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Canonical history -> (``contents``, ``systemInstruction``), turn by turn as
    ``group_turns`` groups it: nothing empty is ever sent."""
    system = [{"text": m.content} for m in messages if isinstance(m, SystemMessage) and m.content]
    names = {c.id: c.name for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls or ()}
    bypass = is_gemini3(model)
    current = current_turn_start(messages)
    contents: list[dict[str, Any]] = []
    for kind, idx in group_turns(messages):
        parts: list[dict[str, Any]] = []
        for i in idx:
            m = messages[i]
            if isinstance(m, AssistantMessage):
                parts.extend(_model_parts(m, bypass and i > current and not signed_by_gemini(m)))
            elif isinstance(m, ToolMessage):
                parts.extend(_response_parts(m, names))
            elif isinstance(m, UserMessage):
                parts.extend(_user_parts(m.content))
        if parts:
            contents.append({"role": "model" if kind == "model" else "user", "parts": parts})
    return contents, ({"parts": system} if system else None)


# --------------------------------------------------------------------------- the option table


@dataclass(slots=True)
class GeminiPlan:
    """What one Gemini request was resolved to, besides its history and options."""

    provider: str
    model: str
    tools: list[ToolDefinition] | None = None
    json_in_prompt: bool = False  # the schema rides in the system instruction (set by build_body)


def _tool_config(choice: Any, plan: GeminiPlan) -> dict[str, Any] | None:
    if not plan.tools or choice == "auto":
        return None
    if choice == "none":
        return {"functionCallingConfig": {"mode": "NONE"}}
    if choice == "required":
        return {"functionCallingConfig": {"mode": "ANY"}}
    if isinstance(choice, dict) and choice.get("name"):
        return {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [choice["name"]]}}
    raise ProviderError("gemini", ErrorKind.INVALID, f"gemini: unsupported tool_choice {choice!r}")


def _read_choice(body: Mapping[str, Any]) -> Any:
    fcc = OPTIONS.at(body, "toolConfig")
    fcc = fcc.get("functionCallingConfig") if isinstance(fcc, dict) else None
    mode = fcc.get("mode") if isinstance(fcc, dict) else None
    if mode == "NONE":
        return "none"
    if mode == "ANY":
        allowed = fcc.get("allowedFunctionNames") or []  # type: ignore[union-attr]  # a dict: it had a mode
        return {"name": allowed[0]} if len(allowed) == 1 else "required"
    return None


def _effort_of(cfg: Any) -> str | None:
    if not isinstance(cfg, dict):
        return None
    level = _g(cfg, "thinkingLevel")
    if isinstance(level, str):
        return {"MINIMAL": "none", "LOW": "low", "MEDIUM": "medium", "HIGH": "high"}.get(level.upper())
    budget = _g(cfg, "thinkingBudget")
    if isinstance(budget, int):
        if budget <= 0:
            return "none"
        for name in ("low", "medium", "high", "max"):
            if budget <= _BUDGETS[name]:
                return name
        return "max"
    return None


def _write_json(body: dict[str, Any], fmt: Any, plan: GeminiPlan) -> None:
    if not isinstance(fmt, JsonFormat):
        return
    if plan.json_in_prompt:
        instruction = body.get("systemInstruction")
        parts = list(instruction["parts"]) if instruction is not None else []
        body["systemInstruction"] = {**(instruction or {}), "parts": [*parts, {"text": fmt.prompt}]}
        return
    gen = body.setdefault("generationConfig", {})
    gen["responseMimeType"] = "application/json"
    if fmt.schema is not None:
        gen["responseJsonSchema"] = gemini_tool_schema(fmt.schema)


def _read_json(body: Mapping[str, Any]) -> Any:
    schema = OPTIONS.at(body, "generationConfig.responseJsonSchema")
    if schema is None:
        legacy = OPTIONS.at(body, "generationConfig.responseSchema")  # the OpenAPI dialect, types in capitals
        if isinstance(legacy, dict):
            schema = _openapi_to_json_schema(
                {k: v for k, v in legacy.items() if k not in ("property_ordering", "propertyOrdering")}
            )
    if isinstance(schema, dict):
        return schema
    return "object" if OPTIONS.at(body, "generationConfig.responseMimeType") == "application/json" else None


OPTIONS = OptionTable(
    (
        refused("service_tier", lambda plan: (
            f"{plan.provider}: service_tier is an OpenAI option; Gemini has no per-call tier (leave it unset)")),
        refused("parallel_tool_calls", lambda plan: (
            f"{plan.provider}: Gemini cannot be limited to one tool call per turn; leave "
            "parallel_tool_calls unset or run the calls one at a time yourself"),
            when=lambda v, plan: v is False and bool(plan.tools)),
        Option("tool_choice", "toolConfig", send=_tool_config, read=_read_choice),
        Option("max_tokens", "generationConfig.maxOutputTokens"),
        Option("temperature", "generationConfig.temperature"),
        Option("top_p", "generationConfig.topP"),
        Option("stop", "generationConfig.stopSequences", send=lambda v, plan: list(v) if v else None),
        Option("effort", "generationConfig.thinkingConfig", send=lambda v, plan: _thinking_config(plan.model, v),
               back=_effort_of),
        Option("json", "generationConfig.responseJsonSchema", write=_write_json, read=_read_json),
    ),
    key=_g,
)


def build_body(
    messages: Sequence[Message], tools: list[ToolDefinition] | None, opts: CallOptions, plan: GeminiPlan
) -> dict[str, Any]:
    """The request body: ``opts`` as resolved (its effort is what is sent). Gemini 2 refuses a
    JSON mime type beside function calling, so there (or when asked) the schema goes in the
    system instruction."""
    OPTIONS.check(opts, plan)
    contents, instruction = to_gemini_contents(messages, model=plan.model)
    if not contents:
        raise ProviderError(
            plan.provider, ErrorKind.INVALID, f"{plan.provider}: nothing to send: the history has no user or model content"
        )
    body: dict[str, Any] = {"contents": contents}
    if instruction is not None:
        body["systemInstruction"] = instruction
    if tools:
        body["tools"] = [
            {
                "functionDeclarations": [
                    {"name": t.name, "description": t.description, "parametersJsonSchema": gemini_tool_schema(t.input_schema)}
                    for t in tools
                ]
            }
        ]
    plan.json_in_prompt = bool(tools) and (opts.json_with_tools == "prompt" or not is_gemini3(plan.model))
    OPTIONS.write(body, opts, plan)
    return merge_body(body, opts.extra_body)


# --------------------------------------------------------------------------- wire -> canonical


def _signature_of(part: Mapping[str, Any]) -> str | None:
    sig = _g(part, "thoughtSignature")
    return sig if isinstance(sig, str) and sig else None


def _text_of_instruction(si: Any) -> list[str]:
    if si is None:
        return []
    if isinstance(si, str):
        return [si]
    if isinstance(si, dict):
        return [p["text"] for p in si.get("parts") or () if isinstance(p, dict) and isinstance(p.get("text"), str)]
    if isinstance(si, list):
        return [t for x in si for t in _text_of_instruction(x)]
    raise ValueError(f"system_instruction must be a Content, a string or a list, got {type(si).__name__}")


def _user_content(parts: list[Any]) -> str | list[Any]:
    if len(parts) == 1 and isinstance(parts[0], TextPart):
        return parts[0].text
    return parts


class _Reading:
    """One ``contents`` list being read: the calls of the last model turn not answered yet (a
    functionResponse pairs with its call by id, else by name, else by order) and how many ids
    were made up."""

    def __init__(self, system_instruction: Any) -> None:
        self.out: list[Message] = [SystemMessage(t) for t in _text_of_instruction(system_instruction)]
        self.pending: list[ToolCall] = []
        self.n_generated = 0

    def model(self, parts: list[Any]) -> None:
        text: list[str] = []
        thought: list[str] = []
        items: list[dict[str, Any]] = []
        calls: list[ToolCall] = []
        for part in parts:
            sig = _signature_of(part)
            fc = _g(part, "functionCall")
            if fc is not None:
                calls.append(self.call(fc, sig))
            elif isinstance(part.get("text"), str):
                is_thought = bool(part.get("thought"))
                buf = thought if is_thought else text
                if sig is not None:
                    offset = sum(len(t) for t in buf)
                    items.append(
                        {"type": "thought" if is_thought else "text", "offset": offset,
                         "length": len(part["text"]), "signature": sig}
                    )
                buf.append(part["text"])
            else:
                items.append({"type": "part", "part": dict(part)})
        self.out.append(AssistantMessage(
            content="".join(text),
            reasoning="".join(thought) if thought else None,
            reasoning_items=ReasoningItems(REPLAY_TAG, items) if items else None,
            tool_calls=calls or None,
        ))
        self.pending = list(calls)

    def call(self, fc: Mapping[str, Any], sig: str | None) -> ToolCall:
        cid = fc.get("id")
        if not cid:
            cid = f"call_{self.n_generated}"
            self.n_generated += 1
        return ToolCall(cid, fc.get("name") or "", dump_json(fc.get("args") or {}), sig)

    def answer(self, fr: Mapping[str, Any], where: str) -> ToolMessage:
        """A functionResponse, paired with the call it answers."""
        name = fr.get("name") or ""
        cid = fr.get("id")
        if cid:
            match = next((c for c in self.pending if c.id == cid), None)
        else:
            match = next((c for c in self.pending if c.name == name), None) or (self.pending[0] if self.pending else None)
        if match is not None:
            self.pending.remove(match)
            cid = cid or match.id
        if not cid:
            raise ValueError(
                f"{where}: a functionResponse for {name!r} answers no function call before it and has "
                "no id; give it the id of its call"
            )
        return ToolMessage(cid, name, _content_from_response(fr.get("response")))

    def user(self, parts: list[Any], ci: int) -> None:
        user_parts: list[Any] = []
        last_tool: ToolMessage | None = None
        for pj, part in enumerate(parts):
            fr = _g(part, "functionResponse")
            inline = _g(part, "inlineData")
            if fr is not None:
                if user_parts:
                    self.out.append(UserMessage(_user_content(user_parts)))
                    user_parts = []
                last_tool = self.answer(fr, f"contents[{ci}].parts[{pj}]")
                self.out.append(last_tool)
            elif inline is not None:
                mime = _g(inline, "mimeType") or ""
                data = inline.get("data") or ""
                if last_tool is not None and not user_parts and mime in _IMAGE_MIMES:
                    last_tool.images = [*(last_tool.images or []), ImagePart(mime, data)]
                else:
                    user_parts.append(ImagePart(mime, data) if mime in _IMAGE_MIMES else FilePart(mime, data))
            elif isinstance(part.get("text"), str):
                last_tool = None
                user_parts.append(TextPart(part["text"]))
            else:
                kinds = sorted(k for k in part if k not in ("thoughtSignature", "thought_signature"))
                raise ValueError(
                    f"contents[{ci}].parts[{pj}]: a user part of kind {kinds} cannot be held in a "
                    "canonical message (only text, inlineData and functionResponse can); inline the data "
                    "as base64 first"
                )
        if user_parts:
            self.out.append(UserMessage(_user_content(user_parts)))


def from_gemini_contents(contents: Sequence[Mapping[str, Any]], system_instruction: Any = None) -> list[Message]:
    """Gemini ``contents`` (+ ``systemInstruction``) -> canonical messages, keeping every
    signature in place, call ids (made up as ``call_<n>`` when Gemini gave none) and the pairing
    of each functionResponse with its call."""
    reading = _Reading(system_instruction)
    for ci, content in enumerate(contents):
        if not isinstance(content, Mapping):
            raise ValueError(f"contents[{ci}]: must be an object with role and parts")
        role = content.get("role") or "user"
        parts = content.get("parts") or []
        if not isinstance(parts, list):
            raise ValueError(f"contents[{ci}].parts: must be a list")
        if role == "model":
            reading.model(parts)
        elif role == "user":
            reading.user(parts, ci)
        else:
            raise ValueError(f"contents[{ci}].role: {role!r} is neither 'user' nor 'model'")
    return reading.out


# --------------------------------------------------------------------------- recorded requests

_PATH = re.compile(r"^(?P<prefix>.*?)/v1(?:beta\d*|alpha\d*)?/models/(?P<model>[^/:]+):(?P<method>streamGenerateContent|generateContent)$")


def split_url(url: str) -> tuple[str, str, str, str]:
    """A generateContent URL as (base, model, method, query); ValueError for any other URL."""
    parts = urlsplit(url)
    m = _PATH.match(parts.path)
    if m is None:
        raise ValueError(f"not a Gemini generateContent URL: {url!r}")
    base = f"{parts.scheme}://{parts.netloc}{m.group('prefix')}"
    return base, m.group("model"), m.group("method"), parts.query


def matches(url: str) -> bool:
    """Is this recorded request Gemini's generateContent / streamGenerateContent?"""
    try:
        split_url(url)
    except ValueError:
        return False
    return True


def import_request(url: str, body: Mapping[str, Any]) -> ImportedRequest:
    """A recorded Gemini request read back into canonical messages, tools and options."""
    _base, model, method, _query = split_url(url)
    messages = from_gemini_contents(body.get("contents") or [], _g(body, "systemInstruction"))
    tools = [_tool_from_declaration(decl) for t in body.get("tools") or () for decl in _g(t, "functionDeclarations") or ()]
    options: dict[str, Any] = {"model": model, **OPTIONS.read(body)}
    return ImportedRequest(messages, tools or None, options, model=model, stream=method == "streamGenerateContent")


# --------------------------------------------------------------------------- rules
#
# Gemini checks, and these rules predict, with its own words:
# - a function call turn must follow a user turn or a function response turn;
# - a function response turn must follow a function call turn, with one response per call;
# - on Gemini 3, the first function call of every model step in the current turn (since the last
#   user turn) carries its ``thought_signature``. A step that was never Gemini's gets the
#   documented bypass value from the wire, so the rule fires only when a step that Gemini signed
#   (some call in it has a signature) lost the signature of its first call;
# - signatures are base64 (either alphabet); anything else is "corrupted";
# - no user turn with nothing in it, no inline part without data.


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    provider_wording: str


MISSING_SIGNATURE = Rule(
    "gemini.missing_thought_signature",
    "Function call is missing a thought_signature in functionCall parts.",
)
CORRUPTED_SIGNATURE = Rule("gemini.corrupted_thought_signature", "Corrupted thought signature.")
RESPONSE_COUNT = Rule(
    "gemini.function_response_count",
    "Please ensure that the number of function response parts is equal to the number of "
    "function call parts of the function call turn.",
)
CALL_TURN_ORDER = Rule(
    "gemini.function_call_turn_order",
    "Please ensure that function call turn comes immediately after a user turn or after a "
    "function response turn.",
)
RESPONSE_TURN_ORDER = Rule(
    "gemini.function_response_turn_order",
    "Please ensure that function response turn comes immediately after a function call turn",
)
EMPTY_CONTENT = Rule("gemini.empty_content", "contents.parts must not be empty.")
PART_WITHOUT_DATA = Rule(
    "gemini.part_without_data", "required oneof field 'data' must have one initialized field"
)

RULES: list[Rule] = [
    MISSING_SIGNATURE,
    CORRUPTED_SIGNATURE,
    RESPONSE_COUNT,
    CALL_TURN_ORDER,
    RESPONSE_TURN_ORDER,
    EMPTY_CONTENT,
    PART_WITHOUT_DATA,
]


def _p(rule: Rule, index: int, message: str) -> Problem:
    return Problem(rule.id, index, message, rule.provider_wording)


def _is_base64(sig: str) -> bool:
    if sig in _BYPASS:
        return True
    s = sig.strip()
    if not s:
        return False
    alt = s.replace("-", "+").replace("_", "/")
    try:
        b64decode(alt + "=" * (-len(alt) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _call_count(messages: Sequence[Message], idx: list[int]) -> int:
    return sum(len(m.tool_calls or ()) for m in (messages[i] for i in idx) if isinstance(m, AssistantMessage))


def _user_problems(i: int, m: UserMessage) -> list[Problem]:
    if not _user_has_parts(m):
        return [_p(EMPTY_CONTENT, i, "user message with no text or data: the Gemini wire leaves it out; remove it or give it content")]
    if isinstance(m.content, str):
        return []
    return [
        _p(PART_WITHOUT_DATA, i, f"part {j} ({part.type}) has no data or no mime_type; put the base64 bytes in it or remove it")
        for j, part in enumerate(m.content)
        if not isinstance(part, TextPart) and (not part.data or not part.mime_type)
    ]


def _tool_problems(i: int, m: ToolMessage) -> list[Problem]:
    return [
        _p(PART_WITHOUT_DATA, i, f"tool result image {j} has no data or no mime_type; put the base64 bytes in it or remove it")
        for j, img in enumerate(m.images or ())
        if not isinstance(img, ImagePart) or not img.data or not img.mime_type
    ]


def _signature_problems(i: int, m: AssistantMessage, current: int) -> list[Problem]:
    calls = m.tool_calls or []
    found = [
        _p(CORRUPTED_SIGNATURE, i, f"tool call {c.id!r} carries a thought_signature that is not base64 (edited or "
           "from elsewhere); remove it")
        for c in calls
        if c.thought_signature is not None and not _is_base64(c.thought_signature)
    ]
    if _has_own_items(m):
        for it in m.reasoning_items.items:  # type: ignore[union-attr]  # _has_own_items: not None
            sig = it.get("signature") if isinstance(it, dict) else None
            if isinstance(sig, str) and not _is_base64(sig):
                found.append(_p(CORRUPTED_SIGNATURE, i, "a Gemini reasoning item carries a signature that is not "
                                "base64 (edited?); remove that item"))
    if i > current and calls and calls[0].thought_signature is None and signed_by_gemini(m):
        found.append(
            _p(MISSING_SIGNATURE, i, f"the first call of this step ({calls[0].name}, {calls[0].id!r}) lost its "
               "thought_signature while a later call kept one; Gemini 3 refuses it - restore the signature from "
               "the original response")
        )
    return found


def _turn_problems(messages: Sequence[Message]) -> list[Problem]:
    """The order of the turns: calls after a user or response turn, one response per call."""
    found: list[Problem] = []
    turns = group_turns(messages)
    for k, (kind, idx) in enumerate(turns):
        prev = turns[k - 1] if k else None
        if kind == "model":
            n_calls = _call_count(messages, idx)
            if not n_calls:
                continue
            if prev is None:
                found.append(_p(CALL_TURN_ORDER, idx[0], "the history opens with a function call turn; start it "
                                "with the user message that asked for the call"))
            nxt = turns[k + 1] if k + 1 < len(turns) else None
            n_resp = len(nxt[1]) if nxt is not None and nxt[0] == "response" else 0
            if n_resp != n_calls:
                found.append(_p(RESPONSE_COUNT, idx[0], f"this function call turn makes {n_calls} call(s) and is "
                                f"answered by {n_resp} function response(s); give every call exactly one result "
                                "(repair_history does)"))
        elif kind == "response" and (prev is None or prev[0] != "model" or not _call_count(messages, prev[1])):
            found.append(_p(RESPONSE_TURN_ORDER, idx[0], "tool results that do not follow the assistant message "
                            "that made the calls; move them after it, or drop them (repair_history turns them into "
                            "a user note)"))
    return found


def check(messages: Sequence[Message]) -> list[Problem]:
    """Every break of Gemini's rules, in message order (an empty list: Gemini would take it)."""
    current = current_turn_start(messages)
    found: list[Problem] = []
    for i, m in enumerate(messages):
        if isinstance(m, UserMessage):
            found.extend(_user_problems(i, m))
        elif isinstance(m, ToolMessage):
            found.extend(_tool_problems(i, m))
        elif isinstance(m, AssistantMessage):
            found.extend(_signature_problems(i, m, current))
    found.extend(_turn_problems(messages))
    found.sort(key=lambda p: p.index)
    return found
