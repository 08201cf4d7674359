"""The OpenAI Chat Completions wire, and every server that speaks it (DeepSeek, OpenRouter,
Groq, OpenCode Go, vLLM, Ollama, LM Studio, ...).

This module is the only place that knows Chat Completions field names: the request body, the
stream frames, the non-stream body, and the importer that reads a Chat ``messages`` list back
into canonical messages. Differences between compatible servers are data on the provider
(effort dialect, where the session id goes, which reasoning fields go back), set by the presets
in ``factory.py``, never ``if host == ...`` branches scattered through the code.

End signal: ``data: [DONE]``. A server that omits it but sent a ``finish_reason`` and closed
cleanly has finished too (some compatibles never send ``[DONE]``); a stream with neither was cut.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import urlsplit

from ..core.errors import ErrorKind, ProviderError
from ..core.json_input import JsonInputError, read_json
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
)
from ..core.structured import JsonFormat, json_request
from ..core.tools import ToolDefinition
from ..core.turn import (
    Chunk,
    Finish,
    ModelInfo,
    Notice,
    ReasoningDelta,
    ReasoningDetailsDelta,
    TextDelta,
    ToolCallDelta,
    Usage,
    UsageUpdate,
)
from ..transport.classify import stream_error
from ..transport.http import Request, Timeout
from ..transport.sse import SSEEvent
from .base import (
    EFFORTS,
    CallOptions,
    ImportedRequest,
    WireProvider,
    WireRequest,
    join_url,
    merge_body,
)
from .guard import FrameError, cut_short, need  # need: a required part of a frame
from .negotiation import (
    facts_for,
    json_form,
    json_ladder,
    json_notice,
    props_url,
    read_props,
    refused_field,
    tool_choice_plan,
    tools_refused,
    tools_unsupported_error,
    what_was_said,
)
from .openai_models import effort_from_level, openai_effort_level

__all__ = [
    "OpenAIChatProvider",
    "effort_params",
    "to_openai_messages",
    "to_openai_tools",
    "from_openai_messages",
    "from_openai_tools",
    "map_usage",
    "matches",
    "import_request",
    "replay_provider",
    "EFFORT_DIALECTS",
]

EFFORT_DIALECTS = ("openai", "deepseek", "openrouter", "opencode-go", "off")

FINISH_MAP = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
}

# OpenRouter: what "effort none" means per model (measured); every other model gets nothing,
# because an explicit "off" is a 400 on models whose reasoning is mandatory.
OPENROUTER_NONE = {
    "z-ai/glm-5.3-flash": "low",
    "openai/gpt-5-mini": "minimal",
    "xiaomi/mimo-v2.6-flash": "none",
}

_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # the C scanner json.loads uses (set in __init__, absent from typeshed)


def _read_frame(data: str) -> tuple[Any, int]:
    """One frame's JSON and where it ends (-1: at the end) by the standard library, for what
    orjson refused or was not trusted with."""
    try:
        return _SCAN(data, 0)
    except (StopIteration, ValueError, RecursionError):
        return _loads_or_none(data), -1


def _loads_or_none(data: str) -> Any:
    """A frame the C scanner did not take (the rare case): not JSON is a keep-alive (None);
    nested beyond reading is an error (read_json's JsonInputError, a ValueError)."""
    try:
        return read_json(data)
    except JsonInputError as exc:
        if exc.too_deep:
            raise
        return None


# a version segment anywhere in the base path (/v1, /v4, /v1beta/openai): the server's
# own prefix, so the path is /chat/completions, never a second /v1
_VERSIONED = re.compile(r"/v\d+[a-z0-9]*(?:/|$)")
_GLM_GO = re.compile(r"glm-5[-.p]?[23]")


# --------------------------------------------------------------------------- effort


def effort_params(dialect: str, effort: str | None, model: str, provider: str = "openai") -> dict[str, Any]:
    """The body fields that ask for ``effort`` in a server's own spelling (absent -> nothing)."""
    if effort is None or dialect == "off":
        return {}
    if dialect == "openai":
        return {"reasoning_effort": openai_effort_level(model, effort)}
    if dialect == "deepseek":
        if effort == "none":
            return {"thinking": {"type": "disabled"}}
        if effort in ("low", "medium"):
            return {"thinking": {"type": "enabled"}, "reasoning_effort": effort}
        return {"thinking": {"type": "enabled"}}
    if dialect == "openrouter":
        if effort == "none":
            level = OPENROUTER_NONE.get(model)
            return {"reasoning": {"effort": level}} if level else {}
        return {"reasoning": {"effort": effort}}
    if dialect == "opencode-go":
        m = model.lower()
        if _GLM_GO.search(m):
            return {"reasoning_effort": "max" if effort == "max" else "high"}
        if "deepseek-v4" in m:
            return {"reasoning_effort": "low" if effort == "none" else effort}
        if "mimo" in m:
            if effort == "max":
                raise ProviderError(
                    provider,
                    ErrorKind.INVALID,
                    f"{provider}: {model} has no 'max' effort; use effort='high'",
                )
            return {"reasoning_effort": effort}
        return {"reasoning_effort": "high" if effort == "max" else effort}
    raise ValueError(f"unknown effort dialect {dialect!r}; expected one of {EFFORT_DIALECTS}")


# --------------------------------------------------------------------------- outgoing


def _file_refused(provider: str, mime: str) -> ProviderError:
    return ProviderError(
        provider,
        ErrorKind.INVALID,
        f"{provider}: the Chat Completions wire can't send a file ({mime}); send its text, or use a "
        "wire that takes files (Gemini)",
    )


def _user_content(content: str | list[Any], provider: str) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    out: list[dict[str, Any]] = []
    for p in content:
        if isinstance(p, TextPart):
            out.append({"type": "text", "text": p.text})
        elif isinstance(p, ImagePart):
            out.append({"type": "image_url", "image_url": {"url": p.data_uri()}})
        else:
            raise _file_refused(provider, p.mime_type)
    return out


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
            d: dict[str, Any] = {"role": "assistant", "content": m.content or ""}
            if reasoning_field is not None:
                if m.reasoning is not None:
                    d[reasoning_field] = m.reasoning
                elif fill_reasoning and m.tool_calls:
                    d[reasoning_field] = ""
            if send_details and m.reasoning_details:
                d["reasoning_details"] = m.reasoning_details
            if m.tool_calls:
                d["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in m.tool_calls
                ]
            out.append(d)
        elif isinstance(m, ToolMessage):
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
            if m.images:
                pending_images.extend(
                    {"type": "image_url", "image_url": {"url": p.data_uri()}} for p in m.images
                )
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


# --------------------------------------------------------------------------- incoming


def _num(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def map_usage(u: dict[str, Any], *, openrouter: bool = False) -> Usage:
    """Chat usage in the shared meaning (input counts cache hits; output counts reasoning)."""
    details = u.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    if cached is None:
        cached = u.get("prompt_cache_hit_tokens")  # DeepSeek
    if cached is None:
        cached = u.get("cached_tokens")  # Kimi
    out_details = u.get("completion_tokens_details")
    reasoning = out_details.get("reasoning_tokens") if isinstance(out_details, dict) else None
    cost = None
    if openrouter:
        c = u.get("cost")
        if isinstance(c, int | float) and not isinstance(c, bool) and math.isfinite(c) and c >= 0:
            cost = float(c)
            if u.get("is_byok") is True:
                cd = u.get("cost_details")
                up = cd.get("upstream_inference_cost") if isinstance(cd, dict) else None
                ok = isinstance(up, int | float) and not isinstance(up, bool) and math.isfinite(up) and up >= 0
                cost = cost + float(up) if ok and up is not None else None
    return Usage(
        input_tokens=_num(u.get("prompt_tokens")),
        cached_input_tokens=_num(cached),
        output_tokens=_num(u.get("completion_tokens")),
        reasoning_tokens=_num(reasoning),
        reported_cost_usd=cost,
    )


_DETAIL_TEXT_FIELDS = ("text", "summary", "data")


def _merge_details(merged: list[dict[str, Any]], items: list[Any]) -> None:
    """OpenRouter streams reasoning_details in pieces: a piece with the same index and type as
    the last item continues it (text fields concatenate, other fields last-stated wins)."""
    for it in items:
        if not isinstance(it, dict):
            merged.append(it)
            continue
        last = merged[-1] if merged else None
        if (
            isinstance(last, dict)
            and last.get("type") == it.get("type")
            and last.get("index") == it.get("index")
            and it.get("index") is not None
        ):
            for k, v in it.items():
                if k in _DETAIL_TEXT_FIELDS and isinstance(v, str) and isinstance(last.get(k), str):
                    last[k] += v
                elif v is not None and v != "":
                    last[k] = v
        else:
            merged.append(dict(it))


def _arguments_text(args: Any) -> str:
    if args is None:
        return ""
    if isinstance(args, str):
        return args
    return json.dumps(args, ensure_ascii=False)


def _content_text(content: Any) -> str:
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


def _answer_text(content: Any) -> str:
    """A response's content: as ``_content_text``, but a number or an object is a malformed
    answer (its meaning is not clear), never its repr."""
    if content is None or isinstance(content, str | list):
        return _content_text(content)
    raise FrameError("'content'", content, "text or a list of text parts")


# --------------------------------------------------------------------------- provider


class OpenAIChatProvider(WireProvider):
    """Chat Completions over HTTP: ``POST <base>/chat/completions`` with SSE back."""

    wire = "openai_chat"
    env_keys = ("OPENAI_API_KEY",)
    default_base_url = "https://api.openai.com/v1"

    def __init__(
        self,
        *,
        model: str,
        id: str | None = None,
        path: str | None = None,
        effort_dialect: str | None = None,
        session_header: str | None = None,
        cache_key: bool | None = None,
        reasoning_field: str | None = None,
        replay_reasoning_details: bool | None = None,
        max_tokens_field: str = "max_tokens",
        max_tokens: int | None = None,
        json_mode: str | None = None,
        server: str | None = None,
        probe: bool = False,
        **base: Any,
    ) -> None:
        """``base`` takes WireProvider's keywords: api_key, base_url, headers, timeout,
        transport, instance_session_id, require_key, env_keys, effort.

        ``json_mode`` is where ``json=`` starts: "schema" (the default: ``response_format``
        json_schema, OpenAI's form) or "object" (JSON mode plus the schema as a trailing system
        message, for a server known to have no json_schema). No one form serves every
        compatible server (llama-cpp-python refuses json_schema, LM Studio json_object), so a
        refusal is answered once in the next form (json_object with the schema inside it, then
        the prompt alone) and the form taken is remembered and said on the reply.
        ``server`` names a known server ("llama.cpp", "lmstudio", "llama-cpp-python"; see
        ``negotiation.KNOWN_SERVERS``); ``probe`` asks ``GET /props`` once, on the first send with
        tools, whether the server is llama.cpp and whether its chat template can render tools."""
        pid = id or "openai"
        super().__init__(model=model, id=pid, **base)
        mode = json_mode or "schema"
        if mode not in ("schema", "object"):
            raise ValueError(f"json_mode must be 'schema' or 'object', got {json_mode!r}")
        self.json_mode = mode
        self.facts = facts_for(server)
        self.probe = probe
        dialect = effort_dialect or (
            pid if pid in ("openrouter", "deepseek", "opencode-go") else "openai"
        )
        if dialect not in EFFORT_DIALECTS:
            raise ValueError(f"effort_dialect must be one of {EFFORT_DIALECTS}, got {dialect!r}")
        self.effort_dialect = dialect
        self.session_header = session_header
        self.cache_key = pid == "openai" if cache_key is None else cache_key
        self.reasoning_field = reasoning_field if reasoning_field is not None else (
            "reasoning_content" if dialect == "deepseek" else None
        )
        self.replay_reasoning_details = (
            dialect == "openrouter" if replay_reasoning_details is None else replay_reasoning_details
        )
        self.max_tokens_field = max_tokens_field
        self.max_tokens = max_tokens
        host = urlsplit(self.base_url).hostname or ""
        self._openrouter_host = "openrouter.ai" in host
        if path is None:
            path = "/chat/completions" if _VERSIONED.search(urlsplit(self.base_url).path) else "/v1/chat/completions"
        self.path = path
        self.url = join_url(self.base_url, path)

    # ---------------------------------------------------------------- outgoing

    def thinking(self, model: str, effort: str | None) -> bool | None:
        """DeepSeek thinking mode for this call: True, False, or None when it cannot be told."""
        if effort == "none" or model == "deepseek-chat":
            return False
        if effort is not None or "reasoner" in model:
            return True
        return None

    def build_request(
        self, messages: list[Message], tools: list[ToolDefinition] | None, opts: CallOptions, *, stream: bool
    ) -> WireRequest:
        model = opts.model or self.model
        effort = opts.effort if opts.effort is not None else self.effort
        reasoning_field = self.reasoning_field
        fill = False
        if self.effort_dialect == "deepseek":
            mode = self.thinking(model, effort)
            if mode is False:
                reasoning_field = None  # DeepSeek rejects reasoning_content with thinking off
            fill = mode is True
        body: dict[str, Any] = {
            "model": model,
            "messages": to_openai_messages(
                messages,
                provider=self.id,
                reasoning_field=reasoning_field,
                fill_reasoning=fill,
                send_details=self.replay_reasoning_details,
            ),
        }
        notices: list[Any] = []
        extra: dict[str, Any] = {"notices": notices}
        fmt = opts.json
        if isinstance(fmt, JsonFormat):
            prompt_only = bool(tools) and opts.json_with_tools == "prompt"
            ladder = json_ladder(self.json_mode, self.id == "openai", fmt.schema is not None)
            form = "prompt" if prompt_only else json_form(self.facts, ladder, opts.avoid_json_form) or ladder[-1]
            ask = json_request(fmt, enforce_schema=False, form=form)
            if ask.format == "json_schema":
                body["response_format"] = {
                    "type": "json_schema", "json_schema": {"name": fmt.name, "schema": fmt.schema, "strict": fmt.is_strict}
                }
            elif ask.format is not None:
                body["response_format"] = {"type": ask.format, **({"schema": fmt.schema} if ask.schema_inside else {})}
            if ask.prompt is not None:
                # after the history, so the cached prefix survives a per-call schema
                body["messages"].append({"role": "system", "content": ask.prompt})
            extra["json_form"] = form
            if not prompt_only:
                notices.append(json_notice(form, ladder, self.facts, opts.avoid_json_form))
        if stream:
            body["stream"] = True
            if self.facts.stream_options is not False:
                body["stream_options"] = {"include_usage": True}
        max_tokens = opts.max_tokens if opts.max_tokens is not None else self.max_tokens
        if max_tokens is not None:
            body[self.max_tokens_field] = max_tokens
        if opts.temperature is not None:
            body["temperature"] = opts.temperature
        if opts.top_p is not None:
            body["top_p"] = opts.top_p
        if opts.stop:
            body["stop"] = list(opts.stop)
        body.update(effort_params(self.effort_dialect, effort, model, self.id))
        choice, offered, said = tool_choice_plan(self.facts, opts.tool_choice, [t.name for t in tools or ()])
        if said is not None:
            notices.append(said)
        if tools:
            body["tools"] = to_openai_tools([t for t in tools if offered is None or t.name in offered])
            if opts.parallel_tool_calls is False:
                body["parallel_tool_calls"] = False
        if choice is not None:
            body["tool_choice"] = choice
        session = self.session_for(opts)
        if self.cache_key:
            body["prompt_cache_key"] = session
        if opts.service_tier is not None:
            body["service_tier"] = opts.service_tier
        body = merge_body(body, opts.extra_body)
        headers: dict[str, str] = {}
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        if stream:
            headers["accept"] = "text/event-stream"
        if self.session_header:
            headers[self.session_header] = session
        return WireRequest(self.url, headers, body, stream=stream, extra=extra)

    # ---------------------------------------------------------------- negotiation

    def _probe(self) -> None:
        """``GET /props`` once: llama.cpp says there what its chat template can render. Any
        other answer (404, not JSON, no answer within two seconds) says nothing. Calls that
        start meanwhile wait for it, so none goes out on what is not known yet."""
        facts = self.facts
        with facts.probing:
            if facts.probed:
                return
            url = props_url(self.base_url)
            headers = {**self.headers, **({"authorization": f"Bearer {self._api_key}"} if self._api_key else {})}
            learned: dict[str, Any] = {}
            try:
                resp = self.sender.send(
                    Request("GET", url, headers, None, stream=False, timeout=Timeout(2, 2, 2, 2)), self.id
                )
                try:
                    raw = resp.read()[:1_000_000] if resp.status == 200 else b""
                finally:
                    resp.close()
                learned = read_props(read_json(raw), url) if raw else {}
            except Exception:  # a probe: whatever the server or the transport does, it says nothing
                pass
            facts.learn(probed=True, **learned)

    def negotiate(
        self, wr: WireRequest, messages: list[Message], tools: list[ToolDefinition] | None, opts: CallOptions
    ) -> WireRequest:
        if not tools:
            return wr
        if self.probe and not self.facts.probed:
            self._probe()
            wr = self.build_request(messages, tools, opts, stream=wr.stream)  # what was learned applies now
        if self.facts.tools is False:
            raise tools_unsupported_error(self.id, self.facts, len(tools))
        return wr

    def after_refusal(
        self, err: ProviderError, wr: WireRequest, messages: list[Message], tools: list[ToolDefinition] | None,
        opts: CallOptions,
    ) -> WireRequest | None:
        if tools:
            plain = tools_refused(self.id, err, len(tools))
            if plain is not None:
                self.facts.learn(tools=False, tools_said=err.message)
                raise plain from err
        field = refused_field(err, wr.body)
        if field is None:
            return None
        said = {field: what_was_said(err)}
        if field == "response_format":
            form = wr.extra.get("json_form")
            if form is None or form == "prompt":
                return None
            self.facts.learn(refused_json=frozenset({form}), said=said)
        elif field == "tool_choice":
            sent = wr.body.get("tool_choice")
            self.facts.learn(said=said, **({"named_choice": False} if isinstance(sent, dict) else {"required_choice": False}))
        else:
            self.facts.learn(stream_options=False, said=said)
        again = self.build_request(messages, tools, opts, stream=wr.stream)
        if again.body == wr.body:
            return None  # nothing left to change: the refusal stands
        if field == "stream_options":
            again.extra["notices"].append(Notice(
                "stream_options", f"stream_options left out: the server refused it ({said[field]}); it may then "
                "report no usage", "omitted"))
        return again

    # ---------------------------------------------------------------- incoming

    def parse_stream(self, events: Iterator[SSEEvent], opts: CallOptions) -> Iterator[Chunk]:
        # The hot path: one JSON parse per frame (orjson or the C scanner), then a walk over the few keys a
        # delta actually carries (most carry only text, read here; the reader takes the rest).
        pid = self.id
        scan = _SCAN
        st = _Reader(self)
        field = st.delta_field
        for ev in events:
            data = ev.data
            if data == "[DONE]":
                st.done = True
                break
            if ev.event == "error":  # Groq: an error event, then the connection closes
                raise stream_error(pid, data, secrets=self.secrets)
            fast = ev.fast  # orjson, when the reader found it safe for this read
            try:
                obj, end = (fast(data), -1) if fast is not None else scan(data, 0)
            except (StopIteration, ValueError, RecursionError):
                obj, end = _read_frame(data)
            if type(obj) is not dict:
                continue  # not JSON: a keep-alive some proxies send
            if end != -1 and end != len(data) and data[end:].strip():
                continue  # trailing garbage after the JSON: not a frame we understand
            if "error" in obj and obj["error"]:
                raise stream_error(pid, obj, secrets=self.secrets)
            m = obj.get("model")
            if m and m != st.model:
                st.model = m
                yield ModelInfo(m)
            choices = obj.get("choices")
            if choices:
                c = choices[0]
                if c.get("index", 0) != 0:  # several choices (n > 1): only choice 0 is the turn
                    c = next((x for x in choices if x.get("index", 0) == 0), None)
                if c is not None:
                    delta = c.get("delta")
                    if delta:
                        if type(delta) is not dict:
                            need(c, "delta", dict, "an object")
                        for k, v in delta.items():
                            if not v:
                                continue
                            if k == "content":
                                yield TextDelta(v if type(v) is str else _answer_text(v))
                            elif k != "role":
                                yield from field(k, v, delta)
                    fr = c.get("finish_reason")
                    if fr:
                        st.finish = fr
            u = obj.get("usage")
            if not u and "x_groq" in obj:
                xg = obj["x_groq"]
                u = xg.get("usage") if type(xg) is dict else None
            if u and type(u) is dict:
                yield UsageUpdate(map_usage(u, openrouter=st.openrouter))
        yield from st.end()

    def parse_response(self, data: Any, opts: CallOptions) -> Iterator[Chunk]:
        pid = self.id
        if not isinstance(data, dict):
            raise ProviderError(pid, ErrorKind.OVERLOAD, f"{pid}: the response was not a JSON object")
        if data.get("error"):
            raise stream_error(pid, data, secrets=self.secrets)
        st = _Reader(self)
        if data.get("model"):
            yield ModelInfo(data["model"])
        choices = data.get("choices") or []
        c = next((x for x in choices if isinstance(x, dict) and x.get("index", 0) == 0), None)
        if c is None:
            raise ProviderError(pid, ErrorKind.OVERLOAD, f"{pid}: the response had no choices")
        yield from st.message(c.get("message") or {})
        u = data.get("usage")
        if isinstance(u, dict):
            yield UsageUpdate(map_usage(u, openrouter=st.openrouter))
        yield Finish(FINISH_MAP.get(c.get("finish_reason") or "stop", "stop"))


class _Reader:
    """One turn's reading state, shared by the stream (its loop reads each chunk object's text
    and model; ``delta_field`` the rest of a delta; ``end``) and the whole response
    (``message``)."""

    __slots__ = ("p", "openrouter", "finish", "done", "model", "details")

    def __init__(self, provider: OpenAIChatProvider) -> None:
        self.p = provider
        self.openrouter = provider._openrouter_host
        self.finish: str | None = None
        self.done = False  # the [DONE] line arrived
        self.model: str | None = None
        self.details: list[Any] | None = None  # OpenRouter's reasoning_details, merged

    def delta_field(self, k: str, v: Any, delta: dict[str, Any]) -> Iterator[Chunk]:
        """One non-empty field of a delta other than its text."""
        if k == "reasoning_content" or k == "reasoning":
            if type(v) is str and not (k == "reasoning" and delta.get("reasoning_content")):
                yield ReasoningDelta(v)
        elif k == "tool_calls":
            for pos, tc in enumerate(v):
                fn = tc.get("function") or {}
                idx = tc.get("index")
                yield ToolCallDelta(
                    pos if idx is None else idx,
                    tc.get("id") or None,
                    fn.get("name") or None,
                    _arguments_text(fn.get("arguments")) if "arguments" in fn else None,
                )
        elif k == "reasoning_details" and type(v) is list:
            if self.details is None:
                self.details = []
            _merge_details(self.details, v)

    def message(self, msg: dict[str, Any]) -> Iterator[Chunk]:
        """The whole response's message (the calls are numbered by their place)."""
        r = msg.get("reasoning_content") or msg.get("reasoning")
        if r and isinstance(r, str):
            yield ReasoningDelta(r)
        rd = msg.get("reasoning_details")
        if rd and isinstance(rd, list):
            yield ReasoningDetailsDelta(list(rd))
        text = _answer_text(msg.get("content"))
        if text:
            yield TextDelta(text)
        for i, tc in enumerate(msg.get("tool_calls") or []):
            fn = tc.get("function") or {}
            yield ToolCallDelta(i, tc.get("id") or None, fn.get("name") or None, _arguments_text(fn.get("arguments")))

    def end(self) -> Iterator[Chunk]:
        if not self.done and self.finish is None:
            # (an empty body never gets here: the seam reports it, as overload, on every wire)
            raise cut_short(self.p.id)
        if self.details:
            yield ReasoningDetailsDelta(self.details)
        yield Finish(FINISH_MAP.get(self.finish or "stop", "stop"))


# --------------------------------------------------------------------------- importer


def _data_uri(url: str, where: str) -> tuple[str, str]:
    if not url.startswith("data:") or ";base64," not in url:
        raise ValueError(
            f"{where}: only inline base64 images (data: URIs) can be imported; "
            f"download {url[:60]!r} and pass its bytes instead"
        )
    head, data = url[5:].split(";base64,", 1)
    return head or "application/octet-stream", data


def _import_parts(content: Any, where: str) -> str | list[Any]:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise ValueError(f"{where}: content must be a string or a list of parts")
    parts: list[Any] = []
    for j, p in enumerate(content):
        w = f"{where}, part {j}"
        if isinstance(p, str):
            parts.append(TextPart(p))
            continue
        if not isinstance(p, dict):
            raise ValueError(f"{w}: a part must be an object")
        kind = p.get("type")
        if kind in ("text", "input_text"):
            parts.append(TextPart(p.get("text") or ""))
        elif kind == "image_url":
            iu = p.get("image_url")
            url = iu.get("url") if isinstance(iu, dict) else iu
            mime, data = _data_uri(str(url), w)
            parts.append(ImagePart(mime, data))
        elif kind == "file":
            f = p.get("file") or {}
            mime, data = _data_uri(str(f.get("file_data", "")), w)
            parts.append(FilePart(mime, data, f.get("filename")))
        else:
            raise ValueError(f"{w}: part type {kind!r} has no canonical form (text, image_url or file)")
    return parts


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
    names: dict[str, str] = {}
    out: list[Message] = []
    for i, m in enumerate(messages):
        where = f"message {i}"
        if not isinstance(m, dict):
            raise ValueError(f"{where}: must be an object")
        role = m.get("role")
        if role in ("system", "developer"):
            c = _import_parts(m.get("content"), where)
            out.append(SystemMessage(c if isinstance(c, str) else "".join(p.text for p in c if isinstance(p, TextPart))))
        elif role == "user":
            out.append(UserMessage(_import_parts(m.get("content"), where)))
        elif role == "assistant":
            calls = []
            for j, tc in enumerate(m.get("tool_calls") or []):
                fn = tc.get("function") or {}
                if not tc.get("id") or not fn.get("name"):
                    raise ValueError(f"{where}, tool_calls[{j}]: a call needs an id and a function name")
                calls.append(ToolCall(tc["id"], fn["name"], _arguments_text(fn.get("arguments"))))
                names[tc["id"]] = fn["name"]
            fc = m.get("function_call")
            if isinstance(fc, dict) and fc.get("name"):  # the legacy single-call form
                cid = f"call_{i}"
                calls.append(ToolCall(cid, fc["name"], _arguments_text(fc.get("arguments"))))
                names[cid] = fc["name"]
            reasoning = m.get("reasoning_content")
            if reasoning is None:
                reasoning = m.get("reasoning")
            details = m.get("reasoning_details")
            out.append(
                AssistantMessage(
                    content=_content_text(m.get("content")),
                    reasoning=reasoning if isinstance(reasoning, str) else None,
                    reasoning_details=list(details) if isinstance(details, list) and details else None,
                    tool_calls=calls or None,
                )
            )
        elif role == "tool":
            result_id = m.get("tool_call_id")
            if not result_id:
                raise ValueError(f"{where}: a tool message needs its tool_call_id")
            c = _import_parts(m.get("content"), where)
            images = None
            if isinstance(c, list):
                images = [p for p in c if isinstance(p, ImagePart)] or None
                c = "".join(p.text for p in c if isinstance(p, TextPart))
            out.append(ToolMessage(result_id, m.get("name") or names.get(result_id, ""), c, images))
        elif role == "function":
            raise ValueError(f"{where}: legacy role 'function' has no call id; convert it to role 'tool'")
        else:
            raise ValueError(f"{where}: unknown role {role!r} (system, developer, user, assistant, tool)")
    return out


# --------------------------------------------------------------------------- replay contract


def matches(url: str) -> bool:
    """Is this recorded request URL a Chat Completions call?"""
    return urlsplit(url).path.rstrip("/").endswith("/chat/completions")


def _effort_from_body(body: dict[str, Any]) -> str | None:
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") == "disabled":
        return "none"
    e = body.get("reasoning_effort")
    if e is None and isinstance(body.get("reasoning"), dict):
        e = body["reasoning"].get("effort")
    e = effort_from_level(e)
    return e if e in EFFORTS else None


def import_request(url: str, body: dict[str, Any]) -> ImportedRequest:
    """A recorded Chat request body in canonical form (messages, tools, call options)."""
    opts: dict[str, Any] = {}
    mt = body.get("max_completion_tokens", body.get("max_tokens"))
    if mt is not None:
        opts["max_tokens"] = mt
    for k in ("temperature", "top_p", "parallel_tool_calls"):
        if body.get(k) is not None:
            opts[k] = body[k]
    stop = body.get("stop")
    if stop:
        opts["stop"] = [stop] if isinstance(stop, str) else list(stop)
    tc = body.get("tool_choice")
    if isinstance(tc, dict):
        name = (tc.get("function") or {}).get("name")
        if name:
            opts["tool_choice"] = {"name": name}
    elif isinstance(tc, str) and tc != "auto":
        opts["tool_choice"] = tc
    effort = _effort_from_body(body)
    if effort is not None:
        opts["effort"] = effort
    if isinstance(body.get("service_tier"), str):
        opts["service_tier"] = body["service_tier"]
    rf = body.get("response_format")
    if isinstance(rf, dict) and rf.get("type") == "json_schema" and isinstance(rf.get("json_schema"), dict):
        opts["json"] = {"type": "json_schema", "json_schema": rf["json_schema"]}
    elif isinstance(rf, dict) and rf.get("type") == "json_object" and isinstance(rf.get("schema"), dict):
        opts["json"] = rf["schema"]  # JSON mode with the schema inside it (llama.cpp's servers)
    elif isinstance(rf, dict) and rf.get("type") == "json_object":
        opts["json"] = "object"
    return ImportedRequest(
        messages=from_openai_messages(body.get("messages") or []),
        tools=from_openai_tools(body.get("tools")),
        options=opts,
        model=body.get("model"),
        stream=bool(body.get("stream")),
    )


def replay_provider(url: str, body: dict[str, Any], transport: Any) -> WireProvider:
    """A provider aimed at the recorded endpoint, configured like the preset for its host."""
    from .factory import preset_for_host

    parts = urlsplit(url)
    base = f"{parts.scheme}://{parts.netloc}"
    row = preset_for_host(parts.hostname or "")
    return row.build(
        model=body.get("model") or "replay-model",
        api_key="replay-key",
        base_url=base,
        path=parts.path,
        transport=transport,
        **({"probe": False} if row.options.get("probe") else {}),  # the recorded exchange, nothing more
    )
