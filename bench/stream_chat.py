"""The OpenAI Chat Completions wire in the streaming benchmark (``python -m bench.stream``).

The stream is what the API sends: a role chunk, text deltas (with the random ``obfuscation``
field), one tool call in argument fragments, the finish chunk, the usage chunk, ``[DONE]``.

- floor: httpx ``iter_lines`` + ``json.loads`` of every ``data:`` line, nothing else;
- ours: ``OpenAIChatProvider`` + ``collect_turn`` (SSE reader, parser, assembler);
- peer: the ``openai`` SDK's chunk iterator (``chat.completions.create(stream=True)``), reading
  the text of every chunk.
"""

from __future__ import annotations

import json
from typing import Any

from bench.harness import Reader, WireBench

MODEL = "gpt-4o-mini"
HISTORY = [{"role": "user", "content": "Tell me a long story, then read README.md."}]
ARGS = 100


def chat_body(chunks: int, delta: str = "token {i} ") -> bytes:
    """About ``chunks`` frames; text delta ``i`` is ``delta.format(i=i)``."""
    head = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1767225600,
            "model": "gpt-4o-mini-2024-07-18", "service_tier": "default", "system_fingerprint": "fp_bench"}

    def frame(d: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> bytes:
        f = dict(head)
        f["choices"] = [] if d is None else [{"index": 0, "delta": d, "logprobs": None, "finish_reason": finish}]
        f.update(extra)
        if "usage" not in extra:
            f["usage"] = None
        return b"data: " + json.dumps(f, separators=(",", ":")).encode() + b"\n\n"

    text = max(1, chunks - ARGS - 4)
    out = [frame({"role": "assistant", "content": "", "refusal": None}, obfuscation="Xy")]
    out += [frame({"content": delta.format(i=i)}, obfuscation="AbCdEfGh"[: i % 8]) for i in range(text)]
    out.append(frame({"tool_calls": [{"index": 0, "id": "call_bench", "type": "function",
                                      "function": {"name": "read_file", "arguments": ""}}]}))
    out += [frame({"tool_calls": [{"index": 0, "function": {"arguments": '{"path": "' if i == 0 else ("ab" if i < ARGS - 1 else '"}')}}]})
            for i in range(ARGS)]
    out.append(frame({}, "tool_calls"))
    out.append(frame(None, usage={"prompt_tokens": 30, "completion_tokens": chunks, "total_tokens": 30 + chunks,
                                  "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                                  "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0}}))
    out.append(b"data: [DONE]\n\n")
    return b"".join(out)


def chat_floor(url: str, body: dict[str, Any] | None = None) -> Reader:
    """``body``: the request (default: this benchmark's); the local-model benchmark asks for more."""
    import httpx

    client = httpx.Client(timeout=120)
    body = body or {"model": MODEL, "messages": HISTORY, "stream": True}

    def run() -> int:
        n = 0
        with client.stream("POST", f"{url}/v1/chat/completions", json=body, headers={"authorization": "Bearer bench"}) as r:
            for line in r.iter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    json.loads(line[6:])
                    n += 1
        return n

    return run


def chat_ours(url: str) -> Reader:
    import providerkit_nb as pk
    from providerkit_nb.providers.openai_chat import OpenAIChatProvider

    p = OpenAIChatProvider(model=MODEL, api_key="bench", base_url=f"{url}/v1")

    def run() -> int:
        turn = pk.collect_turn(p.create_stream(HISTORY))
        assert turn.finish_reason == "tool_calls" and turn.message.tool_calls
        assert turn.message.content.startswith("token 0 token 1 ")
        return len(turn.message.content)

    return run


def chat_sdk(url: str) -> Reader | None:
    try:
        import openai
    except ImportError:
        return None
    client = openai.OpenAI(api_key="bench", base_url=f"{url}/v1", max_retries=0)

    def run() -> int:
        n = 0
        stream = client.chat.completions.create(model=MODEL, messages=HISTORY, stream=True)
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                n += len(chunk.choices[0].delta.content)
        return n

    return run


BENCH = WireBench(chat_body, chat_floor, chat_ours, {"openai SDK chunk iterator": chat_sdk})
