"""What an OpenAI-compatible server takes, learned once per provider and remembered.

Servers that speak Chat Completions differ in what they refuse: the JSON form (llama-cpp-python
takes only ``json_object``, with the schema riding inside it; LM Studio only ``json_schema``),
a named ``tool_choice`` (LM Studio refuses the object form; llama.cpp's server ignores it and
answers as if ``auto``), ``stream_options`` (older vLLM, Azure AI), and tools a model's chat
template cannot render (llama.cpp says so at ``GET /props``). The facts come from three places:
a table of known servers (each row with its source), one cheap probe of ``/props`` on the first
send with tools, and a server's own refusal, which is recognised by its wording, remembered, and
answered by sending the request once more in the form the server takes.

The pieces are small and wire-free: the Chat adapter asks ``json_form`` and ``tool_choice_plan``
what to send and ``refused_field`` what a refusal was about; only it writes the fields.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field, replace
from typing import Any

from ..core.errors import ErrorKind, ProviderError
from ..core.turn import Notice

__all__ = [
    "JSON_FORM_WORDS",
    "KNOWN_SERVERS",
    "ServerFacts",
    "facts_for",
    "json_ladder",
    "json_form",
    "json_notice",
    "tool_choice_plan",
    "refused_field",
    "what_was_said",
    "props_url",
    "read_props",
    "tools_refused",
    "tools_unsupported_error",
]

# The forms ``json=`` can take on the Chat wire, in the words a notice uses.
JSON_FORM_WORDS = {
    "json_schema": "response_format json_schema (OpenAI's form)",
    "json_object_schema": "response_format json_object with the schema in it, and the schema in the prompt",
    "json_object": "response_format json_object, and the schema in the prompt",
    "prompt": "the schema in the prompt only (no response_format)",
}


def json_ladder(json_mode: str, openai: bool, has_schema: bool) -> tuple[str, ...]:
    """The forms to try, first to last. OpenAI's own form first everywhere (``json_mode``
    "schema"); "object" starts at JSON mode (a server known to have no json_schema)."""
    if not has_schema or json_mode == "object":
        return ("json_object", "prompt")
    return ("json_schema", "json_object" if openai else "json_object_schema", "prompt")


@dataclass
class ServerFacts:
    """What one provider's server was found to take (None: not known yet)."""

    server: str | None = None  # "llama.cpp", "lmstudio", "llama-cpp-python", when known
    probed: bool = False
    tools: bool | None = None  # can its chat template render tools
    tools_said: str = ""  # why not, in the server's words
    named_choice: bool | None = None  # takes tool_choice {"type": "function", "function": {...}}
    required_choice: bool | None = None  # takes tool_choice "required"
    stream_options: bool | None = None
    refused_json: frozenset[str] = frozenset()
    said: dict[str, str] = field(default_factory=dict)  # field -> what the server said refusing it
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    probing: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def learn(self, **facts: Any) -> None:
        with self.lock:
            for k, v in facts.items():
                if k == "refused_json":
                    self.refused_json = self.refused_json | v
                elif k == "said":
                    self.said = {**self.said, **v}
                else:
                    setattr(self, k, v)


# What is known of a server before it says anything. Each row with its source.
KNOWN_SERVERS: dict[str, ServerFacts] = {
    # llama.cpp's server (ggml-org/llama.cpp, tools/server/server-common.cpp) reads tool_choice as a
    # string: an object is "Wrong type supplied for parameter 'tool_choice', using default value",
    # and the turn is answered as if "auto" with 200. "required" it enforces.
    "llama.cpp": ServerFacts(server="llama.cpp", named_choice=False, required_choice=True),
    # LM Studio: 400 "Invalid tool_choice type: 'object'. Supported string values: none, auto,
    # required" (can1357/llm-git#13, earendil-works/pi#4266); 400 {"error":"'response_format.type'
    # must be 'json_schema' or 'text'"} for json_object (lmstudio-bug-tracker#189, LoadShine/tada#16)
    "lmstudio": ServerFacts(server="lmstudio", named_choice=False,
                            refused_json=frozenset({"json_object", "json_object_schema"})),
    # llama-cpp-python 0.3.36 (read from the real server): json_schema is HTTP 500 with pydantic's
    # "Input should be 'text' or 'json_object'"; tool_choice "required" is HTTP 500 with an empty
    # message; the named object form it enforces.
    "llama-cpp-python": ServerFacts(server="llama-cpp-python", named_choice=True, required_choice=False,
                                    refused_json=frozenset({"json_schema"})),
}


def facts_for(server: str | None) -> ServerFacts:
    """Fresh facts for a provider: the known row for ``server``, else nothing known."""
    row = KNOWN_SERVERS.get(server or "")
    if row is None:
        return ServerFacts(server=server)
    return replace(row, said={}, lock=threading.Lock(), probing=threading.Lock())


# --------------------------------------------------------------------------- JSON


def json_form(facts: ServerFacts, ladder: tuple[str, ...], avoid: str | None = None) -> str | None:
    """The first form of ``ladder`` the server has not refused, other than ``avoid`` (the form of
    a reply that did not fit); None when every one was refused."""
    for form in ladder:
        if form not in facts.refused_json and form != avoid:
            return form
    return None if avoid is None else json_form(facts, ladder)


def json_notice(form: str, ladder: tuple[str, ...], facts: ServerFacts, avoid: str | None) -> Notice:
    """The reply's ``json_form`` notice: the form sent, and why not the first one."""
    text = f"JSON asked for as {JSON_FORM_WORDS[form]}"
    why = []
    skipped = [f for f in ladder[: ladder.index(form)] if f in facts.refused_json]
    if skipped:
        said = facts.said.get("response_format")
        why.append("the server refused " + " and ".join(skipped) + (f" ({said})" if said else ""))
    if avoid is not None and avoid != form:
        why.append(f"a reply in {avoid} did not fit, so asked again in this form")
    return Notice("json_form", text + (": " + "; ".join(why) if why else ""), form)


# --------------------------------------------------------------------------- tool_choice


def tool_choice_plan(
    facts: ServerFacts, choice: Any, tool_names: list[str]
) -> tuple[Any, list[str] | None, Notice | None]:
    """What to send for a canonical ``choice`` (None, "none", "required" or {"name": ...}):
    the wire value (None: leave it out), the tools to offer (None: all of them) and a notice
    when what is sent differs from what was asked."""
    if choice is None or choice == "auto" or choice == "none" or not tool_names:
        return (None if choice in (None, "auto") else choice), None, None
    if choice == "required":
        if facts.required_choice is not False:
            return "required", None, None
        if facts.named_choice is not False and len(tool_names) == 1:
            name = tool_names[0]
            return {"type": "function", "function": {"name": name}}, None, Notice(
                "tool_choice", f"tool_choice sent as the named tool {name}: this server does not take 'required'",
                "named")
        return None, None, Notice("tool_choice", "tool_choice 'required' left out: this server takes neither "
                                  "'required' nor a named tool, so a call cannot be forced here", "none")
    name = choice["name"]
    if facts.named_choice is not False:
        return {"type": "function", "function": {"name": name}}, None, None
    who = facts.server or "this server"
    if facts.required_choice is not False:
        return "required", [name], Notice(
            "tool_choice", f"tool_choice sent as 'required' with only {name} offered: {who} does not take a "
            "named tool_choice" + (f" ({facts.said['tool_choice']})" if facts.said.get("tool_choice") else ""),
            "required")
    return None, [name], Notice("tool_choice", f"only {name} offered and tool_choice left out: {who} takes neither "
                                "a named tool_choice nor 'required', so the call cannot be forced", "none")


# --------------------------------------------------------------------------- refusals

_REFUSING = r"(?:not supported|unsupported|not allowed|not permitted|invalid|must be|unknown|unrecognized|extra)"
_FIELDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("response_format", re.compile(
        r"'response_format\.type' must be"  # LM Studio (lmstudio-bug-tracker#189, #307)
        r"|'loc': \('body', 'response_format'"  # llama-cpp-python's pydantic error (HTTP 500)
        rf"|response_format[^\n]{{0,80}}{_REFUSING}|{_REFUSING}[^\n]{{0,40}}response_format"
        r"|json_schema[^\n]{0,40}(?:not supported|unsupported|unavailable)|response_format type is unavailable",
        re.I)),
    ("tool_choice", re.compile(
        r"Invalid tool_choice type"  # LM Studio (can1357/llm-git#13)
        r"|Tool choice must be 'auto'"  # mlx-openai-server (cubist38/mlx-openai-server#49)
        r"|Unsupported param: tool_choice"  # llama.cpp without --jinja
        r"|Only 'auto' or 'none' tool_choice"  # vLLM's Responses API (vllm-project/vllm#53626)
        r"|'loc': \('body', 'tool_choice'"
        rf"|tool_choice[^\n]{{0,80}}{_REFUSING}",
        re.I)),
    # vLLM: [{'type': 'extra_forbidden', 'loc': ('body', 'stream_options'), 'msg': 'Extra inputs are not
    # permitted'}] (modelscope/ms-agent#489); Azure AI: "Extra parameters ['stream_options'] are not
    # allowed" (CherryHQ/cherry-studio#9214); proxies: "Unknown parameter: 'stream_options'"
    # (QuantumNous/new-api#418); Fireworks: "Extra inputs are not permitted, field: 'stream_options'"
    # (FlowiseAI/Flowise#2866)
    ("stream_options", re.compile(r"stream_options", re.I)),
)


_PYDANTIC_MSG = re.compile(r"""'msg': (?:"([^"]{1,200})"|'([^']{1,200})')""")


def what_was_said(err: ProviderError) -> str:
    """The refusal in a few words for a notice: the status and the server's own sentence (the
    message inside a validation error dump, when it is one)."""
    text = err.message.split(": ", 1)[1] if ": " in err.message else err.message
    m = _PYDANTIC_MSG.search(text)
    if m is not None:
        text = m.group(1) or m.group(2)
    text = " ".join(text.split())
    return f"HTTP {err.status}: {text[:160]}" + ("..." if len(text) > 160 else "")


def refused_field(err: ProviderError, sent: dict[str, Any]) -> str | None:
    """The field of the request ``sent`` this error refuses ("response_format", "tool_choice",
    "stream_options"), or None when it is not such a refusal."""
    if err.status is None or err.status < 400 or err.kind not in (ErrorKind.INVALID, ErrorKind.OVERLOAD):
        return None
    text = " ".join(x for x in (err.message, err.body or "") if x)
    for name, pattern in _FIELDS:
        if name in sent and pattern.search(text):
            return name
    return None


_JINJA = re.compile(r"tools param requires --jinja flag", re.I)


def tools_refused(provider: str, err: ProviderError, tools: int) -> ProviderError | None:
    """llama.cpp started without its template engine refuses tools with a 500: say what to do."""
    if not _JINJA.search(" ".join(x for x in (err.message, err.body or "") if x)):
        return None
    return ProviderError(
        provider, ErrorKind.INVALID,
        f"{provider}: this server cannot take tools: it is a llama.cpp server started without --jinja "
        f"(it answered '{err.message}'), so the {tools} tool(s) cannot be sent. Start llama-server with --jinja "
        "(and a model or --chat-template-file whose template renders tools), or send without tools.",
        status=err.status, code="tools_unsupported", body=err.body, cause=err,
    )


# --------------------------------------------------------------------------- probing /props

_VERSION_TAIL = re.compile(r"/v\d+[a-z0-9]*/?$")


def props_url(base_url: str) -> str:
    """llama.cpp serves /props beside its /v1 routes, at the server's root."""
    return _VERSION_TAIL.sub("", base_url.rstrip("/")) + "/props"


def read_props(data: Any, url: str) -> dict[str, Any]:
    """Facts from a ``GET /props`` answer (nothing from what is not llama.cpp's shape)."""
    if not isinstance(data, dict) or not (
        "chat_template_caps" in data or "default_generation_settings" in data or "build_info" in data
    ):
        return {}
    facts: dict[str, Any] = {"server": "llama.cpp", "named_choice": False}
    caps = data.get("chat_template_caps")
    if isinstance(caps, dict):
        off = [k for k in ("supports_tool_calls", "supports_tools") if caps.get(k) is False]
        if off:
            facts["tools"] = False
            facts["tools_said"] = f"GET {url} says chat_template_caps.{off[0]} is false"
        elif caps.get("supports_tool_calls") is True:
            facts["tools"] = True
    return facts


def tools_unsupported_error(provider: str, facts: ServerFacts, tools: int) -> ProviderError:
    """The error for a send with tools to a server whose template cannot render them."""
    return ProviderError(
        provider, ErrorKind.INVALID,
        f"{provider}: this server cannot take tools: its chat template has no tool support ({facts.tools_said}), "
        f"so the {tools} tool(s) would be left out of the prompt and a call the model wrote would come back as "
        "plain text. Start llama-server with --jinja and a chat template that renders tools "
        "(--chat-template-file, or a model whose own template has tool support); for llama-cpp-python, "
        "--chat_format chatml-function-calling. Or send without tools.",
        code="tools_unsupported",
    )
