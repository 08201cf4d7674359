"""The OpenAI Chat Completions wire over HTTP, and every server that speaks it (DeepSeek,
OpenRouter, Groq, OpenCode Go, vLLM, Ollama, LM Studio, ...).

The body is ``wire.openai_chat``'s; this module sends it, negotiates with the server what it
turns out to take (``negotiation``), and reads what comes back: the stream frames and the
non-stream body. Differences between compatible servers are data on the provider (effort
dialect, where the session id goes, which reasoning fields go back), set by the presets in
``factory.py``, never ``if host == ...`` branches scattered through the code.

End signal: ``data: [DONE]``. A server that omits it but sent a ``finish_reason`` and closed
cleanly has finished too (some compatibles never send ``[DONE]``); a stream with neither was cut.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from ..core.errors import ErrorKind, ProviderError
from ..core.json_input import JsonInputError, read_json
from ..core.messages import Message
from ..core.structured import JsonFormat
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
from ..wire import openai_chat as wire
from ..wire.openai_chat import content_text
from ..wire.options import CallOptions
from .base import WireProvider, WireRequest, join_url
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

__all__ = ["OpenAIChatProvider", "map_usage", "replay_provider"]

FINISH_MAP = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
}

_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # the C scanner json.loads uses (set in __init__, absent from typeshed)


def _read_frame(data: str) -> tuple[Any, int]:
    """One frame's JSON and where it ends by the standard library, for what orjson refused or
    was not trusted with."""
    try:
        found: tuple[Any, int] = _SCAN(data, 0)
        return found
    except (StopIteration, ValueError, RecursionError):
        return _loads_or_none(data), len(data)


def _loads_or_none(data: str) -> Any:
    """A frame the C scanner did not take (the rare case): not JSON is a keep-alive (None);
    nested beyond reading is an error (read_json's JsonInputError, a ValueError)."""
    try:
        return read_json(data)
    except JsonInputError as exc:
        if exc.too_deep:
            raise
        return None


def _garbage_after(data: str, end: int) -> bool:
    """Something other than white space after a frame's JSON (where the scanner stopped)."""
    return bool(data[end:].strip())


def _choice_zero(choices: list[Any]) -> dict[str, Any]:
    """Choice 0 of a frame that carries several (n > 1); nothing when it is not there."""
    return next((x for x in choices if x.get("index", 0) == 0), _NO_CHOICE)


def _groq_usage(xg: Any) -> Any:
    """Groq puts a frame's usage under ``x_groq``."""
    return xg.get("usage") if type(xg) is dict else None


_NO_CHOICE: dict[str, Any] = {}


# a version segment anywhere in the base path (/v1, /v4, /v1beta/openai): the server's
# own prefix, so the path is /chat/completions, never a second /v1
_VERSIONED = re.compile(r"/v\d+[a-z0-9]*(?:/|$)")

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


def _answer_text(content: Any) -> str:
    """A response's content: as ``wire.openai_chat.content_text``, but a number or an object is a malformed
    answer (its meaning is not clear), never its repr."""
    if content is None or isinstance(content, str | list):
        return content_text(content)
    raise FrameError("'content'", content, "text or a list of text parts")



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
        if dialect not in wire.EFFORT_DIALECTS:
            raise ValueError(f"effort_dialect must be one of {wire.EFFORT_DIALECTS}, got {dialect!r}")
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

    def build_request(
        self, messages: list[Message], tools: list[ToolDefinition] | None, opts: CallOptions, *, stream: bool
    ) -> WireRequest:
        notices: list[Any] = []
        extra: dict[str, Any] = {"notices": notices}
        plan = wire.ChatPlan(
            self.id, opts.model or self.model, tools, self.effort_dialect, self.max_tokens_field,
            self._json_form(opts, tools, extra),
        )
        choice, offered, said = tool_choice_plan(self.facts, opts.tool_choice, [t.name for t in tools or ()])
        if said is not None:
            notices.append(said)
        resolved = replace(
            opts,
            effort=opts.effort if opts.effort is not None else self.effort,
            max_tokens=opts.max_tokens if opts.max_tokens is not None else self.max_tokens,
            tool_choice=choice,
        )
        session = self.session_for(opts)
        body = wire.build_body(
            messages, tools, resolved, plan, stream=stream, reasoning_field=self.reasoning_field,
            send_details=self.replay_reasoning_details, stream_usage=self.facts.stream_options is not False,
            offered=offered, cache_key=session if self.cache_key else None,
        )
        headers: dict[str, str] = {}
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        if stream:
            headers["accept"] = "text/event-stream"
        if self.session_header:
            headers[self.session_header] = session
        return WireRequest(self.url, headers, body, stream=stream, extra=extra)

    def _json_form(self, opts: CallOptions, tools: list[ToolDefinition] | None, extra: dict[str, Any]) -> str | None:
        """The form ``json=`` goes in: the first of its ladder this server has not refused (the
        prompt alone beside tools when asked), said on the reply."""
        fmt = opts.json
        if not isinstance(fmt, JsonFormat):
            return None
        prompt_only = bool(tools) and opts.json_with_tools == "prompt"
        ladder = json_ladder(self.json_mode, self.id == "openai", fmt.schema is not None)
        form = "prompt" if prompt_only else json_form(self.facts, ladder, opts.avoid_json_form) or ladder[-1]
        extra["json_form"] = form
        if not prompt_only:
            extra["notices"].append(json_notice(form, ladder, self.facts, opts.avoid_json_form))
        return form

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
        # delta actually carries (most carry only text, read here; the reader takes the rest). What is
        # rare (several choices, Groq's usage, garbage after the JSON) is read by helpers off this path.
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
                obj, end = (fast(data), len(data)) if fast is not None else scan(data, 0)
            except (StopIteration, ValueError, RecursionError):
                obj, end = _read_frame(data)
            if type(obj) is not dict or (end != len(data) and _garbage_after(data, end)):
                continue  # not JSON (a keep-alive some proxies send), or not a frame we understand
            if obj.get("error"):
                raise stream_error(pid, obj, secrets=self.secrets)
            m = obj.get("model")
            if m and m != st.model:
                st.model = m
                yield ModelInfo(m)
            choices = obj.get("choices")
            if choices:
                c = choices[0]
                if c.get("index", 0) != 0:  # several choices (n > 1): only choice 0 is the turn
                    c = _choice_zero(choices)
                delta = c.get("delta")
                if delta:
                    if type(delta) is not dict:
                        need(c, "delta", dict, "an object")
                    for k, v in delta.items():
                        if not v:
                            continue
                        if k == "content":
                            yield TextDelta(v if type(v) is str else _answer_text(v))
                        else:  # the role, reasoning, calls (the reader knows which it reads)
                            yield from field(k, v, delta)
                fr = c.get("finish_reason")
                if fr:
                    st.finish = fr
            u = obj.get("usage")
            if not u and "x_groq" in obj:
                u = _groq_usage(obj["x_groq"])
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
                    wire.arguments_text(fn.get("arguments")) if "arguments" in fn else None,
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
            yield ToolCallDelta(i, tc.get("id") or None, fn.get("name") or None, wire.arguments_text(fn.get("arguments")))

    def end(self) -> Iterator[Chunk]:
        if not self.done and self.finish is None:
            # (an empty body never gets here: the seam reports it, as overload, on every wire)
            raise cut_short(self.p.id)
        if self.details:
            yield ReasoningDetailsDelta(self.details)
        yield Finish(FINISH_MAP.get(self.finish or "stop", "stop"))


# --------------------------------------------------------------------------- replay


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
