"""Streaming throughput of the OpenAI Responses wire: ours vs the floor vs the ``openai`` SDK.

One local HTTP server on 127.0.0.1 answers every request with the same ~20,000-event Responses
stream, written the way the API writes it (``event:`` lines, ``sequence_number``, ``obfuscation``
and ``logprobs`` on every delta): a reasoning item with streamed summary text and its encrypted
content, a long message streamed as ``output_text.delta``s with its ``.done`` snapshots, a
function call streamed as argument deltas, and ``response.completed`` with usage. Its row in
``python -m bench.stream`` (``--wire openai_responses`` for this wire alone):

- floor: httpx ``iter_lines`` + ``json.loads`` of every ``data:`` line (no turn assembly);
- ours: ``ResponsesProvider`` + ``collect_turn`` (SSE reader, parser, assembler, reasoning items);
- peers: the ``openai`` SDK's event iterator and its accumulating
  ``responses.stream(...).get_final_response()``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from bench.harness import WireBench

MODEL = "gpt-5.5"
ENCRYPTED = "gAAAAABbench" + "x" * 1500
THINKING, ARGS = 200, 50


def make_body(chunks: int) -> tuple[bytes, str, str]:
    """(body, the full text, the full arguments) for about ``chunks`` events."""
    text_n = max(1, chunks - THINKING - ARGS - 16)
    seq = 0
    out: list[bytes] = []

    def emit(ev: dict[str, Any]) -> None:
        nonlocal seq
        ev["sequence_number"] = seq
        seq += 1
        out.append(f"event: {ev['type']}\ndata: {json.dumps(ev, separators=(',', ':'))}\n\n".encode())

    resp = {"id": "resp_bench", "object": "response", "created_at": 1, "status": "in_progress", "model": MODEL,
            "output": [], "usage": None}
    emit({"type": "response.created", "response": resp})
    emit({"type": "response.in_progress", "response": resp})
    rs = "rs_bench"
    emit({"type": "response.output_item.added", "output_index": 0, "item": {"id": rs, "type": "reasoning", "summary": [],
                                                                             "encrypted_content": ENCRYPTED}})
    summary = []
    for i in range(THINKING):
        d = f"step {i} "
        summary.append(d)
        emit({"type": "response.reasoning_summary_text.delta", "item_id": rs, "output_index": 0, "summary_index": 0,
              "delta": d, "obfuscation": "abcd"})
    s_text = "".join(summary)
    emit({"type": "response.reasoning_summary_text.done", "item_id": rs, "output_index": 0, "summary_index": 0, "text": s_text})
    emit({"type": "response.output_item.done", "output_index": 0,
          "item": {"id": rs, "type": "reasoning", "summary": [{"type": "summary_text", "text": s_text}], "encrypted_content": ENCRYPTED}})
    msg = "msg_bench"
    emit({"type": "response.output_item.added", "output_index": 1,
          "item": {"id": msg, "type": "message", "status": "in_progress", "content": [], "role": "assistant"}})
    emit({"type": "response.content_part.added", "item_id": msg, "output_index": 1, "content_index": 0,
          "part": {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}})
    pieces = []
    for i in range(text_n):
        d = f"token {i} "
        pieces.append(d)
        emit({"type": "response.output_text.delta", "item_id": msg, "output_index": 1, "content_index": 0, "delta": d,
              "logprobs": [], "obfuscation": "Qx3p"})
    text = "".join(pieces)
    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": text}
    emit({"type": "response.output_text.done", "item_id": msg, "output_index": 1, "content_index": 0, "text": text, "logprobs": []})
    emit({"type": "response.content_part.done", "item_id": msg, "output_index": 1, "content_index": 0, "part": part})
    emit({"type": "response.output_item.done", "output_index": 1,
          "item": {"id": msg, "type": "message", "status": "completed", "content": [part], "role": "assistant"}})
    fc = {"id": "fc_bench", "type": "function_call", "status": "in_progress", "arguments": "", "call_id": "call_bench",
          "name": "read_file"}
    emit({"type": "response.output_item.added", "output_index": 2, "item": fc})
    args = ['{"path": "'] + ["ab"] * ARGS + ['"}']
    for a in args:
        emit({"type": "response.function_call_arguments.delta", "item_id": "fc_bench", "output_index": 2, "delta": a,
              "obfuscation": "zz"})
    full = "".join(args)
    emit({"type": "response.function_call_arguments.done", "item_id": "fc_bench", "output_index": 2, "arguments": full})
    emit({"type": "response.output_item.done", "output_index": 2, "item": {**fc, "status": "completed", "arguments": full}})
    output = [{"id": rs, "type": "reasoning", "summary": [{"type": "summary_text", "text": s_text}], "encrypted_content": ENCRYPTED},
              {"id": msg, "type": "message", "status": "completed", "content": [part], "role": "assistant"},
              {**fc, "status": "completed", "arguments": full}]
    emit({"type": "response.completed", "response": {**resp, "status": "completed", "output": output, "usage": {
        "input_tokens": 2030, "input_tokens_details": {"cached_tokens": 2000}, "output_tokens": chunks,
        "output_tokens_details": {"reasoning_tokens": THINKING}, "total_tokens": 2030 + chunks}}})
    return b"".join(out), text, full


def responses_body(chunks: int) -> bytes:
    return make_body(chunks)[0]


def responses_floor(url: str) -> Callable[[], int]:
    import httpx

    client = httpx.Client()
    body = {"model": MODEL, "input": "hi", "stream": True}

    def run() -> int:
        n = 0
        with client.stream("POST", f"{url}/v1/responses", json=body, headers={"authorization": "Bearer bench"}) as r:
            for line in r.iter_lines():
                if line.startswith("data:"):
                    json.loads(line[5:])
                    n += 1
        return n

    return run


def responses_ours(url: str) -> Callable[[], int]:
    import providerkit_nb as pk
    from providerkit_nb.providers.openai_responses import ResponsesProvider

    p = ResponsesProvider(model=MODEL, api_key="bench", base_url=f"{url}/v1")
    history = [pk.UserMessage("hi")]

    def run() -> int:
        turn = pk.collect_turn(p.create_stream(history))
        m = turn.message
        assert turn.finish_reason == "tool_calls" and m.content.startswith("token 0 token 1 ")
        assert m.reasoning_items.items[0]["encrypted_content"] == ENCRYPTED
        assert m.tool_calls[0].id == "call_bench" and m.tool_calls[0].arguments.endswith('ab"}')
        assert turn.usage.cached_input_tokens == 2000
        return len(m.content)

    return run


def responses_sdk(url: str) -> Callable[[], int] | None:
    """The SDK's accumulating reader (``responses.stream(...).get_final_response()``), which
    builds the same whole response our collect_turn builds."""
    try:
        import openai
    except ImportError:
        return None
    client = openai.OpenAI(api_key="bench", base_url=f"{url}/v1", max_retries=0)

    def run() -> int:
        with client.responses.stream(model=MODEL, input="hi") as s:
            final = s.get_final_response()
        return len(final.output_text)

    return run


def responses_sdk_events(url: str) -> Callable[[], int] | None:
    """The SDK's plain event iterator (``responses.create(stream=True)``): typed events, no
    accumulation, the least the SDK does."""
    try:
        import openai
    except ImportError:
        return None
    client = openai.OpenAI(api_key="bench", base_url=f"{url}/v1", max_retries=0)

    def run() -> int:
        return sum(1 for _ in client.responses.create(model=MODEL, input="hi", stream=True))

    return run


BENCH = WireBench(responses_body, responses_floor, responses_ours,
                  {"openai SDK responses event iterator": responses_sdk_events,
                   "openai SDK responses.stream final response": responses_sdk})
