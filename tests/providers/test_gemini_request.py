"""What the Gemini wire sends: round trips against recorded requests, and the request rules."""

from __future__ import annotations

import base64
import json

import pytest

from providerkit_nb.core.errors import ProviderError
from providerkit_nb.core.messages import (
    AssistantMessage,
    ImagePart,
    ReasoningItems,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from providerkit_nb.core.tools import ToolDefinition
from providerkit_nb.core.turn import collect_turn
from providerkit_nb.providers import gemini as g
from providerkit_nb.wire import gemini as gw
from providerkit_nb.wire.options import CallOptions

from .gemini_cases import UPSTREAM, gemini_cases, serving

# the exact texts, pinned here (not imported from the code under test)
BYPASS = "skip_thought_signature_validator"

CASES = list(gemini_cases(UPSTREAM)) if UPSTREAM.is_dir() else []
HISTORY = [c for c in CASES if any(x.get("role") == "model" for x in c.request.get("contents", []))]


def _sig_bytes(s: str) -> bytes:
    s = s.replace("-", "+").replace("_", "/")
    return base64.b64decode(s + "=" * (-len(s) % 4))


def _get(d, camel, snake):
    return d.get(camel, d.get(snake))


def _norm(contents, *, ids=True):
    """The fields that matter: role, each part's data, ids where sent, signatures as bytes
    (one recorder re-encoded them in the URL-safe alphabet). Empty unsigned text parts are
    dropped: the recorded clients sent some, we never do."""
    out = []
    for c in contents:
        parts = []
        for p in c["parts"]:
            q = {}
            sig = _get(p, "thoughtSignature", "thought_signature")
            if sig:
                q["sig"] = _sig_bytes(sig)
            fc = _get(p, "functionCall", "function_call")
            fr = _get(p, "functionResponse", "function_response")
            if fc is not None:
                q["call"] = (fc["name"], fc.get("args") or {}, fc.get("id") if ids else None)
            elif fr is not None:
                q["response"] = (fr["name"], fr["response"], fr.get("id") if ids else None)
            elif _get(p, "inlineData", "inline_data") is not None:
                d = _get(p, "inlineData", "inline_data")
                q["data"] = (_get(d, "mimeType", "mime_type"), d["data"])
            elif "text" in p:
                if not p["text"] and not sig:
                    continue
                q["text"] = (p["text"], bool(p.get("thought")))
            else:
                q["other"] = p
            parts.append(q)
        out.append((c.get("role", "user"), parts))
    return out


def _build(imp, model=None):
    p = g.GeminiProvider(model=model or imp.model, api_key="k")
    opts = CallOptions(**imp.options)
    return p.build_request(p.prepare(imp.messages), imp.tools, opts, stream=imp.stream)


@pytest.mark.upstream
def test_recordings_with_history_exist():
    assert len(HISTORY) == 6  # llm-gemini x3, mirascope stream + sync, pydantic-ai


@pytest.mark.upstream
@pytest.mark.parametrize("case", HISTORY, ids=lambda c: c.id)
def test_round_trip_of_a_recorded_history(case):
    """Imported from the recorded request and built again: the same contents, signatures in place."""
    imp = gw.import_request(case.url, case.request)
    wr = _build(imp)
    assert _norm(wr.body["contents"]) == _norm(case.request["contents"])
    sigs = [p for c in case.request["contents"] for p in c["parts"] if _get(p, "thoughtSignature", "thought_signature")]
    assert sigs, "these histories all carry at least one signature"
    si = _get(case.request, "systemInstruction", "system_instruction")
    if si:
        assert wr.body["systemInstruction"] == {"parts": [{"text": p["text"]} for p in si["parts"]]}
    else:
        assert "systemInstruction" not in wr.body
    recorded = [d for t in case.request.get("tools", []) for d in t["functionDeclarations"]]
    ours = [d for t in wr.body.get("tools", []) for d in t["functionDeclarations"]]
    assert [(d["name"], d["description"] or "") for d in ours] == [(d["name"], d["description"] or "") for d in recorded]
    for o, r in zip(ours, recorded, strict=True):
        schema = _get(r, "parametersJsonSchema", "parameters_json_schema") or r["parameters"]
        assert set(o["parametersJsonSchema"]["properties"]) == set(schema["properties"])
        assert o["parametersJsonSchema"].get("required", []) == schema.get("required", [])
        assert o["parametersJsonSchema"]["type"] == "object"


def _next_pairs():
    by_path = {}
    for c in CASES:
        by_path.setdefault(c.path, []).append(c)
    for cases in by_path.values():
        for a, b in zip(cases, cases[1:], strict=False):
            if a.status == 200 and any(x.get("role") == "model" for x in b.request.get("contents", [])):
                yield a, b


PAIRS = list(_next_pairs())


@pytest.mark.upstream
@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: p[1].id)
def test_streamed_turn_goes_back_as_the_next_recorded_request(pair):
    """The turn WE parsed from response k, plus the recorded tool results, becomes request k+1:
    every signature on the part it came with."""
    first, nxt = pair
    imp0 = gw.import_request(first.url, first.request)
    p = g.replay_provider(first.url, first.request, serving(first))
    if imp0.stream:
        turn = collect_turn(p.create_stream(imp0.messages, imp0.tools, **imp0.options))
    else:
        turn = p.complete(imp0.messages, imp0.tools, **imp0.options)
    imp1 = gw.import_request(nxt.url, nxt.request)
    msgs = imp1.messages
    last_model = max(i for i, m in enumerate(msgs) if isinstance(m, AssistantMessage))
    old_ids = [c.id for c in msgs[last_model].tool_calls or ()]
    new_ids = [c.id for c in turn.message.tool_calls or ()]
    assert len(old_ids) == len(new_ids)
    remap = dict(zip(old_ids, new_ids, strict=True))
    msgs = msgs[:last_model] + [turn.message] + [
        ToolMessage(remap.get(m.tool_call_id, m.tool_call_id), m.name, m.content) if isinstance(m, ToolMessage) else m
        for m in msgs[last_model + 1:]
    ]
    imp1.messages = msgs
    wr = _build(imp1)
    assert _norm(wr.body["contents"], ids=False) == _norm(nxt.request["contents"], ids=False)


@pytest.mark.upstream
def test_pairs_cover_signed_calls():
    assert len(PAIRS) == 6  # llm-gemini 2 + 1, mirascope stream + sync, pydantic-ai


# --------------------------------------------------------------------------- request shape


def _provider(model="gemini-2.5-flash", **kw):
    return g.GeminiProvider(model=model, api_key="AIza-secret-key-0000", **kw)


def _req(messages, tools=None, model="gemini-2.5-flash", stream=True, **opts):
    p = _provider(model)
    return p.build_request(p.prepare(messages), tools, CallOptions(**opts), stream=stream)


HELLO = [SystemMessage("Be terse."), SystemMessage("Use tools."), UserMessage("hi")]
TOOL = ToolDefinition("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})


def test_url_header_and_system_instruction():
    wr = _req(HELLO)
    assert wr.url == "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert "key=" not in wr.url
    assert wr.headers == {"x-goog-api-key": "AIza-secret-key-0000"}
    assert "AIza-secret-key-0000" not in repr(wr) + repr(_provider())
    assert wr.body["systemInstruction"] == {"parts": [{"text": "Be terse."}, {"text": "Use tools."}]}
    assert wr.body["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]
    assert "generationConfig" not in wr.body
    ns = _req(HELLO, stream=False)
    assert ns.url.endswith("/models/gemini-2.5-flash:generateContent") and not ns.stream
    assert _provider("models/gemini-2.5-pro").model == "gemini-2.5-pro"


def test_requests_carry_the_key_header_over_the_wire():
    seen = []
    body = b'data: {"candidates":[{"content":{"parts":[{"text":"ok"}],"role":"model"},"finishReason":"STOP"}]}\r\n\r\n'
    p = _provider(transport=serving(200, [body], seen=seen))
    assert collect_turn(p.create_stream(HELLO)).message.content == "ok"
    assert seen[0].headers["x-goog-api-key"] == "AIza-secret-key-0000"
    assert "key=" not in str(seen[0].url) and "authorization" not in seen[0].headers


@pytest.mark.parametrize(
    ("model", "effort", "expected"),
    [
        ("gemini-3-flash-preview", "none", {"thinkingLevel": "MINIMAL"}),
        ("gemini-3-flash-preview", "low", {"thinkingLevel": "LOW", "includeThoughts": True}),
        ("gemini-3-flash-preview", "medium", {"thinkingLevel": "MEDIUM", "includeThoughts": True}),
        ("gemini-3-pro-preview", "max", {"thinkingLevel": "HIGH", "includeThoughts": True}),
        ("gemini-3-pro-preview", "none", {"thinkingLevel": "LOW"}),
        ("gemini-2.5-flash", "none", {"thinkingBudget": 0}),
        ("gemini-2.5-flash", "high", {"thinkingBudget": 8192, "includeThoughts": True}),
        ("gemini-2.5-pro", "none", {"thinkingBudget": 128}),
        ("gemini-2.5-pro", "max", {"thinkingBudget": 16384, "includeThoughts": True}),
        ("gemini-2.0-flash", "high", None),
    ],
)
def test_effort_to_thinking_config(model, effort, expected):
    wr = _req(HELLO, model=model, effort=effort)
    assert wr.body.get("generationConfig", {}).get("thinkingConfig") == expected
    silent = _req(HELLO, model=model)
    assert "generationConfig" not in silent.body
    if expected is not None:
        assert wr.body != silent.body  # "none" is not silence


def test_generation_options_and_tool_choice():
    wr = _req(HELLO, [TOOL], max_tokens=50, temperature=0.2, top_p=0.9, stop="END", tool_choice="read")
    assert wr.body["generationConfig"] == {"maxOutputTokens": 50, "temperature": 0.2, "topP": 0.9, "stopSequences": ["END"]}
    assert wr.body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["read"]}}
    assert _req(HELLO, [TOOL], tool_choice="none").body["toolConfig"] == {"functionCallingConfig": {"mode": "NONE"}}
    assert _req(HELLO, [TOOL], tool_choice="required").body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
    assert "toolConfig" not in _req(HELLO, [TOOL], tool_choice="auto").body
    assert "toolConfig" not in _req(HELLO, tool_choice="required").body  # no tools, no config


def test_parallel_tool_calls_false_is_refused_before_any_request():
    with pytest.raises(ProviderError) as ei:
        _req(HELLO, [TOOL], parallel_tool_calls=False)
    assert ei.value.kind == "invalid" and "parallel_tool_calls" in str(ei.value)


def test_schema_is_sanitised_for_gemini():
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "additionalProperties": True,
        "$defs": {"X": {"type": "string"}},
        "properties": {
            "mode": {"const": "fast"},
            "n": {"type": ["integer", "null"]},
            "tags": {"type": "array"},
            "when": {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]},
            "kind": {"enum": ["a", 1, True]},
            "meta": {"type": "object", "patternProperties": {"^x": {"type": "string"}}, "additionalProperties": False},
        },
    }
    out = _req(HELLO, [ToolDefinition("t", "d", schema)]).body["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"]
    assert out == {
        "type": "object",
        "properties": {
            "mode": {"enum": ["fast"]},
            "n": {"type": "integer", "nullable": True},
            "tags": {"type": "array", "items": {"type": "string"}},
            "when": {"type": "string", "format": "date", "nullable": True},
            "kind": {"enum": ["a", "1", "true"]},
            "meta": {"type": "object", "additionalProperties": False},
        },
    }
    assert gw.gemini_tool_schema("nope") == {"type": "object", "properties": {}}


def test_empty_parts_are_never_sent():
    msgs = [
        UserMessage(""),
        UserMessage([TextPart(""), TextPart("look")]),
        AssistantMessage(""),  # placeholder: dropped
        AssistantMessage("sure"),
        UserMessage([]),
        UserMessage("next"),
    ]
    contents = _req(msgs).body["contents"]
    assert contents == [
        {"role": "user", "parts": [{"text": "look"}]},
        {"role": "model", "parts": [{"text": "sure"}]},
        {"role": "user", "parts": [{"text": "next"}]},
    ]
    assert all(c["parts"] and all(p for p in c["parts"]) for c in contents)
    with pytest.raises(ProviderError, match="nothing to send"):
        _req([SystemMessage("only a system prompt")])


def test_tool_turn_ids_names_and_results():
    msgs = [
        UserMessage([TextPart("what is in these?"), ImagePart("image/png", "iVBORw0KGgo=")]),
        AssistantMessage("Reading.", tool_calls=[
            ToolCall("srv_id_1", "read", '{"path": "a"}', "c2lnMQ=="),
            ToolCall("call_1", "read", '{"path": "b'),  # made-up id, args cut mid-string
            ToolCall("call_7_2", "count", "[1, 2]"),  # repair renamed a made-up id
        ]),
        ToolMessage("srv_id_1", "read", '{"size": 3}'),
        ToolMessage("call_1", "", "plain text", images=[ImagePart("image/png", "AAAA")]),
        ToolMessage("call_7_2", "count", "15"),
    ]
    c = _req(msgs).body["contents"]
    assert c[0]["parts"][1] == {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    assert c[1] == {"role": "model", "parts": [
        {"text": "Reading."},
        {"functionCall": {"name": "read", "args": {"path": "a"}, "id": "srv_id_1"}, "thoughtSignature": "c2lnMQ=="},
        {"functionCall": {"name": "read", "args": {"path": "b"}}},
        {"functionCall": {"name": "count", "args": {"value": [1, 2]}}},
    ]}
    assert c[2] == {"role": "user", "parts": [
        {"functionResponse": {"name": "read", "response": {"size": 3}, "id": "srv_id_1"}},
        {"functionResponse": {"name": "read", "response": {"output": "plain text"}}},
        {"inlineData": {"mimeType": "image/png", "data": "AAAA"}},
        {"functionResponse": {"name": "count", "response": {"output": 15}}},
    ]}


def _signed_turn():
    return AssistantMessage(
        "Hello there. More.",
        reasoning="think A. think B.",
        reasoning_items=ReasoningItems("gemini", [
            {"type": "thought", "offset": 9, "length": 8, "signature": "dGhvdWdodA=="},
            {"type": "text", "offset": 0, "length": 12, "signature": "dGV4dA=="},
            {"type": "text", "offset": 18, "length": 0, "signature": "ZW5k"},
            {"type": "part", "part": {"executableCode": {"language": "PYTHON", "code": "1+1"}}},
        ]),
    )


def test_signed_text_and_thought_parts_go_back_on_their_parts():
    c = _req([UserMessage("hi"), _signed_turn(), UserMessage("and?")]).body["contents"]
    assert c[1]["parts"] == [
        {"text": "think B.", "thought": True, "thoughtSignature": "dGhvdWdodA=="},
        {"text": "Hello there.", "thoughtSignature": "dGV4dA=="},
        {"text": " More."},
        {"text": "", "thoughtSignature": "ZW5k"},
        {"executableCode": {"language": "PYTHON", "code": "1+1"}},
    ]


def test_reasoning_signed_by_another_provider_is_never_sent():
    turn = _signed_turn()
    turn.reasoning_items = ReasoningItems("anthropic", [{"type": "thinking", "thinking": "x", "signature": "dGV4dA=="}])
    c = _req([UserMessage("hi"), turn, UserMessage("and?")]).body["contents"]
    assert c[1]["parts"] == [{"text": "Hello there. More."}]
    assert "thoughtSignature" not in json.dumps(c) and "thinking" not in json.dumps(c)


def _foreign_tool_history():
    return [
        UserMessage("weather?"),
        AssistantMessage("", tool_calls=[ToolCall("toolu_1", "weather", '{"city": "Oslo"}'), ToolCall("toolu_2", "weather", '{"city": "Rome"}')]),
        ToolMessage("toolu_1", "weather", "rain"),
        ToolMessage("toolu_2", "weather", "sun"),
    ]


def test_gemini3_gets_the_documented_bypass_for_calls_it_never_signed():
    old = [UserMessage("before"), AssistantMessage("", tool_calls=[ToolCall("x1", "weather", "{}")]), ToolMessage("x1", "weather", "ok")]
    msgs = old + _foreign_tool_history()
    parts = [p for c in _req(msgs, model="gemini-3-pro-preview").body["contents"] if c["role"] == "model" for p in c["parts"]]
    assert [p.get("thoughtSignature") for p in parts] == [None, BYPASS, None]  # current turn, first call only
    parts25 = [p for c in _req(msgs, model="gemini-2.5-flash").body["contents"] if c["role"] == "model" for p in c["parts"]]
    assert all("thoughtSignature" not in p for p in parts25)


def test_gemini_signed_calls_keep_their_own_signature():
    msgs = _foreign_tool_history()
    msgs[1].tool_calls[0].thought_signature = "b3du"
    parts = _req(msgs, model="gemini-3-flash-preview").body["contents"][1]["parts"]
    assert [p.get("thoughtSignature") for p in parts] == ["b3du", None]


# --------------------------------------------------------------------------- importer


def test_importer_reads_both_spellings_and_pairs_responses():
    contents = [
        {"role": "user", "parts": [{"text": "go"}, {"inline_data": {"mime_type": "application/pdf", "data": "JVBERi0="}}]},
        {"role": "model", "parts": [
            {"text": "thinking", "thought": True, "thought_signature": "dGg="},
            {"function_call": {"name": "a", "args": {"x": 1}}, "thoughtSignature": "c2ln"},
            {"functionCall": {"name": "b", "args": {}, "id": "srv9"}},
        ]},
        {"role": "user", "parts": [
            {"functionResponse": {"name": "b", "response": {"ok": True}, "id": "srv9"}},
            {"function_response": {"name": "a", "response": {"output": "15"}}},
            {"inlineData": {"mimeType": "image/png", "data": "AAAA"}},
        ]},
    ]
    msgs = gw.from_gemini_contents(contents, {"parts": [{"text": "sys"}]})
    assert [m.role for m in msgs] == ["system", "user", "assistant", "tool", "tool"]
    assert msgs[1].content[1].to_dict() == {"type": "file", "mime_type": "application/pdf", "data": "JVBERi0="}
    a = msgs[2]
    assert a.reasoning == "thinking" and a.content == ""
    assert a.reasoning_items.to_dict() == {"provider": "gemini", "items": [{"type": "thought", "offset": 0, "length": 8, "signature": "dGg="}]}
    assert [(c.id, c.name, c.arguments, c.thought_signature) for c in a.tool_calls] == [
        ("call_0", "a", '{"x":1}', "c2ln"), ("srv9", "b", "{}", None)]
    assert (msgs[3].tool_call_id, msgs[3].content) == ("srv9", '{"ok":true}')
    assert (msgs[4].tool_call_id, msgs[4].content) == ("call_0", '"15"')  # the string "15", kept a string
    assert msgs[4].images[0].data == "AAAA"
    # and back: the same contents (bar spelling)
    p = _provider("gemini-2.5-flash")
    back = p.build_request(msgs, None, CallOptions(), stream=True).body["contents"]
    assert _norm(back) == _norm(contents)


def test_importer_refuses_what_it_cannot_hold():
    with pytest.raises(ValueError, match="fileData"):
        gw.from_gemini_contents([{"role": "user", "parts": [{"fileData": {"fileUri": "gs://x"}}]}])
    with pytest.raises(ValueError, match="answers no function call"):
        gw.from_gemini_contents([{"role": "user", "parts": [{"functionResponse": {"name": "a", "response": {}}}]}])
    with pytest.raises(ValueError, match="role"):
        gw.from_gemini_contents([{"role": "system", "parts": [{"text": "x"}]}])


def test_public_names():
    from providerkit_nb.dialects import from_gemini_contents

    assert from_gemini_contents is gw.from_gemini_contents
    assert gw.matches("https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent")
    assert not gw.matches("https://api.openai.com/v1/chat/completions")
    imp = gw.import_request(
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse",
        {"contents": [{"role": "user", "parts": [{"text": "q"}]}], "generationConfig": {"maxOutputTokens": 9,
         "thinkingConfig": {"thinking_level": "HIGH"}}, "toolConfig": {"functionCallingConfig": {"mode": "ANY"}}},
    )
    assert imp.options == {"model": "gemini-3-pro-preview", "max_tokens": 9, "effort": "high", "tool_choice": "required"}
    assert imp.stream and imp.model == "gemini-3-pro-preview"


def test_factory_and_preset(monkeypatch):
    import providerkit_nb as pk

    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "AIza-from-env-0000")
    p = pk.gemini(model="models/gemini-3-flash-preview")
    assert isinstance(p, g.GeminiProvider) and p.id == "gemini" and p.model == "gemini-3-flash-preview"
    assert p.base_url == "https://generativelanguage.googleapis.com"
    assert "AIza-from-env-0000" not in repr(p)
    row = pk.PRESETS["gemini"]
    assert (row.wire, row.env_keys) == ("gemini", ("GEMINI_API_KEY", "GOOGLE_API_KEY"))
    q = pk.preset("gemini")
    assert q.model == row.default_model
    wr = q.build_request([UserMessage("hi")], None, CallOptions(), stream=True)
    assert wr.headers["x-goog-api-key"] == "AIza-from-env-0000"
