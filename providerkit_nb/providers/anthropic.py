"""The Anthropic Messages wire (Anthropic, Claude sign-in, and the Anthropic-shaped gateways).

What this wire needs that others do not: ``max_tokens`` is mandatory; the system prompt is a
separate field (sent as one cached block so the prefix stays cacheable); a turn's tool results
are the first blocks of the next user turn; consecutive same-role turns must be merged; and
extended thinking signs its blocks, so a tool loop that thinks needs the signed blocks back,
unchanged and in place. Thinking and redacted_thinking blocks are captured as
``reasoning_items`` tagged with this provider's replay tag and sent back only to it.
"""

from __future__ import annotations

import base64
import copy
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
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
from ..core.rules import register_conversion
from ..core.structured import JsonFormat
from ..core.tool_args import parse_tool_args
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
from ..wire.options import EFFORTS, CallOptions, merge_body
from .base import WireProvider, WireRequest, join_url
from .guard import cut_short, need  # a required part of a frame, named when it is missing or wrong

__all__ = [
    "AnthropicProvider",
    "from_anthropic_messages",
    "to_anthropic_messages",
    "thinking_plan",
    "matches",
    "import_request",
    "replay_provider",
    "REASONING_BLOCK_TYPES",
    "DEFAULT_MAX_TOKENS",
]

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192
REASONING_BLOCK_TYPES = frozenset({"thinking", "redacted_thinking"})
ANTHROPIC_HOST = "api.anthropic.com"

# stop_reason -> canonical finish reason
_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
_BUDGET = {"low": 2048, "medium": 8192, "high": 16384, "max": 32768}
_MIN_BUDGET = 1024  # Claude refuses a smaller thinking budget
_SEP = (",", ":")
_dump_args = json.JSONEncoder(ensure_ascii=False, separators=_SEP).encode  # json.dumps without a new encoder per call


# --------------------------------------------------------------------------- model table


@dataclass(frozen=True, slots=True)
class _Family:
    """How an adaptive-thinking Claude family takes effort.

    ``none`` is what an explicit effort "none" sends (None: nothing, because silence is
    already off); ``sampling`` says temperature/top_p are accepted when not thinking;
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
    sampling: bool  # temperature/top_p may be sent
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
        budget = min(_BUDGET[effort], (max_tokens * 4) // 5)  # type: ignore[index]
        if not is_claude or budget >= _MIN_BUDGET:
            return ThinkingPlan({"thinking": {"type": "enabled", "budget_tokens": budget}}, True, False, True)
    if explicit_none and (effort is None or effort == "none" or graded):
        return ThinkingPlan({"thinking": {"type": "disabled"}}, False, True, True)
    # Claude <= 4.5 does not think unless asked; elsewhere silence is the server's default
    return ThinkingPlan({}, False if is_claude or effort == "none" else None, True, True)


# --------------------------------------------------------------------------- outgoing history


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
        raise ProviderError(
            "anthropic",
            ErrorKind.INVALID,
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
            if isinstance(m.content, str):
                if m.content:
                    others.append({"type": "text", "text": m.content})
            else:
                for p in m.content:
                    if isinstance(p, TextPart):
                        if p.text:
                            others.append({"type": "text", "text": p.text})
                    elif isinstance(p, ImagePart):
                        others.append(_image_block(p))
                    else:
                        others.append(_file_block(p, f"message {i}"))
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


# --------------------------------------------------------------------------- the provider


class AnthropicProvider(WireProvider):
    """``POST <base>/v1/messages``, streamed as SSE, or whole for ``complete()``."""

    wire = "anthropic"
    env_keys = ("ANTHROPIC_API_KEY",)
    default_base_url = "https://api.anthropic.com"
    # effort "none" still thinks on some families: thinking_plan decides per model which signed
    # blocks may go back (strip_reasoning=True still strips them all)
    strip_on_none = False

    def __init__(
        self,
        *,
        model: str,
        max_tokens: int | None = None,
        version: str = API_VERSION,
        bearer: bool = False,
        explicit_none: bool = False,
        session_header: str | None = None,
        path: str | None = None,
        replay_tag: str | None = None,
        **base: Any,
    ) -> None:
        """``base`` takes WireProvider's keywords: api_key, base_url, headers, timeout,
        transport, id, instance_session_id, require_key, env_keys, effort."""
        super().__init__(model=model, **base)
        self.max_tokens = max_tokens
        self.version = version
        self.bearer = bearer
        self.explicit_none = explicit_none
        self.session_header = session_header
        self.path = path or "/v1/messages"
        # Signatures verify only where they were made: api.anthropic.com (key or sign-in)
        # shares one tag; any other server is tagged with this provider's id.
        host = urlsplit(self.base_url).hostname or ""
        self.replay_tag = replay_tag or ("anthropic" if host == ANTHROPIC_HOST else self.id)

    # request ---------------------------------------------------------------

    def _auth_headers(self, opts: CallOptions) -> dict[str, str]:
        h = {"anthropic-version": self.version}
        if self._api_key:
            if self.bearer:
                h["authorization"] = f"Bearer {self._api_key}"
            else:
                h["x-api-key"] = self._api_key
        if self.session_header:
            h[self.session_header] = self.session_for(opts)
        return h

    def build_request(
        self, messages: list[Message], tools: list[ToolDefinition] | None, opts: CallOptions, *, stream: bool
    ) -> WireRequest:
        model = opts.model or self.model
        if opts.service_tier is not None:
            raise ProviderError(
                self.id, ErrorKind.INVALID,
                f"{self.id}: service_tier is an OpenAI option; Anthropic Messages has no per-call tier (leave it unset)",
            )
        max_tokens = opts.max_tokens or self.max_tokens or DEFAULT_MAX_TOKENS
        conv = to_anthropic_messages(messages, self.replay_tag)
        turns = conv.messages

        choice = _tool_choice(opts.tool_choice) if tools else None
        forced = choice is not None and choice["type"] in ("any", "tool")
        loop = tool_loop_turn(turns)
        plan = thinking_plan(
            model,
            opts.effort if opts.effort is not None else self.effort,
            max_tokens,
            forced=forced,
            loop_without_thinking=loop is not None and not starts_with_thinking(turns[loop]),
            explicit_none=self.explicit_none,
        )
        if plan.on is False:
            # thinking off: the last assistant turn may not carry thinking blocks
            k = _last_assistant(turns)
            if k is not None:
                kept = [b for b in turns[k]["content"] if b.get("type") not in REASONING_BLOCK_TYPES]
                turns[k] = {"role": "assistant", "content": kept}

        body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": turns}
        system: list[dict[str, Any]] = []
        if conv.system:
            system.append({"type": "text", "text": conv.system, "cache_control": {"type": "ephemeral"}})
        if isinstance(opts.json, JsonFormat):
            # a second, uncached block: a per-call schema never invalidates the cached prefix
            system.append({"type": "text", "text": opts.json.prompt})
        if system:
            body["system"] = system
        if tools:
            offered = tools
            if forced and not plan.forced_tool:
                # this model refuses forced tool use: offer only the named tool, let it choose
                if choice["type"] == "tool":  # type: ignore[index]
                    offered = [t for t in tools if t.name == choice["name"]] or tools  # type: ignore[index]
                choice = None
            body["tools"] = [
                {"name": t.name, "description": t.description or "", "input_schema": _schema(t.input_schema)}
                for t in offered
            ]
            if opts.parallel_tool_calls is False and (choice is None or choice["type"] != "none"):
                choice = {**(choice or {"type": "auto"}), "disable_parallel_tool_use": True}
            if choice is not None:
                body["tool_choice"] = choice
        body.update(plan.fields)
        if plan.sampling:
            if opts.temperature is not None:
                body["temperature"] = opts.temperature
            if opts.top_p is not None:
                body["top_p"] = opts.top_p
        if opts.stop:
            body["stop_sequences"] = list(opts.stop)
        body["stream"] = stream
        body = merge_body(body, opts.extra_body)
        return WireRequest(join_url(self.base_url, self.path), self._auth_headers(opts), body, stream=stream)

    # stream ----------------------------------------------------------------

    def parse_stream(self, events: Iterator[SSEEvent], opts: CallOptions) -> Iterator[Chunk]:
        # Hot path: text deltas are read here; every other event goes to the reader's method
        # for its type (the same reader reads a whole non-streamed message).
        st = _Reader(self)
        handlers = st.handlers
        text = TextDelta
        for ev in events:
            if ev.event == "ping" and ev.data in _PINGS:
                continue  # a keep-alive: nothing in it to read, no need to parse it
            d = ev.decode()
            if d is NOT_JSON:
                continue  # a keep-alive
            kind = d.get("type") if type(d) is dict else None
            if kind == "content_block_delta":
                delta = d.get("delta")
                if type(delta) is dict and delta.get("type") == "text_delta":
                    t = delta.get("text")
                    if t:
                        yield text(t)
                    continue
            handler = handlers.get(kind) if type(kind) is str else None
            if handler is not None:  # ping and unknown events: nothing to do
                yield from handler(d)
                if st.finished:
                    return
        yield from st.end()

    def parse_response(self, data: Any, opts: CallOptions) -> Iterator[Chunk]:
        if not isinstance(data, dict) or data.get("type") == "error":
            raise stream_error(self.id, data, secrets=self.secrets)
        need(data, "content", list, "a list of blocks")  # a Message always has it (maybe empty)
        st = _Reader(self)
        if data.get("model"):
            yield ModelInfo(data["model"])
        for index, block in enumerate(data.get("content") or ()):
            yield from st.whole_block(index, block)
        u = data.get("usage")
        if u:
            st.take_usage(u, whole=True)
        st.stop_reason = data.get("stop_reason")
        yield from st.close()


_PINGS = frozenset({'{"type": "ping"}', '{"type":"ping"}'})
_USAGE_FIELDS = (
    ("fresh", "input_tokens"),
    ("cache_read", "cache_read_input_tokens"),
    ("cache_write", "cache_creation_input_tokens"),
    ("output", "output_tokens"),
)


class _Reader:
    """One turn's reading state, shared by the stream and the whole message body.

    ``blocks`` holds the open blocks by index as ``[type, payload, parts, signature]``; usage
    is cumulative (``message_start``, then ``message_delta``s that overwrite what they state).
    """

    __slots__ = (
        "p", "blocks", "fresh", "cache_read", "cache_write", "output", "thinking",
        "seen_usage", "stop_reason", "thought", "finished", "handlers",
    )

    def __init__(self, provider: AnthropicProvider) -> None:
        self.p = provider
        self.blocks: dict[Any, list[Any]] = {}
        self.fresh = self.cache_read = self.cache_write = self.output = self.thinking = 0
        self.seen_usage = False
        self.stop_reason: str | None = None
        self.thought = False  # a thinking block has produced text (separate the next one)
        self.finished = False
        self.handlers: dict[Any, Callable[[dict[str, Any]], Iterator[Chunk]]] = {
            "content_block_delta": self.block_delta,
            "content_block_start": self.block_start,
            "content_block_stop": self.block_stop,
            "message_delta": self.message_delta,
            "message_start": self.message_start,
            "message_stop": self.message_stop,
            "error": self.error,
        }

    # shared pieces ------------------------------------------------------------

    def take_usage(self, u: dict[str, Any], *, whole: bool) -> None:
        """Usage as stated by ``message_start`` or a whole message (``whole``: every count,
        absent ones 0) or by a ``message_delta`` (cumulative: a count present overwrites; some
        gateways send 0 at the start)."""
        self.seen_usage = True
        for name, key in _USAGE_FIELDS:
            v = u.get(key)
            if whole:
                setattr(self, name, v or 0)
            elif v is not None:
                setattr(self, name, v)
        details = u.get("output_tokens_details")
        if whole:
            self.thinking = (details or {}).get("thinking_tokens") or 0
        elif details and details.get("thinking_tokens") is not None:
            self.thinking = details["thinking_tokens"]

    def reasoning(self, text: str) -> Iterator[Chunk]:
        """Readable thinking, a blank line between blocks."""
        if self.thought:
            yield ReasoningDelta("\n\n")
        self.thought = True
        yield ReasoningDelta(text)

    def close(self) -> Iterator[Chunk]:
        if self.seen_usage:
            yield UsageUpdate(_usage(self.fresh, self.cache_read, self.cache_write, self.output, self.thinking))
        yield Finish(_FINISH.get(self.stop_reason or "end_turn", "stop"))
        self.finished = True

    def whole_block(self, index: int, block: dict[str, Any]) -> Iterator[Chunk]:
        """One block of a whole (non-streamed) message."""
        bt = block.get("type")
        if bt == "text":
            if block.get("text"):
                yield TextDelta(block["text"])
        elif bt == "tool_use":
            args = json.dumps(block.get("input") or {}, ensure_ascii=False, separators=_SEP)
            yield ToolCallDelta(index, block.get("id"), block.get("name"), args)
        elif bt == "thinking":
            if block.get("thinking"):
                yield from self.reasoning(block["thinking"])
            yield ReasoningItemsDelta(self.p.replay_tag, [dict(block)])
        elif bt == "redacted_thinking":
            yield ReasoningItemsDelta(self.p.replay_tag, [dict(block)])

    # events -------------------------------------------------------------------

    def block_delta(self, d: dict[str, Any]) -> Iterator[Chunk]:
        delta = d.get("delta")
        if type(delta) is not dict:  # the one required part of a delta frame
            delta = need(d, "delta", dict, "an object")
        dt = delta.get("type")
        if dt == "text_delta":
            text = delta.get("text")
            if text:
                yield TextDelta(text)
        elif dt == "input_json_delta":
            part = delta.get("partial_json")
            if part:
                b = self.blocks.get(d.get("index"))
                if b is not None:
                    b[2].append(part)
                yield ToolCallDelta(d.get("index"), None, None, part)
        elif dt == "thinking_delta":
            text = delta.get("thinking")
            if text:
                b = self.blocks.get(d.get("index"))
                if b is not None:
                    if not b[2] and self.thought:
                        yield ReasoningDelta("\n\n")  # a blank line between blocks
                    b[2].append(text)
                self.thought = True
                yield ReasoningDelta(text)
        elif dt == "signature_delta":
            b = self.blocks.get(d.get("index"))
            if b is not None:
                b[3] = (b[3] or "") + (delta.get("signature") or "")
        # citations_delta and future delta types carry nothing we keep

    def block_start(self, d: dict[str, Any]) -> Iterator[Chunk]:
        block = d.get("content_block") or {}
        bt = block.get("type")
        index = d.get("index")
        if bt == "text":
            text = block.get("text")
            if text:
                yield TextDelta(text)
        elif bt == "tool_use":
            self.blocks[index] = ["tool_use", block.get("input"), [], None]
            yield ToolCallDelta(index, block.get("id") or None, block.get("name") or None)
        elif bt == "thinking":
            text = block.get("thinking") or ""
            self.blocks[index] = ["thinking", None, [text] if text else [], block.get("signature")]
            if text:
                yield from self.reasoning(text)
        elif bt == "redacted_thinking":
            self.blocks[index] = ["redacted_thinking", block.get("data"), [], None]

    def block_stop(self, d: dict[str, Any]) -> Iterator[Chunk]:
        b = self.blocks.pop(d.get("index"), None)
        if b is None:
            return
        tag = self.p.replay_tag
        if b[0] == "thinking":
            item: dict[str, Any] = {"type": "thinking", "thinking": "".join(b[2])}
            if b[3] is not None:
                item["signature"] = b[3]
            yield ReasoningItemsDelta(tag, [item])
        elif b[0] == "redacted_thinking":
            yield ReasoningItemsDelta(tag, [{"type": "redacted_thinking", "data": b[1]}])
        elif not b[2]:
            # no argument fragments: the start block's input is the whole input
            yield ToolCallDelta(d.get("index"), None, None, json.dumps(b[1] or {}, ensure_ascii=False, separators=_SEP))

    def message_start(self, d: dict[str, Any]) -> Iterator[Chunk]:
        msg = d.get("message") or {}
        if msg.get("model"):
            yield ModelInfo(msg["model"])
        u = msg.get("usage")
        if u:
            self.take_usage(u, whole=True)

    def message_delta(self, d: dict[str, Any]) -> Iterator[Chunk]:
        self.stop_reason = (d.get("delta") or {}).get("stop_reason") or self.stop_reason
        u = d.get("usage")
        if u:
            self.take_usage(u, whole=False)
        return iter(())

    def message_stop(self, d: dict[str, Any]) -> Iterator[Chunk]:
        return self.close()

    def error(self, d: dict[str, Any]) -> Iterator[Chunk]:
        raise stream_error(self.p.id, d, secrets=self.p.secrets)

    def end(self) -> Iterator[Chunk]:
        """The body ended without ``message_stop``."""
        if self.stop_reason is None:
            raise cut_short(self.p.id)
        # a gateway that skipped message_stop: the turn itself was complete
        yield from self.close()


def _usage(fresh: int, cache_read: int, cache_write: int, output: int, thinking: int) -> Usage:
    """Anthropic's input_tokens excludes the cache; ours counts the whole prompt."""
    return Usage(
        input_tokens=fresh + cache_read + cache_write,
        cached_input_tokens=cache_read,
        cache_write_tokens=cache_write,
        output_tokens=output,
        reasoning_tokens=thinking,
    )


# --------------------------------------------------------------------------- importer


def _text_of_result(content: Any, where: str) -> tuple[str, list[ImagePart]]:
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
            images.append(_import_image(b, f"{where}, content[{j}]"))
        else:
            raise ValueError(f"{where}, content[{j}]: a tool_result block of type {bt!r} cannot be imported (text and image only)")
    return "\n".join(texts), images


def _import_image(b: dict[str, Any], where: str) -> ImagePart:
    src = b.get("source") or {}
    if src.get("type") != "base64":
        raise ValueError(
            f"{where}: image source {src.get('type')!r} is not base64; download the image and pass its bytes "
            "(histories are self-contained)"
        )
    return ImagePart(src.get("media_type", ""), src.get("data", ""))


def _import_document(b: dict[str, Any], where: str) -> FilePart:
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
            args = _dump_args(b.get("input") or {})
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
            text, images = _text_of_result(b.get("content"), at)
            out.append(ToolMessage(call_id, names.get(call_id, ""), text, images or None))
        elif bt == "text":
            parts.append(TextPart(b.get("text") or ""))
        elif bt == "image":
            parts.append(_import_image(b, at))
        elif bt == "document":
            parts.append(_import_document(b, at))
        else:
            raise ValueError(f"{at}: a user block of type {bt!r} cannot be imported")
    if parts:
        if len(parts) == 1 and isinstance(parts[0], TextPart):
            out.append(UserMessage(parts[0].text))
        else:
            out.append(UserMessage(parts))
    return out


# --------------------------------------------------------------------------- replay contract


def matches(url: str) -> bool:
    """Is this recorded request URL the Anthropic Messages wire?"""
    return urlsplit(url).path.rstrip("/").endswith("/v1/messages")


def _effort_from(body: dict[str, Any]) -> str | None:
    oc = body.get("output_config") or {}
    if oc.get("effort") in EFFORTS:
        return oc["effort"]
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


def import_request(url: str, body: dict[str, Any]) -> ImportedRequest:
    """A recorded request body read back into canonical messages, tools and options."""
    # tagged as the replay provider (id "anthropic") tags what it reads, so its blocks go back
    messages = from_anthropic_messages(body.get("messages") or [], body.get("system"))
    tools = [
        ToolDefinition(t["name"], t.get("description") or "", t.get("input_schema") or {})
        for t in body.get("tools") or ()
        if isinstance(t, dict) and "name" in t
    ] or None
    options: dict[str, Any] = {"model": body.get("model")}
    for src, dst in (("max_tokens", "max_tokens"), ("temperature", "temperature"), ("top_p", "top_p")):
        if body.get(src) is not None:
            options[dst] = body[src]
    if body.get("stop_sequences"):
        options["stop"] = list(body["stop_sequences"])
    effort = _effort_from(body)
    if effort is not None:
        options["effort"] = effort
    tc = body.get("tool_choice")
    if isinstance(tc, dict):
        mapped = {"auto": "auto", "none": "none", "any": "required"}.get(tc.get("type", ""))
        if tc.get("type") == "tool":
            options["tool_choice"] = {"name": tc.get("name")}
        elif mapped:
            options["tool_choice"] = mapped
        if tc.get("disable_parallel_tool_use"):
            options["parallel_tool_calls"] = False
    return ImportedRequest(messages, tools, options, body.get("model"), bool(body.get("stream", False)))


def replay_provider(url: str, body: dict[str, Any], transport: Any) -> AnthropicProvider:
    """A provider aimed at the recorded endpoint (same host, path and query), with a dummy key."""
    parts = urlsplit(url)
    cut = parts.path.rfind("/v1/messages")
    prefix = parts.path[:cut] if cut >= 0 else ""
    path = parts.path[len(prefix) :] + (f"?{parts.query}" if parts.query else "")
    return AnthropicProvider(
        model=body.get("model") or "claude",
        api_key="replay-key",
        base_url=f"{parts.scheme}://{parts.netloc}{prefix}",
        path=path,
        transport=transport,
    )


# the offline validator (core.rules.anthropic) checks a history exactly as this module sends it
register_conversion("anthropic", to_anthropic_messages)
