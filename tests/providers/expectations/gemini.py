"""What a Gemini recording itself states its turn is, read straight from its bodies.

Written apart from the wire's parser (no streaming, no shared code): the body is split into
whole GenerateContentResponse objects, their parts are walked in order, and the canonical turn is
spelled out by hand. The usage is the last ``usageMetadata`` the recording carries; thoughts
count as output. Signatures land where the canonical shape keeps them: on the tool call for a
``functionCall`` part, otherwise as a reasoning item ``{"type": "text"|"thought", "offset",
"length", "signature"}`` that marks the signed part's place in ``content`` (or ``reasoning``).
"""

from __future__ import annotations

import json
from typing import Any

_FILTERED = {
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_RECITATION",
}


def responses_of(body_text: str) -> list[dict[str, Any]]:
    """Every GenerateContentResponse in a body: SSE (``data:`` frames), a JSON array, or one
    JSON object (generateContent)."""
    text = body_text.replace("\r\n", "\n").strip()
    if text.startswith("["):
        return list(json.loads(text))
    if text.startswith("{"):
        return [json.loads(text)]
    out = []
    for frame in text.split("\n\n"):
        lines = [ln[5:].lstrip() for ln in frame.split("\n") if ln.startswith("data:")]
        if lines:
            out.append(json.loads("\n".join(lines)))
    return out


def all_signatures(body_text: str) -> list[str]:
    """Every thoughtSignature the body carries, in order."""
    sigs = []
    for r in responses_of(body_text):
        for cand in r.get("candidates") or []:
            for part in (cand.get("content") or {}).get("parts") or []:
                if part.get("thoughtSignature"):
                    sigs.append(part["thoughtSignature"])
    return sigs


def expected_turn(response_body_text: str, request_body: Any = None) -> dict[str, Any]:
    content = ""
    reasoning = ""
    saw_thought = False
    items: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    last_usage = None
    last_finish = None
    for r in responses_of(response_body_text):
        if r.get("usageMetadata"):
            last_usage = r["usageMetadata"]
        cands = r.get("candidates") or []
        if not cands:
            continue
        cand = cands[0]
        if cand.get("finishReason"):
            last_finish = cand["finishReason"]
        for part in (cand.get("content") or {}).get("parts") or []:
            sig = part.get("thoughtSignature")
            if "functionCall" in part:
                fc = part["functionCall"]
                call = {
                    "id": fc.get("id") or f"call_{len(calls)}",
                    "name": fc["name"],
                    "arguments": json.dumps(fc.get("args") or {}, ensure_ascii=False, separators=(",", ":")),
                }
                if sig:
                    call["thought_signature"] = sig
                calls.append(call)
            elif part.get("thought"):
                saw_thought = True
                if sig:
                    items.append({"type": "thought", "offset": len(reasoning), "length": len(part["text"]), "signature": sig})
                reasoning += part["text"]
            elif "text" in part:
                if sig:
                    items.append({"type": "text", "offset": len(content), "length": len(part["text"]), "signature": sig})
                content += part["text"]
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if saw_thought and reasoning:
        message["reasoning"] = reasoning
    if items:
        message["reasoning_items"] = {"provider": "gemini", "items": items}
    if calls:
        message["tool_calls"] = calls
    usage = None
    if last_usage is not None:
        thoughts = last_usage.get("thoughtsTokenCount", 0)
        usage = {
            "input_tokens": last_usage.get("promptTokenCount", 0),
            "cached_input_tokens": last_usage.get("cachedContentTokenCount", 0),
            "cache_write_tokens": 0,
            "output_tokens": last_usage.get("candidatesTokenCount", 0) + thoughts,
            "reasoning_tokens": thoughts,
        }
    if calls:
        finish = "tool_calls"
    elif last_finish == "MAX_TOKENS":
        finish = "length"
    elif last_finish in _FILTERED:
        finish = "content_filter"
    elif last_finish is None:
        finish = None
    else:
        finish = "stop"
    return {"message": message, "usage": usage, "finish_reason": finish}
