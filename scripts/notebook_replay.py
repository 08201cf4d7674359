"""Offline replay for the example notebooks (and the recorder that made their cassette).

Replay: vcrpy plays cassettes/notebooks.yaml back, matching a request by its method, host, path
and the conversation it carries (model, messages, tool names); the session id (prompt_cache_key)
is left out of the match because every fresh store mints its own.

Recording (``PK_RECORD_NOTEBOOKS=1 make notebooks-cassette``): the requests are answered by
``constructed_model`` below, a small deterministic stand-in that writes replies in the real
OpenAI Chat streaming format, and vcrpy records the exchange. The cassette is therefore
CONSTRUCTED, not recorded from the live API; the requests in it are the real bytes our adapter
sent. With a real key, re-record against the live API by running the notebooks with
OPENAI_API_KEY set and PK_RECORD_LIVE=1.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

_cassette: Any = None
_patched: Any = None


def _conversation(body: bytes | str | None) -> Any:
    try:
        b = json.loads(body or b"{}")
    except (TypeError, ValueError):
        return body
    tools = [t.get("function", {}).get("name") for t in b.get("tools", [])]
    return b.get("model"), b.get("messages"), tools


def same_conversation(r1: Any, r2: Any) -> None:
    assert _conversation(r1.body) == _conversation(r2.body), "a different conversation"


def _scrub(request: Any) -> Any:
    for h in ("authorization", "Authorization", "x-api-key", "x-goog-api-key"):
        if h in request.headers:
            request.headers[h] = "REDACTED"
    return request


def install(repo: Path, *, record: bool = False) -> None:
    """Start replaying (or recording) for the rest of this process."""
    global _cassette, _patched
    import vcr

    if not os.environ.get("OPENAI_API_KEY"):
        os.environ["OPENAI_API_KEY"] = "offline-replay"
    my_vcr = vcr.VCR(
        record_mode="new_episodes" if record else "none",
        match_on=["method", "host", "path", "conversation"],
        before_record_request=_scrub,
        decode_compressed_response=True,
    )
    my_vcr.register_matcher("conversation", same_conversation)
    _cassette = my_vcr.use_cassette(
        str(repo / "cassettes" / "notebooks.yaml"), allow_playback_repeats=True
    )
    _cassette.__enter__()
    if record and not os.environ.get("PK_RECORD_LIVE"):
        import httpx

        from providerkit_nb.transport import http as pk_http

        original = pk_http.HttpxSender.__init__

        def init(self: Any, client: Any = None, transport: Any = None) -> None:
            original(self, client, transport or httpx.MockTransport(constructed_model))

        pk_http.HttpxSender.__init__ = init  # type: ignore[method-assign]
        _patched = (pk_http.HttpxSender, original)


def uninstall() -> None:
    global _cassette, _patched
    if _cassette is not None:
        _cassette.__exit__(None, None, None)
        _cassette = None
    if _patched is not None:
        cls, original = _patched
        cls.__init__ = original
        _patched = None


# --------------------------------------------------------------------------- the stand-in


def _text(m: dict[str, Any]) -> str:
    c = m.get("content")
    if isinstance(c, list):
        return "".join(p.get("text", "") for p in c if isinstance(p, dict))
    return c or ""


def _frames(model: str, deltas: list[dict[str, Any]], finish: str, usage: dict[str, int]) -> str:
    base = {"id": "chatcmpl-constructed", "object": "chat.completion.chunk", "created": 1764633600, "model": model}
    out = []
    first = True
    for d in deltas:
        delta = {"role": "assistant", **d} if first else d
        first = False
        out.append({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    out.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    out.append({**base, "choices": [], "usage": usage})
    return "".join(f"data: {json.dumps(o)}\n\n" for o in out) + "data: [DONE]\n\n"


def constructed_model(request: Any) -> Any:
    """Deterministic replies: a user asking about a *.md file gets a read_file call when the
    tool is offered; a tool result or a note gets a one-line summary; anything else an echo."""
    import httpx

    body = json.loads(request.content)
    model = body.get("model", "gpt-4o-mini")
    messages = body.get("messages", [])
    tools = {t["function"]["name"] for t in body.get("tools", [])}
    last = messages[-1] if messages else {"role": "user", "content": ""}
    prompt = sum(len(json.dumps(m)) for m in messages) // 4
    digest = hashlib.sha1(json.dumps(messages, sort_keys=True).encode()).hexdigest()[:12]
    wanted = re.findall(r"[\w.-]+\.md", _text(last)) if last.get("role") == "user" else []
    if wanted and "read_file" in tools and not _text(last).startswith("[Result of the tool"):
        args = json.dumps({"path": wanted[0]})
        deltas = [
            {"tool_calls": [{"index": 0, "id": f"call_{digest}", "type": "function", "function": {"name": "read_file", "arguments": ""}}]},
            {"tool_calls": [{"index": 0, "function": {"arguments": args[: len(args) // 2]}}]},
            {"tool_calls": [{"index": 0, "function": {"arguments": args[len(args) // 2 :]}}]},
        ]
        sse = _frames(model, deltas, "tool_calls", {"prompt_tokens": prompt, "completion_tokens": 18, "total_tokens": prompt + 18})
    else:
        if last.get("role") == "tool" or _text(last).startswith("[Result of the tool"):
            first_line = _text(last).split("\n")[0][:80]
            answer = f"It says: {first_line}"
        else:
            answer = f"Noted: {_text(last)[:60]}"
        words = answer.split(" ")
        deltas = [{"content": w + (" " if i < len(words) - 1 else "")} for i, w in enumerate(words)]
        n = max(1, len(answer) // 4)
        sse = _frames(model, deltas, "stop", {"prompt_tokens": prompt, "completion_tokens": n, "total_tokens": prompt + n})
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=sse.encode())
