"""What an OpenAI Responses recording states, read from the recording alone.

A stream is read for its ``response.output_item.done`` items (the finished items, in output
order) and its terminal event (``response.completed`` / ``response.done`` /
``response.incomplete``); a non-streaming body already is the final response object with its
``output`` list. One mapping then turns the finished items into the canonical turn:

- message items: their output_text (and refusal) parts, concatenated in order -> ``content``
- reasoning items: summary texts and reasoning_text parts, joined by a blank line ->
  ``reasoning``; the whole items that carry their own content (``encrypted_content``, or
  reasoning text as DeepSeek sends) -> ``reasoning_items`` {provider: "openai-responses"}
- function_call items with a ``call_id`` -> ``tool_calls`` (id is the call_id, never the fc_ id)
- usage: input_tokens (cached included), cached_tokens, cache_write_tokens, output_tokens
  (reasoning included), reasoning_tokens
- status ``incomplete`` -> ``length`` (``content_filter`` when that is the reason); otherwise
  ``tool_calls`` when there are calls, else ``stop``

Nothing here calls the adapter under test.
"""

from __future__ import annotations

import json
import re
from typing import Any

PROVIDER = "openai-responses"
TERMINAL = ("response.completed", "response.done", "response.incomplete")


def sse_payloads(text: str) -> list[dict[str, Any]]:
    """The JSON payload of every SSE frame (frames split on blank lines, CRLF tolerated)."""
    out = []
    for frame in re.split(r"\n\n", text.replace("\r\n", "\n")):
        data = [line[5:].lstrip(" ") for line in frame.split("\n") if line.startswith("data:")]
        joined = "\n".join(data)
        if joined.strip() and joined.strip() != "[DONE]":
            out.append(json.loads(joined))
    return out


def fold_stream(text: str) -> dict[str, Any]:
    """The final response object: the terminal event's response, with ``output`` taken from
    the ``output_item.done`` events in output order."""
    done: dict[int, dict[str, Any]] = {}
    final: dict[str, Any] | None = None
    for ev in sse_payloads(text):
        t = ev.get("type")
        if t == "response.output_item.done":
            done[ev["output_index"]] = ev["item"]
        elif t in TERMINAL:
            final = dict(ev["response"])
        elif t in ("error", "response.failed"):
            return {"error": ev.get("error") or (ev.get("response") or {}).get("error")}
    if final is None:
        raise ValueError("the recording has no terminal event")
    final["output"] = [done[i] for i in sorted(done)]
    return final


def turn_of(response: dict[str, Any]) -> dict[str, Any]:
    text: list[str] = []
    thoughts: list[str] = []
    items: list[dict[str, Any]] = []
    calls: list[dict[str, str]] = []
    for item in response.get("output") or []:
        kind = item.get("type")
        if kind == "message":
            for part in item.get("content") or []:
                if part.get("type") == "output_text":
                    text.append(part.get("text") or "")
                elif part.get("type") == "refusal":
                    text.append(part.get("refusal") or "")
        elif kind == "reasoning":
            for part in (item.get("summary") or []) + (item.get("content") or []):
                if part.get("text"):
                    thoughts.append(part["text"])
            if item.get("encrypted_content") or item.get("content"):
                items.append(item)
        elif kind == "function_call" and item.get("call_id"):
            calls.append({"id": item["call_id"], "name": item["name"], "arguments": item.get("arguments") or ""})
    msg: dict[str, Any] = {"role": "assistant", "content": "".join(text)}
    if thoughts:
        msg["reasoning"] = "\n\n".join(thoughts)
    if items:
        msg["reasoning_items"] = {"provider": PROVIDER, "items": items}
    if calls:
        msg["tool_calls"] = calls
    u = response.get("usage")
    usage = None
    if isinstance(u, dict):
        ind = u.get("input_tokens_details") or {}
        outd = u.get("output_tokens_details") or {}
        usage = {
            "input_tokens": u.get("input_tokens") or 0,
            "cached_input_tokens": ind.get("cached_tokens") or 0,
            "cache_write_tokens": ind.get("cache_write_tokens") or 0,
            "output_tokens": u.get("output_tokens") or 0,
            "reasoning_tokens": outd.get("reasoning_tokens") or 0,
        }
    if response.get("status") == "incomplete":
        reason = (response.get("incomplete_details") or {}).get("reason")
        finish = "content_filter" if reason == "content_filter" else "length"
    else:
        finish = "tool_calls" if calls else "stop"
    return {"message": msg, "usage": usage, "finish_reason": finish, "model": response.get("model")}


def expected_turn(response_body_text: str, request_body: dict[str, Any] | None = None) -> dict[str, Any]:
    """The turn a recorded response states. An error body gives {"error": <its message>}."""
    stripped = response_body_text.lstrip()
    response = json.loads(stripped) if stripped.startswith("{") else fold_stream(response_body_text)
    if isinstance(response.get("error"), dict) and not response.get("output"):
        return {"error": response["error"].get("message"), "message": None, "usage": None, "finish_reason": None}
    return turn_of(response)
