"""Four defects, each pinned by a test that failed before its fix.

- Gemini ignored the default ``effort=`` given to the constructor (the other wires used it).
- The ``google-openai`` preset built ``.../v1beta/openai/v1/chat/completions``.
- ``extra_body`` replaced whole top-level keys (Gemini lost max_tokens and thinking).
- An empty 2xx body was ``overload`` on Chat and ``network`` on the other three.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest

from providerkit_nb.core.errors import ErrorKind, ProviderError
from providerkit_nb.core.messages import UserMessage
from providerkit_nb.providers import factory
from providerkit_nb.providers.anthropic import AnthropicProvider
from providerkit_nb.providers.base import WireProvider
from providerkit_nb.providers.gemini import GeminiProvider
from providerkit_nb.providers.openai_chat import OpenAIChatProvider
from providerkit_nb.providers.openai_responses import ResponsesProvider
from providerkit_nb.wire.options import CallOptions

from .local_server import LocalServer

HI = [UserMessage("hi")]


def _body(p: WireProvider, **opts: Any) -> dict[str, Any]:
    return p.build_request(p.prepare(HI), None, CallOptions(**opts), stream=True).body


# ------------------------------------------------------------- Gemini default effort


@pytest.mark.parametrize(
    ("model", "expected"),
    [("gemini-2.5-flash", {"thinkingBudget": 1024, "includeThoughts": True}),
     ("gemini-3-flash-preview", {"thinkingLevel": "LOW", "includeThoughts": True})],
)
def test_gemini_uses_the_constructor_effort(model: str, expected: dict[str, Any]) -> None:
    p = GeminiProvider(model=model, api_key="k", effort="low")
    assert _body(p)["generationConfig"]["thinkingConfig"] == expected
    # a per-call effort still wins over the default
    assert _body(p, effort="none")["generationConfig"]["thinkingConfig"] == (
        {"thinkingBudget": 0} if "2.5" in model else {"thinkingLevel": "MINIMAL"}
    )


def test_gemini_uses_a_registry_connection_effort() -> None:
    from providerkit_nb.wrappers.registry import Registry

    reg = Registry({"g": {"preset": "gemini", "api_key": "k", "effort": "high", "watchdog": False, "retry": False}})
    inner: Any = reg.provider("g/gemini-2.5-flash")
    while not isinstance(inner, WireProvider):
        inner = inner.inner
    assert _body(inner)["generationConfig"]["thinkingConfig"]["thinkingBudget"] == 8192


# ------------------------------------------------------------- every preset's URL

# Each vendor's documented endpoint, by the wire's endpoint rule.
EXPECTED_URLS = {
    "openai": "https://api.openai.com/v1/chat/completions",
    "deepseek": "https://api.deepseek.com/chat/completions",
    "openrouter": "https://openrouter.ai/api/v1/chat/completions",
    "opencode-go": "https://opencode.ai/zen/go/v1/chat/completions",
    "groq": "https://api.groq.com/openai/v1/chat/completions",
    "ollama": "http://localhost:11434/v1/chat/completions",
    "vllm": "http://localhost:8000/v1/chat/completions",
    "lmstudio": "http://127.0.0.1:1234/v1/chat/completions",
    "mistral": "https://api.mistral.ai/v1/chat/completions",
    "together": "https://api.together.xyz/v1/chat/completions",
    "xai": "https://api.x.ai/v1/chat/completions",
    "google-openai": "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions",
    "anthropic": "https://api.anthropic.com/v1/messages",
    "claude": "https://api.anthropic.com/v1/messages",
    "minimax": "https://api.minimax.io/anthropic/v1/messages",
    "zai": "https://api.z.ai/api/anthropic/v1/messages",
    "kimi": "https://api.kimi.ai/coding/v1/messages",
    "kimi-plan": "https://api.kimi.ai/coding/v1/messages",
    "qwen": "https://token-plan.ap-southeast-1.maas.aliyuncs.com/apps/anthropic/v1/messages",
    "gemini": "https://generativelanguage.googleapis.com/v1beta/models/m-1:streamGenerateContent?alt=sse",
    "openai-responses": "https://api.openai.com/v1/responses",
    "chatgpt": "https://chatgpt.com/backend-api/codex/responses",
}


@pytest.mark.parametrize("name", sorted(factory.PRESETS))
def test_every_preset_url(name: str) -> None:
    p = factory.preset(name, model="m-1", api_key="k")
    url = p.build_request(p.prepare(HI), None, CallOptions(), stream=True).url
    assert url.startswith(factory.PRESETS[name].base_url.rstrip("/") + "/")
    path = urlsplit(url).path
    assert "//" not in path and "/v1/v1" not in path
    assert path.count("/v1") <= 1, url  # one version segment, never two
    assert url == EXPECTED_URLS[name], f"{name}: add its expected URL here from the vendor's documentation"


def test_a_version_segment_inside_the_base_path_counts() -> None:
    p = OpenAIChatProvider(model="m", api_key="k", base_url="https://gw.example/v2beta/compat")
    assert p.url == "https://gw.example/v2beta/compat/chat/completions"


# ------------------------------------------------------------- extra_body deep merge


def test_gemini_extra_body_merges_generation_config() -> None:
    p = GeminiProvider(model="gemini-2.5-flash", api_key="k")
    gen = _body(p, max_tokens=300, effort="medium", extra_body={"generationConfig": {"candidateCount": 1}})[
        "generationConfig"
    ]
    assert gen == {"maxOutputTokens": 300, "thinkingConfig": {"thinkingBudget": 4096, "includeThoughts": True},
                   "candidateCount": 1}


def test_extra_body_merges_nested_objects_on_every_wire() -> None:
    chat = OpenAIChatProvider(model="gpt-5", api_key="k")
    b = _body(chat, extra_body={"stream_options": {"include_obfuscation": False}, "user": "u1"})
    assert b["stream_options"] == {"include_usage": True, "include_obfuscation": False}
    assert b["user"] == "u1"
    resp = ResponsesProvider(model="gpt-5", api_key="k")
    b = _body(resp, effort="low", extra_body={"reasoning": {"summary": "detailed"}})
    assert b["reasoning"] == {"effort": "low", "summary": "detailed"}
    anth = AnthropicProvider(model="claude-sonnet-4-6", api_key="k")
    b = _body(anth, effort="low", extra_body={"output_config": {"format": None}, "metadata": {"user_id": "u"}})
    assert b["output_config"] == {"effort": "low", "format": None}
    assert b["thinking"] == {"type": "adaptive"} and b["metadata"] == {"user_id": "u"}


def test_extra_body_values_that_are_not_objects_still_replace() -> None:
    chat = OpenAIChatProvider(model="gpt-5", api_key="k")
    b = _body(chat, max_tokens=10, extra_body={"max_tokens": 20, "stop": ["x"]})
    assert b["max_tokens"] == 20 and b["stop"] == ["x"]


def test_extra_body_never_mutates_the_callers_dict() -> None:
    extra = {"generationConfig": {"candidateCount": 1}}
    _body(GeminiProvider(model="gemini-2.5-flash", api_key="k"), max_tokens=5, extra_body=extra)
    assert extra == {"generationConfig": {"candidateCount": 1}}


# ------------------------------------------------------------- empty 2xx body: one kind


@pytest.fixture(scope="module")
def server() -> Any:
    with LocalServer() as srv:
        yield srv


WIRES = [
    ("chat", lambda url: OpenAIChatProvider(model="m", api_key="k", base_url=url + "/v1")),
    ("responses", lambda url: ResponsesProvider(model="m", api_key="k", base_url=url)),
    ("anthropic", lambda url: AnthropicProvider(model="claude-sonnet-4-6", api_key="k", base_url=url)),
    ("gemini", lambda url: GeminiProvider(model="gemini-2.5-flash", api_key="k", base_url=url)),
]


@pytest.mark.parametrize(("wire", "make"), WIRES, ids=[w for w, _ in WIRES])
def test_empty_2xx_body_is_overload_on_every_wire(server: Any, wire: str, make: Any) -> None:
    server.answer(200, b"", content_type="text/event-stream")
    p = make(server.url)
    with pytest.raises(ProviderError) as info:
        list(p.create_stream(HI))
    assert info.value.kind == ErrorKind.OVERLOAD, wire
    assert "empty" in str(info.value)
