"""The Gemini wire over HTTP: Generative Language REST ``generateContent`` /
``streamGenerateContent``.

The body is ``wire.gemini``'s (signatures back on the parts they came with, made-up call ids
left out, the schema dialect, thinking by model generation); this module sends it and reads what
comes back:

- Usage: thoughts are billed as output but reported outside ``candidatesTokenCount``.
- The end signal is a ``finishReason`` plus the end of the body; ``STOP`` is also what Gemini
  says after function calls, so a turn that made calls finishes ``tool_calls``.
- A signature on a text or thought part is kept in ``reasoning_items`` at its place in the
  turn's text, so the wire can put it back.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any, ClassVar

from ..core.errors import ErrorKind, ProviderError
from ..core.messages import Message
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
from ..wire import gemini as wire
from ..wire.gemini import REPLAY_TAG, dump_json, split_url
from ..wire.options import CallOptions
from .base import WireProvider, WireRequest, join_url
from .guard import FrameError, cut_short  # FrameError: a required part of a body, when missing

__all__ = ["GeminiProvider", "replay_provider"]

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
API_VERSION = "v1beta"

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
        super().__init__(model=wire.model_id(model), **kwargs)
        self.stream_format = stream_format

    # request ----------------------------------------------------------------

    def url_for(self, model: str, *, stream: bool) -> str:
        base = join_url(self.base_url, f"{API_VERSION}/models/{wire.model_id(model)}")
        if not stream:
            return base + ":generateContent"
        if self.stream_format == "sse":
            return base + ":streamGenerateContent?alt=sse"
        return base + ":streamGenerateContent"

    def build_request(
        self, messages: list[Message], tools: list[ToolDefinition] | None, opts: CallOptions, *, stream: bool
    ) -> WireRequest:
        model = wire.model_id(opts.model or self.model)
        resolved = replace(opts, effort=opts.effort if opts.effort is not None else self.effort)
        body = wire.build_body(messages, tools, resolved, wire.GeminiPlan(self.id, model, tools))
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
                    body=dump_json(fb)[:2000],
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
                    ToolCallDelta(n, fc.get("id") or f"call_{n}", fc.get("name") or None, dump_json(fc.get("args") or {}), sig)
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


# --------------------------------------------------------------------------- replay


def replay_provider(url: str, body: Mapping[str, Any], transport: Any) -> GeminiProvider:
    """A provider aimed at the recorded endpoint, asking for the same stream form."""
    base, model, method, query = split_url(url)
    fmt = "sse" if method != "streamGenerateContent" or "alt=sse" in query else "json-array"
    return GeminiProvider(model=model, api_key="replay-key", base_url=base, transport=transport, stream_format=fmt)
