"""Each wire's option table: one row per option, and what a request built with an option reads
back as that option (building and importing read the same row). Also what each wire says it
can carry (SUPPORTS) is what its conversion does."""

from __future__ import annotations

import base64
import inspect
from collections import Counter
from types import ModuleType
from typing import Any

import pytest

from providerkit_nb.core.errors import ErrorKind, ProviderError
from providerkit_nb.core.messages import FilePart, TextPart, UserMessage
from providerkit_nb.core.structured import json_format
from providerkit_nb.core.tools import ToolDefinition
from providerkit_nb.providers import factory
from providerkit_nb.providers.base import Provider, WireProvider
from providerkit_nb.wire import anthropic, gemini, openai_chat, openai_responses
from providerkit_nb.wire.options import CallOptions

WIRES: dict[str, ModuleType] = {
    "openai_chat": openai_chat,
    "openai_responses": openai_responses,
    "anthropic": anthropic,
    "gemini": gemini,
}

# The call options that are not a field of any request body: where the session id goes and the
# model are the provider's business; the rest steer the call, not the body.
NOT_IN_A_BODY = {
    "session_id", "model", "extra_body", "json_with_tools", "avoid_json_form", "strip_reasoning", "on_activity",
}

TOOLS = [
    ToolDefinition("read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}}),
    ToolDefinition("list_dir", "List a folder.", {"type": "object", "properties": {}}),
]
PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
    "additionalProperties": False,
}

# One value per option, as a caller writes it, and the canonical value it reads back as.
VALUES: dict[str, tuple[Any, Any]] = {
    "max_tokens": (1500, 1500),
    "temperature": (0.25, 0.25),
    "top_p": (0.5, 0.5),
    "stop": ("END", ["END"]),
    "effort": ("low", "low"),
    "tool_choice": ("read_file", {"name": "read_file"}),
    "parallel_tool_calls": (False, False),
    "service_tier": ("flex", "flex"),
    "json": (PERSON, PERSON),
}
# What a wire cannot carry: asking for it is an INVALID error, before anything is sent.
REFUSED = {"anthropic": {"service_tier"}, "gemini": {"service_tier", "parallel_tool_calls"}}
# What a wire carries but a recording cannot tell apart (Anthropic's JSON rides in the system
# prompt, as text), or has no field for (Responses has no stop sequences).
NOT_READ_BACK = {"anthropic": {"json"}, "openai_responses": {"stop"}}
# What a body always states (Anthropic's max_tokens is mandatory), and what comes with an option
# in the wire's own shape (Anthropic's one-call limit rides in a tool_choice object).
ALWAYS = {"anthropic": {"max_tokens": 8192}}
WITH = {("anthropic", "parallel_tool_calls"): {"tool_choice": "auto"}}


def provider(wire: str) -> WireProvider:
    made = {
        "openai_chat": lambda: factory.openai(model="gpt-5-mini", api_key="k"),
        "openai_responses": lambda: factory.responses(model="gpt-5-mini", api_key="k"),
        # a model of the budget dialect: sampling goes with thinking off
        "anthropic": lambda: factory.anthropic(model="claude-sonnet-4-5", api_key="k"),
        "gemini": lambda: factory.gemini(model="gemini-3-flash", api_key="k"),
    }[wire]()
    return made


def test_create_stream_takes_every_call_option_by_its_name() -> None:
    params = inspect.signature(Provider.create_stream).parameters
    keywords = [n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert keywords == list(CallOptions.names())


@pytest.mark.parametrize("wire", WIRES)
def test_one_row_per_option_and_every_body_option_has_one(wire: str) -> None:
    names = [row.name for row in WIRES[wire].OPTIONS.rows]
    assert [n for n, c in Counter(names).items() if c > 1] == []
    assert set(names) == set(CallOptions.names()) - NOT_IN_A_BODY


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("option", VALUES)
def test_an_option_sent_reads_back_as_itself(wire: str, option: str) -> None:
    p = provider(wire)
    given, canonical = VALUES[option]
    opts = CallOptions(**{option: given})
    messages = [UserMessage("hi")]
    if option in REFUSED.get(wire, ()):
        with pytest.raises(ProviderError) as exc:
            p.build_request(messages, TOOLS, opts, stream=True)
        assert exc.value.kind is ErrorKind.INVALID and option in exc.value.message
        return
    wr = p.build_request(messages, TOOLS, opts, stream=True)
    back = WIRES[wire].import_request(wr.url, wr.body)
    read = {k: v for k, v in back.options.items() if k != "model"}
    always = {k: v for k, v in ALWAYS.get(wire, {}).items() if k != option}
    expected = {**always, **WITH.get((wire, option), {})}
    if option in NOT_READ_BACK.get(wire, ()):
        assert read == expected
        return
    if option == "json":
        assert json_format(read.pop("json")).schema == canonical  # type: ignore[union-attr]
    else:
        assert read.pop(option) == canonical
    assert read == expected  # and nothing else was read into the request


@pytest.mark.parametrize("wire", WIRES)
def test_a_file_the_wire_cannot_carry_is_refused_and_one_it_can_is_sent(wire: str) -> None:
    p = provider(wire)
    carried = {
        "openai_chat": set(),
        "openai_responses": {"application/pdf"},
        "anthropic": {"application/pdf", "text/plain"},
        "gemini": {"application/pdf", "text/plain", "audio/wav", "video/mp4"},
    }[wire]
    assert WIRES[wire].SUPPORTS.files is None or set(WIRES[wire].SUPPORTS.files) == carried
    data = base64.b64encode(b"%PDF-1.4 or some text").decode()
    for mime in sorted(carried | {"application/zip"}):
        msg = UserMessage([TextPart("read it"), FilePart(mime, data, "f")])
        if mime in carried or WIRES[wire].SUPPORTS.files is None:
            body = p.build_request([msg], None, CallOptions(), stream=True).body
            assert data in repr(body) or "some text" in repr(body), mime
        else:
            with pytest.raises(ProviderError) as exc:
                p.build_request([msg], None, CallOptions(), stream=True)
            assert exc.value.kind is ErrorKind.INVALID and mime in exc.value.message


def test_a_named_tool_choice_goes_in_the_chat_form_even_without_tools() -> None:
    # it used to go as our own {"name": ...}, a shape no Chat server reads
    p = provider("openai_chat")
    body = p.build_request([UserMessage("hi")], None, CallOptions(tool_choice="read_file"), stream=True).body
    assert body["tool_choice"] == {"type": "function", "function": {"name": "read_file"}}
