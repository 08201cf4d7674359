"""Offline replay for the example notebooks (and the recorder that made their cassette).

Replay: ``providerkit_nb.testing.offline.replay`` plays cassettes/notebooks.yaml back (matched by the
conversation a request carries, not its session id).

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

_patched: Any = None


def install(repo: Path, *, record: bool = False) -> None:
    """Start replaying (or recording, answered by ``constructed_model``) for this process."""
    global _patched
    from providerkit_nb.testing import offline

    offline.replay(repo / "cassettes" / "notebooks.yaml", record=record)
    if record and not os.environ.get("PK_RECORD_LIVE"):
        _patched = use_constructed_model()


def use_constructed_model() -> Any:
    """Make every default httpx sender answer through ``constructed_model`` (recording only)."""
    import httpx

    from providerkit_nb.transport import http as pk_http

    original = pk_http.HttpxSender.__init__

    def init(self: Any, client: Any = None, transport: Any = None) -> None:
        original(self, client, transport or httpx.MockTransport(constructed_model))

    pk_http.HttpxSender.__init__ = init  # type: ignore[method-assign]
    return pk_http.HttpxSender, original


def uninstall() -> None:
    global _patched
    from providerkit_nb.testing import offline

    offline.stop()
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


def _calls_made(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    made = []
    for m in messages:
        for c in m.get("tool_calls") or []:
            fn = c.get("function", {})
            try:
                path = json.loads(fn.get("arguments") or "{}").get("path", "")
            except ValueError:
                path = ""
            made.append((fn.get("name", ""), path))
    return made


def _call(model: str, digest: str, name: str, args: dict[str, Any], prompt: int) -> str:
    raw = json.dumps(args)
    deltas = [
        {"tool_calls": [{"index": 0, "id": f"call_{digest}", "type": "function", "function": {"name": name, "arguments": ""}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": raw[: len(raw) // 2]}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": raw[len(raw) // 2 :]}}]},
    ]
    return _frames(model, deltas, "tool_calls", {"prompt_tokens": prompt, "completion_tokens": 18, "total_tokens": prompt + 18})


def _json_for(schema: Any, source: str, wanted: list[str]) -> Any:
    """A deterministic JSON answer for ``response_format`` (constructed, like every reply here):
    strings from the file asked about and the first line read, integers count its words."""
    props = (schema or {}).get("properties") if isinstance(schema, dict) else None
    first = source.split("\n")[0].lstrip("# ").strip()
    if not isinstance(props, dict):
        return {"answer": first[:60]}
    out: dict[str, Any] = {}
    for name, spec in props.items():
        kind = spec.get("type") if isinstance(spec, dict) else None
        if kind == "string":
            out[name] = wanted[0] if ("file" in name or "path" in name) and wanted else first[:80]
        elif kind in ("integer", "number"):
            out[name] = len(source.split())
        elif kind == "boolean":
            out[name] = bool(source)
        else:
            out[name] = None
    return out


def constructed_model(request: Any) -> Any:
    """Deterministic replies. The .md files named in the latest user question are read (when
    read_file is offered), then the second one is written with a summary (when write_file is
    offered); a result or a note gets a one-line answer; anything else an echo."""
    import httpx

    body = json.loads(request.content)
    model = body.get("model", "gpt-4o-mini")
    messages = body.get("messages", [])
    tools = {t["function"]["name"] for t in body.get("tools", [])}
    last = messages[-1] if messages else {"role": "user", "content": ""}
    prompt = sum(len(json.dumps(m)) for m in messages) // 4
    digest = hashlib.sha1(json.dumps(messages, sort_keys=True).encode()).hexdigest()[:12]
    users = [m for m in messages if m.get("role") == "user" and not _text(m).startswith("[Result of the tool")]
    question = _text(users[-1]) if users else ""
    since = messages[messages.index(users[-1]) :] if users else messages
    wanted = re.findall(r"[\w.-]+\.md", question)
    made = _calls_made(since)
    sse = None
    if wanted and "read_file" in tools and ("read_file", wanted[0]) not in made:
        sse = _call(model, digest, "read_file", {"path": wanted[0]}, prompt)
    elif len(wanted) > 1 and "write_file" in tools and ("write_file", wanted[1]) not in made:
        results = [_text(m) for m in since if m.get("role") == "tool"]
        summary = results[-1].split("\n")[0][:60] if results else ""
        sse = _call(model, digest, "write_file", {"path": wanted[1], "content": f"Summary: {summary}"}, prompt)
    if sse is None:
        text = _text(last)
        rf = body.get("response_format") or {}
        if rf:  # structured output: the JSON object the schema asks for
            source = text if last.get("role") == "tool" else question
            answer = json.dumps(_json_for((rf.get("json_schema") or {}).get("schema"), source, wanted))
        elif last.get("role") == "tool" and text.startswith("This call was interrupted"):
            answer = "That write was interrupted and may have partly run, so I will check the file before writing it again."
        elif last.get("role") == "tool" or text.startswith("[Result of the tool"):
            answer = f"It says: {text.split(chr(10))[0][:80]}"
        else:
            answer = f"Noted: {text[:60]}"
        words = answer.split(" ")
        deltas = [{"content": w + (" " if i < len(words) - 1 else "")} for i, w in enumerate(words)]
        n = max(1, len(answer) // 4)
        sse = _frames(model, deltas, "stop", {"prompt_tokens": prompt, "completion_tokens": n, "total_tokens": prompt + n})
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=sse.encode())
