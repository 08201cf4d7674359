"""A scripted model on 127.0.0.1 that speaks the four wires the coding agents use.

Claude Code speaks Anthropic Messages (``/v1/messages``), Codex the Responses API
(``/v1/responses``), OpenCode Chat Completions through ``@ai-sdk/openai-compatible``
(``/v1/chat/completions``) and Gemini CLI the Gemini API (``:streamGenerateContent``). The
script is the same on each: when the request offers a shell tool and its last turn is the
user's, ask for ``COMMAND``; when the last turn answers a call, say "Done."; anything else (a
title, a summary) gets a short text. Every request body is kept (``server.requests``) so a test
can check what the CLI sent. Used by the fixture maker and by the real-CLI tests.

On the Anthropic wire a ``script`` of ``(tool name, input)`` calls replaces the shell command: the
request that has answered k calls gets call k (while the request offers that tool), then "Done.".
``by_prompt`` gives each conversation its own script, picked by a text its first user message
holds: a sub-agent's conversation starts with the prompt its parent's Agent call gave it.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

COMMAND = "sleep 30; echo done > marker"
REPLY = "Done."

_SHELL_TOOLS = ("Bash", "bash", "run_shell_command", "shell_command", "exec_command", "shell")


class ScriptedServer:
    """``with ScriptedServer() as s: ... s.url ... s.requests``."""

    def __init__(self, command: str = COMMAND, *, tools: bool = True, id_prefix: str | None = None,
                 script: list[tuple[str, dict[str, Any]]] | None = None,
                 by_prompt: dict[str, list[tuple[str, dict[str, Any]]]] | None = None) -> None:
        import os

        self.command = command
        self.script = script  # Anthropic only: one call per turn, in order, then "Done."
        self.by_prompt = by_prompt  # Anthropic only: a script per conversation, by its first prompt
        self.tools = tools  # False: only text replies (a resume that should not run anything)
        self.id_prefix = id_prefix or os.urandom(3).hex()  # call ids unique across servers
        self.requests: list[dict[str, Any]] = []  # {"path", "body"}
        self.calls_sent: list[dict[str, Any]] = []  # {"wire", "id", "name"}
        self._lock = threading.Lock()
        self._n = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def do_GET(self) -> None:
                with outer._lock:
                    outer.requests.append({"path": self.path, "method": "GET", "body": {}})
                outer._json(self, 200, {"data": [], "models": []})

            def do_POST(self) -> None:
                n = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(n) if n else b""
                if self.headers.get("content-encoding") == "zstd":  # Codex compresses large bodies
                    import zstandard

                    raw = zstandard.ZstdDecompressor().stream_reader(raw).read()
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                with outer._lock:
                    outer.requests.append({"path": self.path, "body": body})
                outer._dispatch(self, body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next_id(self) -> int:
        with self._lock:
            self._n += 1
            return self._n

    # ------------------------------------------------------------------ plumbing

    def _json(self, h: BaseHTTPRequestHandler, status: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        h.send_response(status)
        h.send_header("content-type", "application/json")
        h.send_header("content-length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _sse(self, h: BaseHTTPRequestHandler, events: list[tuple[str | None, Any]]) -> None:
        chunks = []
        for name, data in events:
            text = data if isinstance(data, str) else json.dumps(data)
            chunks.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
        payload = "".join(chunks).encode()
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.send_header("cache-control", "no-cache")
        h.send_header("content-length", str(len(payload)))
        h.end_headers()
        h.wfile.write(payload)
        h.wfile.flush()

    def _dispatch(self, h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        path = h.path.split("?")[0]
        if path.endswith("/messages/count_tokens"):
            self._json(h, 200, {"input_tokens": 100})
        elif path.endswith("/messages"):
            self._anthropic(h, body)
        elif path.endswith("/responses"):
            self._responses(h, body)
        elif path.endswith("/chat/completions"):
            self._chat(h, body)
        elif ":countTokens" in path:
            self._json(h, 200, {"totalTokens": 100})
        elif ":streamGenerateContent" in path or ":generateContent" in path:
            self._gemini(h, body, stream=":streamGenerateContent" in path)
        else:
            self._json(h, 404, {"error": f"no route {path}"})

    def _decide(self, offered: list[str], answered_last: bool) -> str | None:
        """The shell tool to call, or None for a text reply."""
        if answered_last or not self.tools:
            return None
        for name in _SHELL_TOOLS:
            if name in offered:
                return name
        return None

    # ------------------------------------------------------------------ Anthropic Messages

    def _anthropic(self, h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        offered = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
        msgs = body.get("messages") or []
        last = msgs[-1] if msgs else {}
        content = last.get("content") if isinstance(last, dict) else None
        answered = isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content
        )
        args: dict[str, Any] = {"command": self.command, "description": "Wait, then write the marker file"}
        script = self._script_for(msgs)
        if script is None:
            tool = self._decide(offered, answered)
        else:  # the step is how many calls this conversation has answered so far
            step = sum(
                1 for m in msgs if isinstance(m, dict) and isinstance(m.get("content"), list)
                for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"
            )
            tool = None
            if self.tools and step < len(script) and script[step][0] in offered:
                tool, args = script[step]
        n = self._next_id()
        mid = f"msg_{self.id_prefix}{n:04d}"
        model = body.get("model") or "claude-scripted"
        usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        if tool:
            cid = f"toolu_{self.id_prefix}{n:04d}"
            block: dict[str, Any] = {"type": "tool_use", "id": cid, "name": tool, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(args)}
            stop = "tool_use"
            self.calls_sent.append({"wire": "anthropic", "id": cid, "name": tool})
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": REPLY}
            stop = "end_turn"
        if not body.get("stream"):
            full = dict(block)
            if tool:
                full["input"] = json.loads(delta["partial_json"])
            else:
                full["text"] = REPLY
            self._json(h, 200, {"id": mid, "type": "message", "role": "assistant", "model": model,
                                "content": [full], "stop_reason": stop, "stop_sequence": None, "usage": usage})
            return
        self._sse(h, [
            ("message_start", {"type": "message_start", "message": {
                "id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": None, "stop_sequence": None, "usage": usage}}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ])

    def _script_for(self, msgs: list[Any]) -> list[tuple[str, dict[str, Any]]] | None:
        """``by_prompt``'s script for the conversation whose first user message holds its key."""
        if not self.by_prompt:
            return self.script
        first = next((m for m in msgs if isinstance(m, dict) and m.get("role") == "user"), {})
        content = first.get("content")
        text = content if isinstance(content, str) else " ".join(
            b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")
        return next((sc for key, sc in self.by_prompt.items() if key in text), self.script)

    # ------------------------------------------------------------------ Responses (Codex)

    def _responses(self, h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        offered = [t.get("name") or t.get("type") for t in body.get("tools") or [] if isinstance(t, dict)]
        items = body.get("input") or []
        last = items[-1] if items and isinstance(items[-1], dict) else {}
        answered = str(last.get("type", "")).endswith("_output")
        tool = self._decide(offered, answered)
        n = self._next_id()
        rid = f"resp_scripted{n:04d}"
        if tool:
            cid = f"call_{self.id_prefix}{n:04d}"
            if tool == "shell":
                args: dict[str, Any] = {"command": ["bash", "-lc", self.command]}
            elif tool == "exec_command":
                args = {"cmd": self.command}
            else:
                args = {"command": self.command}
            item: dict[str, Any] = {"type": "function_call", "id": f"fc_scripted{n:04d}", "status": "completed",
                                    "name": tool, "arguments": json.dumps(args), "call_id": cid}
            self.calls_sent.append({"wire": "responses", "id": cid, "name": tool})
        else:
            item = {"type": "message", "id": f"msg_scripted{n:04d}", "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "text": REPLY, "annotations": []}]}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        resp = {"id": rid, "object": "response", "status": "in_progress", "model": body.get("model"), "output": []}
        done = {**resp, "status": "completed", "output": [item], "usage": usage}
        self._sse(h, [
            ("response.created", {"type": "response.created", "response": resp}),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                            "item": {**item, "status": "in_progress"}}),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "response": done}),
        ])

    # ------------------------------------------------------------------ Chat Completions (OpenCode)

    def _chat(self, h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        offered = [((t.get("function") or {}).get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]
        msgs = body.get("messages") or []
        last = msgs[-1] if msgs and isinstance(msgs[-1], dict) else {}
        tool = self._decide(offered, last.get("role") == "tool")
        n = self._next_id()
        cid = f"call_{self.id_prefix}{n:04d}"
        base = {"id": f"chatcmpl-scripted{n:04d}", "object": "chat.completion.chunk", "created": 1_700_000_000,
                "model": body.get("model") or "scripted"}
        if tool:
            args = json.dumps({"command": self.command, "description": "Wait, then write the marker file"})
            delta: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [
                {"index": 0, "id": cid, "type": "function", "function": {"name": tool, "arguments": args}}]}
            finish = "tool_calls"
            self.calls_sent.append({"wire": "openai_chat", "id": cid, "name": tool})
        else:
            delta = {"role": "assistant", "content": REPLY}
            finish = "stop"
        if not body.get("stream"):
            msg = {k: v for k, v in delta.items() if k != "tool_calls"}
            if tool:
                msg["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in delta["tool_calls"]]
            self._json(h, 200, {**base, "object": "chat.completion",
                                "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
            return
        self._sse(h, [
            (None, {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}),
            (None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}),
            (None, "[DONE]"),
        ])

    # ------------------------------------------------------------------ Gemini

    def _gemini(self, h: BaseHTTPRequestHandler, body: dict[str, Any], *, stream: bool) -> None:
        offered = [
            d.get("name") for t in body.get("tools") or [] if isinstance(t, dict)
            for d in t.get("functionDeclarations") or t.get("function_declarations") or [] if isinstance(d, dict)
        ]
        contents = body.get("contents") or []
        last = contents[-1] if contents and isinstance(contents[-1], dict) else {}
        answered = any(isinstance(p, dict) and "functionResponse" in p for p in last.get("parts") or [])
        tool = self._decide(offered, answered)
        n = self._next_id()
        if tool:
            part: dict[str, Any] = {"functionCall": {"name": tool, "args": {
                "command": self.command, "description": "Wait, then write the marker file"}}}
            self.calls_sent.append({"wire": "gemini", "id": None, "name": tool})
        elif body.get("generationConfig", {}).get("responseMimeType") == "application/json":
            part = {"text": json.dumps({"reasoning": "The model answered.", "next_speaker": "user"})}
        else:
            part = {"text": REPLY}
        out = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
               "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
               "modelVersion": "gemini-scripted", "responseId": f"scripted{n:04d}"}
        if stream:
            self._sse(h, [(None, out)])
        else:
            self._json(h, 200, out)
