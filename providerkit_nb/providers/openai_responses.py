"""The OpenAI Responses wire over HTTP, for the OpenAI API and the ChatGPT (Codex) backend.

The body is ``wire.openai_responses``'s (store:false, encrypted reasoning replayed to its own
provider, flat tools); this module sends it and reads what comes back:

- The stream states things twice (deltas, then ``.done`` snapshots): snapshots only add the
  part that was not streamed. Calls are found by item id, then ``call_id`` (some servers send no
  item id), then output index; a ``.done`` item supplies identity a skeleton lacked; a call that
  appears only at ``.done`` without a ``call_id`` cannot be answered and is dropped.
- Readable reasoning (summary parts, raw reasoning text) goes to ``reasoning``, parts joined by a
  blank line. Text parts are concatenated as sent.
- The ChatGPT backend's ``codex.rate_limits`` frame, when the account cannot be served, becomes
  the quota error the stream then ends with.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from ..core.errors import ErrorKind, ProviderError
from ..core.messages import Message, MessageInput
from ..core.tools import ToolDefinition
from ..core.turn import (
    Chunk,
    Finish,
    ModelInfo,
    ReasoningDelta,
    ReasoningItemsDelta,
    TextDelta,
    ToolCallDelta,
    Turn,
    Usage,
    UsageUpdate,
    collect_turn,
)
from ..transport.classify import stream_error
from ..transport.sse import NOT_JSON, SSEEvent
from ..wire import openai_responses as wire
from ..wire.openai_responses import CHATGPT_TAG, OPENAI_TAG, REASONING_GAP
from ..wire.options import CallOptions
from .base import WireProvider, WireRequest, join_url
from .guard import FrameError, cut_short, need  # FrameError, need: a required part, named

__all__ = ["ResponsesProvider", "replay_provider"]

OPENAI_BASE = "https://api.openai.com/v1"
CHATGPT_BASE = "https://chatgpt.com/backend-api/codex"


def _usage(u: Any) -> Usage | None:
    if not isinstance(u, dict):
        return None
    ind = u.get("input_tokens_details") or {}
    outd = u.get("output_tokens_details") or {}
    return Usage(
        input_tokens=int(u.get("input_tokens") or 0),
        cached_input_tokens=int(ind.get("cached_tokens") or 0),
        cache_write_tokens=int(ind.get("cache_write_tokens") or 0),
        output_tokens=int(u.get("output_tokens") or 0),
        reasoning_tokens=int(outd.get("reasoning_tokens") or 0),
    )


def _incomplete_reason(response: dict[str, Any]) -> str:
    details = response.get("incomplete_details") or {}
    return "content_filter" if details.get("reason") == "content_filter" else "length"


def _worth_keeping(item: dict[str, Any]) -> bool:
    """A reasoning item can be replayed with store:false only if it carries its own content
    (encrypted, or plain reasoning text as DeepSeek sends); a bare id would be "not found"."""
    return bool(item.get("encrypted_content") or item.get("content"))


# --------------------------------------------------------------------------- ChatGPT rate limits

_WINDOWS = {300: "5h", 10080: "weekly", 43200: "monthly", 44640: "monthly"}


def _exhausted(frame: dict[str, Any], rl: dict[str, Any], windows: list[dict[str, Any]]) -> bool:
    """The account cannot be served: no credits, and the limit says so (or a window is full)."""
    credits = frame.get("credits") or rl.get("credits") or {}
    if isinstance(credits, dict) and (credits.get("has_credits") or credits.get("unlimited")):
        return False
    if "limit_reached" in rl or "allowed" in rl:
        return bool(rl.get("limit_reached") and not rl.get("allowed", False))
    return any((w.get("used_percent") or 0) >= 100 for w in windows)


def _when(binding: dict[str, Any]) -> tuple[float | None, float | None, str | None]:
    """(seconds to wait, when it resets, the window's name) of the window that binds."""
    retry_after = binding.get("reset_after_seconds")
    reset_at = binding.get("reset_at")
    now = time.time()
    if retry_after is None and isinstance(reset_at, (int, float)):
        retry_after = max(0.0, reset_at - now)
    if reset_at is None and isinstance(retry_after, (int, float)):
        reset_at = now + retry_after
    minutes = binding.get("window_minutes")
    if minutes is None and binding.get("limit_window_seconds"):
        minutes = int(binding["limit_window_seconds"]) // 60
    window = _WINDOWS.get(int(minutes)) if isinstance(minutes, (int, float)) else None
    return (
        float(retry_after) if isinstance(retry_after, (int, float)) else None,
        float(reset_at) if isinstance(reset_at, (int, float)) else None,
        window,
    )


def _quota_wall(provider: str, frame: dict[str, Any]) -> ProviderError | None:
    """A ``codex.rate_limits`` frame that says the account cannot be served: the error to raise
    if the stream then closes without producing anything."""
    rl = frame.get("rate_limits")
    if not isinstance(rl, dict):
        return None
    windows = [w for w in (rl.get("primary") or rl.get("primary_window"), rl.get("secondary") or rl.get("secondary_window")) if isinstance(w, dict)]
    if not _exhausted(frame, rl, windows):
        return None
    retry_after, reset_at, window = _when(max(windows, key=lambda w: w.get("used_percent") or 0) if windows else {})
    wait = f"; resets in {int(retry_after)} s" if retry_after is not None else ""
    return ProviderError(
        provider,
        ErrorKind.QUOTA,
        f"{provider}: usage limit reached ({window or 'current'} window){wait}",
        code="usage_limit_reached",
        retry_after=retry_after,
        reset_at=reset_at,
        window=window,
        body=json.dumps(frame)[:2000],
    )


# --------------------------------------------------------------------------- stream state


class _Call:
    __slots__ = ("index", "call_id", "name", "parts")

    def __init__(self, index: int, call_id: str | None, name: str | None, seed: str) -> None:
        self.index = index
        self.call_id = call_id
        self.name = name
        self.parts = [seed] if seed else []


def _tail(streamed: Sequence[str], snapshot: Any) -> str:
    """What a ``.done`` snapshot adds to what was streamed (never a re-emission)."""
    if not isinstance(snapshot, str) or not snapshot:
        return ""
    sent = "".join(streamed)
    if len(snapshot) > len(sent) and snapshot.startswith(sent):
        return snapshot[len(sent):]
    return ""


class ResponsesProvider(WireProvider):
    """OpenAI Responses (``backend="openai"``) or the ChatGPT backend (``backend="chatgpt"``).

    The session id (``session_id=`` per call, else one per provider instance) is sent as
    ``prompt_cache_key`` (``cache_key=False`` turns that off) and, when ``session_header`` is
    set, in that header. On the ChatGPT backend the key is the account's access token
    (``CHATGPT_ACCESS_TOKEN``); ``account_id`` goes in the ``chatgpt-account-id`` header, the
    session id also in ``session-id``, ``instructions`` is always sent, every request streams,
    and ``max_output_tokens`` (which it refuses) is left out.
    """

    wire = "openai_responses"
    env_keys = ("OPENAI_API_KEY",)
    default_base_url = OPENAI_BASE

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None = None,
        base_url: str | None = None,
        backend: str = "openai",
        account_id: str | None = None,
        path: str | None = None,
        replay_reasoning: bool = True,
        session_header: str | None = None,
        cache_key: bool = True,
        effort: str | None = None,
        env_keys: Sequence[str] | None = None,
        id: str | None = None,
        **kwargs: Any,
    ) -> None:
        if backend not in ("openai", "chatgpt"):
            raise ValueError(f"backend must be 'openai' or 'chatgpt', got {backend!r}")
        self.backend = backend
        if backend == "chatgpt":
            self.env_keys = ("CHATGPT_ACCESS_TOKEN",)
            base_url = base_url or CHATGPT_BASE
            session_header = session_header or "session-id"
        super().__init__(
            model=model,
            api_key=api_key,
            base_url=base_url,
            id=id or (CHATGPT_TAG if backend == "chatgpt" else OPENAI_TAG),
            env_keys=env_keys,
            effort=effort,
            **kwargs,
        )
        self.account_id = account_id
        self.path = path or "/responses"
        self.replay_reasoning = replay_reasoning
        self.session_header = session_header
        self.cache_key = cache_key

    @property
    def replay_tag(self) -> str:
        """The tag on reasoning items this provider signs and accepts back: its id."""
        return self.id

    # request ---------------------------------------------------------------

    def build_request(
        self, messages: list[Message], tools: list[ToolDefinition] | None, opts: CallOptions, *, stream: bool
    ) -> WireRequest:
        chatgpt = self.backend == "chatgpt"
        session = self.session_for(opts)
        plan = wire.ResponsesPlan(
            self.id, opts.model or self.model, tools, max_output_tokens=not chatgpt,
            json_prompt_only=bool(tools) and opts.json_with_tools == "prompt",
        )
        resolved = replace(opts, effort=opts.effort if opts.effort is not None else self.effort)
        body = wire.build_body(
            messages, tools, resolved, plan, tag=self.replay_tag, stream=stream or chatgpt, instructions=chatgpt,
            include_encrypted=self.replay_reasoning, cache_key=session if self.cache_key else None,
        )
        headers: dict[str, str] = {"authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        if stream or chatgpt:
            headers["accept"] = "text/event-stream"
        if self.session_header:
            headers[self.session_header] = session
        if chatgpt and self.account_id:
            headers["chatgpt-account-id"] = self.account_id
        return WireRequest(join_url(self.base_url, self.path), headers, body, stream=stream or chatgpt)

    def complete(self, messages: Sequence[MessageInput], tools: Sequence[ToolDefinition] | None = None, **options: Any) -> Turn:
        if self.backend == "chatgpt":  # the backend only streams
            return collect_turn(self.create_stream(messages, tools, **options))
        return super().complete(messages, tools, **options)

    # stream ----------------------------------------------------------------

    def _raise_frame(self, obj: dict[str, Any]) -> ProviderError:
        """An ``error`` frame. The ChatGPT backend mirrors the HTTP status and its ``x-codex-*``
        rate-limit headers into the frame; both go to the classifier."""
        err = obj.get("error")
        if isinstance(err, dict):
            payload = dict(err)
            for k in ("status_code", "status"):
                if k in obj and k not in payload:
                    payload[k] = obj[k]
        else:
            payload = {k: v for k, v in obj.items() if k not in ("type", "sequence_number", "headers")}
        headers = obj.get("headers")
        if not isinstance(headers, dict) and isinstance(err, dict):
            headers = err.get("headers")
        if isinstance(headers, dict):
            payload.pop("headers", None)
            headers = {str(k).lower(): str(v) for k, v in headers.items()}
        else:
            headers = None
        return stream_error(self.id, payload, secrets=self.secrets, headers=headers)

    def _failed(self, response: dict[str, Any]) -> ProviderError:
        err = response.get("error")
        payload = err if isinstance(err, dict) else {"message": "the response failed", "status": response.get("status")}
        return stream_error(self.id, payload, secrets=self.secrets)

    def parse_stream(self, events: Iterator[SSEEvent], opts: CallOptions) -> Iterator[Chunk]:
        # Hot path: text deltas are read here; every other event goes to the reader's method
        # for its type (the same reader reads a whole non-streamed body).
        st = _Reader(self)
        handlers = st.handlers
        text = TextDelta
        for ev in events:
            data = ev.data
            if data == "[DONE]":
                continue
            obj = ev.decode()
            if obj is NOT_JSON:
                continue  # keep-alive or junk: not an event
            if type(obj) is not dict:
                continue
            t = obj.get("type") or ev.event
            if t == "response.output_text.delta" or t == "response.refusal.delta":
                d = obj.get("delta")
                if d:
                    st.produced = True
                    iid = obj.get("item_id")
                    ci = obj.get("content_index", 0)
                    if iid != st.t_iid or ci != st.t_ci:
                        st.text_run(iid, ci)
                    st.t_parts.append(d)
                    yield text(d)
                continue
            handler = handlers.get(t) if type(t) is str else None
            if handler is not None:  # anything else (content_part.*, annotations, ...): nothing new
                yield from handler(obj, t)
                if st.finished:
                    return
        yield from st.end()

    # whole response -----------------------------------------------------------

    def parse_response(self, data: Any, opts: CallOptions) -> Iterator[Chunk]:
        if not isinstance(data, dict):
            raise ProviderError(self.id, ErrorKind.OVERLOAD, f"{self.id}: the response was not a JSON object")
        if isinstance(data.get("error"), dict) and not data.get("output"):
            raise stream_error(self.id, data["error"], secrets=self.secrets)
        if data.get("status") != "failed":
            need(data, "output", list, "a list of items")  # a Response always has it (maybe empty)
        if data.get("status") == "failed":
            raise self._failed(data)
        st = _Reader(self, whole=True)
        yield from st.model_of(data)
        for n, item in enumerate(data.get("output") or ()):
            if isinstance(item, dict):
                yield from st.item(_EMPTY, item, n)  # each item whole: keyed by its place
        yield from st.close(data, data.get("status") == "incomplete")


_EMPTY: dict[str, Any] = {}


class _Reader:
    """One turn's reading state, shared by the stream and the whole response body.

    The stream states things twice (deltas, then ``.done`` snapshots): what was streamed is kept
    by key so a snapshot adds only its tail. Text runs are keyed (item id, content index),
    reasoning parts (item id, "s"|"c", index); a new reasoning key after any reasoning text
    starts with a blank line. Calls are found by item id, then ``call_id``, then output index.
    """

    __slots__ = (
        "p", "texts", "t_iid", "t_ci", "t_parts", "thoughts", "r_key", "r_parts", "r_any",
        "calls", "n_calls", "a_iid", "a_call", "produced", "wall", "model", "finished", "handlers",
        "whole",
    )

    def __init__(self, provider: ResponsesProvider, *, whole: bool = False) -> None:
        self.p = provider
        self.whole = whole  # reading a whole body: a part's text that is not text is malformed
        self.texts: dict[Any, list[str]] = {}
        self.t_iid: Any = None
        self.t_ci: Any = None
        self.t_parts: list[str] = []
        self.thoughts: dict[Any, list[str]] = {}
        self.r_key: Any = None
        self.r_parts: list[str] = []
        self.r_any = False
        self.calls: dict[Any, _Call] = {}
        self.n_calls = 0
        self.a_iid: Any = None
        self.a_call: _Call | None = None
        self.produced = False
        self.wall: ProviderError | None = None
        self.model: str | None = None
        self.finished = False
        self.handlers: dict[Any, Callable[[dict[str, Any], Any], Iterator[Chunk]]] = {
            "response.function_call_arguments.delta": self.arguments_delta,
            "response.reasoning_summary_text.delta": self.reasoning_delta,
            "response.reasoning_text.delta": self.reasoning_delta,
            "response.output_text.done": self.text_done,
            "response.refusal.done": self.text_done,
            "response.reasoning_summary_text.done": self.reasoning_done,
            "response.reasoning_text.done": self.reasoning_done,
            "response.function_call_arguments.done": self.arguments_done,
            "response.output_item.added": self.item_added,
            "response.output_item.done": self.item_done,
            "response.created": self.lifecycle,
            "response.in_progress": self.lifecycle,
            "response.completed": self.completed,
            "response.done": self.completed,
            "response.incomplete": self.completed,
            "response.failed": self.failed,
            "error": self.error,
            "response.error": self.error,
            "codex.rate_limits": self.rate_limits,
        }

    # shared pieces ------------------------------------------------------------

    def text_run(self, iid: Any, ci: Any) -> None:
        self.t_iid, self.t_ci = iid, ci
        self.t_parts = self.texts.setdefault((iid, ci), [])

    def checked(self, snapshot: Any) -> Any:
        if self.whole and snapshot and not isinstance(snapshot, str):
            raise FrameError("'text'", snapshot, "text")
        return snapshot

    def text_tail(self, key: Any, snapshot: Any) -> Iterator[Chunk]:
        tail = _tail(self.texts.get(key, ()), self.checked(snapshot))
        if tail:
            self.produced = True
            self.texts.setdefault(key, []).append(tail)
            self.t_iid = None
            yield TextDelta(tail)

    def reasoning(self, key: Any, text: str) -> ReasoningDelta:
        sep = False
        if key != self.r_key:
            self.r_key = key
            self.r_parts = self.thoughts.setdefault(key, [])
            sep = self.r_any
        self.r_parts.append(text)
        self.r_any = True
        return ReasoningDelta(REASONING_GAP + text if sep else text)

    def reasoning_tail(self, key: Any, snapshot: Any) -> Iterator[Chunk]:
        tail = _tail(self.thoughts.get(key, ()), self.checked(snapshot))
        if tail:
            yield self.reasoning(key, tail)

    def find_call(self, obj: dict[str, Any], item: dict[str, Any] | None = None) -> _Call | None:
        src = item if item is not None else obj
        for key in (src.get("id") if item is not None else obj.get("item_id"), src.get("call_id")):
            if key is not None:
                c = self.calls.get(key)
                if c is not None:
                    return c
        oi = obj.get("output_index")
        return self.calls.get(("o", oi)) if oi is not None else None

    def new_call(self, call_id: str | None, name: str | None, seed: str, keys: Sequence[Any]) -> _Call:
        c = _Call(self.n_calls, call_id, name, seed)
        self.n_calls += 1
        for key in keys:
            if key is not None:
                self.calls[key] = c
        return c

    def model_of(self, r: dict[str, Any]) -> Iterator[Chunk]:
        if r.get("model") and r["model"] != self.model:
            self.model = r["model"]
            yield ModelInfo(r["model"])

    # deltas -------------------------------------------------------------------

    def arguments_delta(self, obj: dict[str, Any], t: str) -> Iterator[Chunk]:
        d = obj.get("delta")
        if not d:
            return
        self.produced = True
        iid = obj.get("item_id")
        c = self.a_call
        if iid is None or iid != self.a_iid or c is None:
            c = self.find_call(obj)
            if c is None:  # arguments before any skeleton: identity comes at .done
                oi = obj.get("output_index")
                c = self.new_call(None, None, "", (iid if iid is not None else ("o", oi), ("o", oi) if oi is not None else None))
            self.a_iid, self.a_call = iid, c
        c.parts.append(d)
        yield ToolCallDelta(c.index, None, None, d)

    def reasoning_delta(self, obj: dict[str, Any], t: str) -> Iterator[Chunk]:
        d = obj.get("delta")
        if d:
            self.produced = True
            yield self.reasoning(_reasoning_key(obj, t), d)

    # snapshots ----------------------------------------------------------------

    def text_done(self, obj: dict[str, Any], t: str) -> Iterator[Chunk]:
        snapshot = obj.get("text") if t == "response.output_text.done" else obj.get("refusal")
        yield from self.text_tail((obj.get("item_id"), obj.get("content_index", 0)), snapshot)

    def reasoning_done(self, obj: dict[str, Any], t: str) -> Iterator[Chunk]:
        key = _reasoning_key(obj, t)
        tail = _tail(self.thoughts.get(key, ()), obj.get("text"))
        if tail:
            self.produced = True
            yield self.reasoning(key, tail)

    def arguments_done(self, obj: dict[str, Any], t: str) -> Iterator[Chunk]:
        c = self.find_call(obj)
        if c is not None:
            tail = _tail(c.parts, obj.get("arguments"))
            if tail:
                self.produced = True
                c.parts.append(tail)
                yield ToolCallDelta(c.index, None, None, tail)

    def item_added(self, obj: dict[str, Any], t: str) -> Iterator[Chunk]:
        item = obj.get("item")
        if not isinstance(item, dict):
            return
        self.produced = True
        if item.get("type") == "function_call":
            cid, name = item.get("call_id"), item.get("name")
            seed = item.get("arguments") or ""
            oi = obj.get("output_index")
            c = self.new_call(cid, name, seed, (item.get("id"), cid, ("o", oi) if oi is not None else None))
            yield ToolCallDelta(c.index, cid or None, name or None, seed or None)

    def item_done(self, obj: dict[str, Any], t: str) -> Iterator[Chunk]:
        item = obj.get("item")
        if isinstance(item, dict):
            yield from self.item(obj, item, item.get("id"))

    def item(self, obj: dict[str, Any], item: dict[str, Any], iid: Any) -> Iterator[Chunk]:
        """A finished output item (``output_item.done``, or one item of a whole response);
        ``iid`` keys what was streamed of it."""
        kind = item.get("type")
        if kind == "function_call":
            yield from self.call_item(obj, item)
        elif kind == "message":
            for ci, part in enumerate(item.get("content") or ()):
                if isinstance(part, dict):
                    snap = part.get("text") if part.get("type") == "output_text" else part.get("refusal")
                    yield from self.text_tail((iid, ci), snap)
        elif kind == "reasoning":
            for si, part in enumerate(item.get("summary") or ()):
                if isinstance(part, dict):
                    yield from self.reasoning_tail((iid, "s", si), part.get("text"))
            for ci, part in enumerate(item.get("content") or ()):
                if isinstance(part, dict):
                    yield from self.reasoning_tail((iid, "c", ci), part.get("text"))
            if self.p.replay_reasoning and _worth_keeping(item):
                yield ReasoningItemsDelta(self.p.replay_tag, [item])

    def call_item(self, obj: dict[str, Any], item: dict[str, Any]) -> Iterator[Chunk]:
        cid, name, args = item.get("call_id"), item.get("name"), item.get("arguments")
        c = None if self.whole else self.find_call(obj, item)  # a whole body streamed nothing
        if c is None:
            if not cid:
                return  # a call nobody can answer: dropped, not a tool turn
            c = self.new_call(cid, name, args or "", () if self.whole else (cid, item.get("id") or None))
            self.produced = True
            yield ToolCallDelta(c.index, cid, name or None, args or None)
            return
        tail = _tail(c.parts, args)
        new_id = cid if cid and cid != c.call_id else None
        new_name = name if name and name != c.name else None
        if tail:
            c.parts.append(tail)
        if new_id:
            c.call_id = new_id
        if new_name:
            c.name = new_name
        if tail or new_id or new_name:
            self.produced = True
            yield ToolCallDelta(c.index, new_id, new_name, tail or None)

    # lifecycle ----------------------------------------------------------------

    def lifecycle(self, obj: dict[str, Any], t: str) -> Iterator[Chunk]:
        r = obj.get("response")
        if isinstance(r, dict):
            yield from self.model_of(r)

    def completed(self, obj: dict[str, Any], t: str) -> Iterator[Chunk]:
        r = obj.get("response")
        if not isinstance(r, dict):
            r = {}
        if r.get("status") == "failed" or r.get("error"):
            raise self.p._failed(r)
        yield from self.close(r, t == "response.incomplete")

    def close(self, r: dict[str, Any], incomplete: bool) -> Iterator[Chunk]:
        """The end of the turn: the final model, usage and the finish reason."""
        if r.get("model") and r["model"] != self.model:
            yield ModelInfo(r["model"])
        u = _usage(r.get("usage"))
        if u is not None:
            yield UsageUpdate(u)
        if incomplete or r.get("status") == "incomplete":
            yield Finish(_incomplete_reason(r))
        else:
            yield Finish("tool_calls" if self.n_calls else "stop")
        self.finished = True

    def failed(self, obj: dict[str, Any], t: str) -> Iterator[Chunk]:
        r = obj.get("response")
        raise self.p._failed(r if isinstance(r, dict) else {})

    def error(self, obj: dict[str, Any], t: str) -> Iterator[Chunk]:
        raise self.p._raise_frame(obj)

    def rate_limits(self, obj: dict[str, Any], t: str) -> Iterator[Chunk]:
        self.wall = _quota_wall(self.p.id, obj) or self.wall
        return iter(())

    def end(self) -> Iterator[Chunk]:
        """The body ended without ``response.completed``."""
        if self.wall is not None and not self.produced:
            raise self.wall
        raise cut_short(self.p.id)


def _reasoning_key(obj: dict[str, Any], t: str) -> tuple[Any, str, Any]:
    if t == "response.reasoning_text.delta" or t == "response.reasoning_text.done":
        return (obj.get("item_id"), "c", obj.get("content_index", 0))
    return (obj.get("item_id"), "s", obj.get("summary_index", 0))


# --------------------------------------------------------------------------- replay


def replay_provider(url: str, body: dict[str, Any], transport: Any) -> ResponsesProvider:
    """A provider aimed at the recorded endpoint (same host and path), with a dummy key."""
    parts = urlsplit(url)
    path = parts.path
    cut = path.rstrip("/").rfind("/responses")
    base = f"{parts.scheme}://{parts.netloc}{path[:cut]}"
    backend = "chatgpt" if parts.netloc.endswith("chatgpt.com") else "openai"
    return ResponsesProvider(
        model=body.get("model") or "replay-model",
        api_key="replay-key",
        base_url=base,
        backend=backend,
        transport=transport,
    )
