"""The Anthropic Messages wire in the streaming benchmark (``python -m bench.stream``).

The stream (about 20,000 events): message_start, a signed thinking block, a long text block with
pings in it, a tool_use block streamed as input_json_delta fragments, message_delta,
message_stop, with Anthropic's trailing-space padding inside the JSON.

- floor: httpx ``iter_lines`` + ``json.loads`` of every ``data:`` line (no turn assembly);
- ours: ``AnthropicProvider`` + ``collect_turn`` (SSE reader, parser, assembler, signed blocks);
- peers: the ``anthropic`` SDK, both its raw event iterator (``messages.create(stream=True)``)
  and its accumulating ``messages.stream(...).get_final_message()``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from bench.harness import WireBench

MODEL = "claude-sonnet-4-5"
SIGNATURE = "EqQBCkYIBxgCKkBbench" + "A" * 300
HEAD = "token 0 token 1 "
PAD = "   "  # the API pads its JSON with spaces before the closing brace


def _frame(payload: dict[str, Any]) -> bytes:
    data = json.dumps(payload, separators=(",", ":"))
    return f"event: {payload['type']}\ndata: {data[:-1]}{PAD}}}\n\n".encode()


def anthropic_body(chunks: int) -> bytes:
    thinking, args = 200, 50
    text = max(1, chunks - thinking - args - 12)
    ev: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "msg_bench", "type": "message", "role": "assistant", "model": MODEL,
                                              "content": [], "stop_reason": None, "stop_sequence": None,
                                              "usage": {"input_tokens": 30, "cache_creation_input_tokens": 0,
                                                        "cache_read_input_tokens": 2000, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
    ]
    ev += [{"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": f"step {i} "}} for i in range(thinking)]
    ev += [
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": SIGNATURE}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
    ]
    for i in range(text):
        ev.append({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": f"token {i} "}})
        if i % 5000 == 0:
            ev.append({"type": "ping"})
    ev += [
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_bench", "name": "read_file", "input": {}}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": '{"path": "'}},
    ]
    ev += [{"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "ab"}} for _ in range(args)]
    ev += [
        {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": '"}'}},
        {"type": "content_block_stop", "index": 2},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": chunks}},
        {"type": "message_stop"},
    ]
    return b"".join(_frame(e) for e in ev)


def anthropic_floor(url: str) -> Callable[[], int]:
    import httpx

    client = httpx.Client()
    body = {"model": MODEL, "max_tokens": 8192, "messages": [{"role": "user", "content": "hi"}], "stream": True}

    def run() -> int:
        n = 0
        with client.stream("POST", f"{url}/v1/messages", json=body, headers={"x-api-key": "bench"}) as r:
            for line in r.iter_lines():
                if line.startswith("data:"):
                    json.loads(line[5:])
                    n += 1
        return n

    return run


def anthropic_ours(url: str) -> Callable[[], int]:
    import providerkit_nb as pk
    from providerkit_nb.providers.anthropic import AnthropicProvider

    p = AnthropicProvider(model=MODEL, api_key="bench", base_url=url)
    history = [pk.UserMessage("hi")]

    def run() -> int:
        turn = pk.collect_turn(p.create_stream(history))
        m = turn.message
        assert turn.finish_reason == "tool_calls" and m.content.startswith(HEAD)
        assert m.reasoning_items.items[0]["signature"] == SIGNATURE
        assert m.tool_calls[0].arguments.endswith('ab"}') and turn.usage.input_tokens == 2030
        return 1

    return run


def _sdk_client(url: str) -> Any:
    try:
        import anthropic
    except ImportError:
        return None
    return anthropic.Anthropic(api_key="bench", base_url=url, max_retries=0)


def anthropic_sdk_events(url: str) -> Callable[[], int] | None:
    client = _sdk_client(url)
    if client is None:
        return None

    def run() -> int:
        return sum(1 for _ in client.messages.create(model=MODEL, max_tokens=8192, messages=[{"role": "user", "content": "hi"}], stream=True))

    return run


def anthropic_sdk_final(url: str) -> Callable[[], int] | None:
    client = _sdk_client(url)
    if client is None:
        return None

    def run() -> int:
        with client.messages.stream(model=MODEL, max_tokens=8192, messages=[{"role": "user", "content": "hi"}]) as s:
            msg = s.get_final_message()
        assert msg.content[1].text.startswith(HEAD) and msg.content[0].signature == SIGNATURE
        return 1

    return run


BENCH = WireBench(anthropic_body, anthropic_floor, anthropic_ours,
                  {"anthropic SDK raw event iterator": anthropic_sdk_events,
                   "anthropic SDK messages.stream final message": anthropic_sdk_final})
