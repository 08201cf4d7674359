"""A prompt that did not fit: the wordings servers use to say so, and the numbers they give.

One table (``WORDINGS``) serves both readers: the error classifier (``transport.classify``)
calls a message that matches any row kind ``context``, so ``compact=True`` compacts, and
``parse_context_overflow`` reads the token numbers out of the first row whose pattern holds
them. Each row names the server and where its wording was read (the server's own source, or
the issue thread that quotes its body), so a new wording is one more row and one more test.

A body that carries the numbers as fields (llama.cpp's ``n_prompt_tokens`` and ``n_ctx``) is
read from those fields before any sentence is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .json_input import JsonInputError, read_json

__all__ = ["ContextOverflow", "Wording", "WORDINGS", "is_context_overflow", "parse_context_overflow"]


@dataclass(frozen=True, slots=True)
class ContextOverflow:
    """The numbers a provider gave when a prompt did not fit (None where it gave none)."""

    input_tokens: int | None
    context_limit: int | None
    max_tokens: int | None = None

    @property
    def excess_tokens(self) -> int | None:
        if self.input_tokens is None or self.context_limit is None:
            return None
        return self.input_tokens + (self.max_tokens or 0) - self.context_limit


@dataclass(frozen=True, slots=True)
class Wording:
    """One way a server words an overflow. ``numbers`` names the pattern's groups in order
    ("input", "limit", "max", or "" for a number that is none of those)."""

    server: str
    pattern: re.Pattern[str]
    numbers: tuple[str, ...] = ()


_N = r"(\d[\d,_]*)"
_I = re.IGNORECASE
_IS = re.IGNORECASE | re.DOTALL


def _w(server: str, pattern: str, *numbers: str, flags: int = _I) -> Wording:
    return Wording(server, re.compile(pattern, flags), numbers)


WORDINGS: tuple[Wording, ...] = (
    # llama.cpp server, tools/server/server-context.cpp (ERROR_TYPE_EXCEED_CONTEXT_SIZE, HTTP 400,
    # "type": "exceed_context_size_error"; tools/server/server-task.cpp adds n_prompt_tokens, n_ctx):
    # "request (6031 tokens) exceeds the available context size (4096 tokens), try increasing it"
    _w("llama.cpp", rf"request \({_N} tokens\) exceeds the available context size \({_N} tokens\)", "input", "limit"),
    # llama.cpp server, same file, a prompt that cannot be split across batches:
    # "input (5000 tokens) is larger than the max context size (4096 tokens). skipping"
    _w("llama.cpp", rf"input \({_N} tokens\) is larger than the max context size \({_N} tokens\)", "input", "limit"),
    # llama.cpp server: the error type, and older builds' sentence without numbers ("the request
    # exceeds the available context size, try increasing it")
    _w("llama.cpp", r"exceed_context_size_error|exceeds the available context size"),
    # llama-cpp-python, llama_cpp/llama.py (a ValueError its server maps, in llama_cpp/server/
    # errors.py, to OpenAI's "This model's maximum context length is ..." with code
    # context_length_exceeded; read below): "Requested tokens (3010) exceed context window of 2048"
    _w("llama-cpp-python", rf"Requested tokens \({_N}\) exceed context window of {_N}", "input", "limit"),
    # Ollama, runner/ollamarunner/runner.go (errorInputTooLong, HTTP 400 when truncation is off):
    # "the input length exceeds the context length"
    _w("ollama", r"input length exceeds the context length"),
    # vLLM, vllm/renderers/params.py (_token_len_check): "You passed 5000 input tokens and requested
    # 100 output tokens. However, the model's context length is only 4096 tokens, resulting in a
    # maximum input length of 3996 tokens. Please reduce the length of the input prompt."
    _w("vllm", rf"You passed {_N} input tokens and requested {_N} output tokens\. However, the model's "
       rf"context length is only {_N} tokens", "input", "max", "limit"),
    # vLLM, the same file (_text_len_check): "You passed 90000 input characters and requested ...
    # However, the model's context length is only 4096 tokens, ..." (characters: only the limit is a token count)
    _w("vllm", rf"You passed {_N} input characters and requested {_N} output tokens\. However, the model's "
       rf"context length is only {_N} tokens", "", "max", "limit"),
    # vLLM 0.25 serving: "This model's maximum context length is 8192 tokens. However, you requested
    # 64 output tokens and your prompt contains at least 8129 input tokens, for a total of at least
    # 8193 tokens." (as quoted from vllm/renderers/params.py in downstream tests and reports)
    _w("vllm", rf"maximum context length is {_N} tokens\. However, you requested {_N} output tokens and "
       rf"your prompt contains at least {_N} input tokens", "limit", "max", "input"),
    # vLLM: "'max_tokens' or 'max_completion_tokens' is too large: 4000. This model's maximum context
    # length is 4096 tokens and your request has 1000 input tokens (4000 > 4096 - 1000)."
    _w("vllm", rf"is too large: {_N}\. This model's maximum context length is {_N} tokens and your request "
       rf"has {_N} input tokens", "max", "limit", "input"),
    # vLLM V1 engine (vllm/v1/engine/processor.py): "The decoder prompt (length 8825) is longer than
    # the maximum model length of 8192."
    _w("vllm", rf"prompt \(length {_N}\) is longer than the maximum model length of {_N}", "input", "limit"),
    # LM Studio (lmstudio-bug-tracker#546 and #237, its server log and the 400 body): "Trying to keep
    # the first 6547 tokens when context the overflows. However, the model is loaded with context
    # length of only 4096 tokens, which is not enough."
    _w("lmstudio", rf"keep the first {_N} tokens when context the overflows\. However, the model is loaded "
       rf"with context length of only {_N} tokens", "input", "limit"),
    # LM Studio, a 400 body (Gitlawb/openclaude#353; without the numbers in lmstudio-bug-tracker#2205):
    # {"error":"The number of tokens to keep from the initial prompt is greater than the context
    # length (n_keep: 13055>= n_ctx: 4096). Try to load the model with a larger context length, ..."}
    _w("lmstudio", rf"tokens to keep from the initial prompt is greater than the context length"
       rf"(?: \(n_keep: {_N}\s*>=? n_ctx: {_N}\))?", "input", "limit"),
    # LM Studio (lmstudio-bug-tracker#1024): "Reached context length of 32000 tokens with model (arch:
    # gpt-oss) that does not currently support mid-generation context overflow."
    _w("lmstudio", rf"Reached context length of {_N} tokens with model", "limit"),
    # LM Studio, its MLX engine (lmstudio-bug-tracker#2339): "Context size has been exceeded"
    _w("lmstudio", r"Context size has been exceeded"),
    # Anthropic: "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000"
    _w("anthropic", rf"exceeds? context limit:\s*{_N}\s*\+\s*{_N}\s*>\s*{_N}", "input", "max", "limit"),
    # Anthropic: "prompt is too long: 208000 tokens > 200000 maximum"
    _w("anthropic", rf"(?:prompt is too long|context length exceeded)[^0-9]*{_N}\s*(?:tokens)?\s*>\s*{_N}",
       "input", "limit"),
    # OpenAI-shape servers (DeepSeek, older OpenAI, llama-cpp-python's server): "This model's maximum
    # context length is 65536 tokens. However, you requested 70000 tokens (65000 in the messages,
    # 5000 in the completion)"
    _w("openai", rf"maximum context length is {_N} tokens.*?requested {_N} tokens \({_N} in the messages, "
       rf"{_N} in the completion", "limit", "", "input", "max", flags=_IS),
    # "maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens"
    # (vLLM before 0.25: "your request has 9000 input tokens"; llama-cpp-python without max_tokens:
    # "you requested 3010 tokens (3010 in the messages, None in the completion)")
    _w("openai", rf"maximum context length is {_N} tokens.*?(?:resulted in|has|requested) {_N}(?: input)? tokens",
       "limit", "input", flags=_IS),
    # Gemini: "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
    _w("gemini", rf"input token count \(?{_N}\)? exceeds the maximum number of tokens allowed \(?{_N}\)?",
       "input", "limit"),
    # Gemini without the count: "The input token count exceeds the maximum number of tokens allowed 1048576."
    _w("gemini", rf"input token count exceeds the maximum number of tokens allowed \(?{_N}\)?", "limit"),
    # "maximum context length is N tokens ...: A > L" and other "A > L" forms
    _w("any", rf"context[^0-9]{{0,60}}{_N}\s*>\s*{_N}", "input", "limit"),
)

# The rows that are specific to a server (the last ones are the big vendors' families, which the
# classifier matches with its own, broader words).
_OWN = tuple(w for w in WORDINGS if w.server not in ("anthropic", "openai", "gemini", "any"))


def is_context_overflow(text: str) -> bool:
    """Does ``text`` say, in a local server's words, that the prompt did not fit?"""
    return any(w.pattern.search(text) for w in _OWN)


def _int(s: str) -> int:
    return int(s.replace(",", "").replace("_", ""))


def _texts(error: Any) -> tuple[str, str | None]:
    if isinstance(error, str):
        return error, None
    body = getattr(error, "body", None)
    body = body if isinstance(body, str) else None
    return " ".join(x for x in (str(error), body or "") if x), body


def _count(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def _fields(body: str | None) -> ContextOverflow | None:
    """llama.cpp states the numbers as fields of its error object."""
    if not body or "n_ctx" not in body:
        return None
    try:
        data = read_json(body)
    except JsonInputError:
        return None
    for obj in _objects(data):
        limit = _count(obj.get("n_ctx"))
        if limit is not None:
            return ContextOverflow(_count(obj.get("n_prompt_tokens")), limit)
    return None


def _objects(data: Any) -> Iterator[dict[str, Any]]:
    if isinstance(data, dict):
        yield data
        if isinstance(data.get("error"), dict):
            yield data["error"]


def parse_context_overflow(error: Any) -> ContextOverflow | None:
    """The token numbers in a context-overflow error (a ProviderError, any exception, or the
    provider's text), or None when it holds none. Reads the body's own fields first, then the
    message and the kept body against ``WORDINGS``."""
    text, body = _texts(error)
    got = _fields(body)
    if got is not None:
        return got
    for w in WORDINGS:
        if not w.numbers:
            continue
        m = w.pattern.search(text)
        if m is None or not any(m.groups()):
            continue
        named = {name: _int(g) for name, g in zip(w.numbers, m.groups(), strict=True) if name and g}
        return ContextOverflow(named.get("input"), named.get("limit"), named.get("max"))
    return None
