"""Our overhead per token against a real model: llama-cpp-python's server with SmolLM2-135M (the
``local`` extra), the same server for every contender, in the same run.

Each call asks for exactly ``tokens`` tokens (``max_tokens`` and the server's ``min_tokens``, at
temperature 0, so every contender reads the same stream of one text delta per token). What is
compared is this process's CPU time per token (the server's work is in its own process and not
counted), interleaved rounds, medians:

- floor: httpx ``iter_lines`` + ``json.loads`` of every ``data:`` line;
- ours: ``pk.openai(base_url=...)`` (what ``providerkit_nb.local`` hands back) + ``collect_turn``;
- peer: the ``openai`` SDK's chunk iterator on the same server.

Wall time per token is shown too (information only): it is the model's speed, nearly all of it.
"""

from __future__ import annotations

import sys
from typing import Any

from bench.harness import HOW_BENCH, Reader, interleave, row
from bench.stream_chat import chat_floor

HISTORY = [{"role": "user", "content": "Tell me a long story about a lighthouse."}]
HOW_LOCAL = "pip install -e '.[local]' (make local; compiles llama-cpp-python, about 5-10 minutes)"


def _body(tokens: int) -> dict[str, Any]:
    return {"max_tokens": tokens, "temperature": 0.0, "extra_body": {"min_tokens": tokens}}


def floor(base_url: str, tokens: int) -> Reader:
    b = _body(tokens)
    body = {"model": "m", "messages": HISTORY, "stream": True, "max_tokens": b["max_tokens"],
            "temperature": b["temperature"], **b["extra_body"]}
    return chat_floor(base_url.removesuffix("/v1"), body)


def ours(provider: Any, tokens: int) -> Reader:
    import providerkit_nb as pk

    def run() -> int:
        turn = pk.collect_turn(provider.create_stream(HISTORY, **_body(tokens)))
        assert turn.message.content and turn.finish_reason in ("length", "stop")
        return len(turn.message.content)

    return run


def sdk(base_url: str, tokens: int) -> Reader | None:
    try:
        import openai
    except ImportError:
        return None
    client = openai.OpenAI(api_key="local-no-key", base_url=base_url, max_retries=0)

    def run() -> int:
        n = 0
        for chunk in client.chat.completions.create(model="m", messages=HISTORY, stream=True, **_body(tokens)):
            if chunk.choices and chunk.choices[0].delta.content:
                n += len(chunk.choices[0].delta.content)
        return n

    return run


def _tokens_streamed(base_url: str, tokens: int) -> int:
    """How many text frames one call really streams (the per-token divisor)."""
    return floor(base_url, tokens)() - 2  # less the role frame and the finish frame


def run(rounds: int = 7, tokens: int = 200) -> list[dict[str, Any]]:
    from providerkit_nb import local

    reason = local.missing()
    if reason:
        return [row(f"local model: not run ({reason})", None, None, note=HOW_LOCAL)]
    with local.start() as server:
        provider = server.provider()
        peer = sdk(server.base_url, tokens)
        contenders = {"floor": floor(server.base_url, tokens), "ours": ours(provider, tokens)}
        if peer is not None:
            contenders["sdk"] = peer
        n = _tokens_streamed(server.base_url, tokens)
        t = interleave(contenders, rounds)
    per = {k: v.cpu / n for k, v in t.items()}
    label = f"local SmolLM2-135M, {n} tokens streamed"
    rows = [
        row(f"{label}: client CPU per token, ours vs httpx+json floor", per["ours"], per["floor"]),
    ]
    if "sdk" in per:
        rows.append(row(f"{label}: client CPU per token, ours vs openai SDK", per["ours"], per["sdk"],
                        target="<= 1.5x the SDK", limit=1.5))
    else:
        rows.append(row(f"{label}: openai SDK not installed", None, None, note=HOW_BENCH))
    rows.append(row(f"{label}: wall per token (the model's speed), ours vs floor",
                    t["ours"].wall / n, t["floor"].wall / n))
    return rows


if __name__ == "__main__":
    from bench.harness import cli

    sys.exit(cli(run, "python -m bench.local_model", sys.argv[1:], rounds=7, tokens=200))
