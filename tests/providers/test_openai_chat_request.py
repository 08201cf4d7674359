"""What the Chat wire sends: history rules, effort dialects, session id placement, and, for every
recorded request that carried a history, equivalence with what the recording sent."""

from __future__ import annotations

import json
from typing import Any

import pytest

from providerkit_nb.core.errors import ErrorKind, ProviderError
from providerkit_nb.core.messages import (
    AssistantMessage,
    FilePart,
    ImagePart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from providerkit_nb.core.tools import ToolDefinition
from providerkit_nb.providers.factory import preset
from providerkit_nb.providers.openai_chat import replay_provider
from providerkit_nb.wire.openai_chat import effort_params, from_openai_messages, import_request
from providerkit_nb.wire.options import CallOptions

from .cassette_loader import cases

CALL = ToolCall("call_1", "read_file", '{"path": "a"}')


def build(p: Any, messages: list[Any], tools: Any = None, **opts: Any) -> dict[str, Any]:
    return p.build_request(messages, tools, CallOptions(**opts), stream=True).body


def test_content_never_null_and_tool_images_follow_the_run() -> None:
    p = preset("openai", model="gpt-4o", api_key="sk-xxxxxxxxxxxxxxxxxxxx")
    img = ImagePart("image/png", "AAAA")
    msgs = [
        UserMessage([TextPart("look"), img]),
        AssistantMessage(content="", tool_calls=[CALL, ToolCall("call_2", "shot", "{}")]),
        ToolMessage("call_1", "read_file", "text"),
        ToolMessage("call_2", "shot", "see image", images=[img]),
        UserMessage("next"),
    ]
    sent = build(p, msgs)["messages"]
    assert sent[0]["content"][1] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    assert sent[1]["content"] == "" and sent[1]["tool_calls"][0]["function"] == {"name": "read_file", "arguments": '{"path": "a"}'}
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool", "user", "user"]
    assert sent[4] == {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}
    assert "name" not in sent[2]


def test_file_parts_are_refused_clearly() -> None:
    p = preset("openai", model="gpt-4o", api_key="sk-xxxxxxxxxxxxxxxxxxxx")
    with pytest.raises(ProviderError) as e:
        build(p, [UserMessage([FilePart("application/pdf", "AAAA")])])
    assert e.value.kind is ErrorKind.INVALID and "application/pdf" in e.value.message


def test_reasoning_goes_back_only_to_deepseek_thinking_mode() -> None:
    msgs = [UserMessage("q"), AssistantMessage(content="", reasoning="because", tool_calls=[CALL]),
            ToolMessage("call_1", "read_file", "x"), AssistantMessage(content="a", tool_calls=[ToolCall("call_2", "f", "{}")]),
            ToolMessage("call_2", "f", "y")]
    ds = preset("deepseek", model="deepseek-reasoner", api_key="k" * 20)
    sent = build(ds, msgs)["messages"]
    assert sent[1]["reasoning_content"] == "because"
    assert sent[3]["reasoning_content"] == ""  # thinking mode 400s without the field
    off = build(ds, msgs, effort="none")
    assert "reasoning_content" not in json.dumps(off["messages"]) and off["thinking"] == {"type": "disabled"}
    chat = build(preset("deepseek", model="deepseek-chat", api_key="k" * 20), msgs)
    assert "reasoning_content" not in json.dumps(chat["messages"])
    for name in ("openai", "groq", "openrouter"):
        body = build(preset(name, model="m", api_key="k" * 20), msgs)
        assert "reasoning_content" not in json.dumps(body["messages"]), name


def test_reasoning_details_only_to_openrouter_and_signed_state_never() -> None:
    from providerkit_nb.core.messages import ReasoningItems

    m = AssistantMessage(content="a", reasoning_details=[{"type": "reasoning.encrypted", "data": "X"}],
                         reasoning_items=ReasoningItems("anthropic", [{"type": "thinking", "signature": "S"}]),
                         tool_calls=[ToolCall("call_1", "f", "{}", thought_signature="G")])
    msgs = [UserMessage("q"), m, ToolMessage("call_1", "f", "r")]
    orr = build(preset("openrouter", model="x/y", api_key="k" * 20), msgs)["messages"][1]
    assert orr["reasoning_details"] == [{"type": "reasoning.encrypted", "data": "X"}]
    oa = json.dumps(build(preset("openai", model="x", api_key="k" * 20), msgs))
    for needle in ("reasoning_details", "reasoning_items", "thought_signature", '"S"', '"G"'):
        assert needle not in oa


@pytest.mark.parametrize(
    ("dialect", "model", "effort", "want"),
    [
        ("openai", "gpt-5", "none", {"reasoning_effort": "minimal"}),  # gpt-5 has no "none" level
        ("openai", "gpt-5.1", "none", {"reasoning_effort": "none"}),
        ("openai", "gpt-5", "max", {"reasoning_effort": "high"}),
        ("deepseek", "deepseek-v4", "low", {"thinking": {"type": "enabled"}, "reasoning_effort": "low"}),
        ("deepseek", "deepseek-v4", "max", {"thinking": {"type": "enabled"}}),
        ("openrouter", "openai/gpt-5-mini", "none", {"reasoning": {"effort": "minimal"}}),
        ("openrouter", "anthropic/claude", "none", {}),
        ("openrouter", "x/y", "max", {"reasoning": {"effort": "max"}}),
        ("opencode-go", "glm-5.3-flash", "low", {"reasoning_effort": "high"}),
        ("opencode-go", "deepseek-v4-pro", "none", {"reasoning_effort": "low"}),
        ("opencode-go", "kimi", "max", {"reasoning_effort": "high"}),
        ("openai", "gpt-5", None, {}),
    ],
)
def test_effort_dialects(dialect: str, model: str, effort: str | None, want: dict[str, Any]) -> None:
    assert effort_params(dialect, effort, model) == want


def test_mimo_max_is_refused_before_any_request() -> None:
    with pytest.raises(ProviderError) as e:
        effort_params("opencode-go", "max", "mimo-v2.6-flash", "opencode-go")
    assert e.value.kind is ErrorKind.INVALID


def test_session_id_goes_where_each_server_wants_it() -> None:
    go = preset("opencode-go", model="glm-5.3-flash", api_key="k" * 20)
    wr = go.build_request([UserMessage("q")], None, CallOptions(session_id="conv-1"), stream=True)
    assert wr.headers["x-opencode-session"] == "conv-1" and "prompt_cache_key" not in wr.body
    wr = go.build_request([UserMessage("q")], None, CallOptions(), stream=True)
    assert wr.headers["x-opencode-session"] == go.instance_session_id
    oa = preset("openai", model="gpt-5", api_key="k" * 20)
    assert build(oa, [UserMessage("q")], session_id="conv-2")["prompt_cache_key"] == "conv-2"
    assert "prompt_cache_key" not in build(preset("groq", api_key="k" * 20), [UserMessage("q")])


def test_body_options() -> None:
    p = preset("openai", model="gpt-5", api_key="k" * 20)
    tools = [ToolDefinition("f", "does f", {"type": "object", "properties": {}})]
    b = build(p, [SystemMessage("s"), UserMessage("q")], tools, max_tokens=50, temperature=0.2, stop="END",
              tool_choice="f", parallel_tool_calls=False)
    assert b["stream_options"] == {"include_usage": True} and b["max_completion_tokens"] == 50
    assert b["stop"] == ["END"] and b["tool_choice"] == {"type": "function", "function": {"name": "f"}}
    assert b["parallel_tool_calls"] is False and b["tools"][0]["function"]["parameters"] == {"type": "object", "properties": {}}
    assert "parallel_tool_calls" not in build(p, [UserMessage("q")], parallel_tool_calls=False)


def test_importer_is_exact() -> None:
    msgs = from_openai_messages([
        {"role": "developer", "content": "be terse"},
        {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,QQ=="}}]},
        {"role": "assistant", "content": None, "reasoning_content": "r", "reasoning_details": [{"type": "reasoning.text", "text": "r"}],
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "out"},
    ])
    assert msgs[0] == SystemMessage("be terse")
    assert msgs[1] == UserMessage([TextPart("hi"), ImagePart("image/png", "QQ==")])
    assert msgs[2] == AssistantMessage(content="", reasoning="r", reasoning_details=[{"type": "reasoning.text", "text": "r"}],
                                       tool_calls=[ToolCall("c1", "f", '{"a": 1}')])
    assert msgs[3] == ToolMessage("c1", "f", "out")
    with pytest.raises(ValueError, match="message 0.*data: URIs"):
        from_openai_messages([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}])
    with pytest.raises(ValueError, match="message 0: unknown role"):
        from_openai_messages([{"role": "bot", "content": "x"}])


# --------------------------------------------------------------------------- recordings

def _with_history(c: Any) -> bool:
    return any(m.get("role") in ("tool", "assistant") for m in c.request.get("messages") or [])


HISTORY = [c for c in cases(wire="openai_chat") if _with_history(c)]


def _norm_messages(msgs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for m in msgs:
        d = {k: v for k, v in m.items() if k != "name"}
        if d.get("content") is None:
            d["content"] = ""
        if d["role"] == "assistant" and "tool_calls" in d:
            d["tool_calls"] = [{"id": t["id"], "type": t.get("type", "function"),
                                "function": {"name": t["function"]["name"], "arguments": t["function"]["arguments"]}}
                               for t in d["tool_calls"]]
        out.append(d)
    return out


def _norm_tools(tools: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    return [{"name": t["function"]["name"], "description": t["function"].get("description") or "",
             "parameters": t["function"].get("parameters")} for t in tools or []]


@pytest.mark.upstream
def test_there_are_histories_to_check() -> None:
    assert len(HISTORY) >= 10  # llm x3, mirascope x3, deepseek x2, groq x2, pydantic-ai x1


@pytest.mark.upstream
@pytest.mark.parametrize("case", HISTORY, ids=lambda c: c.id)
def test_built_request_equals_the_recorded_one(case: Any) -> None:
    imported = import_request(case.url, case.request)
    p = replay_provider(case.url, case.request, None)
    body = p.build_request(imported.messages, imported.tools, CallOptions(**imported.options), stream=imported.stream).body
    assert _norm_messages(body["messages"]) == _norm_messages(case.request["messages"])
    assert _norm_tools(body.get("tools")) == _norm_tools(case.request.get("tools"))
