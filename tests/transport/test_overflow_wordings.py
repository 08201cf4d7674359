"""Context overflow in the words of the local servers people run: each body classifies as kind
``context`` and its token numbers are read, so ``compact=True`` compacts.

Each case is the body as the server sends it (status and envelope included), copied from the
server's own source or from the issue thread named beside it; the expected numbers are the ones
written in that body."""

from __future__ import annotations

import json

import pytest

import providerkit_nb as pk
from providerkit_nb.compaction import parse_context_overflow
from providerkit_nb.core.errors import ErrorKind
from providerkit_nb.transport.classify import classify, http_error, stream_error
from tests.conversation.chat_server import ChatServer, Refuse, text_answer

LLAMA_CPP = (
    '{"error": {"code": 400, "message": "request (6031 tokens) exceeds the available context size (4096 tokens), '
    'try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 6031, "n_ctx": 4096}}'
)

CASES = [
    # llama.cpp server, tools/server/server-context.cpp and server-task.cpp (the body of issue 41)
    ("llama.cpp", 400, LLAMA_CPP, (6031, 4096, None)),
    # llama.cpp, the same file: a prompt that cannot be split across batches
    ("llama.cpp unsplittable", 400,
     '{"error":{"code":400,"message":"input (5000 tokens) is larger than the max context size (4096 tokens). '
     'skipping","type":"exceed_context_size_error","n_prompt_tokens":0,"n_ctx":4096}}', (0, 4096, None)),
    # llama.cpp, older builds (no numbers in the sentence, none as fields)
    ("llama.cpp older", 400,
     '{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it",'
     '"type":"exceed_context_size_error"}}', None),
    # llama-cpp-python 0.3.36's server, copied from the real server (n_ctx 2048, max_tokens 100)
    ("llama-cpp-python", 400,
     '{"error":{"message":"This model\'s maximum context length is 2048 tokens. However, you requested 3110 tokens '
     '(3010 in the messages, 100 in the completion). Please reduce the length of the messages or completion.",'
     '"type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}', (3010, 2048, 100)),
    # llama-cpp-python without max_tokens (llama_cpp/server/errors.py formats None)
    ("llama-cpp-python no max_tokens", 400,
     '{"error":{"message":"This model\'s maximum context length is 2048 tokens. However, you requested 3010 tokens '
     '(3010 in the messages, None in the completion). Please reduce the length of the messages or completion.",'
     '"type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}', (3010, 2048, None)),
    # llama-cpp-python's own exception text (llama_cpp/llama.py), as a plain 500 would carry it
    ("llama-cpp-python raw", 400, '{"error":{"message":"Requested tokens (3010) exceed context window of 2048"}}',
     (3010, 2048, None)),
    # Ollama, runner/ollamarunner/runner.go, through its OpenAI-compatible error envelope
    ("ollama", 400,
     '{"error":{"message":"the input length exceeds the context length","type":"invalid_request_error",'
     '"param":null,"code":null}}', None),
    # vLLM, vllm/renderers/params.py (_token_len_check)
    ("vllm params", 400,
     '{"object":"error","message":"You passed 5000 input tokens and requested 100 output tokens. However, the '
     'model\'s context length is only 4096 tokens, resulting in a maximum input length of 3996 tokens. Please '
     'reduce the length of the input prompt. (parameter=input_tokens, value=5000)","type":"BadRequestError",'
     '"param":"input_tokens","code":400}', (5000, 4096, 100)),
    # vLLM 0.25 (renderers/params.py, as quoted in downstream reports)
    ("vllm at least", 400,
     '{"object":"error","message":"This model\'s maximum context length is 8192 tokens. However, you requested '
     '64 output tokens and your prompt contains at least 8129 input tokens, for a total of at least 8193 tokens. '
     'Please reduce the length of the input prompt or the number of requested output tokens.",'
     '"type":"BadRequestError","param":null,"code":400}', (8129, 8192, 64)),
    # vLLM before 0.25 (entrypoints/openai/serving_engine.py)
    ("vllm request has", 400,
     '{"object":"error","message":"This model\'s maximum context length is 32768 tokens. However, your request '
     'has 40000 input tokens. Please reduce the length of the input messages.","type":"BadRequestError",'
     '"param":null,"code":400}', (40000, 32768, None)),
    ("vllm max_tokens", 400,
     '{"object":"error","message":"\'max_tokens\' or \'max_completion_tokens\' is too large: 4000. This model\'s '
     'maximum context length is 4096 tokens and your request has 1000 input tokens (4000 > 4096 - 1000).",'
     '"type":"BadRequestError","param":null,"code":400}', (1000, 4096, 4000)),
    # vLLM V1 engine (vllm/v1/engine/processor.py)
    ("vllm decoder prompt", 400,
     '{"object":"error","message":"The decoder prompt (length 8825) is longer than the maximum model length of '
     '8192. Make sure that `max_model_len` is no smaller than the number of text tokens.",'
     '"type":"BadRequestError","param":null,"code":400}', (8825, 8192, None)),
    # LM Studio (lmstudio-bug-tracker#546, #237)
    ("lmstudio keep the first", 400,
     '{"error":"Trying to keep the first 6547 tokens when context the overflows. However, the model is loaded with '
     'context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, '
     'or provide a shorter input"}', (6547, 4096, None)),
    # LM Studio (Gitlawb/openclaude#353)
    ("lmstudio n_keep", 400,
     '{"error":"The number of tokens to keep from the initial prompt is greater than the context length (n_keep: '
     '13055>= n_ctx: 4096). Try to load the model with a larger context length, or provide a shorter input."}',
     (13055, 4096, None)),
    # LM Studio (lmstudio-bug-tracker#2205: the same, without the numbers)
    ("lmstudio n_keep bare", 400,
     '{"error":"The number of tokens to keep from the initial prompt is greater than the context length. Try to '
     'load the model with a larger context length, or provide a shorter input"}', None),
    # LM Studio (lmstudio-bug-tracker#1024)
    ("lmstudio mid-generation", 400,
     '{"error":"Reached context length of 32000 tokens with model (arch: gpt-oss) that does not currently support '
     'mid-generation context overflow. Try reloading with a larger context length or shortening the prompt/chat."}',
     (None, 32000, None)),
    # LM Studio's MLX engine (lmstudio-bug-tracker#2339)
    ("lmstudio mlx", 400, '{"error":"Context size has been exceeded."}', None),
]


@pytest.mark.parametrize(("server", "status", "body", "numbers"), CASES, ids=[c[0] for c in CASES])
def test_overflow_wording_is_kind_context_with_its_numbers(
    server: str, status: int, body: str, numbers: tuple[int | None, int | None, int | None] | None
) -> None:
    err = http_error("openai-compatible", status, {}, body)
    assert err.kind is ErrorKind.CONTEXT, (server, err.kind, err.message)
    assert not err.is_transient  # compacting is the fix, not a retry
    got = parse_context_overflow(err)
    if numbers is None:
        assert got is None
    else:
        assert got is not None
        assert (got.input_tokens, got.context_limit, got.max_tokens) == numbers


def test_the_same_words_inside_a_stream_error_frame() -> None:
    # LM Studio answers 200 and puts the overflow in the stream (lmstudio-bug-tracker#2322)
    err = stream_error("lmstudio", {"error": "The number of tokens to keep from the initial prompt is greater "
                                             "than the context length (n_keep: 9000>= n_ctx: 4096)."})
    assert err.kind is ErrorKind.CONTEXT
    # llama.cpp's error object, as it writes it into a stream
    assert stream_error("llama.cpp", json.loads(LLAMA_CPP)).kind is ErrorKind.CONTEXT


def test_llama_cpp_numbers_come_from_the_body_fields() -> None:
    err = http_error("llama", 400, {}, LLAMA_CPP.replace("(6031 tokens)", "(N tokens)"))
    got = parse_context_overflow(err)
    assert got is not None and (got.input_tokens, got.context_limit) == (6031, 4096)
    assert got.excess_tokens == 6031 - 4096


def test_settings_refused_with_a_5xx_are_invalid_not_overload() -> None:
    # llama.cpp started without --jinja (tools/server/server-common.cpp), HTTP 500
    body = '{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}'
    err = http_error("llama", 500, {}, body)
    assert err.kind is ErrorKind.INVALID and not err.is_transient
    assert classify(500, '{"error":{"code":500,"message":"Unsupported param: tool_choice","type":"server_error"}}') \
        == ErrorKind.INVALID
    # a plain 500 is still an overload
    assert classify(500, '{"error":{"code":500,"message":"Internal server error","type":"server_error"}}') \
        == ErrorKind.OVERLOAD


def test_compact_true_compacts_on_the_llama_cpp_body() -> None:
    with ChatServer([Refuse(400, LLAMA_CPP.encode()), text_answer(["the summary"]), text_answer(["fine"])]) as srv:
        provider = pk.openai(model="smollm2", base_url=srv.base_url)
        c = pk.Conversation(pk.MemoryStore(), "c", provider, display=False, compact=True, context_window=4096)
        for i in range(8):
            c._save(pk.UserMessage(f"question {i} " + "x" * 4000))
            c._save(pk.AssistantMessage(f"answer {i} " + "y" * 4000))
        turn = c.send("and now?")
        assert turn.message.content == "fine"
        assert c.compactions == 1
        assert srv.requests[1]["messages"][0]["content"].startswith("Summarize the conversation")
