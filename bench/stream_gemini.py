"""The Gemini wire in the streaming benchmark (``python -m bench.stream``).

The stream is ``streamGenerateContent?alt=sse`` as Gemini sends it: one text part per frame
with cumulative ``usageMetadata``, CRLF framing, and a signature plus ``finishReason`` on the
last frame.

- floor: httpx ``iter_lines`` + ``json.loads`` of every ``data:`` line (no turn assembly);
- ours: ``GeminiProvider`` + ``collect_turn`` (SSE reader, parser, assembler);
- peer: the ``google-genai`` SDK's ``generate_content_stream`` over the same server.
"""

from __future__ import annotations

import json
from typing import Any

from bench.harness import Reader, WireBench

MODEL = "gemini-2.5-flash"
PATH = f"/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"
SIGNATURE = "CiIB0e2Kb6Syj1a961EfbWv4W5C8RgAA/hGleV9VYJtnJFh4"


def gemini_body(chunks: int) -> bytes:
    out = []
    for i in range(chunks):
        part: dict[str, Any] = {"text": f"token {i} "}
        cand: dict[str, Any] = {"content": {"parts": [part], "role": "model"}, "index": 0}
        if i == chunks - 1:
            part["thoughtSignature"] = SIGNATURE
            cand["finishReason"] = "STOP"
        frame = {
            "candidates": [cand],
            "usageMetadata": {"promptTokenCount": 34, "candidatesTokenCount": i + 1, "totalTokenCount": 47 + i,
                              "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 34}], "thoughtsTokenCount": 12},
            "modelVersion": MODEL,
            "responseId": "beHBaJfEMIi-qtsP3769-Q8",
        }
        out.append(b"data: " + json.dumps(frame, separators=(",", ":")).encode() + b"\r\n\r\n")
    return b"".join(out)


def gemini_floor(url: str) -> Reader:
    import httpx

    client = httpx.Client()
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}

    def run() -> int:
        n = 0
        with client.stream("POST", url + PATH, json=body, headers={"x-goog-api-key": "bench"}) as r:
            for line in r.iter_lines():
                if line.startswith("data:"):
                    json.loads(line[5:])
                    n += 1
        return n

    return run


def gemini_ours(url: str) -> Reader:
    import providerkit_nb as pk
    from providerkit_nb.providers.gemini import GeminiProvider

    p = GeminiProvider(model=MODEL, api_key="bench", base_url=url)
    history = [pk.UserMessage("hi")]

    def run() -> int:
        turn = pk.collect_turn(p.create_stream(history))
        m = turn.message
        assert turn.finish_reason == "stop" and m.content.startswith("token 0 token 1 ")
        assert m.reasoning_items.items[0]["signature"] == SIGNATURE
        assert turn.usage.output_tokens == turn.usage.reasoning_tokens + m.content.count("token")
        return len(m.content)

    return run


def gemini_sdk(url: str) -> Reader | None:
    try:
        from google import genai
        from google.genai import types
    except ImportError:
        return None
    client = genai.Client(api_key="bench", http_options=types.HttpOptions(base_url=url))

    def run() -> int:
        n = 0
        for resp in client.models.generate_content_stream(model=MODEL, contents="hi"):
            text = resp.text
            if text:
                n += len(text)
        return n

    return run


BENCH = WireBench(gemini_body, gemini_floor, gemini_ours, {"google-genai SDK generate_content_stream": gemini_sdk})
