"""The OpenAI Responses wire on paper (the OpenAI API and the ChatGPT backend): a history as
``instructions`` plus ``input`` items and back, the body a call builds, and the rules behind the
server's 400s.

The points that cost people days, all kept here:

- ``store: false`` always (zero-data-retention accounts refuse storage), so reasoning survives
  only as encrypted items: they are asked for with ``include: ["reasoning.encrypted_content"]``,
  kept whole in ``reasoning_items`` tagged with the provider's id, and sent back only to a
  provider with the same tag, newest turns first within 8 MiB.
- A reasoning item must be followed by the item it was produced with, or the server answers
  "Item 'rs_...' of type 'reasoning' was provided without its required following item". So a
  turn's reasoning items are sent only when that turn still sends a message or a call after them
  (a turn cut down to nothing by repair sends no reasoning), and never twice.
- Tool results quote the model's ``call_id``, never the ``fc_`` item id.
- Tools are flat, ``strict`` is stated truthfully, and regex ``pattern``s are removed.

Pure: the HTTP request and the stream (which states things twice) are
``providers.openai_responses``'.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

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
    ensure_messages,
)
from ..core.structured import JsonFormat, is_strict_schema, json_request
from ..core.tools import ToolDefinition
from ..core.validate import Problem
from .base import ImportedRequest, Supports, WireProblem
from .openai_models import effort_from_level, openai_effort_level
from .options import CallOptions, Option, OptionTable, left_out, merge_body

__all__ = [
    "SUPPORTS",
    "OPTIONS",
    "ResponsesPlan",
    "build_body",
    "to_responses_input",
    "from_responses_input",
    "tool_to_wire",
    "without_patterns",
    "reasoning_texts",
    "REASONING_GAP",
    "MAX_REPLAY_BYTES",
    "OPENAI_TAG",
    "CHATGPT_TAG",
    "matches",
    "import_request",
    "RULES",
    "check",
    "check_wire",
]

MAX_REPLAY_BYTES = 8 * 1024 * 1024
OPENAI_TAG = "openai-responses"
CHATGPT_TAG = "chatgpt"
REASONING_GAP = "\n\n"  # between the parts of readable reasoning
_COMPACT = (",", ":")

SUPPORTS = Supports(
    files=frozenset({"application/pdf"}),
    tool_images=True,  # a function_call_output may be a list of text and image parts
    schemas="regex patterns removed; strict stated as the schema allows",
    reasoning="encrypted reasoning items, to the provider that made them, newest first within 8 MiB",
    json_forms=("json_schema", "json_object", "prompt"),
)


# --------------------------------------------------------------------------- canonical -> wire


def _data_uri(mime: str, data: str) -> str:
    return f"data:{mime};base64,{data}"


def _user_content(m: UserMessage, index: int, provider: str) -> str | list[dict[str, Any]]:
    c = m.content
    if isinstance(c, str):
        return c
    parts: list[dict[str, Any]] = []
    for p in c:
        if isinstance(p, TextPart):
            parts.append({"type": "input_text", "text": p.text})
        elif isinstance(p, ImagePart):
            parts.append({"type": "input_image", "image_url": p.data_uri()})
        elif isinstance(p, FilePart):
            SUPPORTS.check_file(
                provider, p.mime_type,
                f"{provider}: message {index}: the Responses wire takes PDF files only, not {p.mime_type}; "
                "convert the file to text or send it to a wire that accepts it (Gemini)",
            )
            parts.append(
                {"type": "input_file", "filename": p.name or "file.pdf", "file_data": _data_uri(p.mime_type, p.data)}
            )
    return parts


def _replayable(items: Sequence[Any]) -> list[dict[str, Any]]:
    """The reasoning items of a turn as they go back: whole, with ``summary`` always present
    (strict third-party servers 400 on "missing required field `summary`")."""
    out = []
    for it in items:
        if isinstance(it, dict) and it.get("type") == "reasoning":
            if "summary" not in it:
                it = {**it, "summary": []}
            out.append(it)
    return out


def _select_reasoning(messages: Sequence[Message], tag: str | None) -> dict[int, list[dict[str, Any]]]:
    """Which assistant turns send their reasoning items: same tag (``None`` = any), a follower
    in the same turn, newest first within MAX_REPLAY_BYTES; older turns lose theirs first."""
    chosen: dict[int, list[dict[str, Any]]] = {}
    total = 0
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if not isinstance(m, AssistantMessage) or m.reasoning_items is None:
            continue
        if tag is not None and m.reasoning_items.provider != tag:
            continue
        if not (m.content or m.tool_calls):
            continue  # nothing would follow the reasoning: the server refuses that
        items = _replayable(m.reasoning_items.items)
        if not items:
            continue
        size = len(json.dumps(items, separators=_COMPACT, ensure_ascii=False))
        if total + size > MAX_REPLAY_BYTES:
            break
        total += size
        chosen[i] = items
    return chosen


def _tool_output(m: ToolMessage) -> Any:
    if not m.images:
        return m.content
    return ([{"type": "input_text", "text": m.content}] if m.content else []) + [
        {"type": "input_image", "image_url": p.data_uri()} for p in m.images
    ]


def _assistant_items(m: AssistantMessage, reasoning: Sequence[dict[str, Any]], seen: set[str]) -> list[dict[str, Any]]:
    """A turn's items: its chosen reasoning (an item already sent is never sent twice: "Duplicate
    item found with id rs_..."), its text, its calls."""
    items: list[dict[str, Any]] = []
    for it in reasoning:
        rid = it.get("id")
        if isinstance(rid, str):
            if rid in seen:
                continue
            seen.add(rid)
        items.append(it)
    if m.content:
        items.append({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": m.content}]})
    items.extend(
        {"type": "function_call", "call_id": call.id, "name": call.name, "arguments": call.arguments}
        for call in m.tool_calls or ()
    )
    return items


def to_responses_input(
    messages: Sequence[Message | dict[str, Any]], tag: str | None = OPENAI_TAG
) -> tuple[str, list[dict[str, Any]], list[int]]:
    """Canonical history -> (instructions, input items, message index of each item).

    ``tag`` is the replay tag of the provider that will receive it; reasoning items carrying
    another tag are left out. ``None`` keeps every provider's (used by the offline validator).
    """
    msgs = ensure_messages(messages)
    chosen = _select_reasoning(msgs, tag)
    system: list[str] = []
    items: list[dict[str, Any]] = []
    origin: list[int] = []
    seen_reasoning: set[str] = set()
    for i, m in enumerate(msgs):
        if isinstance(m, SystemMessage):
            if m.content:
                system.append(m.content)
            continue
        if isinstance(m, UserMessage):
            made = [{"role": "user", "content": _user_content(m, i, tag or OPENAI_TAG)}]
        elif isinstance(m, ToolMessage):
            made = [{"type": "function_call_output", "call_id": m.tool_call_id, "output": _tool_output(m)}]
        else:
            made = _assistant_items(m, chosen.get(i, ()), seen_reasoning)
        items.extend(made)
        origin.extend([i] * len(made))
    return "\n\n".join(system), items, origin


# keywords whose value is one subschema, a list of them, or a name -> subschema map
_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
        "unevaluatedItems", "unevaluatedProperties")
_LIST = ("anyOf", "oneOf", "allOf", "prefixItems")
_MAP = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


def without_patterns(schema: Any) -> Any:
    """A copy of ``schema`` without any ``pattern`` keyword where a subschema can sit (the
    ChatGPT backend 400s on regexes it cannot compile). A property *named* "pattern" and data
    keywords (enum, const, default, examples) stay."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "pattern":
            continue
        if key in _ONE and isinstance(value, dict):
            out[key] = without_patterns(value)
        elif (key in _LIST or key == "items") and isinstance(value, list):
            out[key] = [without_patterns(v) for v in value]
        elif key in _MAP and isinstance(value, dict):
            out[key] = {k: without_patterns(v) for k, v in value.items()}
        else:
            out[key] = value
    return out


def tool_to_wire(t: ToolDefinition) -> dict[str, Any]:
    """A tool as the Responses wire takes it: flat, ``strict`` stated truthfully, no regexes."""
    schema = t.input_schema or {"type": "object", "properties": {}}
    return {
        "type": "function",
        "name": t.name,
        "description": t.description or "",
        "parameters": without_patterns(schema),
        "strict": is_strict_schema(schema),
    }


# --------------------------------------------------------------------------- the option table


@dataclass(slots=True)
class ResponsesPlan:
    """What one Responses request was resolved to, besides its history and options."""

    provider: str
    model: str
    tools: list[ToolDefinition] | None = None
    max_output_tokens: bool = True  # the ChatGPT backend refuses the field: it is left out
    json_prompt_only: bool = False  # tools with json_with_tools="prompt": the schema rides in the prompt


def _write_effort(body: dict[str, Any], effort: str, plan: ResponsesPlan) -> None:
    """The reasoning block for an explicit effort (summaries asked for whenever it thinks)."""
    level = openai_effort_level(plan.model, effort)
    body["reasoning"] = {"effort": level} if effort == "none" else {"effort": level, "summary": "auto"}


def _write_json(body: dict[str, Any], fmt: Any, plan: ResponsesPlan) -> None:
    if not isinstance(fmt, JsonFormat):
        return
    ask = json_request(fmt, enforce_schema=True, prompt_only=plan.json_prompt_only)
    if ask.format == "json_schema":
        body["text"] = {"format": {"type": "json_schema", "name": fmt.name, "schema": fmt.schema, "strict": fmt.is_strict}}
    elif ask.format is not None:
        body["text"] = {"format": {"type": ask.format}}
    if ask.prompt is not None:
        # the instruction rides after the history (the cached prefix survives it)
        body["input"].append({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": ask.prompt}]})


def _read_json(body: Mapping[str, Any]) -> Any:
    fmt = OPTIONS.at(body, "text.format")
    if not isinstance(fmt, dict):
        return None
    if fmt.get("type") == "json_schema":
        return {"type": "json_schema", "json_schema": {k: fmt[k] for k in ("name", "schema", "strict") if k in fmt}}
    return "object" if fmt.get("type") == "json_object" else None


def _back_choice(choice: Any) -> Any:
    if isinstance(choice, str):
        return choice
    return {"name": choice["name"]} if isinstance(choice, dict) and choice.get("name") else None


OPTIONS = OptionTable((
    # only with tools, and only to say no (true is the server's default)
    Option("parallel_tool_calls", "parallel_tool_calls", send=lambda v, plan: False if v is False and plan.tools else None),
    Option("tool_choice", "tool_choice", back=_back_choice,
           send=lambda v, plan: v if isinstance(v, str) else {"type": "function", "name": v["name"]}),
    Option("max_tokens", "max_output_tokens", send=lambda v, plan: v if plan.max_output_tokens else None),
    Option("temperature", "temperature"),
    Option("top_p", "top_p"),
    left_out("stop"),  # the Responses API has no stop sequences
    Option("effort", "reasoning.effort", write=_write_effort, back=lambda v: effort_from_level(v) if v else None),
    Option("service_tier", "service_tier", back=lambda v: v if isinstance(v, str) else None),
    Option("json", "text.format", write=_write_json, read=_read_json),
))


def build_body(
    messages: Sequence[Message],
    tools: Sequence[ToolDefinition] | None,
    opts: CallOptions,
    plan: ResponsesPlan,
    *,
    tag: str,
    stream: bool,
    instructions: bool = False,
    include_encrypted: bool = True,
    cache_key: str | None = None,
) -> dict[str, Any]:
    """The request body: ``opts`` as resolved (its effort is what is sent), ``tag`` the replay
    tag whose reasoning goes back, ``instructions`` sent even when empty (the ChatGPT backend
    wants the field), ``cache_key`` the ``prompt_cache_key`` (None: left out)."""
    text, items, _ = to_responses_input(messages, tag)
    body: dict[str, Any] = {"model": plan.model, "input": items, "store": False, "stream": stream}
    if text or instructions:
        body["instructions"] = text
    if include_encrypted:
        body["include"] = ["reasoning.encrypted_content"]
    if tools:
        body["tools"] = [tool_to_wire(t) for t in tools]
    OPTIONS.write(body, opts, plan)
    if cache_key is not None:
        body["prompt_cache_key"] = cache_key
    return merge_body(body, opts.extra_body)


# --------------------------------------------------------------------------- wire -> canonical


def reasoning_texts(item: dict[str, Any]) -> list[str]:
    """The readable parts of a reasoning item: its summary, then its raw reasoning text."""
    out = []
    for part in item.get("summary") or ():
        if isinstance(part, dict) and part.get("text"):
            out.append(part["text"])
    for part in item.get("content") or ():
        if isinstance(part, dict) and part.get("text"):
            out.append(part["text"])
    return out


def _text_of_parts(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise ValueError(f"{where}: content must be a string or a list of parts")
    out = []
    for j, p in enumerate(content):
        if not isinstance(p, dict):
            raise ValueError(f"{where}, part {j}: a content part must be an object")
        if p.get("type") in ("input_text", "output_text", "text"):
            out.append(p.get("text") or "")
        elif p.get("type") == "refusal":
            out.append(p.get("refusal") or "")
        else:
            raise ValueError(f"{where}, part {j}: a {p.get('type')!r} part cannot go in this message")
    return "".join(out)


_DATA_URI = re.compile(r"^data:([^;,]+);base64,(.*)$", re.S)


def _image(url: Any, where: str) -> ImagePart:
    m = _DATA_URI.match(url) if isinstance(url, str) else None
    if m is None:
        raise ValueError(
            f"{where}: only inline base64 images (data: URIs) can be imported; download the image "
            "and pass it as a data URI"
        )
    return ImagePart(m.group(1), m.group(2))


def _user_parts(content: Any, where: str) -> str | list[Any]:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise ValueError(f"{where}: content must be a string or a list of parts")
    parts: list[Any] = []
    for j, p in enumerate(content):
        w = f"{where}, part {j}"
        kind = p.get("type") if isinstance(p, dict) else None
        if kind in ("input_text", "text"):
            parts.append(TextPart(p.get("text") or ""))
        elif kind == "input_image":
            parts.append(_image(p.get("image_url"), w))
        elif kind == "input_file":
            m = _DATA_URI.match(p.get("file_data") or "")
            if m is None:
                raise ValueError(f"{w}: only inline files (file_data as a data: URI) can be imported")
            parts.append(FilePart(m.group(1), m.group(2), p.get("filename")))
        else:
            raise ValueError(f"{w}: unknown user content part {kind!r}")
    return parts


def _output_of(output: Any, where: str) -> tuple[str, list[ImagePart]]:
    """A function_call_output's output as text (and the images a list of parts holds)."""
    if isinstance(output, str):
        return output, []
    if not isinstance(output, list):
        return json.dumps(output, ensure_ascii=False), []
    texts: list[str] = []
    images: list[ImagePart] = []
    for j, p in enumerate(output):
        if isinstance(p, dict) and p.get("type") == "input_image":
            images.append(_image(p.get("image_url"), f"{where}, output {j}"))
        elif isinstance(p, dict) and p.get("type") in ("input_text", "output_text", "text"):
            texts.append(p.get("text") or "")
        else:
            raise ValueError(f"{where}, output {j}: unsupported output part")
    return "".join(texts), images


class _Reading:
    """One ``input`` list being read: consecutive assistant items (reasoning, message, calls) are
    one turn; a second message, or reasoning after calls, starts another."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.out: list[Message] = []
        self.names: dict[str, str] = {}
        self.cur: AssistantMessage | None = None

    def turn(self, new: bool = False) -> AssistantMessage:
        """The assistant turn being read (``new``: close it and open another)."""
        if new or self.cur is None:
            self.cur = AssistantMessage()
            self.out.append(self.cur)
        return self.cur

    def other(self, message: Message) -> None:
        self.cur = None
        self.out.append(message)

    def system(self, item: dict[str, Any], where: str) -> None:
        self.other(SystemMessage(_text_of_parts(item.get("content"), where)))

    def user(self, item: dict[str, Any], where: str) -> None:
        self.other(UserMessage(_user_parts(item.get("content"), where)))

    def assistant(self, item: dict[str, Any], where: str) -> None:
        text = _text_of_parts(item.get("content"), where)
        a = self.cur
        self.turn(new=a is not None and bool(a.content or a.tool_calls)).content += text

    def reasoning(self, item: dict[str, Any], where: str) -> None:
        a = self.turn(new=self.cur is not None and bool(self.cur.tool_calls))
        if a.reasoning_items is None:
            a.reasoning_items = ReasoningItems(self.provider, [])
        a.reasoning_items.items.append(copy.deepcopy(item))
        texts = reasoning_texts(item)
        if texts:
            joined = REASONING_GAP.join(texts)
            a.reasoning = joined if not a.reasoning else a.reasoning + REASONING_GAP + joined

    def call(self, item: dict[str, Any], where: str) -> None:
        call_id = item.get("call_id") or item.get("id")
        if not call_id or not item.get("name"):
            raise ValueError(f"{where}: a function_call needs a call_id and a name")
        a = self.turn()
        a.tool_calls = (a.tool_calls or []) + [ToolCall(call_id, item["name"], item.get("arguments") or "")]
        self.names[call_id] = item["name"]

    def output(self, item: dict[str, Any], where: str) -> None:
        self.cur = None
        call_id = item.get("call_id")
        if not call_id:
            raise ValueError(f"{where}: a function_call_output needs a call_id")
        text, images = _output_of(item.get("output"), where)
        self.other(ToolMessage(call_id, self.names.get(call_id, ""), text, images or None))

    def read(self, i: int, item: Any) -> None:
        where = f"input[{i}]"
        if not isinstance(item, dict):
            raise ValueError(f"{where}: an input item must be an object")
        kind = item.get("type")
        role = item.get("role")
        key = ("message", role) if kind in (None, "message") and isinstance(role, str) else kind
        reader = _ITEMS.get(key) if isinstance(key, str | tuple) else None
        if reader is None:
            raise ValueError(
                f"{where}: items of type {kind!r} cannot be represented in a canonical history "
                "(only messages, reasoning, function_call and function_call_output)"
            )
        reader(self, item, where)


_ITEMS: dict[Any, Callable[[_Reading, dict[str, Any], str], None]] = {
    ("message", "system"): _Reading.system,
    ("message", "developer"): _Reading.system,
    ("message", "user"): _Reading.user,
    ("message", "assistant"): _Reading.assistant,
    "reasoning": _Reading.reasoning,
    "function_call": _Reading.call,
    "function_call_output": _Reading.output,
}


def from_responses_input(
    input: str | Sequence[dict[str, Any]], instructions: str | None = None, *, provider: str = OPENAI_TAG
) -> list[Message]:
    """A Responses ``input`` (plus ``instructions``) as canonical messages, losslessly for what
    the canonical shape holds: reasoning items whole (tagged ``provider``), call ids, images.

    Consecutive assistant items (reasoning, message, function calls) form one assistant turn; a
    second message, or reasoning after calls, starts another. Items the canonical shape cannot
    hold (hosted tool calls, item references) are refused with the index, never dropped.
    """
    reading = _Reading(provider)
    if instructions:
        reading.out.append(SystemMessage(instructions))
    if isinstance(input, str):
        reading.out.append(UserMessage(input))
        return reading.out
    if not isinstance(input, (list, tuple)):
        raise ValueError("input must be a string or a list of input items")
    for i, item in enumerate(input):
        reading.read(i, item)
    return reading.out


# --------------------------------------------------------------------------- recorded requests


def matches(url: str) -> bool:
    """A recorded request URL on this wire: a POST to ``.../responses``."""
    return urlsplit(url).path.rstrip("/").endswith("/responses")


def import_request(url: str, body: dict[str, Any]) -> ImportedRequest:
    """A recorded Responses request read back into canonical messages, tools and options."""
    messages = from_responses_input(body.get("input") or [], body.get("instructions"))
    tools = None
    if body.get("tools"):
        tools = [
            ToolDefinition(t["name"], t.get("description") or "", t.get("parameters") or {})
            for t in body["tools"]
            if isinstance(t, dict) and t.get("type") == "function"
        ]
    opts: dict[str, Any] = {"model": body["model"]} if body.get("model") else {}
    opts.update(OPTIONS.read(body))
    return ImportedRequest(messages, tools, opts, body.get("model"), bool(body.get("stream", False)))


# --------------------------------------------------------------------------- rules

DANGLING_CALL = "responses.dangling_function_call"
ORPHAN_OUTPUT = "responses.orphan_function_call_output"
REASONING_WITHOUT_FOLLOWER = "responses.reasoning_without_follower"
DUPLICATE_ITEM = "responses.duplicate_item"
DUPLICATE_OUTPUT = "responses.duplicate_function_call_output"
MISSING_SUMMARY = "responses.reasoning_missing_summary"

# (rule id, stable part of the provider's wording)
RULES: list[tuple[str, str]] = [
    (DANGLING_CALL, "No tool output found for function call"),
    (ORPHAN_OUTPUT, "No tool call found for function call output with call_id"),
    (REASONING_WITHOUT_FOLLOWER, "of type 'reasoning' was provided without its required following item"),
    (DUPLICATE_ITEM, "Duplicate item found with id"),
    (DUPLICATE_OUTPUT, "Each function_call must have exactly one matching function_call_output"),
    (MISSING_SUMMARY, "missing required field `summary`"),
]
_WORDING = dict(RULES)

# items that can follow a reasoning item: what the model produced after it
_FOLLOWERS = frozenset({"message", "function_call", "custom_tool_call", "web_search_call", "file_search_call",
                        "computer_call", "code_interpreter_call", "image_generation_call", "local_shell_call",
                        "mcp_call", "shell_call", "apply_patch_call"})


def _kind(item: Any) -> str | None:
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    if kind is None and "role" in item:
        return "message"
    return kind


def _is_output_message(item: dict[str, Any]) -> bool:
    """An assistant message in output form (content parts), which can follow reasoning; an
    "easy" ``{"role": "assistant", "content": "text"}`` cannot (a recorded 400 shows it)."""
    content = item.get("content")
    return (
        item.get("role") == "assistant"
        and isinstance(content, list)
        and any(isinstance(p, dict) and p.get("type") in ("output_text", "refusal") for p in content)
    )


class _Checking:
    """One ``input`` list being checked, item by item, then its calls as a whole."""

    def __init__(self, items: list[Any]) -> None:
        self.items = items
        self.found: list[WireProblem] = []
        self.seen_ids: set[str] = set()
        self.calls: dict[str, int] = {}
        self.answered: set[str] = set()

    def add(self, rule: str, at: int, text: str) -> None:
        self.found.append(WireProblem(rule, at, text, _WORDING[rule]))

    def item(self, k: int, item: dict[str, Any], kind: str) -> None:
        iid = item.get("id")
        if isinstance(iid, str) and iid:
            if iid in self.seen_ids:
                self.add(DUPLICATE_ITEM, k, f"Duplicate item found with id {iid}. Remove duplicate items from your input and try again.")
            self.seen_ids.add(iid)
        if kind == "reasoning":
            self.reasoning(k, item, iid)
        elif kind == "function_call":
            cid = item.get("call_id")
            if isinstance(cid, str):
                self.calls.setdefault(cid, k)
        elif kind == "function_call_output":
            self.output(k, item.get("call_id"))

    def reasoning(self, k: int, item: dict[str, Any], iid: Any) -> None:
        if "summary" not in item:
            self.add(MISSING_SUMMARY, k, f"Input[{k}] missing required field `summary`")
        nxt = self.items[k + 1] if k + 1 < len(self.items) else None
        nk = _kind(nxt)
        ok = nk in _FOLLOWERS and (nk != "message" or _is_output_message(nxt))  # type: ignore[arg-type]  # a kind means an item
        if not ok and nk != "reasoning":
            self.add(
                REASONING_WITHOUT_FOLLOWER,
                k,
                f"Item '{iid or f'input[{k}]'}' of type 'reasoning' was provided without its required following item.",
            )

    def output(self, k: int, cid: Any) -> None:
        if not isinstance(cid, str) or cid not in self.calls:
            self.add(ORPHAN_OUTPUT, k, f"No tool call found for function call output with call_id {cid}.")
        elif cid in self.answered:
            self.add(
                DUPLICATE_OUTPUT,
                k,
                f"Duplicate function_call_output for call_id '{cid}'. Each function_call must have exactly "
                "one matching function_call_output",
            )
        else:
            self.answered.add(cid)

    def dangling(self) -> None:
        """A call must be answered before the conversation moves on to another message."""
        items, n = self.items, len(self.items)
        for cid, k in self.calls.items():
            end = next((j for j in range(k + 1, n) if _kind(items[j]) == "message"), n)
            if not any(
                _kind(items[j]) == "function_call_output" and items[j].get("call_id") == cid for j in range(k + 1, end)
            ):
                self.add(DANGLING_CALL, k, f"No tool output found for function call {cid}.")


def check_wire(input: Sequence[Any]) -> list[WireProblem]:
    """Every rule against a Responses ``input`` list (what goes over the wire, or a request
    another tool recorded), in input order; ``at`` is the input position."""
    checking = _Checking(list(input))
    for k, item in enumerate(checking.items):
        kind = _kind(item)
        if kind is not None:
            checking.item(k, item, kind)
    checking.dangling()
    checking.found.sort(key=lambda p: p.at)
    return checking.found


def check(messages: Sequence[Message], *, tag: str | None = None) -> list[Problem]:
    """The Responses rules for a canonical history, as ``to_responses_input`` sends it, so they
    predict what that request would get back; ``Problem.index`` is the canonical message index.

    ``tag`` is the receiving provider's replay tag; ``None`` keeps every provider's reasoning
    items (the strictest reading).
    """
    _, items, origin = to_responses_input(list(messages), tag)
    return [
        Problem(p.rule, origin[p.at] if p.at < len(origin) else p.at, p.message, p.provider_wording)
        for p in check_wire(items)
    ]
