"""Constructors and presets: keys from arguments or the environment, clear errors, no leaks."""

from __future__ import annotations

import pytest

import providerkit_nb as pk
from providerkit_nb.core.errors import ErrorKind, ProviderError
from providerkit_nb.providers.factory import PresetRow

REQUIRED = ("openai", "deepseek", "openrouter", "opencode-go", "groq", "ollama", "vllm", "lmstudio")


def test_required_presets_exist_as_plain_rows() -> None:
    for name in REQUIRED:
        row = pk.PRESETS[name]
        assert isinstance(row, PresetRow) and row.id == name
        assert PresetRow.from_dict(row.to_dict()) == row


def test_missing_key_names_the_variable_before_any_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    with pytest.raises(ProviderError) as e:
        pk.preset("deepseek")
    assert e.value.kind is ErrorKind.AUTH and "DEEPSEEK_API_KEY" in e.value.message
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        pk.openai(model="gpt-5-mini")


def test_key_from_environment_and_never_in_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-env-secret-0123456789abcdef"
    monkeypatch.setenv("GROQ_API_KEY", secret)
    p = pk.preset("groq")
    wr = p.build_request([pk.UserMessage("hi")], None, __import__("providerkit_nb.providers.base", fromlist=["CallOptions"]).CallOptions(), stream=True)
    assert wr.headers["authorization"] == f"Bearer {secret}"
    for text in (repr(p), str(p), repr(wr), repr(pk.PRESETS["groq"])):
        assert secret not in text


def test_local_servers_need_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ollama", "vllm", "lmstudio"):
        monkeypatch.delenv(f"{name.upper()}_API_KEY", raising=False)
        p = pk.preset(name, model="llama3")
        assert p.url.startswith("http://") and p.url.endswith("/v1/chat/completions")


def test_overrides_and_paths() -> None:
    p = pk.openai(model="m", api_key="k" * 20, base_url="http://127.0.0.1:9/v1", headers={"x-a": "1"}, timeout=3)
    assert p.url == "http://127.0.0.1:9/v1/chat/completions" and p.headers == {"x-a": "1"} and p.timeout.read == 3
    assert pk.preset("deepseek", api_key="k" * 20).url == "https://api.deepseek.com/chat/completions"
    assert pk.openai(model="m", api_key="k" * 20, base_url="http://h:1").url == "http://h:1/v1/chat/completions"
    with pytest.raises(ValueError, match="known presets"):
        pk.preset("nope")
    with pytest.raises(ValueError, match="model"):
        pk.preset("openrouter", api_key="k" * 20)


def test_every_wire_constructor_takes_the_same_keywords() -> None:
    import inspect

    want = ["model", "api_key", "base_url", "headers", "timeout", "transport"]
    for ctor in (pk.openai, pk.responses, pk.anthropic, pk.gemini):
        assert list(inspect.signature(ctor).parameters)[:6] == want


PERSON = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"],
          "additionalProperties": False}
CHAT_SSE = (
    b'data: {"id":"c1","object":"chat.completion.chunk","model":"local","choices":[{"index":0,'
    b'"delta":{"role":"assistant","content":"{\\"name\\": \\"Ada\\"}"},"finish_reason":null}]}\n\n'
    b'data: {"id":"c1","object":"chat.completion.chunk","model":"local","choices":[{"index":0,'
    b'"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
)


def test_openai_pointed_at_a_local_server_is_a_compatible_server_without_a_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from .local_server import LocalServer

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with LocalServer() as srv:
        srv.answer(200, CHAT_SSE)
        p = pk.openai(model="local", base_url=srv.url + "/v1")  # no key, none in the environment
        turn = pk.collect_turn(p.create_stream([pk.UserMessage("Who wrote the first program?")], json=PERSON))
        assert turn.message.content == '{"name": "Ada"}'
        path, headers, raw = srv.requests[0]
    body = __import__("json").loads(raw)
    assert path == "/v1/chat/completions"
    assert "authorization" not in {k.lower() for k in headers}
    assert "prompt_cache_key" not in body  # an OpenAI-only field
    # OpenAI's form first, on every server (a refusal is answered in the next form: see negotiation)
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == PERSON
    assert [m["role"] for m in body["messages"]] == ["user"]


def test_openai_on_another_remote_host_is_compatible_but_still_needs_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from providerkit_nb.providers.base import CallOptions

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        pk.openai(model="m", base_url="https://llm.example.com/v1")
    p = pk.openai(model="m", base_url="https://llm.example.com/v1", api_key="k")
    body = p.build_request([pk.UserMessage("hi")], None, CallOptions(json=PERSON, max_tokens=5), stream=True).body
    assert "prompt_cache_key" not in body and body["response_format"]["type"] == "json_schema"
    assert body["max_tokens"] == 5 and "max_completion_tokens" not in body
    # told otherwise: the OpenAI behaviour on another host (a proxy in front of OpenAI)
    told = pk.openai(model="m", base_url="https://proxy.example.com/v1", api_key="k", id="openai")
    body = told.build_request([pk.UserMessage("hi")], None, CallOptions(json=PERSON), stream=True).body
    assert body["response_format"]["type"] == "json_schema" and "prompt_cache_key" in body
    # OpenAI's own host keeps OpenAI's behaviour
    own = pk.openai(model="m", base_url="https://api.openai.com/v1", api_key="k")
    body = own.build_request([pk.UserMessage("hi")], None, CallOptions(json=PERSON), stream=True).body
    assert body["response_format"]["type"] == "json_schema" and "prompt_cache_key" in body


def test_the_missing_key_error_points_to_what_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ProviderError) as e:
        pk.openai(model="gpt-5-mini")
    for name in ("ollama", "vllm", "lmstudio", "localhost", "127.0.0.1"):
        assert name in e.value.message
    for url in ("http://localhost:8080/v1", "http://127.0.0.1:9/v1", "http://[::1]:9/v1"):
        assert pk.openai(model="m", base_url=url).id == "openai-compatible"
    # a server on this machine needs no key on any wire (a local proxy of Anthropic or Gemini)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    for var in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    assert pk.anthropic(model="m", base_url="http://127.0.0.1:9").id == "anthropic"
    assert pk.gemini(model="m", base_url="http://localhost:9").id == "gemini"
    with pytest.raises(ProviderError, match="ANTHROPIC_API_KEY"):
        pk.anthropic(model="m", base_url="https://anthropic-proxy.example.com")


RESPONSES_SSE = (
    b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"m",'
    b'"content_index":0,"delta":"Ada"}\n\n'
    b'event: response.completed\ndata: {"type":"response.completed","response":{"status":"completed"}}\n\n'
)


def test_responses_pointed_at_another_server_sends_no_openai_only_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    """Like ``pk.openai``: a base URL that is not OpenAI's gets no prompt_cache_key (checked in
    the body a real local server received), unless told otherwise."""
    import json

    from providerkit_nb.providers.base import CallOptions

    from .local_server import LocalServer

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with LocalServer() as srv:
        srv.answer(200, RESPONSES_SSE)
        p = pk.responses(model="local", base_url=srv.url + "/v1")
        turn = pk.collect_turn(p.create_stream([pk.UserMessage("Who wrote the first program?")]))
        assert turn.message.content == "Ada"
        path, _headers, raw = srv.requests[0]
    body = json.loads(raw)
    assert path == "/v1/responses"
    assert "prompt_cache_key" not in body
    assert p.id != "openai-responses"  # OpenAI's encrypted reasoning is not replayed to another server
    msgs = [pk.UserMessage("hi")]
    remote = pk.responses(model="m", base_url="https://llm.example.com/v1", api_key="k")
    assert "prompt_cache_key" not in remote.build_request(msgs, None, CallOptions(), stream=True).body
    # told otherwise: a proxy in front of OpenAI keeps OpenAI's behaviour
    for told in (
        pk.responses(model="m", base_url="https://proxy.example.com/v1", api_key="k", id="openai-responses"),
        pk.responses(model="m", base_url="https://proxy.example.com/v1", api_key="k", cache_key=True),
        pk.responses(model="m", base_url="https://api.openai.com/v1", api_key="k"),
        pk.responses(model="m", api_key="k"),
    ):
        assert "prompt_cache_key" in told.build_request(msgs, None, CallOptions(), stream=True).body
