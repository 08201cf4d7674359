"""The provider seam: what every wire and every wrapper looks like from outside.

A provider turns a history into a stream of provider-neutral chunks. The stream is a plain
synchronous iterator and a context manager: closing it (or breaking out of the loop, an
exception, KeyboardInterrupt) closes the HTTP response at once. Nothing is sent until the
stream is first read, so a gate or watchdog around it starts its clocks at the right moment.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

from ..core.errors import ErrorKind, ProviderError
from ..core.json_input import JsonInputError, read_json
from ..core.messages import Message, MessageInput, ensure_messages, strip_reasoning
from ..core.repair import repair_history
from ..core.tools import ToolDefinition
from ..core.turn import (
    Chunk,
    Finish,
    TextDelta,
    ToolCallDelta,
    Turn,
    TurnAssembler,
    collect_turn,
    name_the_wire,
)
from ..transport.classify import http_error
from ..transport.hangup import Hangup
from ..transport.http import Request, Response, Sender, Timeout, make_sender
from ..transport.sse import SSEEvent, StreamPosition, iter_sse
from ..wire.options import EFFORTS, CallOptions
from .forced_call import forced_call
from .guard import (
    PARSER_FAILURES,
    CallerRaised,
    body_error,
    callers_own,
    check_chunk,
    guarding,
    malformed,
    numbered,
)

__all__ = [
    "ChunkStream",
    "Provider",
    "WireProvider",
    "resolve_api_key",
    "join_url",
    "WireRequest",
]

class ChunkStream:
    """A provider stream: iterate it for chunks, close it (or use ``with``) to hang up.

    ``abort()`` may be called from another thread: it shuts the socket so a blocked read
    wakes up (the watchdog relies on this). ``first_byte_at``/``last_byte_at`` are monotonic
    times of the first and latest bytes read, for the watchdog and the views.
    """

    __slots__ = (
        "_gen",
        "provider",
        "response",
        "opened_at",
        "first_byte_at",
        "last_byte_at",
        "closed",
        "hangup",
        "_close_hooks",
        "__weakref__",
    )

    def __init__(self, gen: Iterator[Chunk] | Callable[[ChunkStream], Iterator[Chunk]], provider: str = "") -> None:
        self.provider = provider
        self.response: Response | None = None
        self.opened_at: float | None = None
        self.first_byte_at: float | None = None
        self.last_byte_at: float | None = None
        self.closed = False
        self.hangup = Hangup()  # lets abort() wake a read blocked even before the headers
        self._close_hooks: list[Callable[[], None]] = []
        self._gen: Iterator[Chunk] = (
            gen(self) if callable(gen) and not hasattr(gen, "__next__") else cast(Iterator[Chunk], gen)
        )

    def __iter__(self) -> Iterator[Chunk]:
        # The generator itself, so a for loop pays no Python-level __next__ per chunk;
        # closing still goes through close() (collect_turn and ``with`` call it).
        return self._gen

    def __next__(self) -> Chunk:
        return next(self._gen)

    def on_close(self, hook: Callable[[], None]) -> None:
        """Run ``hook`` once when the stream closes (gates release their slot this way)."""
        if self.closed:
            hook()
        else:
            self._close_hooks.append(hook)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            close = getattr(self._gen, "close", None)
            if close is not None:
                try:
                    close()
                except ValueError:  # "generator already executing": another thread is reading
                    self.abort()
        finally:
            hooks, self._close_hooks = self._close_hooks, []
            for hook in hooks:
                hook()

    def abort(self) -> None:
        """Hang up from any thread; the reading thread then fails with a network error."""
        self.hangup.abort()
        r = self.response
        if r is not None:
            r.abort()

    def __enter__(self) -> ChunkStream:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:  # a safety net, not the plan
        try:
            if not self.closed:
                self.close()
        except Exception:
            pass


class Provider:
    """The seam every wire and wrapper implements.

    Subclasses implement ``_open(messages, tools, opts) -> ChunkStream``; ``create_stream``
    and ``complete`` handle argument checking so every implementation takes the same names.
    Wrappers reach the provider they wrap through ``open_stream``, the public seam.
    """

    id: str = "provider"
    model: str = ""
    instance_session_id: str = ""

    def create_stream(
        self,
        messages: Sequence[MessageInput],
        tools: Sequence[ToolDefinition] | None = None,
        *,
        session_id: str | None = None,
        model: str | None = None,
        effort: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        stop: list[str] | str | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        parallel_tool_calls: bool | None = None,
        extra_body: dict[str, Any] | None = None,
        json: Any = None,
        json_with_tools: str | None = None,
        avoid_json_form: str | None = None,
        service_tier: str | None = None,
        strip_reasoning: bool | None = None,
        on_activity: Callable[[], None] | None = None,
    ) -> ChunkStream:
        # every keyword above is a CallOptions field, named the same (a test holds the two equal)
        scope = locals()
        opts = CallOptions(**{name: scope[name] for name in CallOptions.names()})
        return self.open_stream(ensure_messages(messages), list(tools) if tools else None, opts)

    def complete(
        self,
        messages: Sequence[MessageInput],
        tools: Sequence[ToolDefinition] | None = None,
        **options: Any,
    ) -> Turn:
        """One whole turn. The default streams and collects; wires override it with their
        non-streaming request."""
        return collect_turn(self.create_stream(messages, tools, **options))

    def open_stream(
        self, messages: list[Message], tools: list[ToolDefinition] | None, opts: CallOptions
    ) -> ChunkStream:
        """A stream for messages, tools and options already checked (``create_stream`` checks
        them and comes here; a wrapper passes its own call on to the provider it wraps this
        way). Nothing is sent until the stream is first read."""
        return self._open(messages, tools, opts)

    def _open(self, messages: list[Message], tools: list[ToolDefinition] | None, opts: CallOptions) -> ChunkStream:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} id={self.id!r} model={self.model!r}>"


def resolve_api_key(api_key: str | None, env_vars: Sequence[str], provider: str, *, required: bool = True) -> str | None:
    """An explicit key, else the first environment variable set; a clear error otherwise."""
    if api_key:
        return api_key
    for name in env_vars:
        value = os.environ.get(name)
        if value:
            return value
    if not required:
        return None
    names = " or ".join(env_vars) if env_vars else "api_key"
    raise ProviderError(
        provider,
        ErrorKind.AUTH,
        f"{provider}: no API key. Pass api_key=... or set {names}.",
    )


def join_url(base: str, path: str) -> str:
    return base.rstrip("/") + "/" + path.lstrip("/")


DRAIN_SECONDS = 0.5


def _drain(raw: Iterator[bytes], resp: Response) -> None:
    """Read what follows the end signal (the chunk terminator, at most a few bytes) so the
    connection goes back to the pool instead of being thrown away; a server that stays silent
    after its end signal is hung up on after DRAIN_SECONDS, never waited for."""
    timer = threading.Timer(DRAIN_SECONDS, resp.abort)
    timer.daemon = True
    timer.start()
    try:
        for _ in raw:
            pass
    except Exception:
        pass  # the turn is already complete; a hang-up here loses nothing
    finally:
        timer.cancel()


@dataclass(slots=True)
class WireRequest:
    """What a wire decided to send (before the transport sees it); tests read this too."""

    url: str
    headers: dict[str, str] = field(repr=False)  # holds the credential: never in a repr
    body: dict[str, Any] = field(default_factory=dict)
    stream: bool = True
    events: str = "sse"  # "sse" or "json-array" (Gemini without alt=sse)
    extra: dict[str, Any] = field(default_factory=dict)


class WireProvider(Provider):
    """Base for HTTP wires: repair, build the request, send it, read events, parse chunks.

    A subclass knows one wire and implements ``build_request``, ``parse_stream`` and
    ``parse_response``; nothing outside it knows that wire's field names.
    """

    wire: ClassVar[str] = ""
    env_keys: tuple[str, ...] = ()  # a class default; the constructor may set it per instance
    default_base_url: ClassVar[str] = ""
    # effort "none" strips replayed reasoning from the history unless the wire decides per model
    strip_on_none: ClassVar[bool] = True

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None = None,
        base_url: str | None = None,
        headers: dict[str, str] | None = None,
        timeout: Timeout | float | None = None,
        transport: Any = None,
        id: str | None = None,
        instance_session_id: str | None = None,
        require_key: bool = True,
        env_keys: Sequence[str] | None = None,
        effort: str | None = None,
    ) -> None:
        if env_keys is not None:
            self.env_keys = tuple(env_keys)
        if effort is not None and effort not in EFFORTS:
            raise ValueError(f"effort must be one of {EFFORTS} or None, got {effort!r}")
        self.effort = effort  # the default for calls that do not say
        if not model:
            raise ValueError(f"{id or self.wire}: model is required, e.g. model='...'")
        self.id = id or self.wire
        self.model = model
        self._api_key = resolve_api_key(api_key, self.env_keys, self.id, required=require_key)
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        self.headers = dict(headers or {})
        self.timeout = Timeout.coerce(timeout)
        self.sender: Sender = make_sender(transport)
        self.instance_session_id = instance_session_id or str(uuid.uuid4())

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} id={self.id!r} model={self.model!r} base_url={self.base_url!r} "
            f"key={'set' if self._api_key else 'none'}>"
        )

    # hooks -----------------------------------------------------------------

    def build_request(
        self, messages: list[Message], tools: list[ToolDefinition] | None, opts: CallOptions, *, stream: bool
    ) -> WireRequest:
        raise NotImplementedError

    def parse_stream(self, events: Iterator[SSEEvent], opts: CallOptions) -> Iterator[Chunk]:
        raise NotImplementedError

    def parse_response(self, data: Any, opts: CallOptions) -> Iterator[Chunk]:
        raise NotImplementedError

    def negotiate(
        self, wr: WireRequest, messages: list[Message], tools: list[ToolDefinition] | None, opts: CallOptions
    ) -> WireRequest:
        """Just before a call is sent: a wire that learns what its server takes may adjust the
        request built for it (the default sends it as built)."""
        return wr

    def after_refusal(
        self, err: ProviderError, wr: WireRequest, messages: list[Message], tools: list[ToolDefinition] | None,
        opts: CallOptions,
    ) -> WireRequest | None:
        """The server refused ``wr`` with ``err`` before answering: the request to send once more,
        in a form it takes, or None to report ``err`` (the default)."""
        return None

    # machinery -------------------------------------------------------------

    @property
    def secrets(self) -> tuple[str, ...]:
        return (self._api_key,) if self._api_key else ()

    def session_for(self, opts: CallOptions) -> str:
        return opts.session_id or self.instance_session_id

    def prepare(self, messages: Sequence[MessageInput], opts: CallOptions | None = None) -> list[Message]:
        """Every adapter repairs what it sends (without is_read_only: only the caller knows).
        With ``opts``, replayed reasoning is stripped for a thinking-off turn (effort "none",
        unless ``strip_reasoning=False``) or when ``strip_reasoning=True``."""
        msgs = ensure_messages(messages)
        if opts is not None:
            strip = opts.strip_reasoning
            if strip is None:
                effort = opts.effort if opts.effort is not None else getattr(self, "effort", None)
                strip = effort == "none" and self.strip_on_none
            if strip:
                msgs = strip_reasoning(msgs)
        return repair_history(msgs).messages

    def _request(self, wr: WireRequest, hangup: Hangup | None = None) -> Request:
        return Request(
            "POST",
            wr.url,
            {"content-type": "application/json", **self.headers, **wr.headers},
            json.dumps(wr.body, ensure_ascii=False, separators=(",", ":")).encode(),
            stream=wr.stream,
            timeout=self.timeout,
            hangup=hangup,
        )

    def _send(self, wr: WireRequest, stream: ChunkStream | None = None) -> Response:
        if stream is not None:
            stream.opened_at = time.monotonic()
        resp = self.sender.send(self._request(wr, stream.hangup if stream is not None else None), self.id)
        if stream is not None:
            stream.response = resp
        if not 200 <= resp.status < 300:
            try:
                body = resp.read()[:65536].decode("utf-8", "replace")
            except ProviderError:
                body = ""
            finally:
                resp.close()
            raise http_error(self.id, resp.status, resp.headers, body, secrets=self.secrets)
        return resp

    def _tap(
        self, stream: ChunkStream, chunks: Iterator[bytes], on_activity: Callable[[], None] | None = None
    ) -> Iterator[bytes]:
        clock = time.monotonic
        for b in chunks:
            now = clock()
            if stream.first_byte_at is None:
                if not b:
                    continue
                stream.first_byte_at = now
            stream.last_byte_at = now
            if on_activity is not None:
                on_activity()
            yield b

    def _send_negotiated(
        self, wr: WireRequest, messages: list[Message], tools: list[ToolDefinition] | None, opts: CallOptions,
        stream: ChunkStream | None = None,
    ) -> tuple[Response, WireRequest]:
        """Send ``wr`` as the wire negotiates it; a refusal of one of its settings is answered
        once, with the request in a form the server takes (``after_refusal``)."""
        wr = self.negotiate(wr, messages, tools, opts)
        try:
            return self._send(wr, stream), wr
        except ProviderError as err:
            if stream is not None and stream.hangup.aborted:
                raise
            again = self.after_refusal(err, wr, messages, tools, opts)
            if again is None:
                raise
        if stream is not None:
            stream.hangup = Hangup()  # the first one was released with its response
        return self._send(again, stream), again

    def _open(self, messages: list[Message], tools: list[ToolDefinition] | None, opts: CallOptions) -> ChunkStream:
        prepared = self.prepare(messages, opts)
        built = self.build_request(prepared, tools, opts, stream=True)
        on_activity = opts.on_activity
        text = TextDelta
        forced = forced_call(opts.tool_choice, bool(tools))

        def run(stream: ChunkStream) -> Iterator[Chunk]:
            resp, wr = self._send_negotiated(built, prepared, tools, opts, stream)
            if on_activity is not None:
                on_activity()  # the headers arrived
            yield from wr.extra.get("notices", ())
            calls = 0
            try:
                raw = self._tap(stream, resp.iter_bytes(), callers_own(on_activity) if on_activity else None)
                pos = StreamPosition()  # the events are counted, so an error can name one
                if wr.events == "json-array":
                    from ..transport.sse import iter_json_array

                    events: Iterator[Any] = numbered(
                        (SSEEvent(None, json.dumps(x)) for x in iter_json_array(raw, self.id)), pos, self.id
                    )
                else:
                    events = iter_sse(raw, self.id, pos)
                # guarding: whatever the parser trips on is one ProviderError (see guard.py)
                with guarding(self.id, pos, self.secrets):
                    for c in self.parse_stream(events, opts):
                        if type(c) is not text or type(c.text) is not str:
                            check_chunk(c)
                            if forced is not None:  # a forced call not made is said, never passed over
                                if type(c) is ToolCallDelta:
                                    calls += 1
                                    forced.saw(c.name)
                                elif type(c) is Finish:
                                    said = forced.notice(any_call=calls > 0)
                                    if said is not None:
                                        yield said
                        yield c
                _drain(raw, resp)
            except CallerRaised as carried:  # the caller's callback raised: theirs, as it was
                raise carried.exc from carried.exc.__cause__
            finally:
                resp.close()

        return ChunkStream(run, provider=self.id)

    def complete(
        self,
        messages: Sequence[MessageInput],
        tools: Sequence[ToolDefinition] | None = None,
        **options: Any,
    ) -> Turn:
        opts = CallOptions(**options)
        prepared = self.prepare(messages, opts)
        tool_list = list(tools) if tools else None
        resp, wr = self._send_negotiated(
            self.build_request(prepared, tool_list, opts, stream=False), prepared, tool_list, opts
        )
        if opts.on_activity is not None:
            opts.on_activity()  # the headers arrived
        try:
            raw = resp.read()
        finally:
            resp.close()
        if opts.on_activity is not None:
            opts.on_activity()
        try:
            data = read_json(raw)
        except JsonInputError as exc:  # not JSON, not UTF-8, or nested too deep
            raise malformed(
                self.id, "response body", f"not JSON ({exc})", raw[:2000].decode("utf-8", "replace"),
                secrets=self.secrets,
            ) from exc
        asm = TurnAssembler()
        for n in wr.extra.get("notices", ()):
            asm.feed(n)
        try:
            for chunk in self.parse_response(data, opts):
                check_chunk(chunk)
                asm.feed(chunk)
        except PARSER_FAILURES as exc:  # a body of the wrong shape: the one malformed error
            raise body_error(self.id, exc, data, secrets=self.secrets) from exc
        try:
            turn = asm.turn()
        except ProviderError as err:
            if err.provider == "stream":
                name_the_wire(err, self.id)
            raise
        forced = forced_call(opts.tool_choice, bool(tool_list))
        if forced is not None:
            for c in turn.message.tool_calls or ():
                forced.saw(c.name)
            said = forced.notice(any_call=bool(turn.message.tool_calls))
            if said is not None:
                turn.notices.append(said)
        return turn

    def close(self) -> None:
        self.sender.close()
