"""The Anthropic Messages wire over HTTP (Anthropic, Claude sign-in, and the Anthropic-shaped
gateways).

The body is ``wire.anthropic``'s (system lifted and cached, turns merged, tool results first,
signed thinking blocks in place, the thinking table by model); this module sends it with the
version and key headers and reads the stream and the whole message back. Thinking and
redacted_thinking blocks are captured as ``reasoning_items`` tagged with this provider's replay
tag.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

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
from ..wire import anthropic as wire
from ..wire.anthropic import DEFAULT_MAX_TOKENS, input_as_arguments
from ..wire.options import CallOptions
from .base import WireProvider, WireRequest, join_url
from .guard import cut_short, need  # a required part of a frame, named when it is missing or wrong

__all__ = ["AnthropicProvider", "replay_provider"]

API_VERSION = "2023-06-01"
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
        plan = wire.AnthropicPlan(self.id, opts.model or self.model, tools)
        resolved = replace(
            opts,
            effort=opts.effort if opts.effort is not None else self.effort,
            max_tokens=opts.max_tokens or self.max_tokens or DEFAULT_MAX_TOKENS,
        )
        body = wire.build_body(
            messages, tools, resolved, plan, tag=self.replay_tag, stream=stream, explicit_none=self.explicit_none
        )
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
            yield ToolCallDelta(index, block.get("id"), block.get("name"), input_as_arguments(block.get("input") or {}))
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
            yield ToolCallDelta(d.get("index"), None, None, input_as_arguments(b[1] or {}))

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


# --------------------------------------------------------------------------- replay


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
