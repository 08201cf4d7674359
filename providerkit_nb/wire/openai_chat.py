"""The OpenAI Chat Completions wire, on paper: what a request body holds and how a history reads
back from one, for every server that speaks it (DeepSeek, OpenRouter, Groq, OpenCode Go, vLLM,
Ollama, LM Studio, ...).

Canonical messages to ``messages`` and back, tools both ways, the body a call builds (its
options from ``OPTIONS``, the one table that importing a recorded request reads too), and the
rules behind the 400s these servers answer, in their own words. Differences between servers are
data in the ``ChatPlan`` (effort dialect, where readable reasoning goes back, the JSON form the
provider negotiated), never ``if host == ...``. Pure: the HTTP request, the stream and what a
server was found to take live in ``providers.openai_chat``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..core.errors import ErrorKind, ProviderError
from ..core.messages import (
    AssistantMessage,
    FilePart,
    ImagePart,
    Message,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    UserMessage,
    ensure_messages,
)
from ..core.repair import DUPLICATE_RESULT, MISPLACED, ORPHAN, analyze
from ..core.structured import JSON_FORMS, JsonFormat, json_request
from ..core.tools import ToolDefinition
from ..core.validate import Problem
from .base import ImportedRequest, Supports
from .openai_models import effort_from_level, openai_effort_level
from .options import EFFORTS, CallOptions, Option, OptionTable, merge_body

__all__ = [
    "SUPPORTS",
    "OPTIONS",
    "EFFORT_DIALECTS",
    "ChatPlan",
    "build_body",
    "effort_params",
    "deepseek_thinking",
    "to_openai_messages",
    "to_openai_tools",
    "from_openai_messages",
    "from_openai_tools",
    "arguments_text",
    "content_text",
    "matches",
    "import_request",
    "RULES",
    "DEEPSEEK_RULES",
    "check",
]

SUPPORTS = Supports(
    files=frozenset(),  # images only: a file has no Chat Completions part every server takes
    tool_images=False,  # a tool result is text; its images follow the run as a user turn
    schemas="sent as given",
    reasoning="DeepSeek's reasoning_content and OpenRouter's reasoning_details, where the server takes them",
    json_forms=JSON_FORMS,
)

EFFORT_DIALECTS = ("openai", "deepseek", "openrouter", "opencode-go", "off")

# OpenRouter: what "effort none" means per model (measured); every other model gets nothing,
# because an explicit "off" is a 400 on models whose reasoning is mandatory.
OPENROUTER_NONE = {
    "z-ai/glm-5.3-flash": "low",
    "openai/gpt-5-mini": "minimal",
    "xiaomi/mimo-v2.6-flash": "none",
}
_GLM_GO = re.compile(r"glm-5[-.p]?[23]")


# --------------------------------------------------------------------------- effort


def _deepseek_effort(effort: str, model: str, provider: str) -> dict[str, Any]:
    if effort == "none":
        return {"thinking": {"type": "disabled"}}
    if effort in ("low", "medium"):
        return {"thinking": {"type": "enabled"}, "reasoning_effort": effort}
    return {"thinking": {"type": "enabled"}}


def _openrouter_effort(effort: str, model: str, provider: str) -> dict[str, Any]:
    if effort == "none":
        level = OPENROUTER_NONE.get(model)
        return {"reasoning": {"effort": level}} if level else {}
    return {"reasoning": {"effort": effort}}


def _opencode_go_effort(effort: str, model: str, provider: str) -> dict[str, Any]:
    m = model.lower()
    if _GLM_GO.search(m):
        return {"reasoning_effort": "max" if effort == "max" else "high"}
    if "deepseek-v4" in m:
        return {"reasoning_effort": "low" if effort == "none" else effort}
    if "mimo" in m:
        if effort == "max":
            raise ProviderError(provider, ErrorKind.INVALID, f"{provider}: {model} has no 'max' effort; use effort='high'")
        return {"reasoning_effort": effort}
    return {"reasoning_effort": "high" if effort == "max" else effort}


_EFFORT_SPELLINGS: dict[str, Callable[[str, str, str], dict[str, Any]]] = {
    "openai": lambda effort, model, provider: {"reasoning_effort": openai_effort_level(model, effort)},
    "deepseek": _deepseek_effort,
    "openrouter": _openrouter_effort,
    "opencode-go": _opencode_go_effort,
    "off": lambda effort, model, provider: {},
}


def effort_params(dialect: str, effort: str | None, model: str, provider: str = "openai") -> dict[str, Any]:
    """The body fields that ask for ``effort`` in a server's own spelling (absent -> nothing)."""
    if effort is None:
        return {}
    spell = _EFFORT_SPELLINGS.get(dialect)
    if spell is None:
        raise ValueError(f"unknown effort dialect {dialect!r}; expected one of {EFFORT_DIALECTS}")
    return spell(effort, model, provider)


def deepseek_thinking(model: str, effort: str | None) -> bool | None:
    """DeepSeek thinking mode for this call: True, False, or None when it cannot be told."""
    if effort == "none" or model == "deepseek-chat":
        return False
    if effort is not None or "reasoner" in model:
        return True
    return None


def _effort_from_body(body: Mapping[str, Any]) -> str | None:
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") == "disabled":
        return "none"
    e = body.get("reasoning_effort")
    if e is None and isinstance(body.get("reasoning"), dict):
        e = body["reasoning"].get("effort")
    e = effort_from_level(e)
    return e if e in EFFORTS else None


# --------------------------------------------------------------------------- canonical -> wire


def _file_refused(provider: str, mime: str) -> str:
    return (
        f"{provider}: the Chat Completions wire can't send a file ({mime}); send its text, or use a "
        "wire that takes files (Gemini)"
    )


def _image_url(p: ImagePart) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": p.data_uri()}}


def _user_content(content: str | list[Any], provider: str) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    out: list[dict[str, Any]] = []
    for p in content:
        if isinstance(p, TextPart):
            out.append({"type": "text", "text": p.text})
        elif isinstance(p, ImagePart):
            out.append(_image_url(p))
        else:
            SUPPORTS.check_file(provider, p.mime_type, _file_refused(provider, p.mime_type))
    return out


def _assistant(m: AssistantMessage, reasoning_field: str | None, fill: bool, send_details: bool) -> dict[str, Any]:
    d: dict[str, Any] = {"role": "assistant", "content": m.content or ""}
    if reasoning_field is not None:
        if m.reasoning is not None:
            d[reasoning_field] = m.reasoning
        elif fill and m.tool_calls:
            d[reasoning_field] = ""
    if send_details and m.reasoning_details:
        d["reasoning_details"] = m.reasoning_details
    if m.tool_calls:
        d["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in m.tool_calls
        ]
    return d


def to_openai_messages(
    messages: Sequence[Message],
    *,
    provider: str = "openai",
    reasoning_field: str | None = None,
    fill_reasoning: bool = False,
    send_details: bool = False,
) -> list[dict[str, Any]]:
    """Canonical messages in Chat Completions form.

    ``reasoning_field`` names the field readable reasoning goes back in (DeepSeek's
    ``reasoning_content``), or None for servers that reject it. ``fill_reasoning`` sends an empty
    one on tool-call turns that have none (DeepSeek thinking mode 400s without the field).
    ``send_details`` replays OpenRouter's ``reasoning_details`` verbatim. Tool images follow the
    run of tool messages as one user message (an image between parallel results is a 400).
    """
    out: list[dict[str, Any]] = []
    pending_images: list[dict[str, Any]] = []
    for m in messages:
        if not isinstance(m, ToolMessage) and pending_images:
            out.append({"role": "user", "content": pending_images})
            pending_images = []
        if isinstance(m, SystemMessage):
            out.append({"role": "system", "content": m.content})
        elif isinstance(m, UserMessage):
            out.append({"role": "user", "content": _user_content(m.content, provider)})
        elif isinstance(m, AssistantMessage):
            out.append(_assistant(m, reasoning_field, fill_reasoning, send_details))
        elif isinstance(m, ToolMessage):
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
            pending_images.extend(_image_url(p) for p in m.images or ())
        else:  # pragma: no cover - ensure_messages refuses anything else earlier
            raise TypeError(f"not a message: {m!r}")
    if pending_images:
        out.append({"role": "user", "content": pending_images})
    return out


def to_openai_tools(tools: Sequence[ToolDefinition]) -> list[dict[str, Any]]:
    out = []
    for t in tools:
        fn: dict[str, Any] = {"name": t.name}
        if t.description:
            fn["description"] = t.description
        fn["parameters"] = t.input_schema
        out.append({"type": "function", "function": fn})
    return out


# --------------------------------------------------------------------------- the option table


@dataclass(slots=True)
class ChatPlan:
    """What one Chat request was resolved to, besides its history and options: the server's
    ways (from the provider's preset) and what the provider negotiated with it."""

    provider: str
    model: str
    tools: list[ToolDefinition] | None = None
    effort_dialect: str = "openai"
    max_tokens_field: str = "max_tokens"
    json_form: str | None = None  # the form json= is sent in (one of JSON_FORMS)


def _write_json(body: dict[str, Any], fmt: Any, plan: ChatPlan) -> None:
    if not isinstance(fmt, JsonFormat):
        return
    ask = json_request(fmt, enforce_schema=False, form=plan.json_form)
    if ask.format == "json_schema":
        body["response_format"] = {
            "type": "json_schema", "json_schema": {"name": fmt.name, "schema": fmt.schema, "strict": fmt.is_strict}
        }
    elif ask.format is not None:
        body["response_format"] = {"type": ask.format, **({"schema": fmt.schema} if ask.schema_inside else {})}
    if ask.prompt is not None:
        # after the history, so the cached prefix survives a per-call schema
        body["messages"].append({"role": "system", "content": ask.prompt})


def _read_json(body: Mapping[str, Any]) -> Any:
    rf = body.get("response_format")
    if not isinstance(rf, dict):
        return None
    if rf.get("type") == "json_schema" and isinstance(rf.get("json_schema"), dict):
        return {"type": "json_schema", "json_schema": rf["json_schema"]}
    if rf.get("type") == "json_object":
        # JSON mode with the schema inside it (llama.cpp's servers), or plain JSON mode
        return rf["schema"] if isinstance(rf.get("schema"), dict) else "object"
    return None


def _write_max_tokens(body: dict[str, Any], value: int, plan: ChatPlan) -> None:
    body[plan.max_tokens_field] = value


def _write_effort(body: dict[str, Any], effort: str, plan: ChatPlan) -> None:
    body.update(effort_params(plan.effort_dialect, effort, plan.model, plan.provider))


def _send_choice(choice: Any, plan: ChatPlan) -> Any:
    if isinstance(choice, dict):
        return {"type": "function", "function": {"name": choice["name"]}}
    return None if choice == "auto" else choice


def _back_choice(tc: Any) -> Any:
    if isinstance(tc, dict):
        name = (tc.get("function") or {}).get("name")
        return {"name": name} if name else None
    return tc if isinstance(tc, str) and tc != "auto" else None


OPTIONS = OptionTable((
    Option("json", write=_write_json, read=_read_json),
    Option("max_tokens", "max_completion_tokens", also=("max_tokens",), write=_write_max_tokens),
    Option("temperature", "temperature"),
    Option("top_p", "top_p"),
    Option("stop", "stop", send=lambda v, plan: list(v) if v else None,
           back=lambda v: ([v] if isinstance(v, str) else list(v)) if v else None),
    Option("effort", write=_write_effort, read=_effort_from_body),
    # only with tools, and only to say no (true is every server's default)
    Option("parallel_tool_calls", "parallel_tool_calls", send=lambda v, plan: False if v is False and plan.tools else None),
    Option("tool_choice", "tool_choice", send=_send_choice, back=_back_choice),
    Option("service_tier", "service_tier", back=lambda v: v if isinstance(v, str) else None),
))


def build_body(
    messages: Sequence[Message],
    tools: Sequence[ToolDefinition] | None,
    opts: CallOptions,
    plan: ChatPlan,
    *,
    stream: bool,
    reasoning_field: str | None = None,
    send_details: bool = False,
    stream_usage: bool = True,
    offered: Sequence[str] | None = None,
    cache_key: str | None = None,
) -> dict[str, Any]:
    """The request body for ``messages``: ``opts`` as resolved (its model, effort and tool
    choice are what is sent), ``offered`` the tools to offer (None: all), ``cache_key`` the
    ``prompt_cache_key`` (None: left out)."""
    fill = False
    if plan.effort_dialect == "deepseek":
        mode = deepseek_thinking(plan.model, opts.effort)
        if mode is False:
            reasoning_field = None  # DeepSeek rejects reasoning_content with thinking off
        fill = mode is True
    body: dict[str, Any] = {
        "model": plan.model,
        "messages": to_openai_messages(
            messages, provider=plan.provider, reasoning_field=reasoning_field, fill_reasoning=fill,
            send_details=send_details,
        ),
    }
    if stream:
        body["stream"] = True
        if stream_usage:
            body["stream_options"] = {"include_usage": True}
    if tools:
        body["tools"] = to_openai_tools([t for t in tools if offered is None or t.name in offered])
    OPTIONS.write(body, opts, plan)
    if cache_key is not None:
        body["prompt_cache_key"] = cache_key
    return merge_body(body, opts.extra_body)


# --------------------------------------------------------------------------- wire -> canonical


def arguments_text(args: Any) -> str:
    """A call's arguments as the raw text the model wrote (an object some servers send is
    written back as JSON)."""
    if args is None:
        return ""
    if isinstance(args, str):
        return args
    return json.dumps(args, ensure_ascii=False)


def content_text(content: Any) -> str:
    """Content that may be a string, None, or a list of text parts (some servers and dumps)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            p.get("text", "") if isinstance(p, dict) and isinstance(p.get("text"), str) else p if isinstance(p, str) else ""
            for p in content
        )
    return str(content)


def _data_uri(url: str, where: str) -> tuple[str, str]:
    if not url.startswith("data:") or ";base64," not in url:
        raise ValueError(
            f"{where}: only inline base64 images (data: URIs) can be imported; "
            f"download {url[:60]!r} and pass its bytes instead"
        )
    head, data = url[5:].split(";base64,", 1)
    return head or "application/octet-stream", data


def _import_part(p: Any, w: str) -> TextPart | ImagePart | FilePart:
    if isinstance(p, str):
        return TextPart(p)
    if not isinstance(p, dict):
        raise ValueError(f"{w}: a part must be an object")
    kind = p.get("type")
    if kind in ("text", "input_text"):
        return TextPart(p.get("text") or "")
    if kind == "image_url":
        iu = p.get("image_url")
        url = iu.get("url") if isinstance(iu, dict) else iu
        return ImagePart(*_data_uri(str(url), w))
    if kind == "file":
        f = p.get("file") or {}
        mime, data = _data_uri(str(f.get("file_data", "")), w)
        return FilePart(mime, data, f.get("filename"))
    raise ValueError(f"{w}: part type {kind!r} has no canonical form (text, image_url or file)")


def _import_parts(content: Any, where: str) -> str | list[Any]:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise ValueError(f"{where}: content must be a string or a list of parts")
    return [_import_part(p, f"{where}, part {j}") for j, p in enumerate(content)]


def _texts(parts: list[Any]) -> str:
    return "".join(p.text for p in parts if isinstance(p, TextPart))


def from_openai_tools(tools: Sequence[dict[str, Any]] | None) -> list[ToolDefinition] | None:
    """A Chat ``tools`` list as ToolDefinitions (the ``strict`` flag has no canonical home)."""
    if not tools:
        return None
    out = []
    for i, t in enumerate(tools):
        fn = t.get("function") if isinstance(t, dict) else None
        if not isinstance(fn, dict) or not fn.get("name"):
            raise ValueError(f"tools[{i}]: expected {{type: 'function', function: {{name, parameters}}}}")
        out.append(
            ToolDefinition(fn["name"], fn.get("description") or "", fn.get("parameters") or {"type": "object", "properties": {}})
        )
    return out


class _Reading:
    """One ``messages`` list being read: the names of the calls seen, for the results after them."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def system(self, m: dict[str, Any], i: int, where: str) -> Message:
        c = _import_parts(m.get("content"), where)
        return SystemMessage(c if isinstance(c, str) else _texts(c))

    def user(self, m: dict[str, Any], i: int, where: str) -> Message:
        return UserMessage(_import_parts(m.get("content"), where))

    def assistant(self, m: dict[str, Any], i: int, where: str) -> Message:
        calls = []
        for j, tc in enumerate(m.get("tool_calls") or []):
            fn = tc.get("function") or {}
            if not tc.get("id") or not fn.get("name"):
                raise ValueError(f"{where}, tool_calls[{j}]: a call needs an id and a function name")
            calls.append(ToolCall(tc["id"], fn["name"], arguments_text(fn.get("arguments"))))
        fc = m.get("function_call")
        if isinstance(fc, dict) and fc.get("name"):  # the legacy single-call form
            calls.append(ToolCall(f"call_{i}", fc["name"], arguments_text(fc.get("arguments"))))
        self.names.update((c.id, c.name) for c in calls)
        reasoning = m.get("reasoning_content")
        if reasoning is None:
            reasoning = m.get("reasoning")
        details = m.get("reasoning_details")
        return AssistantMessage(
            content=content_text(m.get("content")),
            reasoning=reasoning if isinstance(reasoning, str) else None,
            reasoning_details=list(details) if isinstance(details, list) and details else None,
            tool_calls=calls or None,
        )

    def tool(self, m: dict[str, Any], i: int, where: str) -> Message:
        result_id = m.get("tool_call_id")
        if not result_id:
            raise ValueError(f"{where}: a tool message needs its tool_call_id")
        c = _import_parts(m.get("content"), where)
        images = None
        if isinstance(c, list):
            images = [p for p in c if isinstance(p, ImagePart)] or None
            c = _texts(c)
        return ToolMessage(result_id, m.get("name") or self.names.get(result_id, ""), c, images)

    def function(self, m: dict[str, Any], i: int, where: str) -> Message:
        raise ValueError(f"{where}: legacy role 'function' has no call id; convert it to role 'tool'")

    def read(self, m: Any, i: int) -> Message:
        where = f"message {i}"
        if not isinstance(m, dict):
            raise ValueError(f"{where}: must be an object")
        role = m.get("role")
        reader = getattr(self, _ROLES.get(role, ""), None) if isinstance(role, str) else None
        if reader is None:
            raise ValueError(f"{where}: unknown role {role!r} (system, developer, user, assistant, tool)")
        result: Message = reader(m, i, where)
        return result


_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant", "tool": "tool",
          "function": "function"}


def from_openai_messages(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] | None = None) -> list[Message]:
    """Read a Chat Completions ``messages`` list (from a log, a transcript, another tool) into
    canonical messages, exactly: tool-call ids, raw argument text, reasoning text and OpenRouter
    reasoning_details are kept. A tool message's name comes from the call it answers. ``tools``
    (the request's tool list), when given, is checked too, so a bad transcript fails here with
    its index rather than at send time."""
    if tools is not None:
        from_openai_tools(tools)
    if not isinstance(messages, Sequence) or isinstance(messages, str | bytes):
        raise ValueError("messages must be a list of Chat Completions message objects")
    reading = _Reading()
    return [reading.read(m, i) for i, m in enumerate(messages)]


# --------------------------------------------------------------------------- recorded requests


def matches(url: str) -> bool:
    """Is this recorded request URL a Chat Completions call?"""
    return urlsplit(url).path.rstrip("/").endswith("/chat/completions")


def import_request(url: str, body: dict[str, Any]) -> ImportedRequest:
    """A recorded Chat request body in canonical form (messages, tools, call options)."""
    return ImportedRequest(
        messages=from_openai_messages(body.get("messages") or []),
        tools=from_openai_tools(body.get("tools")),
        options=OPTIONS.read(body),
        model=body.get("model"),
        stream=bool(body.get("stream")),
    )


# --------------------------------------------------------------------------- rules

DANGLING_TOOL_CALLS = "openai_chat.dangling_tool_calls"
ORPHAN_TOOL_MESSAGE = "openai_chat.orphan_tool_message"
DEEPSEEK_DANGLING = "deepseek.dangling_tool_calls"
DEEPSEEK_ORPHAN = "deepseek.orphan_tool_message"
DEEPSEEK_REASONING = "deepseek.reasoning_content_missing"

# (rule id, the stable part of the provider's 400 message)
RULES: list[tuple[str, str]] = [
    (
        DANGLING_TOOL_CALLS,
        "An assistant message with 'tool_calls' must be followed by tool messages responding to "
        "each 'tool_call_id'.",
    ),
    # OpenAI prints both "preceeding" and "preceding"; this part is common to both
    (ORPHAN_TOOL_MESSAGE, "messages with role 'tool' must be a response to a prece"),
]
DEEPSEEK_RULES: list[tuple[str, str]] = [
    (
        DEEPSEEK_DANGLING,
        "An assistant message with 'tool_calls' must be followed by tool messages responding to "
        "each 'tool_call_id'. (insufficient tool messages following tool_calls message)",
    ),
    (DEEPSEEK_ORPHAN, "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"),
    (DEEPSEEK_REASONING, "The `reasoning_content` in the thinking mode must be passed back to the API."),
]
_WORDING = dict(RULES + DEEPSEEK_RULES)
_WHERE = {
    ORPHAN: "answers no call in the history",
    MISPLACED: "is not in the run of tool messages right after its call",
    DUPLICATE_RESULT: "is a second result for the same call",
}


def _full_dangling(ids: list[str]) -> str:
    return (
        _WORDING[DANGLING_TOOL_CALLS]
        + " The following tool_call_ids did not have response messages: "
        + ", ".join(ids)
    )


def check(messages: Sequence[Message | dict[str, Any]], dialect: str | None = None) -> list[Problem]:
    """Problems a Chat server would answer with a 400, in message order.

    The pairing breaks are found by the analysis ``repair_history`` uses (one reading of a
    history, never two); this adds what the Chat servers say about them, and DeepSeek thinking
    mode's own rule. ``dialect="deepseek"`` switches to DeepSeek's wordings.
    """
    msgs = ensure_messages(messages)
    deepseek = dialect == "deepseek"
    a = analyze(msgs)
    found: list[Problem] = []
    for i, positions in a.dangling.items():
        m = msgs[i]
        assert isinstance(m, AssistantMessage) and m.tool_calls
        ids = [m.tool_calls[p].id for p in positions]
        found.append(
            Problem(
                DEEPSEEK_DANGLING if deepseek else DANGLING_TOOL_CALLS,
                i,
                f"tool call(s) {', '.join(ids)} have no tool message right after the assistant "
                "message; add their results (repair_history adds 'interrupted' results)",
                _WORDING[DEEPSEEK_DANGLING] if deepseek else _full_dangling(ids),
            )
        )
    for i, why in a.unmatched.items():
        if why not in _WHERE:
            continue
        m = msgs[i]
        assert isinstance(m, ToolMessage)
        found.append(
            Problem(
                DEEPSEEK_ORPHAN if deepseek else ORPHAN_TOOL_MESSAGE,
                i,
                f"tool message for {m.tool_call_id!r} {_WHERE[why]}; repair_history turns it into a user note",
                _WORDING[DEEPSEEK_ORPHAN] if deepseek else "Invalid parameter: " + _WORDING[ORPHAN_TOOL_MESSAGE] + "eding message with 'tool_calls'.",
            )
        )
    if deepseek:
        found.extend(_deepseek_reasoning(msgs))
    found.sort(key=lambda p: p.index)
    return found


def _deepseek_reasoning(msgs: list[Message]) -> list[Problem]:
    """Thinking mode (the history shows reasoning) needs it back on every tool-call turn.

    The adapter then sends an empty ``reasoning_content`` so the request is accepted, but the
    model has lost what it thought on that turn: worth knowing before a long tool loop.
    """
    assistants = [(i, m) for i, m in enumerate(msgs) if isinstance(m, AssistantMessage)]
    if not any(m.reasoning for _, m in assistants):
        return []
    return [
        Problem(
            DEEPSEEK_REASONING,
            i,
            "tool-call turn without reasoning in a thinking-mode history (from another provider, or "
            "stripped?); the adapter sends an empty reasoning_content, so the model continues "
            "without its earlier reasoning",
            _WORDING[DEEPSEEK_REASONING],
        )
        for i, m in assistants
        if m.tool_calls and m.reasoning is None
    ]
