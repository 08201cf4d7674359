"""Streaming throughput of the Anthropic wire: ours vs the floor vs the ``anthropic`` SDK.

One local HTTP server on 127.0.0.1 answers every request with the same 20,000-event Messages
stream (message_start, a signed thinking block, a long text block with pings in it, a tool_use
block streamed as input_json_delta fragments, message_delta, message_stop, with Anthropic's
trailing-space padding). Timed, best of N:

- floor: httpx ``iter_lines`` + ``json.loads`` of every ``data:`` line (no turn assembly);
- ours: ``AnthropicProvider`` + ``collect_turn`` (SSE reader, parser, assembler, signed blocks);
- peer: the ``anthropic`` SDK, both its raw event iterator (``messages.create(stream=True)``)
  and its accumulating ``messages.stream(...).get_final_message()``.

Targets: ours at most 1.5x the floor, and faster than each SDK path.
Run: ``python -m bench.stream_anthropic`` (``--chunks N``, ``--repeat N``).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from bench.stream_gemini import _best, _Server

MODEL = "claude-sonnet-4-5"
SIGNATURE = "EqQBCkYIBxgCKkBbench" + "A" * 300
PAD = "   "  # the API pads its JSON with spaces before the closing brace


def _frame(payload: dict[str, Any]) -> bytes:
    data = json.dumps(payload, separators=(",", ":"))
    return f"event: {payload['type']}\ndata: {data[:-1]}{PAD}}}\n\n".encode()


def make_body(chunks: int) -> bytes:
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


def _floor(url: str, events: int) -> Callable[[], int]:
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
        assert n == events
        return n

    return run


def _ours(url: str, text_tail: str) -> Callable[[], int]:
    import providerkit_nb as pk
    from providerkit_nb.providers.anthropic import AnthropicProvider

    p = AnthropicProvider(model=MODEL, api_key="bench", base_url=url)
    history = [pk.UserMessage("hi")]

    def run() -> int:
        turn = pk.collect_turn(p.create_stream(history))
        m = turn.message
        assert turn.finish_reason == "tool_calls" and m.content.endswith(text_tail)
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


def _sdk_events(url: str, events: int) -> Callable[[], int] | None:
    client = _sdk_client(url)
    if client is None:
        return None

    def run() -> int:
        n = sum(1 for _ in client.messages.create(model=MODEL, max_tokens=8192, messages=[{"role": "user", "content": "hi"}], stream=True))
        assert n >= events - 10  # the SDK hides pings
        return n

    return run


def _sdk_final(url: str, text_tail: str) -> Callable[[], int] | None:
    client = _sdk_client(url)
    if client is None:
        return None

    def run() -> int:
        with client.messages.stream(model=MODEL, max_tokens=8192, messages=[{"role": "user", "content": "hi"}]) as s:
            msg = s.get_final_message()
        assert msg.content[1].text.endswith(text_tail) and msg.content[0].signature == SIGNATURE
        return 1

    return run


def run(chunks: int = 20000, repeat: int = 5) -> list[dict[str, Any]]:
    """Rows ``{name, ours, floor_or_peer, ratio, target, ok}`` (seconds, best of ``repeat``)."""
    body = make_body(chunks)
    events = body.count(b"\ndata:") + body.startswith(b"data:")
    text = max(1, chunks - 262)
    tail = f"token {text - 1} "
    rows: list[dict[str, Any]] = []
    with _Server(body) as srv:
        ours, floor = _best([_ours(srv.url, tail), _floor(srv.url, events)], repeat)
        rows.append({"name": f"anthropic stream {events} events vs floor (httpx iter_lines + json.loads)",
                     "ours": ours, "floor_or_peer": floor, "ratio": ours / floor, "target": "<= 1.5",
                     "ok": ours / floor <= 1.5})
        for label, make in (("anthropic SDK raw events", _sdk_events(srv.url, events)),
                            ("anthropic SDK messages.stream final message", _sdk_final(srv.url, tail))):
            if make is None:
                rows.append({"name": f"anthropic stream vs {label}", "ours": ours, "floor_or_peer": None,
                             "ratio": None, "target": "< 1.0", "ok": None})
                continue
            (peer,) = _best([make], max(1, repeat // 2))  # the SDK is slow: fewer rounds
            rows.append({"name": f"anthropic stream {events} events vs {label}", "ours": ours, "floor_or_peer": peer,
                         "ratio": ours / peer, "target": "< 1.0", "ok": ours < peer})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    for r in run(a.chunks, a.repeat):
        peer = "n/a (anthropic not installed)" if r["floor_or_peer"] is None else f"{r['floor_or_peer']:.3f}s"
        ratio = "n/a" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        print(f"{r['name']}: ours {r['ours']:.3f}s, other {peer}, ratio {ratio} (target {r['target']}) "
              f"{'OK' if r['ok'] else ('--' if r['ok'] is None else 'MISSED')}")


if __name__ == "__main__":
    main()
