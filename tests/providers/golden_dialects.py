"""One logical turn written by hand as raw bytes in each wire's own streaming dialect.

The turn: reasoning "Let me think.", text "Hello" + " there", one call search {"q":"cats"}
(id ``call_cats``), usage 1050 input of which 900 cached, 12 output of which 4 reasoning,
finish tool_calls, answered by model ``golden-1``. Each wire states that usage its own way, and
every spelling below must come out as the same canonical usage:

- OpenAI Chat: ``prompt_tokens`` 1050 already counts ``prompt_tokens_details.cached_tokens`` 900;
  ``completion_tokens`` 12 already counts ``completion_tokens_details.reasoning_tokens`` 4.
- Anthropic: ``input_tokens`` is only the fresh part (150); cache reads (900) and cache writes (0)
  are reported beside it, so input = 150 + 900 + 0. ``output_tokens`` 12 (cumulative, restated on
  message_delta) counts thinking, reported in ``output_tokens_details.thinking_tokens`` 4.
- Gemini: ``promptTokenCount`` 1050 counts ``cachedContentTokenCount`` 900; thoughts are billed as
  output but reported outside the candidates, so output = candidatesTokenCount 8 +
  thoughtsTokenCount 4.
- Responses: ``input_tokens`` 1050 counts ``input_tokens_details.cached_tokens`` 900;
  ``output_tokens`` 12 counts ``output_tokens_details.reasoning_tokens`` 4.

Framing follows what real streams look like: Chat here with CRLF line ends and ``[DONE]``,
Anthropic and Responses with ``event:`` lines (Anthropic with a ``ping``), Gemini SSE with CRLF.
Signed state is each provider's own and differs by design: an Anthropic thinking signature, a
Gemini ``thoughtSignature`` on the call, a Responses encrypted reasoning item.

Each dialect also has the error shapes the golden tests need: a throttle inside a 200 stream
(after "Hello there" arrived), a 429 body, and a 400 context-length body.
"""

from __future__ import annotations

__all__ = [
    "MODEL",
    "CALL_ID",
    "ANTHROPIC_SIGNATURE",
    "GEMINI_CALL_SIGNATURE",
    "RESPONSES_REASONING_ITEM",
    "DIALECTS",
    "frames",
]

MODEL = "golden-1"
CALL_ID = "call_cats"
ANTHROPIC_SIGNATURE = "Z29sZGVuIGFudGhyb3BpYyB0aGlua2luZyBzaWduYXR1cmU="
GEMINI_CALL_SIGNATURE = "Z29sZGVuIGdlbWluaSBjYWxsIHNpZ25hdHVyZQ=="
RESPONSES_ENCRYPTED = "Z29sZGVuIHJlc3BvbnNlcyBlbmNyeXB0ZWQgcmVhc29uaW5n"
# the reasoning item exactly as the output_item.done frame below states it
RESPONSES_REASONING_ITEM = {
    "id": "rs_g1",
    "type": "reasoning",
    "encrypted_content": RESPONSES_ENCRYPTED,
    "summary": [{"type": "summary_text", "text": "Let me think."}],
}


def frames(sep: bytes, *parts: bytes) -> bytes:
    """Frames joined and ended by ``sep`` (the blank-line separator of that dialect)."""
    return b"".join(p + sep for p in parts)


# --------------------------------------------------------------------------- OpenAI Chat (CRLF)

_C = b"\r\n\r\n"
_CHAT_HEAD = (
    b'data: {"id":"chatcmpl-g1","object":"chat.completion.chunk","created":1760000000,"model":"golden-1",'
    b'"choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"Let me think."},'
    b'"finish_reason":null}]}',
    b'data: {"id":"chatcmpl-g1","object":"chat.completion.chunk","created":1760000000,"model":"golden-1",'
    b'"choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}]}',
    b'data: {"id":"chatcmpl-g1","object":"chat.completion.chunk","created":1760000000,"model":"golden-1",'
    b'"choices":[{"index":0,"delta":{"content":" there"},"finish_reason":null}]}',
)
_CHAT_TAIL = (
    b'data: {"id":"chatcmpl-g1","object":"chat.completion.chunk","created":1760000000,"model":"golden-1",'
    b'"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_cats","type":"function",'
    b'"function":{"name":"search","arguments":""}}]},"finish_reason":null}]}',
    b'data: {"id":"chatcmpl-g1","object":"chat.completion.chunk","created":1760000000,"model":"golden-1",'
    b'"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"q\\":"}}]},'
    b'"finish_reason":null}]}',
    b'data: {"id":"chatcmpl-g1","object":"chat.completion.chunk","created":1760000000,"model":"golden-1",'
    b'"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\\"cats\\"}"}}]},'
    b'"finish_reason":null}]}',
    b'data: {"id":"chatcmpl-g1","object":"chat.completion.chunk","created":1760000000,"model":"golden-1",'
    b'"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}',
    b'data: {"id":"chatcmpl-g1","object":"chat.completion.chunk","created":1760000000,"model":"golden-1",'
    b'"choices":[],"usage":{"prompt_tokens":1050,"completion_tokens":12,"total_tokens":1062,'
    b'"prompt_tokens_details":{"cached_tokens":900},"completion_tokens_details":{"reasoning_tokens":4}}}',
    b"data: [DONE]",
)
CHAT = {
    "content_type": "text/event-stream",
    "turn": frames(_C, *_CHAT_HEAD, *_CHAT_TAIL),
    # an OpenAI-compatible gateway reports a throttle as an error object inside the stream
    "throttle": frames(
        _C,
        *_CHAT_HEAD,
        b'data: {"error":{"message":"Rate limit exceeded: 20 requests per minute. Slow down.","code":429}}',
    ),
    "throttle_words": "Rate limit exceeded: 20 requests per minute",
    "rate_body": (
        b'{"error":{"message":"Rate limit reached for gpt-5-mini in organization org-golden on requests per min '
        b'(RPM): Limit 500, Used 500, Requested 1.","type":"requests","param":null,"code":"rate_limit_exceeded"}}'
    ),
    "context_body": (
        b'{"error":{"message":"This model\'s maximum context length is 128000 tokens. However, your messages '
        b'resulted in 130532 tokens. Please reduce the length of the messages.","type":"invalid_request_error",'
        b'"param":"messages","code":"context_length_exceeded"}}'
    ),
}

# --------------------------------------------------------------------------- Anthropic

_A = b"\n\n"
_ANTHROPIC_HEAD = (
    b"event: message_start\n"
    b'data: {"type":"message_start","message":{"id":"msg_g1","type":"message","role":"assistant",'
    b'"model":"golden-1","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":150,'
    b'"cache_creation_input_tokens":0,"cache_read_input_tokens":900,"output_tokens":1}}}',
    b"event: content_block_start\n"
    b'data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}',
    b"event: ping\n"
    b'data: {"type": "ping"}',
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think."}}',
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta",'
    b'"signature":"Z29sZGVuIGFudGhyb3BpYyB0aGlua2luZyBzaWduYXR1cmU="}}',
    b"event: content_block_stop\n"
    b'data: {"type":"content_block_stop","index":0}',
    b"event: content_block_start\n"
    b'data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}',
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hello"}}',
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" there"}}',
)
_ANTHROPIC_TAIL = (
    b"event: content_block_stop\n"
    b'data: {"type":"content_block_stop","index":1}',
    b"event: content_block_start\n"
    b'data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"call_cats",'
    b'"name":"search","input":{}}}',
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}',
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\\"q\\":"}}',
    b"event: ping\n"
    b'data: {"type": "ping"}',
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\\"cats\\"}"}}',
    b"event: content_block_stop\n"
    b'data: {"type":"content_block_stop","index":2}',
    b"event: message_delta\n"
    b'data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},'
    b'"usage":{"output_tokens":12,"output_tokens_details":{"thinking_tokens":4}}}',
    b"event: message_stop\n"
    b'data: {"type":"message_stop"}',
)
ANTHROPIC = {
    "content_type": "text/event-stream",
    "turn": frames(_A, *_ANTHROPIC_HEAD, *_ANTHROPIC_TAIL),
    "throttle": frames(
        _A,
        *_ANTHROPIC_HEAD,
        b"event: error\n"
        b'data: {"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has '
        b'exceeded your per-minute rate limit"}}',
    ),
    "throttle_words": "exceeded your per-minute rate limit",
    "rate_body": (
        b'{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate '
        b'limit for your organization of 50 requests per minute."}}'
    ),
    "context_body": (
        b'{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 215000 tokens '
        b'> 200000 maximum"}}'
    ),
}

# --------------------------------------------------------------------------- Gemini (SSE, CRLF)

_G = b"\r\n\r\n"
_GEMINI_HEAD = (
    b'data: {"candidates": [{"content": {"parts": [{"text": "Let me think.","thought": true}],"role": "model"},'
    b'"index": 0}],"usageMetadata": {"promptTokenCount": 1050,"totalTokenCount": 1050},'
    b'"modelVersion": "golden-1","responseId": "g1"}',
    b'data: {"candidates": [{"content": {"parts": [{"text": "Hello"}],"role": "model"},"index": 0}],'
    b'"usageMetadata": {"promptTokenCount": 1050,"totalTokenCount": 1050},"modelVersion": "golden-1","responseId": "g1"}',
    b'data: {"candidates": [{"content": {"parts": [{"text": " there"}],"role": "model"},"index": 0}],'
    b'"usageMetadata": {"promptTokenCount": 1050,"totalTokenCount": 1050},"modelVersion": "golden-1","responseId": "g1"}',
)
_GEMINI_TAIL = (
    b'data: {"candidates": [{"content": {"parts": [{"functionCall": {"id": "call_cats","name": "search",'
    b'"args": {"q": "cats"}},"thoughtSignature": "Z29sZGVuIGdlbWluaSBjYWxsIHNpZ25hdHVyZQ=="}],"role": "model"},'
    b'"index": 0}],"usageMetadata": {"promptTokenCount": 1050,"totalTokenCount": 1050},'
    b'"modelVersion": "golden-1","responseId": "g1"}',
    # STOP arrives on a later chunk than the call: the turn still finishes as tool_calls
    b'data: {"candidates": [{"content": {"parts": [{"text": ""}],"role": "model"},"finishReason": "STOP",'
    b'"index": 0}],"usageMetadata": {"promptTokenCount": 1050,"cachedContentTokenCount": 900,'
    b'"candidatesTokenCount": 8,"thoughtsTokenCount": 4,"totalTokenCount": 1062},'
    b'"modelVersion": "golden-1","responseId": "g1"}',
)
GEMINI = {
    "content_type": "text/event-stream",
    "turn": frames(_G, *_GEMINI_HEAD, *_GEMINI_TAIL),
    # Gemini appends its google.rpc.Status as bare JSON, outside SSE framing
    "throttle": frames(_G, *_GEMINI_HEAD)
    + b'{\n  "error": {\n    "code": 429,\n    "message": "Resource has been exhausted (e.g. check quota).",\n'
    b'    "status": "RESOURCE_EXHAUSTED"\n  }\n}\n',
    "throttle_words": "Resource has been exhausted",
    "rate_body": (
        b'{\n  "error": {\n    "code": 429,\n    "message": "Resource has been exhausted (e.g. check quota).",\n'
        b'    "status": "RESOURCE_EXHAUSTED"\n  }\n}\n'
    ),
    "context_body": (
        b'{\n  "error": {\n    "code": 400,\n    "message": "The input token count (1196265) exceeds the maximum '
        b'number of tokens allowed (1048576).",\n    "status": "INVALID_ARGUMENT"\n  }\n}\n'
    ),
}

# --------------------------------------------------------------------------- OpenAI Responses

_R = b"\n\n"
_RESPONSES_HEAD = (
    b"event: response.created\n"
    b'data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_g1","object":"response",'
    b'"status":"in_progress","model":"golden-1","output":[],"usage":null}}',
    b"event: response.in_progress\n"
    b'data: {"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_g1","object":"response",'
    b'"status":"in_progress","model":"golden-1","output":[],"usage":null}}',
    b"event: response.output_item.added\n"
    b'data: {"type":"response.output_item.added","sequence_number":2,"output_index":0,'
    b'"item":{"id":"rs_g1","type":"reasoning","summary":[]}}',
    b"event: response.reasoning_summary_part.added\n"
    b'data: {"type":"response.reasoning_summary_part.added","sequence_number":3,"item_id":"rs_g1",'
    b'"output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}}',
    b"event: response.reasoning_summary_text.delta\n"
    b'data: {"type":"response.reasoning_summary_text.delta","sequence_number":4,"item_id":"rs_g1",'
    b'"output_index":0,"summary_index":0,"delta":"Let me think."}',
    b"event: response.reasoning_summary_text.done\n"
    b'data: {"type":"response.reasoning_summary_text.done","sequence_number":5,"item_id":"rs_g1",'
    b'"output_index":0,"summary_index":0,"text":"Let me think."}',
    b"event: response.reasoning_summary_part.done\n"
    b'data: {"type":"response.reasoning_summary_part.done","sequence_number":6,"item_id":"rs_g1",'
    b'"output_index":0,"summary_index":0,"part":{"type":"summary_text","text":"Let me think."}}',
    b"event: response.output_item.done\n"
    b'data: {"type":"response.output_item.done","sequence_number":7,"output_index":0,'
    b'"item":{"id":"rs_g1","type":"reasoning","encrypted_content":"Z29sZGVuIHJlc3BvbnNlcyBlbmNyeXB0ZWQgcmVhc29uaW5n",'
    b'"summary":[{"type":"summary_text","text":"Let me think."}]}}',
    b"event: response.output_item.added\n"
    b'data: {"type":"response.output_item.added","sequence_number":8,"output_index":1,'
    b'"item":{"id":"msg_g1","type":"message","status":"in_progress","role":"assistant","content":[]}}',
    b"event: response.content_part.added\n"
    b'data: {"type":"response.content_part.added","sequence_number":9,"item_id":"msg_g1","output_index":1,'
    b'"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}',
    b"event: response.output_text.delta\n"
    b'data: {"type":"response.output_text.delta","sequence_number":10,"item_id":"msg_g1","output_index":1,'
    b'"content_index":0,"delta":"Hello"}',
    b"event: response.output_text.delta\n"
    b'data: {"type":"response.output_text.delta","sequence_number":11,"item_id":"msg_g1","output_index":1,'
    b'"content_index":0,"delta":" there"}',
)
_RESPONSES_TAIL = (
    b"event: response.output_text.done\n"
    b'data: {"type":"response.output_text.done","sequence_number":12,"item_id":"msg_g1","output_index":1,'
    b'"content_index":0,"text":"Hello there"}',
    b"event: response.content_part.done\n"
    b'data: {"type":"response.content_part.done","sequence_number":13,"item_id":"msg_g1","output_index":1,'
    b'"content_index":0,"part":{"type":"output_text","text":"Hello there","annotations":[]}}',
    b"event: response.output_item.done\n"
    b'data: {"type":"response.output_item.done","sequence_number":14,"output_index":1,"item":{"id":"msg_g1",'
    b'"type":"message","status":"completed","role":"assistant","content":[{"type":"output_text",'
    b'"text":"Hello there","annotations":[]}]}}',
    b"event: response.output_item.added\n"
    b'data: {"type":"response.output_item.added","sequence_number":15,"output_index":2,"item":{"id":"fc_g1",'
    b'"type":"function_call","status":"in_progress","arguments":"","call_id":"call_cats","name":"search"}}',
    b"event: response.function_call_arguments.delta\n"
    b'data: {"type":"response.function_call_arguments.delta","sequence_number":16,"item_id":"fc_g1",'
    b'"output_index":2,"delta":"{\\"q\\":"}',
    b"event: response.function_call_arguments.delta\n"
    b'data: {"type":"response.function_call_arguments.delta","sequence_number":17,"item_id":"fc_g1",'
    b'"output_index":2,"delta":"\\"cats\\"}"}',
    b"event: response.function_call_arguments.done\n"
    b'data: {"type":"response.function_call_arguments.done","sequence_number":18,"item_id":"fc_g1",'
    b'"output_index":2,"arguments":"{\\"q\\":\\"cats\\"}"}',
    b"event: response.output_item.done\n"
    b'data: {"type":"response.output_item.done","sequence_number":19,"output_index":2,"item":{"id":"fc_g1",'
    b'"type":"function_call","status":"completed","arguments":"{\\"q\\":\\"cats\\"}","call_id":"call_cats",'
    b'"name":"search"}}',
    b"event: response.completed\n"
    b'data: {"type":"response.completed","sequence_number":20,"response":{"id":"resp_g1","object":"response",'
    b'"status":"completed","model":"golden-1","output":[{"id":"rs_g1","type":"reasoning",'
    b'"encrypted_content":"Z29sZGVuIHJlc3BvbnNlcyBlbmNyeXB0ZWQgcmVhc29uaW5n","summary":[{"type":"summary_text",'
    b'"text":"Let me think."}]},{"id":"msg_g1","type":"message","status":"completed","role":"assistant",'
    b'"content":[{"type":"output_text","text":"Hello there","annotations":[]}]},{"id":"fc_g1",'
    b'"type":"function_call","status":"completed","arguments":"{\\"q\\":\\"cats\\"}","call_id":"call_cats",'
    b'"name":"search"}],"usage":{"input_tokens":1050,"input_tokens_details":{"cached_tokens":900},'
    b'"output_tokens":12,"output_tokens_details":{"reasoning_tokens":4},"total_tokens":1062}}}',
)
RESPONSES = {
    "content_type": "text/event-stream",
    "turn": frames(_R, *_RESPONSES_HEAD, *_RESPONSES_TAIL),
    "throttle": frames(
        _R,
        *_RESPONSES_HEAD,
        b"event: response.failed\n"
        b'data: {"type":"response.failed","sequence_number":12,"response":{"id":"resp_g1","object":"response",'
        b'"status":"failed","model":"golden-1","error":{"code":"rate_limit_exceeded","message":"Rate limit '
        b'reached for gpt-5 in organization org-golden on tokens per min (TPM): Limit 30000, Used 29000, '
        b'Requested 1500."},"usage":null}}',
    ),
    "throttle_words": "on tokens per min (TPM)",
    "rate_body": (
        b'{"error":{"message":"Rate limit reached for gpt-5 in organization org-golden on requests per min '
        b'(RPM): Limit 500, Used 500, Requested 1.","type":"requests","param":null,"code":"rate_limit_exceeded"}}'
    ),
    "context_body": (
        b'{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input '
        b'and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}'
    ),
}

DIALECTS = {"openai_chat": CHAT, "anthropic": ANTHROPIC, "gemini": GEMINI, "openai_responses": RESPONSES}
