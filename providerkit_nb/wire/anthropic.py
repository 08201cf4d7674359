"""The Anthropic Messages wire on paper (Anthropic, Claude sign-in, and the Anthropic-shaped
gateways): a history as ``system`` plus ``messages`` and back, the thinking table by model, the
body a call builds, and the rules behind the API's 400s.

What this wire needs that others do not: ``max_tokens`` is mandatory; the system prompt is a
separate field (sent as one cached block so the prefix stays cacheable); a turn's tool results
are the first blocks of the next user turn; consecutive same-role turns must be merged; and
extended thinking signs its blocks, so a tool loop that thinks needs the signed blocks back,
unchanged and in place. Thinking and redacted_thinking blocks are kept as ``reasoning_items``
tagged with the provider's replay tag and sent back only to it. Pure: the HTTP request and the
stream are ``providers.anthropic``'s.
"""

from __future__ import annotations

import base64
import copy
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from ..core.errors import ErrorKind, ProviderError
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
from .base import ImportedRequest, Supports, WireProblem
from .options import EFFORTS, CallOptions, Option, OptionTable, merge_body, refused

__all__ = [
    "SUPPORTS",
    "OPTIONS",
    "AnthropicPlan",
    "build_body",
    "thinking_plan",
    "ThinkingPlan",
    "to_anthropic_messages",
    "from_anthropic_messages",
    "Converted",
    "drop_last_thinking",
    "input_as_arguments",
    "read_tool_result",
    "read_image",
    "read_document",
    "matches",
    "import_request",
    "REASONING_BLOCK_TYPES",
    "DEFAULT_MAX_TOKENS",
    "RULES",
    "check",
    "check_wire",
]

DEFAULT_MAX_TOKENS = 8192
REASONING_BLOCK_TYPES = frozenset({"thinking", "redacted_thinking"})

SUPPORTS = Supports(
    files=frozenset({"application/pdf", "text/plain"}),
    tool_images=True,  # a tool_result holds text and image blocks
    schemas="an object at the root; a union at the root merged into one object",
    reasoning="signed thinking and redacted_thinking blocks, in place, to the provider that signed them",
    json_forms=("prompt",),  # the schema as a second, uncached system block
)

_BUDGET = {"low": 2048, "medium": 8192, "high": 16384, "max": 32768}
_MIN_BUDGET = 1024  # Claude refuses a smaller thinking budget
_SEP = (",", ":")
input_as_arguments = json.JSONEncoder(ensure_ascii=False, separators=_SEP).encode
"""A tool_use ``input`` as the arguments text a call keeps (compact JSON, without a new encoder
per call)."""


# --------------------------------------------------------------------------- thinking by model


@dataclass(frozen=True, slots=True)
class _Family:
    """How an adaptive-thinking Claude family takes effort.

    ``none`` is what an explicit effort "none" sends (None: nothing, because silence is
    already off); ``sampling`` says the sampling options are accepted when not thinking;
    ``forced_tool`` says tool_choice any/tool is accepted.
    """

    none: dict[str, Any] | None
    sampling: bool
    forced_tool: bool


_LATEST = _Family({"output_config": {"effort": "low"}}, False, False)
_ALWAYS_ON = _Family({"output_config": {"effort": "low"}}, False, True)
_FAMILIES: dict[str, _Family] = {
    "claude-fable-5-1": _LATEST,
    "claude-mythos-5-1": _LATEST,
    "claude-opus-5-5": _LATEST,
    "claude-fable-5": _ALWAYS_ON,
    "claude-mythos-5": _ALWAYS_ON,
    "claude-mythos-preview": _ALWAYS_ON,
    "claude-opus-5": _ALWAYS_ON,
    "claude-sonnet-5-5": _Family({"thinking": {"type": "between_tools"}}, False, False),
    "claude-sonnet-5": _Family({"thinking": {"type": "disabled"}}, False, True),
    "claude-opus-4-8": _Family(None, False, True),
    "claude-opus-4-7": _Family(None, False, True),
    "claude-opus-4-6": _Family(None, True, True),
    "claude-sonnet-4-6": _Family(None, True, True),
}
_EXTENDED_ONLY = re.compile(r"^claude-(3-|(opus|sonnet|haiku)-4(-[0-5])?$)")
_SUFFIX = re.compile(r"(-\d{8}|-latest|@.*)$")


def model_key(model: str) -> str:
    """``anthropic/claude-opus-4.6-20260101`` -> ``claude-opus-4-6`` (the key of the table)."""
    key = model.rsplit("/", 1)[-1].lower().replace(".", "-")
    return _SUFFIX.sub("", key)


def _family(model: str) -> _Family | None:
    """The adaptive family, or None for the budget dialect (Claude <= 4.5 and non-Claude)."""
    key = model_key(model)
    if not key.startswith("claude-") or _EXTENDED_ONLY.match(key):
        return None
    return _FAMILIES.get(key, _LATEST)


@dataclass(slots=True)
class ThinkingPlan:
    """What the request says about thinking, and what follows from it."""

    fields: dict[str, Any]  # thinking / output_config to merge into the body
    on: bool | None  # True thinking, False known off, None the server's default
    sampling: bool  # the sampling options (the rows that send with _sampling) may be sent
    forced_tool: bool  # tool_choice any/tool may be sent


def thinking_plan(
    model: str,
    effort: str | None,
    max_tokens: int,
    *,
    forced: bool = False,
    loop_without_thinking: bool = False,
    explicit_none: bool = False,
) -> ThinkingPlan:
    """The thinking/effort table by model.

    Adaptive Claude (4.6 and later): graded effort -> ``thinking: adaptive`` plus
    ``output_config.effort``; "none" -> whatever that family needs to stop thinking.
    Budget dialect (Claude <= 4.5 and every non-Claude model on this wire): graded effort ->
    ``thinking: enabled`` with a budget; a forced tool, or a tool loop whose last assistant turn
    has no leading signed thinking block, sends no thinking (the API would refuse it).
    """
    fam = _family(model)
    graded = effort in _BUDGET
    if fam is not None:
        if graded:
            fields: dict[str, Any] = {"thinking": {"type": "adaptive"}, "output_config": {"effort": effort}}
            return ThinkingPlan(fields, True, False, fam.forced_tool)
        if effort == "none" and fam.none is not None:
            fields = copy.deepcopy(fam.none)
            off = fields.get("thinking", {}).get("type") == "disabled"
            return ThinkingPlan(fields, False if off else True, fam.sampling and off, fam.forced_tool)
        silent_on = fam.none is not None  # the family thinks unless told not to
        return ThinkingPlan({}, True if silent_on else False, fam.sampling and not silent_on, fam.forced_tool)

    is_claude = model_key(model).startswith("claude-")
    if graded and not forced and not loop_without_thinking:
        budget = min(_BUDGET[effort], (max_tokens * 4) // 5)  # type: ignore[index]  # graded: effort is a key of _BUDGET
        if not is_claude or budget >= _MIN_BUDGET:
            return ThinkingPlan({"thinking": {"type": "enabled", "budget_tokens": budget}}, True, False, True)
    if explicit_none and (effort is None or effort == "none" or graded):
        return ThinkingPlan({"thinking": {"type": "disabled"}}, False, True, True)
    # Claude <= 4.5 does not think unless asked; elsewhere silence is the server's default
    return ThinkingPlan({}, False if is_claude or effort == "none" else None, True, True)


# --------------------------------------------------------------------------- canonical -> wire


def _image_block(p: ImagePart) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": p.mime_type, "data": p.data}}


def _file_block(p: FilePart, where: str) -> dict[str, Any]:
    if p.mime_type == "application/pdf":
        block: dict[str, Any] = {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": p.data},
        }
    elif p.mime_type == "text/plain":
        text = base64.b64decode(p.data).decode("utf-8", "replace")
        block = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": text}}
    else:
        SUPPORTS.check_file(
            "anthropic", p.mime_type,
            f"{where}: Anthropic takes PDF and plain-text files only, not {p.mime_type!r}; "
            "convert the file or send it to a wire that takes it (Gemini)",
        )
    if p.name:
        block["title"] = p.name
    return block


def _tool_use_block(call: ToolCall) -> dict[str, Any]:
    return {"type": "tool_use", "id": call.id, "name": call.name, "input": parse_tool_args(call.arguments)}


def _tool_result_block(m: ToolMessage) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": m.tool_call_id}
    if m.images:
        parts: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
        parts.extend(_image_block(p) for p in m.images)
        block["content"] = parts
    elif m.content:
        block["content"] = m.content
    return block


def _reasoning_blocks(m: AssistantMessage, tag: str) -> list[dict[str, Any]]:
    """This provider's signed blocks, unchanged; anything signed elsewhere is dropped."""
    ri = m.reasoning_items
    if ri is None or ri.provider != tag:
        return []
    return [b for b in ri.items if isinstance(b, dict) and b.get("type") in REASONING_BLOCK_TYPES]


def _user_blocks(m: UserMessage, i: int) -> list[dict[str, Any]]:
    """A user message's blocks (empty text is no block: Anthropic refuses it)."""
    if isinstance(m.content, str):
        return [{"type": "text", "text": m.content}] if m.content else []
    blocks: list[dict[str, Any]] = []
    for p in m.content:
        if isinstance(p, TextPart):
            if p.text:
                blocks.append({"type": "text", "text": p.text})
        elif isinstance(p, ImagePart):
            blocks.append(_image_block(p))
        else:
            blocks.append(_file_block(p, f"message {i}"))
    return blocks


@dataclass(slots=True)
class Converted:
    """A canonical history in Anthropic's shape; ``sources[i]`` lists the canonical message
    indexes that turn ``i`` came from (for validator messages)."""

    system: str
    messages: list[dict[str, Any]]
    sources: list[list[int]]


def to_anthropic_messages(messages: Sequence[Message], tag: str = "anthropic") -> Converted:
    """System lifted, turns merged by role, tool results first in their user turn, signed
    reasoning blocks of ``tag`` in place before the text and tool_use blocks of their turn."""
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    sources: list[list[int]] = []
    results: list[dict[str, Any]] = []  # tool_result blocks of the open user turn
    others: list[dict[str, Any]] = []  # everything else in the open user turn
    user_src: list[int] = []

    def close_user() -> None:
        nonlocal results, others, user_src
        if results or others:
            turns.append({"role": "user", "content": results + others})
            sources.append(user_src)
        results, others, user_src = [], [], []

    for i, m in enumerate(messages):
        if isinstance(m, SystemMessage):
            if m.content:
                system.append(m.content)
        elif isinstance(m, ToolMessage):
            results.append(_tool_result_block(m))
            user_src.append(i)
        elif isinstance(m, UserMessage):
            others.extend(_user_blocks(m, i))
            user_src.append(i)
        elif isinstance(m, AssistantMessage):
            blocks = _reasoning_blocks(m, tag)
            said = bool(m.content) or bool(m.tool_calls)
            if not said:
                continue  # nothing to say (a thinking-only turn is not a turn)
            if m.content:
                blocks.append({"type": "text", "text": m.content})
            blocks.extend(_tool_use_block(c) for c in m.tool_calls or ())
            close_user()
            if turns and turns[-1]["role"] == "assistant":
                turns[-1]["content"].extend(blocks)
                sources[-1].append(i)
            else:
                turns.append({"role": "assistant", "content": blocks})
                sources.append([i])
        else:  # pragma: no cover - ensure_messages guarantees the four roles
            raise TypeError(f"message {i}: not a message: {m!r}")
    close_user()
    return Converted("\n\n".join(system), turns, sources)


def _last_assistant(turns: list[dict[str, Any]]) -> int | None:
    for k in range(len(turns) - 1, -1, -1):
        if turns[k]["role"] == "assistant":
            return k
    return None


def tool_loop_turn(turns: list[dict[str, Any]]) -> int | None:
    """The index of the assistant turn a request continues (it made calls and only their
    results follow), or None when the request starts a fresh user turn."""
    k = _last_assistant(turns)
    if k is None or not any(b.get("type") == "tool_use" for b in turns[k]["content"]):
        return None
    for t in turns[k + 1 :]:
        if any(b.get("type") != "tool_result" for b in t["content"]):
            return None
    return k


def starts_with_thinking(turn: dict[str, Any]) -> bool:
    content = turn["content"]
    return bool(content) and content[0].get("type") in REASONING_BLOCK_TYPES


def _schema(node: Any) -> dict[str, Any]:
    """A tool schema Anthropic accepts: an object at the root, unions at the root merged."""
    if not isinstance(node, dict):
        return {"type": "object", "properties": {}}
    out = {k: v for k, v in node.items() if k not in ("$schema", "$id")}
    for key in ("anyOf", "oneOf"):
        branches = out.get(key)
        if isinstance(branches, list) and "properties" not in out:
            props: dict[str, Any] = {}
            required: list[str] = []
            for b in branches:
                if isinstance(b, dict):
                    props.update(b.get("properties") or {})
                    required.extend(r for r in b.get("required") or () if r not in required)
            del out[key]
            out["type"] = "object"
            out["properties"] = props
            if required:
                out["required"] = required
    out.setdefault("type", "object")
    return out


def _tool_choice(choice: Any) -> dict[str, Any] | None:
    if choice is None:
        return None
    if isinstance(choice, dict):
        name = choice.get("name") or (choice.get("function") or {}).get("name")
        if not name:
            raise ProviderError("anthropic", ErrorKind.INVALID, f"tool_choice {choice!r}: name the tool, e.g. {{'name': 'read_file'}}")
        return {"type": "tool", "name": name}
    return {"auto": {"type": "auto"}, "none": {"type": "none"}, "required": {"type": "any"}}[choice]


# --------------------------------------------------------------------------- the option table


@dataclass(slots=True)
class AnthropicPlan:
    """What one Anthropic request was resolved to, besides its history and options; the
    thinking plan is worked out by ``build_body`` (it depends on the history's tool loop)."""

    provider: str
    model: str
    tools: list[ToolDefinition] | None = None
    thinking: ThinkingPlan | None = None


def _write_json(body: dict[str, Any], fmt: Any, plan: AnthropicPlan) -> None:
    if isinstance(fmt, JsonFormat):
        # a second, uncached block: a per-call schema never invalidates the cached prefix
        body.setdefault("system", []).append({"type": "text", "text": fmt.prompt})


def _write_thinking(body: dict[str, Any], effort: Any, plan: AnthropicPlan) -> None:
    assert plan.thinking is not None
    body.update(plan.thinking.fields)


def _sampling(value: Any, plan: AnthropicPlan) -> Any:
    """A sampling option goes only where the thinking plan allows it."""
    return value if plan.thinking is not None and plan.thinking.sampling else None


def _write_parallel(body: dict[str, Any], value: Any, plan: AnthropicPlan) -> None:
    choice = body.get("tool_choice")
    if value is False and plan.tools and (choice is None or choice["type"] != "none"):
        body["tool_choice"] = {**(choice or {"type": "auto"}), "disable_parallel_tool_use": True}


def _effort_from(body: Mapping[str, Any]) -> str | None:
    oc = body.get("output_config") or {}
    if oc.get("effort") in EFFORTS:
        effort: str = oc["effort"]
        return effort
    th = body.get("thinking") or {}
    if th.get("type") == "disabled":
        return "none"
    if th.get("type") == "enabled":
        budget = th.get("budget_tokens") or 0
        for level in ("low", "medium", "high"):
            if budget <= _BUDGET[level]:
                return level
        return "max"
    return None


def _back_choice(tc: Any) -> Any:
    if not isinstance(tc, dict):
        return None
    if tc.get("type") == "tool":
        return {"name": tc.get("name")}
    return {"auto": "auto", "none": "none", "any": "required"}.get(tc.get("type", ""))


OPTIONS = OptionTable((
    Option("json", write=_write_json, read=lambda body: None),
    Option("max_tokens", "max_tokens"),
    Option("tool_choice", "tool_choice", send=lambda v, plan: _tool_choice(v) if plan.tools else None, back=_back_choice),
    Option("parallel_tool_calls", "tool_choice.disable_parallel_tool_use", write=_write_parallel,
           back=lambda v: False if v else None),
    # the thinking plan's fields, even for no effort (a server where silence means thinking on)
    Option("effort", write=_write_thinking, read=_effort_from, always=True),
    Option("temperature", "temperature", send=_sampling),
    Option("top_p", "top_p", send=_sampling),
    Option("stop", "stop_sequences", send=lambda v, plan: list(v) if v else None, back=lambda v: list(v) if v else None),
    refused("service_tier", lambda plan: (
        f"{plan.provider}: service_tier is an OpenAI option; Anthropic Messages has no per-call tier (leave it unset)")),
))


def drop_last_thinking(turns: list[dict[str, Any]]) -> None:
    """Thinking off: the last assistant turn may not carry thinking blocks (they are dropped)."""
    k = _last_assistant(turns)
    if k is not None:
        turns[k] = {"role": "assistant", "content": [b for b in turns[k]["content"] if b.get("type") not in REASONING_BLOCK_TYPES]}


def _offered(
    tools: list[ToolDefinition], choice: dict[str, Any] | None, opts: CallOptions, plan: ThinkingPlan
) -> tuple[list[ToolDefinition], CallOptions]:
    """The tools to offer and the options to send: a model that refuses forced tool use is
    offered only the named tool (all of them for "required") and left to choose."""
    if choice is None or choice["type"] not in ("any", "tool") or plan.forced_tool:
        return tools, opts
    offered = ([t for t in tools if t.name == choice["name"]] or tools) if choice["type"] == "tool" else tools
    return offered, replace(opts, tool_choice=None)


def build_body(
    messages: Sequence[Message],
    tools: list[ToolDefinition] | None,
    opts: CallOptions,
    plan: AnthropicPlan,
    *,
    tag: str,
    stream: bool,
    explicit_none: bool = False,
) -> dict[str, Any]:
    """The request body: ``opts`` as resolved (its effort and max_tokens are what is sent),
    ``tag`` the replay tag whose signed blocks go back, ``explicit_none`` for a server where
    silence means thinking on (no effort is then sent as disabled)."""
    OPTIONS.check(opts, plan)
    conv = to_anthropic_messages(messages, tag)
    turns = conv.messages
    choice = _tool_choice(opts.tool_choice) if tools else None
    loop = tool_loop_turn(turns)
    plan.thinking = thinking_plan(
        plan.model,
        opts.effort,
        opts.max_tokens or DEFAULT_MAX_TOKENS,
        forced=choice is not None and choice["type"] in ("any", "tool"),
        loop_without_thinking=loop is not None and not starts_with_thinking(turns[loop]),
        explicit_none=explicit_none,
    )
    if plan.thinking.on is False:
        drop_last_thinking(turns)
    body: dict[str, Any] = {"model": plan.model, "messages": turns}
    if conv.system:
        body["system"] = [{"type": "text", "text": conv.system, "cache_control": {"type": "ephemeral"}}]
    if tools:
        offered, opts = _offered(tools, choice, opts, plan.thinking)
        body["tools"] = [
            {"name": t.name, "description": t.description or "", "input_schema": _schema(t.input_schema)}
            for t in offered
        ]
    OPTIONS.write(body, opts, plan)
    body["stream"] = stream
    return merge_body(body, opts.extra_body)


# --------------------------------------------------------------------------- wire -> canonical

def read_tool_result(content: Any, where: str) -> tuple[str, list[ImagePart]]:
    """A tool_result block's content: its text (blocks joined by a newline) and its images."""
    if content is None:
        return "", []
    if isinstance(content, str):
        return content, []
    texts: list[str] = []
    images: list[ImagePart] = []
    for j, b in enumerate(content):
        bt = b.get("type") if isinstance(b, dict) else None
        if bt == "text":
            texts.append(b.get("text") or "")
        elif bt == "image":
            images.append(read_image(b, f"{where}, content[{j}]"))
        else:
            raise ValueError(f"{where}, content[{j}]: a tool_result block of type {bt!r} cannot be imported (text and image only)")
    return "\n".join(texts), images


def read_image(b: dict[str, Any], where: str) -> ImagePart:
    """An image block (base64 only: a history is self-contained)."""
    src = b.get("source") or {}
    if src.get("type") != "base64":
        raise ValueError(
            f"{where}: image source {src.get('type')!r} is not base64; download the image and pass its bytes "
            "(histories are self-contained)"
        )
    return ImagePart(src.get("media_type", ""), src.get("data", ""))


def read_document(b: dict[str, Any], where: str) -> FilePart:
    """A document block (base64 or text) as a file part."""
    src = b.get("source") or {}
    if src.get("type") == "base64":
        return FilePart(src.get("media_type", "application/pdf"), src.get("data", ""), b.get("title"))
    if src.get("type") == "text":
        data = base64.b64encode((src.get("data") or "").encode()).decode()
        return FilePart(src.get("media_type", "text/plain"), data, b.get("title"))
    raise ValueError(f"{where}: document source {src.get('type')!r} cannot be imported (base64 or text only)")


def from_anthropic_messages(
    messages: Sequence[dict[str, Any]],
    system: str | Sequence[dict[str, Any]] | None = None,
    *,
    provider: str = "anthropic",
) -> list[Message]:
    """Anthropic ``messages`` (and ``system``) as canonical messages.

    Thinking and redacted_thinking blocks become ``reasoning_items`` tagged ``provider`` (and
    the thinking text also ``reasoning``); tool_result blocks become tool messages named after
    their call; base64 images and documents become parts. Anything the canonical shape cannot
    hold raises ``ValueError`` naming the block, rather than being dropped (``cache_control``
    and a tool_result's ``is_error`` flag are the exceptions: the canonical shape has no place
    for them, and the adapter sets its own cache breakpoint).
    """
    out: list[Message] = []
    if isinstance(system, str):
        if system:
            out.append(SystemMessage(system))
    elif system:
        for j, b in enumerate(system):
            if not isinstance(b, dict) or b.get("type") != "text":
                raise ValueError(f"system[{j}]: only text blocks can be imported")
            out.append(SystemMessage(b.get("text") or ""))
    names: dict[str, str] = {}
    for i, m in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(m, dict):
            raise ValueError(f"{where}: a message must be an object with role and content")
        role, content = m.get("role"), m.get("content")
        if role == "assistant":
            out.append(_import_assistant(content, where, provider, names))
        elif role == "user":
            out.extend(_import_user(content, where, names))
        else:
            raise ValueError(f"{where}: role {role!r} is not user or assistant (system goes in system=...)")
    return out


def _import_assistant(content: Any, where: str, provider: str, names: dict[str, str]) -> AssistantMessage:
    if isinstance(content, str):
        return AssistantMessage(content)
    if not isinstance(content, list):
        raise ValueError(f"{where}: content must be a string or a list of blocks")
    texts: list[str] = []
    thoughts: list[str] = []
    items: list[Any] = []
    calls: list[ToolCall] = []
    for j, b in enumerate(content):
        bt = b.get("type") if isinstance(b, dict) else None
        if bt == "text":
            texts.append(b.get("text") or "")
        elif bt == "thinking":
            items.append(dict(b))
            if b.get("thinking"):
                thoughts.append(b["thinking"])
        elif bt == "redacted_thinking":
            items.append(dict(b))
        elif bt == "tool_use":
            args = input_as_arguments(b.get("input") or {})
            calls.append(ToolCall(b.get("id", ""), b.get("name", ""), args))
            names[b.get("id", "")] = b.get("name", "")
        else:
            raise ValueError(f"{where}.content[{j}]: an assistant block of type {bt!r} cannot be imported")
    return AssistantMessage(
        content="".join(texts),
        reasoning="\n\n".join(thoughts) if thoughts else None,
        reasoning_items=ReasoningItems(provider, items) if items else None,
        tool_calls=calls or None,
    )


def _import_user(content: Any, where: str, names: dict[str, str]) -> list[Message]:
    if isinstance(content, str):
        return [UserMessage(content)]
    if not isinstance(content, list):
        raise ValueError(f"{where}: content must be a string or a list of blocks")
    out: list[Message] = []
    parts: list[TextPart | ImagePart | FilePart] = []
    for j, b in enumerate(content):
        bt = b.get("type") if isinstance(b, dict) else None
        at = f"{where}.content[{j}]"
        if bt == "tool_result":
            call_id = b.get("tool_use_id", "")
            text, images = read_tool_result(b.get("content"), at)
            out.append(ToolMessage(call_id, names.get(call_id, ""), text, images or None))
        elif bt == "text":
            parts.append(TextPart(b.get("text") or ""))
        elif bt == "image":
            parts.append(read_image(b, at))
        elif bt == "document":
            parts.append(read_document(b, at))
        else:
            raise ValueError(f"{at}: a user block of type {bt!r} cannot be imported")
    if parts:
        if len(parts) == 1 and isinstance(parts[0], TextPart):
            out.append(UserMessage(parts[0].text))
        else:
            out.append(UserMessage(parts))
    return out


# --------------------------------------------------------------------------- recorded requests


def matches(url: str) -> bool:
    """Is this recorded request URL the Anthropic Messages wire?"""
    return urlsplit(url).path.rstrip("/").endswith("/v1/messages")


def import_request(url: str, body: dict[str, Any]) -> ImportedRequest:
    """A recorded request body read back into canonical messages, tools and options."""
    # tagged as the replay provider (id "anthropic") tags what it reads, so its blocks go back
    messages = from_anthropic_messages(body.get("messages") or [], body.get("system"))
    tools = [
        ToolDefinition(t["name"], t.get("description") or "", t.get("input_schema") or {})
        for t in body.get("tools") or ()
        if isinstance(t, dict) and "name" in t
    ] or None
    options: dict[str, Any] = {"model": body.get("model"), **OPTIONS.read(body)}
    return ImportedRequest(messages, tools, options, body.get("model"), bool(body.get("stream", False)))


# --------------------------------------------------------------------------- rules

DANGLING_TOOL_USE = "anthropic.dangling_tool_use"
ORPHAN_TOOL_RESULT = "anthropic.orphan_tool_result"
TOOL_RESULT_NOT_FIRST = "anthropic.tool_result_not_first"
DUPLICATE_TOOL_USE_ID = "anthropic.duplicate_tool_use_id"
DUPLICATE_TOOL_RESULT = "anthropic.duplicate_tool_result"
EMPTY_MESSAGE = "anthropic.empty_message"
EMPTY_TEXT_BLOCK = "anthropic.empty_text_block"
STREAM_BLOCK = "anthropic.stream_block"
THINKING_MISSING = "anthropic.thinking_missing"
THINKING_WHEN_DISABLED = "anthropic.thinking_when_disabled"
SIGNATURE_MISSING = "anthropic.signature_missing"

# (rule id, stable part of Anthropic's wording)
RULES: list[tuple[str, str]] = [
    (DANGLING_TOOL_USE, "`tool_use` ids were found without `tool_result` blocks immediately after"),
    (ORPHAN_TOOL_RESULT, "unexpected `tool_use_id` found in `tool_result` blocks"),
    (TOOL_RESULT_NOT_FIRST, "`tool_result` block(s) at the beginning of this message"),
    (DUPLICATE_TOOL_USE_ID, "`tool_use` ids must be unique"),
    (DUPLICATE_TOOL_RESULT, "each tool_use must have a single result"),
    (EMPTY_MESSAGE, "all messages must have non-empty content except for the optional final assistant message"),
    (EMPTY_TEXT_BLOCK, "text content blocks must be non-empty"),
    (STREAM_BLOCK, "does not match any of the expected tags"),
    (THINKING_MISSING, "When `thinking` is enabled, a final `assistant` message must start with a thinking block"),
    (THINKING_WHEN_DISABLED, "When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`"),
    (SIGNATURE_MISSING, "signature: Field required"),
]

_STREAM_ONLY = frozenset({"text_delta", "input_json_delta", "thinking_delta", "signature_delta", "citations_delta"})
_THINKING_DOCS = "https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking"


def _blocks(turn: Any) -> list[Any]:
    content = turn.get("content") if isinstance(turn, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content) if isinstance(content, list) else []


def _type(block: Any) -> str | None:
    return block.get("type") if isinstance(block, dict) else None


class _Checking:
    """One Anthropic ``messages`` list being checked: each turn's blocks, the tool results of
    a user turn, the calls of an assistant turn, then the thinking rules of the last one."""

    def __init__(self, messages: Sequence[dict[str, Any]]) -> None:
        self.messages = messages
        self.found: list[WireProblem] = []
        self.seen_ids: set[str] = set()

    def add(self, rule: str, k: int, message: str, wording: str) -> None:
        self.found.append(WireProblem(rule, k, message, wording))

    def blocks(self, k: int, role: Any, blocks: list[Any]) -> None:
        if not blocks and not (role == "assistant" and k == len(self.messages) - 1):
            self.add(
                EMPTY_MESSAGE, k, "this turn has no content; drop it or give it text",
                f"messages.{k}: all messages must have non-empty content except for the optional final assistant message",
            )
        for j, b in enumerate(blocks):
            self.block(k, j, b, _type(b))

    def block(self, k: int, j: int, b: Any, t: str | None) -> None:
        if t == "text" and not b.get("text"):
            self.add(EMPTY_TEXT_BLOCK, k, f"content block {j} is an empty text block; drop it", "text content blocks must be non-empty")
        elif t in _STREAM_ONLY:
            self.add(
                STREAM_BLOCK, k, f"content block {j} is a stream delta ({t}), not a content block; send the assembled block",
                f"Input tag '{t}' does not match any of the expected tags",
            )
        elif t == "thinking" and not b.get("signature"):
            self.add(
                SIGNATURE_MISSING, k,
                f"thinking block {j} has no signature; it cannot be sent back (drop it, or keep the signed block)",
                f"messages.{k}.content.{j}.thinking.signature: Field required",
            )
        elif t == "tool_use":
            cid = b.get("id")
            if cid in self.seen_ids:
                self.add(
                    DUPLICATE_TOOL_USE_ID, k, f"tool_use id {cid!r} is used twice; give each call its own id",
                    f"messages.{k}.content.{j}: `tool_use` ids must be unique",
                )
            self.seen_ids.add(cid)

    def results(self, k: int, blocks: list[Any]) -> None:
        """A user turn: its tool_result blocks answer the calls of the turn before, first."""
        prev = self.messages[k - 1] if k > 0 else None
        uses = [b.get("id") for b in _blocks(prev) if _type(b) == "tool_use"] if prev and prev.get("role") == "assistant" else []
        results = [(j, b) for j, b in enumerate(blocks) if _type(b) == "tool_result"]
        counted: set[str] = set()
        for j, b in results:
            rid = b.get("tool_use_id")
            if rid not in uses:
                self.add(
                    ORPHAN_TOOL_RESULT, k, f"tool_result {rid!r} answers no tool_use in the turn before it",
                    f"messages.{k}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {rid}. "
                    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
                )
            elif rid in counted:
                self.add(DUPLICATE_TOOL_RESULT, k, f"tool_use {rid!r} has two tool_result blocks; keep one", "each tool_use must have a single result")
            counted.add(rid)
        leading = next((n for n, b in enumerate(blocks) if _type(b) != "tool_result"), len(blocks))
        if uses and leading < len(results):  # a result after other content (a short count is dangling)
            self.add(
                TOOL_RESULT_NOT_FIRST, k,
                "tool results must be the first blocks of the turn after the calls; move the text after them",
                f"messages.{k}: Did not find {len(uses)} `tool_result` block(s) at the beginning of this message. "
                "Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.",
            )

    def calls(self, k: int, blocks: list[Any]) -> None:
        """An assistant turn: every tool_use is answered in the next turn (unless it is the last)."""
        uses = [b.get("id") for b in blocks if _type(b) == "tool_use"]
        nxt = self.messages[k + 1] if k + 1 < len(self.messages) else None
        answered = {b.get("tool_use_id") for b in _blocks(nxt) if _type(b) == "tool_result"} if nxt and nxt.get("role") == "user" else set()
        missing = [u for u in uses if u not in answered]
        if missing and k + 1 < len(self.messages):
            ids = ", ".join(map(str, missing))
            self.add(
                DANGLING_TOOL_USE, k, f"calls {ids} have no result in the next turn; repair_history adds them",
                f"messages.{k}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                f"{ids}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
            )

    def thinking(self, last: int, thinking: bool | None) -> None:
        """The last assistant turn: a tool loop that thinks starts with its thinking block; a
        request that does not think carries none."""
        blocks = _blocks(self.messages[last])
        tail = self.messages[last + 1 :]
        in_loop = any(_type(b) == "tool_use" for b in blocks) and all(
            all(_type(b) == "tool_result" for b in _blocks(t)) for t in tail
        )
        if thinking is True and in_loop and blocks and _type(blocks[0]) not in REASONING_BLOCK_TYPES:
            self.add(
                THINKING_MISSING, last,
                "thinking is on and this tool loop's assistant turn has no leading thinking block; "
                "keep the signed blocks from that turn, or turn thinking off for this request",
                f"messages.{last}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
                f"`{_type(blocks[0])}`. When `thinking` is enabled, a final `assistant` message must start with a thinking "
                "block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include "
                "thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our "
                f"documentation at {_THINKING_DOCS}",
            )
        j = next((j for j, b in enumerate(blocks) if _type(b) in REASONING_BLOCK_TYPES), None)
        if thinking is False and j is not None:
            self.add(
                THINKING_WHEN_DISABLED, last,
                "thinking is off but the last assistant turn carries thinking blocks; drop them or turn thinking on",
                f"messages.{last}.content.{j}: When thinking is disabled, an `assistant` message in the "
                "final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request.",
            )


def check_wire(messages: Sequence[dict[str, Any]], *, thinking: bool | None = None) -> list[WireProblem]:
    """Every rule against an Anthropic ``messages`` list (what goes over the wire, or what
    another tool saved), with the indexes Anthropic would print (``messages.N.content.J``);
    ``at`` is the turn. ``thinking``: True if the request enables thinking, False if it is off,
    None to skip the two rules that depend on it."""
    checking = _Checking(messages)
    for k, turn in enumerate(messages):
        blocks = _blocks(turn)
        role = turn.get("role")
        checking.blocks(k, role, blocks)
        if role == "user":
            checking.results(k, blocks)
        elif role == "assistant":
            checking.calls(k, blocks)
    last = max((k for k in range(len(messages)) if messages[k].get("role") == "assistant"), default=None)
    if last is not None:
        checking.thinking(last, thinking)
    return checking.found


def check(messages: Sequence[Message], *, thinking: bool | None = None, tag: str = "anthropic") -> list[Problem]:
    """The Anthropic rules for a canonical history, as ``to_anthropic_messages`` sends it, so
    they predict what that request would get back; ``Problem.index`` is the canonical index of
    the turn's first message.

    With ``thinking=False`` the request drops thinking blocks from the last assistant turn (as
    ``build_body`` does when a request does not think), so that rule can only fire on raw
    requests.
    """
    conv = to_anthropic_messages(list(messages), tag)
    turns = conv.messages
    if thinking is False:
        turns = list(turns)
        drop_last_thinking(turns)
    out: list[Problem] = []
    for p in check_wire(turns, thinking=thinking):
        src = conv.sources[p.at] if p.at < len(conv.sources) else []
        out.append(Problem(p.rule, src[0] if src else p.at, p.message, p.provider_wording))
    return out
