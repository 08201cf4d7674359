"""The Gemini wire: Generative Language REST ``generateContent`` / ``streamGenerateContent``.

Nothing outside this module knows Gemini's field names. What it takes care of, and why:

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
- Usage: thoughts are billed as output but reported outside ``candidatesTokenCount``.
- The end signal is a ``finishReason`` plus the end of the body; ``STOP`` is also what Gemini
  says after function calls, so a turn that made calls finishes ``tool_calls``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar
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
from ..core.rules.gemini import (
    BYPASS_SIGNATURE,
    REPLAY_TAG,
    current_turn_start,
    group_turns,
    is_generated_id,
    signed_by_gemini,
)
from ..core.structured import JsonFormat
from ..core.tools import ToolDefinition
from ..core.turn import (
    Chunk,
    Finish,
    ModelInfo,
    ReasoningDelta,
    ReasoningItemsDelta,
    TextDelta,
    ToolCallDelta,
    Usage,
    UsageUpdate,
)
from ..transport.classify import stream_error
from ..transport.sse import NOT_JSON, SSEEvent
from ..wire.base import ImportedRequest
from ..wire.options import CallOptions, merge_body
from .base import WireProvider, WireRequest, join_url
from .guard import FrameError, cut_short  # FrameError: a required part of a body, when missing

__all__ = [
    "GeminiProvider",
    "from_gemini_contents",
    "to_gemini_contents",
    "gemini_tool_schema",
    "matches",
    "import_request",
    "replay_provider",
    "REPLAY_TAG",
    "BYPASS_SIGNATURE",
]

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
API_VERSION = "v1beta"

_MAJOR = re.compile(r"gemini-(\d+)(?:\.(\d+))?", re.I)

_FILTERED = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
    }
)

# effort -> Gemini 3 thinkingLevel / Gemini 2.5 thinkingBudget (absent effort sends nothing)
_LEVELS = {"none": "MINIMAL", "low": "LOW", "medium": "MEDIUM", "high": "HIGH", "max": "HIGH"}
_BUDGETS = {"none": 0, "low": 1024, "medium": 4096, "high": 8192, "max": 16384}

# keywords Gemini's schema dialect refuses (or that point outside the schema)
_DROP_KEYS = frozenset({"$schema", "$id", "$ref", "$defs", "definitions", "patternProperties", "$comment"})


# --------------------------------------------------------------------------- small helpers


def _model_id(model: str) -> str:
    return model[7:] if model.startswith("models/") else model


def _generation(model: str) -> tuple[int, int] | None:
    m = _MAJOR.search(model)
    if m is None:
        return None
    return int(m.group(1)), int(m.group(2) or 0)


def _is_gemini3(model: str) -> bool:
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


def _g(d: Mapping[str, Any], camel: str, snake: str) -> Any:
    """Gemini's JSON accepts both spellings (protobuf JSON); recordings carry both."""
    v = d.get(camel)
    return d.get(snake) if v is None else v


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def gemini_tool_schema(node: Any) -> dict[str, Any]:
    """A JSON schema reduced to what Gemini accepts (applied to every tool's parameters)."""
    if not isinstance(node, dict):
        return {"type": "object", "properties": {}}
    return _schema(node)


def _schema(node: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROP_KEYS:
            continue
        if key == "additionalProperties" and value is True:
            continue
        out[key] = value
    for key in ("anyOf", "oneOf"):
        branches = out.get(key)
        if isinstance(branches, list):
            real = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")]
            if len(real) == 1 and isinstance(real[0], dict):
                del out[key]
                merged = {**out, **_schema(real[0])}
                if len(real) != len(branches):
                    merged["nullable"] = True
                out = merged
            else:
                out[key] = [_schema(b) if isinstance(b, dict) else b for b in branches]
    if "const" in out:
        out["enum"] = [str(out.pop("const"))]
    t = out.get("type")
    if isinstance(t, list):
        non_null = [x for x in t if x != "null"]
        out["type"] = non_null[0] if non_null else "string"
        if len(non_null) != len(t):
            out["nullable"] = True
    if isinstance(out.get("enum"), list):
        out["enum"] = [v if isinstance(v, str) else _dumps(v) for v in out["enum"] if v is not None]
    if out.get("type") == "array" and "items" not in out:
        out["items"] = {"type": "string"}
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


def _args_object(raw: str) -> dict[str, Any]:
    """functionCall.args must be an object: a non-object value is wrapped, broken JSON salvaged."""
    if not raw or not raw.strip():
        return {}
    try:
        value = read_json(raw)
    except JsonInputError:
        from ..core.tool_args import parse_tool_args

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
            return _dumps(out)  # "15" the string, not 15 the number
        return _dumps(out)
    return _dumps(response if response is not None else {})


# --------------------------------------------------------------------------- history -> contents


def _user_parts(content: str | list[Any]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}] if content else []
    parts: list[dict[str, Any]] = []
    for p in content:
        if isinstance(p, TextPart):
            if p.text:
                parts.append({"text": p.text})
        else:  # ImagePart / FilePart: Gemini takes both inline
            parts.append({"inlineData": {"mimeType": p.mime_type, "data": p.data}})
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


def _model_parts(m: AssistantMessage, sign_first_call: bool) -> list[dict[str, Any]]:
    items = _own_items(m)
    thought_sig: list[tuple[int, int, str]] = []
    text_sig: list[tuple[int, int, str]] = []
    raw: list[dict[str, Any]] = []
    for it in items:
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
        fc: dict[str, Any] = {"name": call.name, "args": _args_object(call.arguments)}
        if not is_generated_id(call.id):
            fc["id"] = call.id
        part: dict[str, Any] = {"functionCall": fc}
        sig = call.thought_signature
        if sig is None and j == 0 and sign_first_call:
            sig = BYPASS_SIGNATURE
        if sig is not None:
            part["thoughtSignature"] = sig
        parts.append(part)
    return parts


def to_gemini_contents(
    messages: Sequence[Message], *, model: str = ""
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Canonical history -> (``contents``, ``systemInstruction``), turn by turn as
    ``group_turns`` groups it: nothing empty is ever sent."""
    system = [{"text": m.content} for m in messages if isinstance(m, SystemMessage) and m.content]
    names = {c.id: c.name for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls or ()}
    bypass = _is_gemini3(model)
    current = current_turn_start(messages)
    contents: list[dict[str, Any]] = []
    for kind, idx in group_turns(messages):
        parts: list[dict[str, Any]] = []
        if kind == "model":
            for i in idx:
                m = messages[i]
                assert isinstance(m, AssistantMessage)
                parts.extend(_model_parts(m, bypass and i > current and not signed_by_gemini(m)))
        elif kind == "response":
            for i in idx:
                t = messages[i]
                assert isinstance(t, ToolMessage)
                fr: dict[str, Any] = {"name": t.name or names.get(t.tool_call_id, ""), "response": _response_object(t.content)}
                if not is_generated_id(t.tool_call_id):
                    fr["id"] = t.tool_call_id
                parts.append({"functionResponse": fr})
                for img in t.images or ():
                    parts.append({"inlineData": {"mimeType": img.mime_type, "data": img.data}})
        else:
            for i in idx:
                u = messages[i]
                assert isinstance(u, UserMessage)
                parts.extend(_user_parts(u.content))
        if parts:
            contents.append({"role": "model" if kind == "model" else "user", "parts": parts})
    return contents, ({"parts": system} if system else None)


# --------------------------------------------------------------------------- contents -> history


def _signature_of(part: Mapping[str, Any]) -> str | None:
    sig = _g(part, "thoughtSignature", "thought_signature")
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


def from_gemini_contents(contents: Sequence[Mapping[str, Any]], system_instruction: Any = None) -> list[Message]:
    """Gemini ``contents`` (+ ``systemInstruction``) -> canonical messages, keeping every
    signature in place, call ids (made up as ``call_<n>`` when Gemini gave none) and the pairing
    of each functionResponse with its call."""
    out: list[Message] = [SystemMessage(t) for t in _text_of_instruction(system_instruction)]
    pending: list[ToolCall] = []  # calls of the last model turn not answered yet
    n_generated = 0
    for ci, content in enumerate(contents):
        if not isinstance(content, Mapping):
            raise ValueError(f"contents[{ci}]: must be an object with role and parts")
        role = content.get("role") or "user"
        parts = content.get("parts") or []
        if not isinstance(parts, list):
            raise ValueError(f"contents[{ci}].parts: must be a list")
        if role == "model":
            text: list[str] = []
            thought: list[str] = []
            items: list[dict[str, Any]] = []
            calls: list[ToolCall] = []
            for part in parts:
                sig = _signature_of(part)
                fc = _g(part, "functionCall", "function_call")
                if fc is not None:
                    cid = fc.get("id")
                    if not cid:
                        cid = f"call_{n_generated}"
                        n_generated += 1
                    calls.append(ToolCall(cid, fc.get("name") or "", _dumps(fc.get("args") or {}), sig))
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
            msg = AssistantMessage(
                content="".join(text),
                reasoning="".join(thought) if thought else None,
                reasoning_items=ReasoningItems(REPLAY_TAG, items) if items else None,
                tool_calls=calls or None,
            )
            out.append(msg)
            pending = list(calls)
            continue
        if role != "user":
            raise ValueError(f"contents[{ci}].role: {role!r} is neither 'user' nor 'model'")
        user_parts: list[Any] = []
        last_tool: ToolMessage | None = None
        for pj, part in enumerate(parts):
            fr = _g(part, "functionResponse", "function_response")
            if fr is not None:
                name = fr.get("name") or ""
                cid = fr.get("id")
                match = None
                if cid:
                    match = next((c for c in pending if c.id == cid), None)
                else:
                    match = next((c for c in pending if c.name == name), None) or (pending[0] if pending else None)
                if match is not None:
                    pending.remove(match)
                    cid = cid or match.id
                if not cid:
                    raise ValueError(
                        f"contents[{ci}].parts[{pj}]: a functionResponse for {name!r} answers no "
                        "function call before it and has no id; give it the id of its call"
                    )
                if user_parts:
                    out.append(UserMessage(_user_content(user_parts)))
                    user_parts = []
                last_tool = ToolMessage(cid, name, _content_from_response(fr.get("response")))
                out.append(last_tool)
                continue
            inline = _g(part, "inlineData", "inline_data")
            if inline is not None:
                mime = _g(inline, "mimeType", "mime_type") or ""
                data = inline.get("data") or ""
                if last_tool is not None and not user_parts and mime in _IMAGE_MIMES:
                    last_tool.images = [*(last_tool.images or []), ImagePart(mime, data)]
                    continue
                user_parts.append(ImagePart(mime, data) if mime in _IMAGE_MIMES else FilePart(mime, data))
                continue
            if isinstance(part.get("text"), str):
                last_tool = None
                user_parts.append(TextPart(part["text"]))
                continue
            kinds = sorted(k for k in part if k not in ("thoughtSignature", "thought_signature"))
            raise ValueError(
                f"contents[{ci}].parts[{pj}]: a user part of kind {kinds} cannot be held in a "
                "canonical message (only text, inlineData and functionResponse can); inline the data "
                "as base64 first"
            )
        if user_parts:
            out.append(UserMessage(_user_content(user_parts)))
    return out


_IMAGE_MIMES = frozenset({"image/jpeg", "image/png", "image/webp", "image/gif"})


def _user_content(parts: list[Any]) -> str | list[Any]:
    if len(parts) == 1 and isinstance(parts[0], TextPart):
        return parts[0].text
    return parts


# --------------------------------------------------------------------------- tools


def _tool_from_declaration(decl: Mapping[str, Any]) -> ToolDefinition:
    schema = _g(decl, "parametersJsonSchema", "parameters_json_schema")
    if schema is None:
        params = decl.get("parameters")
        schema = _openapi_to_json_schema(params) if isinstance(params, dict) else {"type": "object", "properties": {}}
    return ToolDefinition(decl.get("name") or "", decl.get("description") or "", schema)


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


def _tool_config(choice: Any) -> dict[str, Any] | None:
    if choice is None or choice == "auto":
        return None
    if choice == "none":
        return {"functionCallingConfig": {"mode": "NONE"}}
    if choice == "required":
        return {"functionCallingConfig": {"mode": "ANY"}}
    if isinstance(choice, dict) and choice.get("name"):
        return {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [choice["name"]]}}
    raise ProviderError("gemini", ErrorKind.INVALID, f"gemini: unsupported tool_choice {choice!r}")


# --------------------------------------------------------------------------- the provider


class GeminiProvider(WireProvider):
    """Gemini over its REST API (not Vertex): ``x-goog-api-key`` auth, SSE streaming.

    ``stream_format="json-array"`` asks for the stream without ``alt=sse`` (one JSON array);
    it exists to replay recordings made that way.
    """

    wire: ClassVar[str] = "gemini"
    env_keys: tuple[str, ...] = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    default_base_url: ClassVar[str] = DEFAULT_BASE_URL

    def __init__(self, *, model: str, stream_format: str = "sse", **kwargs: Any) -> None:
        if stream_format not in ("sse", "json-array"):
            raise ValueError(f"stream_format must be 'sse' or 'json-array', got {stream_format!r}")
        super().__init__(model=_model_id(model), **kwargs)
        self.stream_format = stream_format

    # request ----------------------------------------------------------------

    def url_for(self, model: str, *, stream: bool) -> str:
        base = join_url(self.base_url, f"{API_VERSION}/models/{_model_id(model)}")
        if not stream:
            return base + ":generateContent"
        if self.stream_format == "sse":
            return base + ":streamGenerateContent?alt=sse"
        return base + ":streamGenerateContent"

    def build_request(
        self, messages: list[Message], tools: list[ToolDefinition] | None, opts: CallOptions, *, stream: bool
    ) -> WireRequest:
        model = _model_id(opts.model or self.model)
        if opts.service_tier is not None:
            raise ProviderError(
                self.id, ErrorKind.INVALID,
                f"{self.id}: service_tier is an OpenAI option; Gemini has no per-call tier (leave it unset)",
            )
        if opts.parallel_tool_calls is False and tools:
            raise ProviderError(
                self.id,
                ErrorKind.INVALID,
                f"{self.id}: Gemini cannot be limited to one tool call per turn; leave "
                "parallel_tool_calls unset or run the calls one at a time yourself",
            )
        contents, instruction = to_gemini_contents(messages, model=model)
        if not contents:
            raise ProviderError(
                self.id, ErrorKind.INVALID, f"{self.id}: nothing to send: the history has no user or model content"
            )
        body: dict[str, Any] = {"contents": contents}
        fmt = opts.json if isinstance(opts.json, JsonFormat) else None
        # Gemini 2 refuses a JSON mime type beside function calling: the schema goes in the prompt
        carried = fmt is not None and bool(tools) and (opts.json_with_tools == "prompt" or not _is_gemini3(model))
        if carried:
            assert fmt is not None
            parts = list(instruction["parts"]) if instruction is not None else []
            instruction = {**(instruction or {}), "parts": [*parts, {"text": fmt.prompt}]}
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
            tc = _tool_config(opts.tool_choice)
            if tc is not None:
                body["toolConfig"] = tc
        gen: dict[str, Any] = {}
        if opts.max_tokens is not None:
            gen["maxOutputTokens"] = opts.max_tokens
        if opts.temperature is not None:
            gen["temperature"] = opts.temperature
        if opts.top_p is not None:
            gen["topP"] = opts.top_p
        if opts.stop:
            gen["stopSequences"] = list(opts.stop)
        thinking = _thinking_config(model, opts.effort if opts.effort is not None else self.effort)
        if thinking is not None:
            gen["thinkingConfig"] = thinking
        if fmt is not None and not carried:
            gen["responseMimeType"] = "application/json"
            if fmt.schema is not None:
                gen["responseJsonSchema"] = gemini_tool_schema(fmt.schema)
        if gen:
            body["generationConfig"] = gen
        body = merge_body(body, opts.extra_body)
        headers = {"x-goog-api-key": self._api_key} if self._api_key else {}
        url = self.url_for(model, stream=stream)
        events = "json-array" if stream and self.stream_format == "json-array" else "sse"
        return WireRequest(url, headers, body, stream=stream, events=events)

    # response ---------------------------------------------------------------

    def parse_stream(self, events: Iterator[SSEEvent], opts: CallOptions) -> Iterator[Chunk]:
        # Hot path: one plain text part per frame. Usage is cumulative on every Gemini frame,
        # so only the latest is kept and stated once, before the end (or before an error, so a
        # partial turn still shows what was billed).
        st = _State(self)
        text = TextDelta
        try:
            for ev in events:
                data = ev.data
                if not data or data[0] not in "{[":
                    continue  # keep-alive or other noise: not JSON
                obj = ev.decode()
                if obj is NOT_JSON:
                    continue
                if type(obj) is dict:
                    um = obj.get("usageMetadata")
                    if um is not None:
                        st.usage_raw = um
                    if st.model is not None:
                        try:
                            cand = obj["candidates"][0]
                            (p0,) = cand["content"]["parts"]
                            t = p0["text"]
                        except (KeyError, IndexError, TypeError, ValueError):
                            pass
                        else:
                            if len(p0) == 1 and "error" not in obj:
                                if "finishReason" in cand:
                                    st.finish = cand["finishReason"]
                                if t:
                                    st.text_len += len(t)
                                    yield text(t)
                                continue
                    yield from st.feed(obj)
                elif type(obj) is list:  # a bare JSON array of responses
                    for o in obj:
                        yield from st.feed(o)
        except ProviderError:
            if st.usage_raw is not None:
                yield st.usage()
            raise
        yield from st.end()

    def parse_response(self, data: Any, opts: CallOptions) -> Iterator[Chunk]:
        st = _State(self)
        objs = data if isinstance(data, list) else (data,)
        for obj in objs:
            if isinstance(obj, dict) and obj.get("usageMetadata") is not None:
                st.usage_raw = obj["usageMetadata"]
            yield from st.feed(obj)
        if not any(isinstance(o, dict) and "candidates" in o for o in objs):
            raise FrameError("'candidates'")  # neither an answer nor a blocked prompt
        yield from st.end()


_EMPTY: dict[str, Any] = {}


class _State:
    """One turn's reading state, shared by the stream and the single JSON body."""

    __slots__ = ("p", "n_calls", "text_len", "thought_len", "finish", "model", "usage_raw")

    def __init__(self, provider: GeminiProvider) -> None:
        self.p = provider
        self.n_calls = 0
        self.text_len = 0
        self.thought_len = 0
        self.finish: str | None = None
        self.model: str | None = None
        self.usage_raw: Any = None

    def usage(self) -> UsageUpdate:
        um = self.usage_raw
        thoughts = um.get("thoughtsTokenCount") or 0
        return UsageUpdate(
            Usage(
                input_tokens=um.get("promptTokenCount") or 0,
                cached_input_tokens=um.get("cachedContentTokenCount") or 0,
                output_tokens=(um.get("candidatesTokenCount") or 0) + thoughts,
                reasoning_tokens=thoughts,
            )
        )

    def feed(self, obj: Any) -> Iterator[Chunk]:
        """The general path: any frame (errors, blocked prompts, several parts, calls)."""
        if not isinstance(obj, dict):
            return
        if "error" in obj:
            raise stream_error(self.p.id, obj, secrets=self.p.secrets)
        if self.model is None:
            self.model = obj.get("modelVersion") or ""
            if self.model:
                yield ModelInfo(self.model)
        cands = obj.get("candidates")
        if cands:
            cand = cands[0]
            parts = (cand.get("content") or _EMPTY).get("parts")
            if parts:
                yield from self._parts(parts)
            fr = cand.get("finishReason")
            if fr:
                self.finish = fr
        else:
            fb = obj.get("promptFeedback")
            if fb and fb.get("blockReason"):
                reason = fb["blockReason"]
                raise ProviderError(
                    self.p.id,
                    ErrorKind.CONTENT,
                    f"{self.p.id}: the prompt was blocked ({reason}); change the prompt, it will not "
                    "pass on a retry",
                    code=reason,
                    body=_dumps(fb)[:2000],
                )

    def _parts(self, parts: list[Any]) -> Iterator[Chunk]:
        thought: list[str] = []
        text: list[str] = []
        calls: list[ToolCallDelta] = []
        items: list[dict[str, Any]] = []
        for part in parts:
            sig = part.get("thoughtSignature")
            fc = part.get("functionCall")
            if fc is not None:
                n = self.n_calls
                self.n_calls = n + 1
                calls.append(
                    ToolCallDelta(n, fc.get("id") or f"call_{n}", fc.get("name") or None, _dumps(fc.get("args") or {}), sig)
                )
                continue
            t = part.get("text")
            if isinstance(t, str):
                if part.get("thought"):
                    if sig:
                        items.append({"type": "thought", "offset": self.thought_len, "length": len(t), "signature": sig})
                    self.thought_len += len(t)
                    thought.append(t)
                else:
                    if sig:
                        items.append({"type": "text", "offset": self.text_len, "length": len(t), "signature": sig})
                    self.text_len += len(t)
                    text.append(t)
                continue
            if part:
                items.append({"type": "part", "part": part})
        if thought:
            joined = "".join(thought)
            if joined:
                yield ReasoningDelta(joined)
        if text:
            joined = "".join(text)
            if joined:
                yield TextDelta(joined)
        if items:
            yield ReasoningItemsDelta(REPLAY_TAG, items)
        yield from calls

    def end(self) -> Iterator[Chunk]:
        if self.usage_raw is not None:
            yield self.usage()
        if self.finish is None:
            raise cut_short(self.p.id)
        fr = self.finish
        if self.n_calls:
            reason = "tool_calls"
        elif fr == "MAX_TOKENS":
            reason = "length"
        elif fr in _FILTERED:
            reason = "content_filter"
        else:
            reason = "stop"
        yield Finish(reason)


# --------------------------------------------------------------------------- replay contract

_PATH = re.compile(r"^(?P<prefix>.*?)/v1(?:beta\d*|alpha\d*)?/models/(?P<model>[^/:]+):(?P<method>streamGenerateContent|generateContent)$")


def _split(url: str) -> tuple[str, str, str, str]:
    parts = urlsplit(url)
    m = _PATH.match(parts.path)
    if m is None:
        raise ValueError(f"not a Gemini generateContent URL: {url!r}")
    base = f"{parts.scheme}://{parts.netloc}{m.group('prefix')}"
    return base, m.group("model"), m.group("method"), parts.query


def matches(url: str) -> bool:
    """Is this recorded request Gemini's generateContent / streamGenerateContent?"""
    try:
        _split(url)
    except ValueError:
        return False
    return True


def _effort_of(cfg: Any) -> str | None:
    if not isinstance(cfg, dict):
        return None
    level = _g(cfg, "thinkingLevel", "thinking_level")
    if isinstance(level, str):
        return {"MINIMAL": "none", "LOW": "low", "MEDIUM": "medium", "HIGH": "high"}.get(level.upper())
    budget = _g(cfg, "thinkingBudget", "thinking_budget")
    if isinstance(budget, int):
        if budget <= 0:
            return "none"
        for name in ("low", "medium", "high", "max"):
            if budget <= _BUDGETS[name]:
                return name
        return "max"
    return None


def import_request(url: str, body: Mapping[str, Any]) -> ImportedRequest:
    """A recorded Gemini request read back into canonical messages, tools and options."""
    _base, model, method, _query = _split(url)
    messages = from_gemini_contents(body.get("contents") or [], _g(body, "systemInstruction", "system_instruction"))
    tools: list[ToolDefinition] = []
    for t in body.get("tools") or ():
        for decl in _g(t, "functionDeclarations", "function_declarations") or ():
            tools.append(_tool_from_declaration(decl))
    options: dict[str, Any] = {"model": model}
    gen = _g(body, "generationConfig", "generation_config") or {}
    for src, snake, dst in (
        ("maxOutputTokens", "max_output_tokens", "max_tokens"),
        ("temperature", "temperature", "temperature"),
        ("topP", "top_p", "top_p"),
        ("stopSequences", "stop_sequences", "stop"),
    ):
        v = _g(gen, src, snake)
        if v is not None:
            options[dst] = v
    effort = _effort_of(_g(gen, "thinkingConfig", "thinking_config"))
    if effort is not None:
        options["effort"] = effort
    schema = _g(gen, "responseJsonSchema", "response_json_schema")
    if schema is None:
        legacy = _g(gen, "responseSchema", "response_schema")  # the OpenAPI dialect, types in capitals
        if isinstance(legacy, dict):
            schema = _openapi_to_json_schema(
                {k: v for k, v in legacy.items() if k not in ("property_ordering", "propertyOrdering")}
            )
    if isinstance(schema, dict):
        options["json"] = schema
    elif _g(gen, "responseMimeType", "response_mime_type") == "application/json":
        options["json"] = "object"
    fcc = (_g(body, "toolConfig", "tool_config") or {}).get("functionCallingConfig") or {}
    mode = fcc.get("mode")
    if mode == "NONE":
        options["tool_choice"] = "none"
    elif mode == "ANY":
        allowed = fcc.get("allowedFunctionNames") or []
        options["tool_choice"] = {"name": allowed[0]} if len(allowed) == 1 else "required"
    return ImportedRequest(messages, tools or None, options, model=model, stream=method == "streamGenerateContent")


def replay_provider(url: str, body: Mapping[str, Any], transport: Any) -> GeminiProvider:
    """A provider aimed at the recorded endpoint, asking for the same stream form."""
    base, model, method, query = _split(url)
    fmt = "sse" if method != "streamGenerateContent" or "alt=sse" in query else "json-array"
    return GeminiProvider(model=model, api_key="replay-key", base_url=base, transport=transport, stream_format=fmt)
