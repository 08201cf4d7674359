"""Scripted turns written as each wire's own streaming bytes, and a real 127.0.0.1 server that
plays them, so the crash explorer runs the real provider parsing on every wire.

A scripted turn (``Say``) holds readable reasoning, text in pieces, parallel calls (id, name,
arguments; each call's arguments arrive in two fragments) and usage. ``render(wire, say)``
writes it the way that wire streams (framing modelled on the golden dialects of
tests/providers/golden_dialects.py: Chat with ``[DONE]``, Anthropic with thinking and signature
blocks, Gemini with a thought part and a signed first call, Responses with an encrypted
reasoning item). ``WireServer`` answers any of the four paths; which turn it plays comes from
the request itself (``Script.pick``), so many processes can share one server, and every request
body is kept under the path prefix it came to (``/<token>/...``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from providerkit_nb.testing.replay import guess_wire

WIRES = ("openai_chat", "openai_responses", "anthropic", "gemini")
MODEL = "crash-1"


@dataclass(frozen=True)
class Say:
    """One scripted model turn."""

    text: tuple[str, ...] = ()
    reasoning: str = ""
    calls: tuple[tuple[str, str, dict[str, Any]], ...] = ()
    input_tokens: int = 100
    output_tokens: int = 20

    @property
    def full_text(self) -> str:
        return "".join(self.text)


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _halves(s: str) -> tuple[str, str]:
    return s[: len(s) // 2], s[len(s) // 2 :]


def _sse(events: list[tuple[str | None, Any]], sep: str = "\n\n") -> bytes:
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else _dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {text}" + sep)
    return "".join(out).encode()


def _chat(s: Say) -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-crash", "object": "chat.completion.chunk", "created": 1, "model": MODEL,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    ev: list[tuple[str | None, Any]] = []
    first: dict[str, Any] = {"role": "assistant", "content": None}
    if s.reasoning:
        first["reasoning_content"] = s.reasoning
    ev.append((None, chunk(first)))
    for piece in s.text:
        ev.append((None, chunk({"content": piece})))
    for i, (cid, name, args) in enumerate(s.calls):
        a, b = _halves(_dumps(args))
        ev.append((None, chunk({"tool_calls": [{"index": i, "id": cid, "type": "function",
                                                "function": {"name": name, "arguments": ""}}]})))
        ev.append((None, chunk({"tool_calls": [{"index": i, "function": {"arguments": a}}]})))
        ev.append((None, chunk({"tool_calls": [{"index": i, "function": {"arguments": b}}]})))
    ev.append((None, chunk({}, "tool_calls" if s.calls else "stop")))
    ev.append((None, {"id": "chatcmpl-crash", "object": "chat.completion.chunk", "created": 1, "model": MODEL,
                      "choices": [], "usage": {"prompt_tokens": s.input_tokens,
                                               "completion_tokens": s.output_tokens}}))
    ev.append((None, "[DONE]"))
    return _sse(ev, "\r\n\r\n")


def _anthropic(s: Say) -> bytes:
    ev: list[tuple[str | None, Any]] = [("message_start", {"type": "message_start", "message": {
        "id": "msg_crash", "type": "message", "role": "assistant", "model": MODEL, "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": s.input_tokens, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0, "output_tokens": 1}}})]
    i = 0

    def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        nonlocal i
        ev.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}))
        for d in deltas:
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d}))
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        i += 1

    if s.reasoning:
        block({"type": "thinking", "thinking": "", "signature": ""},
              [{"type": "thinking_delta", "thinking": s.reasoning},
               {"type": "signature_delta", "signature": "c2lnbmVkIGJ5IHRoZSBjcmFzaCBzY3JpcHQ="}])
    if s.text:
        block({"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in s.text])
    for cid, name, args in s.calls:
        a, b = _halves(_dumps(args))
        block({"type": "tool_use", "id": cid, "name": name, "input": {}},
              [{"type": "input_json_delta", "partial_json": a}, {"type": "input_json_delta", "partial_json": b}])
    ev.append(("message_delta", {"type": "message_delta",
                                 "delta": {"stop_reason": "tool_use" if s.calls else "end_turn", "stop_sequence": None},
                                 "usage": {"output_tokens": s.output_tokens}}))
    ev.append(("message_stop", {"type": "message_stop"}))
    return _sse(ev)


def _gemini(s: Say) -> bytes:
    usage = {"promptTokenCount": s.input_tokens, "totalTokenCount": s.input_tokens}

    def chunk(parts: list[dict[str, Any]], finish: str | None = None, last: bool = False) -> dict[str, Any]:
        cand: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
        if finish:
            cand["finishReason"] = finish
        u = dict(usage)
        if last:
            u = {"promptTokenCount": s.input_tokens, "candidatesTokenCount": s.output_tokens,
                 "totalTokenCount": s.input_tokens + s.output_tokens}
        return {"candidates": [cand], "usageMetadata": u, "modelVersion": MODEL, "responseId": "crash"}

    ev: list[tuple[str | None, Any]] = []
    if s.reasoning:
        ev.append((None, chunk([{"text": s.reasoning, "thought": True}])))
    for piece in s.text:
        ev.append((None, chunk([{"text": piece}])))
    if s.calls:
        parts = []
        for k, (cid, name, args) in enumerate(s.calls):
            part: dict[str, Any] = {"functionCall": {"id": cid, "name": name, "args": args}}
            if k == 0:
                part["thoughtSignature"] = "Z2VtaW5pIGNyYXNoIHNpZ25hdHVyZQ=="
            parts.append(part)
        ev.append((None, chunk(parts)))
    ev.append((None, chunk([{"text": ""}], "STOP", last=True)))
    return _sse(ev, "\r\n\r\n")


def _responses(s: Say) -> bytes:
    ev: list[tuple[str | None, Any]] = []
    seq = 0
    output: list[dict[str, Any]] = []

    def add(kind: str, data: dict[str, Any]) -> None:
        nonlocal seq
        ev.append((kind, {"type": kind, "sequence_number": seq, **data}))
        seq += 1

    base = {"id": "resp_crash", "object": "response", "model": MODEL, "output": [], "usage": None}
    add("response.created", {"response": {**base, "status": "in_progress"}})
    n = 0
    if s.reasoning:
        item = {"id": "rs_crash", "type": "reasoning", "summary": []}
        add("response.output_item.added", {"output_index": n, "item": item})
        add("response.reasoning_summary_text.delta",
            {"item_id": "rs_crash", "output_index": n, "summary_index": 0, "delta": s.reasoning})
        done = {"id": "rs_crash", "type": "reasoning", "encrypted_content": "ZW5jcnlwdGVkIGNyYXNoIHJlYXNvbmluZw==",
                "summary": [{"type": "summary_text", "text": s.reasoning}]}
        add("response.output_item.done", {"output_index": n, "item": done})
        output.append(done)
        n += 1
    if s.text:
        mid = "msg_crash"
        add("response.output_item.added", {"output_index": n, "item": {
            "id": mid, "type": "message", "status": "in_progress", "role": "assistant", "content": []}})
        add("response.content_part.added", {"item_id": mid, "output_index": n, "content_index": 0,
                                            "part": {"type": "output_text", "text": "", "annotations": []}})
        for p in s.text:
            add("response.output_text.delta", {"item_id": mid, "output_index": n, "content_index": 0, "delta": p})
        add("response.output_text.done", {"item_id": mid, "output_index": n, "content_index": 0, "text": s.full_text})
        done = {"id": mid, "type": "message", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": s.full_text, "annotations": []}]}
        add("response.output_item.done", {"output_index": n, "item": done})
        output.append(done)
        n += 1
    for k, (cid, name, args) in enumerate(s.calls):
        fid = f"fc_crash{k}"
        raw = _dumps(args)
        a, b = _halves(raw)
        add("response.output_item.added", {"output_index": n, "item": {
            "id": fid, "type": "function_call", "status": "in_progress", "arguments": "", "call_id": cid, "name": name}})
        add("response.function_call_arguments.delta", {"item_id": fid, "output_index": n, "delta": a})
        add("response.function_call_arguments.delta", {"item_id": fid, "output_index": n, "delta": b})
        add("response.function_call_arguments.done", {"item_id": fid, "output_index": n, "arguments": raw})
        done = {"id": fid, "type": "function_call", "status": "completed", "arguments": raw, "call_id": cid, "name": name}
        add("response.output_item.done", {"output_index": n, "item": done})
        output.append(done)
        n += 1
    add("response.completed", {"response": {**base, "status": "completed", "output": output,
                                            "usage": {"input_tokens": s.input_tokens, "output_tokens": s.output_tokens,
                                                      "total_tokens": s.input_tokens + s.output_tokens}}})
    return _sse(ev)


RENDER: dict[str, Callable[[Say], bytes]] = {
    "openai_chat": _chat, "anthropic": _anthropic, "gemini": _gemini, "openai_responses": _responses,
}


def render(wire: str, say: Say) -> bytes:
    return RENDER[wire](say)


# --------------------------------------------------------------------------- what the model reads


def told(wire: str, body: dict[str, Any]) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """Read a request body the way the model reads it, written here from each wire's shape
    (not through the library's importers): the calls it carries, as (id, tool name), in order,
    and the text given as each call's result, by call id."""
    calls: list[tuple[str, str]] = []
    results: dict[str, str] = {}

    def put(cid: str, text: str) -> None:
        assert cid not in results, f"{wire}: call {cid} has two results in one request"
        results[cid] = text

    if wire == "openai_chat":
        for m in body["messages"]:
            for c in m.get("tool_calls") or ():
                calls.append((c["id"], c["function"]["name"]))
            if m.get("role") == "tool":
                put(m["tool_call_id"], _text(m["content"]))
    elif wire == "anthropic":
        for m in body["messages"]:
            content = m["content"]
            for b in content if isinstance(content, list) else ():
                if b.get("type") == "tool_use":
                    calls.append((b["id"], b["name"]))
                elif b.get("type") == "tool_result":
                    put(b["tool_use_id"], _text(b.get("content", "")))
    elif wire == "openai_responses":
        for item in body["input"]:
            if item.get("type") == "function_call":
                calls.append((item["call_id"], item["name"]))
            elif item.get("type") == "function_call_output":
                put(item["call_id"], _text(item["output"]))
    else:
        for content in body["contents"]:
            for part in content["parts"]:
                if "functionCall" in part:
                    calls.append((part["functionCall"]["id"], part["functionCall"]["name"]))
                elif "functionResponse" in part:
                    fr = part["functionResponse"]
                    resp = fr.get("response")
                    text = resp.get("output") if isinstance(resp, dict) and set(resp) == {"output"} else resp
                    put(fr["id"], _text(text))
    return calls, results


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return json.dumps(content, sort_keys=True)


# --------------------------------------------------------------------------- the server


@dataclass
class Script:
    """Which turn answers a request, decided from the request's own bytes: ``steps`` are
    (marker, turn) pairs, newest first; the first marker found in the body picks its turn.
    A request without tools is a compaction's summary request."""

    steps: list[tuple[str, Say]]
    summary: Say
    fallback: Say

    def pick(self, raw: bytes, body: dict[str, Any]) -> Say:
        if not (body.get("tools") or []):
            return self.summary
        text = raw.decode("utf-8", "replace")
        for marker, say in self.steps:
            if marker in text:
                return say
        return self.fallback


@dataclass
class WireServer:
    """``with WireServer(script) as s``: ``s.url`` answers every wire; ``s.requests(token)``
    lists the (wire, body) of the requests that came under ``/<token>``."""

    script: Script
    _kept: dict[str, list[tuple[str, dict[str, Any]]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        outer = self
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out at once, not 40 ms apart

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                wire = guess_wire("http://server" + self.path)
                body = json.loads(raw)
                token = self.path.strip("/").split("/")[0]
                with lock:
                    outer._kept.setdefault(token, []).append((wire, body))
                if wire == "unknown":
                    self.send_response(404)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                payload = render(wire, outer.script.pick(raw, body))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                self.wfile.flush()

        self._lock = lock
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def requests(self, token: str) -> list[tuple[str, dict[str, Any]]]:
        with self._lock:
            return list(self._kept.get(token, ()))

    def forget(self, token: str) -> None:
        with self._lock:
            self._kept.pop(token, None)

    def __enter__(self) -> WireServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def provider_for(wire: str, root: str) -> Any:
    """The wire's real provider aimed at ``root`` (a WireServer url with a token path)."""
    from providerkit_nb.providers.anthropic import AnthropicProvider
    from providerkit_nb.providers.gemini import GeminiProvider
    from providerkit_nb.providers.openai_chat import OpenAIChatProvider
    from providerkit_nb.providers.openai_responses import ResponsesProvider

    key = "crash-test-key"
    if wire == "openai_chat":
        return OpenAIChatProvider(model="gpt-5.1", api_key=key, base_url=root + "/v1")
    if wire == "anthropic":
        return AnthropicProvider(model="claude-sonnet-4-5", api_key=key, base_url=root)
    if wire == "gemini":
        return GeminiProvider(model="gemini-2.5-flash", api_key=key, base_url=root)
    return ResponsesProvider(model="gpt-5", api_key=key, base_url=root + "/v1")
