"""What an Anthropic recording states, read from the recording alone.

The stream is folded back into the final message object the way the Messages API documents
its events (a block starts, its deltas extend it, it stops); the non-streaming body already is
that object. One mapping then turns the final content blocks into the canonical turn:

- text blocks, concatenated in order -> ``content``
- thinking blocks (text and signature) and redacted_thinking blocks, in order, unchanged ->
  ``reasoning_items`` {provider: "anthropic"}; the thinking texts joined by a blank line ->
  ``reasoning``
- tool_use blocks -> ``tool_calls``; arguments are the raw ``partial_json`` text as streamed,
  or the compact JSON of ``input`` when the recording holds an object
- usage: input = input_tokens + cache reads + cache writes; the message_delta's usage fields
  overwrite message_start's; thinking tokens (when stated) are the reasoning tokens
- stop_reason -> finish_reason

Nothing here calls the adapter under test.
"""

from __future__ import annotations

import json
import re
from typing import Any

PROVIDER = "anthropic"
FINISH = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls", "max_tokens": "length", "refusal": "content_filter"}


def sse_payloads(text: str) -> list[dict[str, Any]]:
    """The JSON payload of every SSE frame (frames split on blank lines, CRLF tolerated)."""
    frames = re.split(r"\r?\n\r?\n", text.replace("\r\n", "\n"))
    out = []
    for frame in frames:
        data = [line[5:].lstrip(" ") if line.startswith("data:") else None for line in frame.split("\n")]
        joined = "\n".join(d for d in data if d is not None)
        if joined.strip():
            out.append(json.loads(joined))
    return out


def fold_stream(text: str) -> dict[str, Any]:
    """The final message object the events describe (tool_use keeps its raw JSON text)."""
    message: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    for ev in sse_payloads(text):
        t = ev.get("type")
        if t == "message_start":
            message = dict(ev["message"])
            message["usage"] = dict(message.get("usage") or {})
        elif t == "content_block_start":
            blocks[ev["index"]] = dict(ev["content_block"])
        elif t == "content_block_delta":
            b, d = blocks[ev["index"]], ev["delta"]
            if d["type"] == "text_delta":
                b["text"] = b.get("text", "") + d["text"]
            elif d["type"] == "thinking_delta":
                b["thinking"] = b.get("thinking", "") + d["thinking"]
            elif d["type"] == "signature_delta":
                b["signature"] = b.get("signature", "") + d["signature"]
            elif d["type"] == "input_json_delta":
                b["_raw"] = b.get("_raw", "") + d["partial_json"]
        elif t == "message_delta":
            message.update({k: v for k, v in ev["delta"].items() if v is not None})
            message.setdefault("usage", {}).update(ev.get("usage") or {})
        elif t == "error":
            return {"type": "error", "error": ev["error"]}
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return message


def turn_of(message: dict[str, Any]) -> dict[str, Any]:
    """Final content blocks -> {message, usage, finish_reason, model}."""
    text, thoughts, items, calls = [], [], [], []
    for b in message.get("content", []):
        if b["type"] == "text":
            text.append(b["text"])
        elif b["type"] == "thinking":
            item = {k: b[k] for k in ("type", "thinking", "signature") if k in b}
            items.append(item)
            if b["thinking"]:
                thoughts.append(b["thinking"])
        elif b["type"] == "redacted_thinking":
            items.append({"type": "redacted_thinking", "data": b["data"]})
        elif b["type"] == "tool_use":
            raw = b.get("_raw") or json.dumps(b.get("input") or {}, separators=(",", ":"), ensure_ascii=False)
            calls.append({"id": b["id"], "name": b["name"], "arguments": raw})
    msg: dict[str, Any] = {"role": "assistant", "content": "".join(text)}
    if thoughts:
        msg["reasoning"] = "\n\n".join(thoughts)
    if items:
        msg["reasoning_items"] = {"provider": PROVIDER, "items": items}
    if calls:
        msg["tool_calls"] = calls
    u = message.get("usage") or {}
    usage = None
    if u:
        read = u.get("cache_read_input_tokens") or 0
        write = u.get("cache_creation_input_tokens") or 0
        usage = {
            "input_tokens": (u.get("input_tokens") or 0) + read + write,
            "cached_input_tokens": read,
            "cache_write_tokens": write,
            "output_tokens": u.get("output_tokens") or 0,
            "reasoning_tokens": (u.get("output_tokens_details") or {}).get("thinking_tokens") or 0,
        }
    finish = FINISH.get(message.get("stop_reason") or "end_turn", "stop")
    return {"message": msg, "usage": usage, "finish_reason": finish, "model": message.get("model")}


def expected_turn(response_body_text: str, request_body: dict[str, Any] | None = None) -> dict[str, Any]:
    """The turn a recorded response states. An error body gives {"error": <anthropic type>}."""
    stripped = response_body_text.lstrip()
    if stripped.startswith("{"):
        message = json.loads(stripped)
    else:
        message = fold_stream(response_body_text)
    if message.get("type") == "error":
        return {"error": message["error"]["type"], "message": None, "usage": None, "finish_reason": None}
    return turn_of(message)
