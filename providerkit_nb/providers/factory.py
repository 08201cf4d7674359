"""Constructors and presets: ``pk.openai(...)``, ``pk.preset("deepseek", ...)``.

A preset is one plain row of data (where the server is, which environment variables hold its
key, how it spells effort, where the session id goes); the wire modules hold all the behaviour.
Every wire's constructor takes the same keyword names (model, api_key, base_url, headers,
timeout, transport), as the vendor SDKs do. Wire modules are imported on first use.
"""

from __future__ import annotations

import importlib
import ipaddress
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Protocol
from urllib.parse import urlsplit

from ..core.errors import ErrorKind, ProviderError
from .base import WireProvider

__all__ = [
    "PresetRow",
    "PRESETS",
    "WIRES",
    "preset",
    "preset_for_host",
    "keyless_presets",
    "is_loopback",
    "openai",
    "responses",
    "anthropic",
    "gemini",
]

# wire id -> (module, class). A wire module that is not built yet fails with a clear message.
WIRES: dict[str, tuple[str, str]] = {
    "openai_chat": ("providerkit_nb.providers.openai_chat", "OpenAIChatProvider"),
    "openai_responses": ("providerkit_nb.providers.openai_responses", "ResponsesProvider"),
    "anthropic": ("providerkit_nb.providers.anthropic", "AnthropicProvider"),
    "gemini": ("providerkit_nb.providers.gemini", "GeminiProvider"),
}


def wire_class(wire: str) -> type[WireProvider]:
    try:
        module, name = WIRES[wire]
    except KeyError:
        raise ValueError(f"unknown wire {wire!r}; known wires: {sorted(WIRES)}") from None
    try:
        cls: type[WireProvider] = getattr(importlib.import_module(module), name)
        return cls
    except (ImportError, AttributeError) as exc:
        raise ImportError(f"the {wire} wire is not available in this build ({exc})") from exc


@dataclass(slots=True)
class PresetRow:
    """One server: where it is and how it wants to be spoken to. Wire-specific settings that
    are None are left to the wire's own default."""

    id: str
    wire: str
    base_url: str
    env_keys: tuple[str, ...] = ()
    require_key: bool = True
    default_model: str | None = None
    path: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    effort_dialect: str | None = None  # Chat wire: openai | deepseek | openrouter | opencode-go | off
    session_header: str | None = None  # header that carries the session id (OpenCode Go)
    cache_key: bool | None = None  # send the session id as prompt_cache_key
    reasoning_field: str | None = None  # where readable reasoning goes back (DeepSeek)
    max_tokens_field: str | None = None  # max_tokens or max_completion_tokens
    options: dict[str, Any] = field(default_factory=dict)  # other wire constructor keywords
    notes: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["env_keys"] = list(self.env_keys)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PresetRow:
        known = {f.name for f in fields(cls)}
        extra = set(d) - known
        if extra:
            raise ValueError(f"preset row: unknown field(s) {sorted(extra)}")
        d = dict(d)
        d["env_keys"] = tuple(d.get("env_keys") or ())
        return cls(**d)

    def build(self, **kw: Any) -> WireProvider:
        """A provider for this row; caller keywords win over the row's (headers are merged)."""
        cls = wire_class(self.wire)
        model = kw.pop("model", None) or self.default_model
        if not model:
            raise ValueError(f"preset {self.id!r} has no default model: pass model='...'")
        args: dict[str, Any] = {"model": model, "id": kw.pop("id", None) or self.id}
        args["headers"] = {**self.headers, **(kw.pop("headers", None) or {})}
        if kw.get("base_url") is None:
            kw.pop("base_url", None)
            args["base_url"] = self.base_url
        if tuple(getattr(cls, "env_keys", ())) != self.env_keys:
            args["env_keys"] = self.env_keys
        if not self.require_key:
            args["require_key"] = False
        for name in ("path", "effort_dialect", "session_header", "cache_key", "reasoning_field", "max_tokens_field"):
            value = getattr(self, name)
            if value is not None:
                args[name] = value
        args.update(self.options)
        args.update({k: v for k, v in kw.items() if v is not None or k in ("api_key",)})
        return _made(cls, args)


_ROWS = [
    PresetRow(
        "openai", "openai_chat", "https://api.openai.com/v1", ("OPENAI_API_KEY",),
        cache_key=True, max_tokens_field="max_completion_tokens", effort_dialect="openai",
        notes="prompt_cache_key carries the session id",
    ),
    PresetRow(
        "deepseek", "openai_chat", "https://api.deepseek.com", ("DEEPSEEK_API_KEY",),
        default_model="deepseek-chat", path="/chat/completions", effort_dialect="deepseek",
        reasoning_field="reasoning_content", options={"json_mode": "object"},
        notes="thinking mode needs reasoning_content back; text only; JSON mode has no json_schema",
    ),
    PresetRow(
        "openrouter", "openai_chat", "https://openrouter.ai/api/v1", ("OPENROUTER_API_KEY",),
        effort_dialect="openrouter", notes="reasoning_details replayed verbatim; reports cost",
    ),
    PresetRow(
        "opencode-go", "openai_chat", "https://opencode.ai/zen/go/v1", ("OPENCODE_API_KEY",),
        effort_dialect="opencode-go", session_header="x-opencode-session",
    ),
    PresetRow(
        "groq", "openai_chat", "https://api.groq.com/openai/v1", ("GROQ_API_KEY",),
        default_model="llama-3.3-70b-versatile", effort_dialect="off",
    ),
    PresetRow(
        "ollama", "openai_chat", "http://localhost:11434/v1", ("OLLAMA_API_KEY",), require_key=False,
        effort_dialect="off", options={"probe": True},
    ),
    PresetRow(
        "vllm", "openai_chat", "http://localhost:8000/v1", ("VLLM_API_KEY",), require_key=False,
        effort_dialect="off", options={"probe": True},
    ),
    PresetRow(
        "lmstudio", "openai_chat", "http://127.0.0.1:1234/v1", ("LMSTUDIO_API_KEY",), require_key=False,
        effort_dialect="off", options={"probe": True, "server": "lmstudio"},
        notes="json_schema only (no json_object); tool_choice only as a string",
    ),
    PresetRow(
        "mistral", "openai_chat", "https://api.mistral.ai/v1", ("MISTRAL_API_KEY",), effort_dialect="off",
    ),
    PresetRow(
        "together", "openai_chat", "https://api.together.xyz/v1", ("TOGETHER_API_KEY",), effort_dialect="off",
    ),
    PresetRow("xai", "openai_chat", "https://api.x.ai/v1", ("XAI_API_KEY",)),
    PresetRow(
        "google-openai", "openai_chat", "https://generativelanguage.googleapis.com/v1beta/openai",
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"), path="/chat/completions",
    ),
    # Anthropic Messages and the servers that speak it (bearer: Authorization instead of x-api-key)
    PresetRow(
        "anthropic", "anthropic", "https://api.anthropic.com", ("ANTHROPIC_API_KEY",),
        default_model="claude-sonnet-5", notes="thinking blocks replayed with their signatures",
    ),
    PresetRow(
        "claude", "anthropic", "https://api.anthropic.com", ("ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"),
        default_model="claude-sonnet-5", headers={"anthropic-beta": "claude-code-20250219,oauth-2025-04-20"},
        options={"bearer": True}, notes="signed-in access token (Bearer)",
    ),
    PresetRow(
        "minimax", "anthropic", "https://api.minimax.io/anthropic", ("MINIMAX_API_KEY",),
        default_model="MiniMax-M3",
    ),
    PresetRow(
        "zai", "anthropic", "https://api.z.ai/api/anthropic", ("ZAI_API_KEY",),
        default_model="glm-5.3-flash", options={"bearer": True, "explicit_none": True, "max_tokens": 65536},
        notes="silence means thinking on, so none is sent as disabled; bare model ids",
    ),
    PresetRow(
        "kimi", "anthropic", "https://api.kimi.ai/coding", ("KIMI_API_KEY",),
        default_model="kimi-for-coding", options={"bearer": True},
    ),
    PresetRow(
        "kimi-plan", "anthropic", "https://api.kimi.ai/coding", ("KIMI_OAUTH_TOKEN",),
        default_model="kimi-for-coding", options={"bearer": True}, notes="signed-in access token (Bearer)",
    ),
    PresetRow(
        "qwen", "anthropic", "https://token-plan.ap-southeast-1.maas.aliyuncs.com/apps/anthropic",
        ("QWEN_API_KEY", "DASHSCOPE_API_KEY"), default_model="qwen3.8-max", options={"bearer": True},
    ),
    # Google Gemini (Generative Language API; x-goog-api-key)
    PresetRow(
        "gemini", "gemini", "https://generativelanguage.googleapis.com", ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        default_model="gemini-2.5-flash",
        notes="thought signatures replayed on their calls and parts; streams with alt=sse",
    ),
    # OpenAI Responses and the ChatGPT (Codex) backend
    PresetRow(
        "openai-responses", "openai_responses", "https://api.openai.com/v1", ("OPENAI_API_KEY",),
        notes="store:false; encrypted reasoning replayed to this provider only; prompt_cache_key carries the session id",
    ),
    PresetRow(
        "chatgpt", "openai_responses", "https://chatgpt.com/backend-api/codex", ("CHATGPT_ACCESS_TOKEN",),
        session_header="session-id", options={"backend": "chatgpt"},
        notes="signed-in ChatGPT access token; account_id=... sets chatgpt-account-id; always streams",
    ),
]

PRESETS: dict[str, PresetRow] = {r.id: r for r in _ROWS}

# A server nothing is known of: OpenAI's forms first, what it refuses learned (and /props asked
# once, on the first send with tools, in case it is llama.cpp).
_GENERIC_CHAT = PresetRow(
    "openai-compatible", "openai_chat", "", (), require_key=False, effort_dialect="openai", options={"probe": True}
)


def preset_for_host(host: str, wire: str = "openai_chat") -> PresetRow:
    """The preset whose base URL is on ``host`` for ``wire`` (replay uses it to configure a
    provider like the server that was recorded), else a generic OpenAI-compatible row."""
    for row in PRESETS.values():
        if row.wire == wire and urlsplit(row.base_url).hostname == host:
            return row
    return _GENERIC_CHAT


def preset(name: str, **kw: Any) -> WireProvider:
    """A provider from a preset row; keywords override the row (model, api_key, base_url,
    headers, timeout, transport, effort, ...)."""
    row = PRESETS.get(name)
    if row is None:
        raise ValueError(f"unknown preset {name!r}; known presets: {', '.join(sorted(PRESETS))}")
    return row.build(**kw)


def keyless_presets() -> list[str]:
    """The presets that need no key (local servers)."""
    return [r.id for r in _ROWS if not r.require_key]


def is_loopback(url: str) -> bool:
    """Is ``url`` on this machine (localhost, 127.0.0.0/8, ::1)? Such a server needs no key."""
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _compatible(row: PresetRow, base_url: str, kw: dict[str, Any]) -> PresetRow:
    """``pk.openai(base_url=...)`` or ``pk.responses(base_url=...)`` on a server that is not
    OpenAI's: no OpenAI-only fields (prompt_cache_key), the key still read from OPENAI_API_KEY
    as the OpenAI SDK does. Chat gets the generic compatible row (max_tokens; JSON and tool
    choice in the forms the server turns out to take, see ``negotiation``); Responses its own
    id, so OpenAI's encrypted reasoning is not replayed there. Keywords (id=, json_mode=, cache_key=...) still win: ``id=`` of the OpenAI row
    keeps OpenAI's behaviour (a proxy in front of OpenAI)."""
    if urlsplit(base_url).hostname == urlsplit(row.base_url).hostname:
        return row
    if row.wire == "openai_chat":
        return replace(_GENERIC_CHAT, base_url=base_url, env_keys=row.env_keys, require_key=True)
    if kw.get("id") == row.id:
        return row
    return replace(row, id="responses-compatible", base_url=base_url, cache_key=False, notes="")


def _construct(default_preset: str, wire: str, model: str | None, kw: dict[str, Any]) -> WireProvider:
    row = PRESETS.get(default_preset)
    base_url = kw.get("base_url")
    if base_url and is_loopback(base_url) and kw.get("require_key") is None:
        kw["require_key"] = False  # a server on this machine: a key only when one is given
    if row is not None and row.wire == wire:
        if wire in ("openai_chat", "openai_responses") and base_url:
            row = _compatible(row, base_url, kw)
        return row.build(model=model, **kw)
    cls = wire_class(wire)
    if not model:
        raise ValueError(f"{default_preset}: model is required, e.g. model='...'")
    return _made(cls, {"model": model, **{k: v for k, v in kw.items() if v is not None or k == "api_key"}})


def _made(cls: type[WireProvider], args: dict[str, Any]) -> WireProvider:
    """``cls(**args)``; a missing key's error also says what needs none."""
    try:
        return cls(**args)
    except ProviderError as err:
        if err.kind is not ErrorKind.AUTH or "no API key" not in err.message:
            raise
        raise ProviderError(
            err.provider, err.kind,
            f"{err.message} A server on this machine needs none: a base_url on localhost or "
            f"127.0.0.1, or the presets {', '.join(keyless_presets())}.",
        ) from None


class WireConstructor(Protocol):
    """``pk.openai``, ``pk.responses``, ``pk.anthropic``, ``pk.gemini``: the same keywords on each."""

    def __call__(
        self,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        headers: dict[str, str] | None = None,
        timeout: Any = None,
        transport: Any = None,
        **kw: Any,
    ) -> WireProvider: ...


def _wire_constructor(default_preset: str, wire: str, name: str, doc: str) -> WireConstructor:
    """One constructor per wire, all with the same keyword names (as the vendor SDKs spell them)."""

    def construct(
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        headers: dict[str, str] | None = None,
        timeout: Any = None,
        transport: Any = None,
        **kw: Any,
    ) -> WireProvider:
        return _construct(
            default_preset, wire, model,
            dict(api_key=api_key, base_url=base_url, headers=headers, timeout=timeout, transport=transport, **kw),
        )

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = doc
    return construct


openai = _wire_constructor("openai", "openai_chat", "openai", "OpenAI Chat Completions (or any compatible server, given ``base_url``).")
responses = _wire_constructor("openai-responses", "openai_responses", "responses", "OpenAI Responses.")
anthropic = _wire_constructor("anthropic", "anthropic", "anthropic", "Anthropic Messages.")
gemini = _wire_constructor("gemini", "gemini", "gemini", "Google Gemini (Generative Language API).")
