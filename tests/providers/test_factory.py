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
