"""What a Chat Completions recording states, read from the recording alone.

A Chat stream has no ``.done`` events: the stream itself is the statement. Its ``data:`` lines
are read in order and folded the way the API documents them:

- choice 0 only (``choices[].index`` 0; a server streaming n > 1 sends the others beside it)
- ``delta.content`` pieces, concatenated -> ``content``
- ``delta.reasoning_content`` (DeepSeek) or ``delta.reasoning`` (Groq, OpenRouter), concatenated
  -> ``reasoning`` (absent when no piece was stated)
- ``delta.tool_calls[]``: grouped by ``index`` (its position in the list when the server leaves
  it out); id and name are the ones stated; ``function.arguments`` pieces concatenated
- the last ``usage`` object (or Groq's ``x_groq.usage``): prompt_tokens, cached tokens
  (``prompt_tokens_details.cached_tokens``, else DeepSeek's ``prompt_cache_hit_tokens``),
  completion_tokens, ``completion_tokens_details.reasoning_tokens``
- the ``finish_reason`` stated for choice 0; ``model`` as the chunks state it
- an ``event: error`` frame or an ``{"error": ...}`` payload -> {"error": <its message>}

A non-stream body already is the final object (``choices[0].message``). Nothing here calls the
adapter under test.
"""

from __future__ import annotations

import json
from typing import Any

FINISH = {"stop": "stop", "length": "length", "tool_calls": "tool_calls", "function_call": "tool_calls", "content_filter": "content_filter"}


def frames(text: str) -> list[tuple[str | None, str]]:
    """(event name, data) for each blank-line separated frame that has data lines."""
    out = []
    for frame in text.replace("\r\n", "\n").split("\n\n"):
        event = None
        data = []
        for line in frame.split("\n"):
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip(" "))
        if data:
            out.append((event, "\n".join(data)))
    return out


def _usage(u: dict[str, Any]) -> dict[str, int]:
    ptd = u.get("prompt_tokens_details") or {}
    cached = ptd.get("cached_tokens")
    if cached is None:
        cached = u.get("prompt_cache_hit_tokens", 0)
    ctd = u.get("completion_tokens_details") or {}
    return {
        "input_tokens": u.get("prompt_tokens", 0),
        "cached_input_tokens": cached or 0,
        "cache_write_tokens": 0,
        "output_tokens": u.get("completion_tokens", 0),
        "reasoning_tokens": ctd.get("reasoning_tokens") or 0,
    }


def _error(message: str) -> dict[str, Any]:
    return {"error": message, "message": None, "usage": None, "finish_reason": None}


def _turn(content: str, reasoning: str | None, calls: list[dict[str, str]], usage: Any, finish: str | None, model: str | None) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        msg["reasoning"] = reasoning
    if calls:
        msg["tool_calls"] = calls
    reason = FINISH.get(finish or "stop", "stop")
    if reason == "stop" and calls:
        reason = "tool_calls"
    return {"message": msg, "usage": usage, "finish_reason": reason, "model": model}


def expected_turn(response_body_text: str, request_body: Any = None) -> dict[str, Any]:
    stripped = response_body_text.strip()
    if stripped.startswith("{"):
        return _from_body(json.loads(stripped))
    content: list[str] = []
    reasoning: list[str] | None = None
    calls: dict[int, dict[str, Any]] = {}
    usage = None
    finish = None
    model = None
    for event, data in frames(response_body_text):
        if data.strip() == "[DONE]":
            break
        obj = json.loads(data)
        if event == "error" or obj.get("error"):
            err = obj.get("error") or obj
            return _error(err.get("message") if isinstance(err, dict) else str(err))
        model = obj.get("model") or model
        for choice in obj.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            if delta.get("content"):
                content.append(delta["content"])
            r = delta.get("reasoning_content") or delta.get("reasoning")
            if r:
                reasoning = (reasoning or []) + [r]
            for pos, tc in enumerate(delta.get("tool_calls") or []):
                slot = calls.setdefault(tc.get("index", pos), {"id": None, "name": None, "arguments": ""})
                if tc.get("id"):
                    slot["id"] = tc["id"]
                fn = tc.get("function") or {}
                if fn.get("name"):
                    slot["name"] = fn["name"]
                slot["arguments"] += fn.get("arguments") or ""
            if choice.get("finish_reason"):
                finish = choice["finish_reason"]
        u = obj.get("usage") or (obj.get("x_groq") or {}).get("usage")
        if u:
            usage = _usage(u)
    tool_calls = [{"id": c["id"], "name": c["name"], "arguments": c["arguments"]} for _, c in sorted(calls.items())]
    return _turn("".join(content), "".join(reasoning) if reasoning is not None else None, tool_calls, usage, finish, model)


def _from_body(body: dict[str, Any]) -> dict[str, Any]:
    if body.get("error"):
        err = body["error"]
        return _error(err.get("message") if isinstance(err, dict) else str(err))
    choice = next(c for c in body["choices"] if c.get("index", 0) == 0)
    msg = choice.get("message") or {}
    r = msg.get("reasoning_content") or msg.get("reasoning")
    calls = [
        {"id": tc["id"], "name": tc["function"]["name"], "arguments": tc["function"].get("arguments") or ""}
        for tc in msg.get("tool_calls") or []
    ]
    usage = _usage(body["usage"]) if body.get("usage") else None
    return _turn(msg.get("content") or "", r or None, calls, usage, choice.get("finish_reason"), body.get("model"))
