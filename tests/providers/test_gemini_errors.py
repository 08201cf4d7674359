"""Gemini stream endings and failures: in-stream Status errors, blocked prompts, cuts, finish
reasons; and the constructed cassettes (400s and a 429 no recording had) replayed with vcrpy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import vcr

from providerkit_nb.core.errors import ProviderError
from providerkit_nb.core.messages import UserMessage
from providerkit_nb.core.repair import repair_history
from providerkit_nb.core.turn import collect_turn
from providerkit_nb.providers.gemini import GeminiProvider
from providerkit_nb.wire import gemini as rules
from providerkit_nb.wire.validate import validate_history

from .gemini_cases import rechunk, serving

OWN = Path(__file__).resolve().parents[2] / "cassettes"
KEY = "AIza-test-not-a-key-42"


def _frame(obj) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\r\n\r\n"


def _chunk(parts, finish=None, usage=None, **extra):
    cand = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish:
        cand["finishReason"] = finish
    d = {"candidates": [cand], **extra}
    if usage:
        d["usageMetadata"] = usage
    return d


def _run(body: bytes, *, pieces: int | None = None, model="gemini-2.5-flash"):
    chunks = rechunk(body, pieces) if pieces else [body]
    p = GeminiProvider(model=model, api_key=KEY, transport=serving(200, chunks))
    return collect_turn(p.create_stream([UserMessage("hi")]))


STATUS_429 = {
    "error": {
        "code": 429,
        "message": "Resource has been exhausted (e.g. check quota).",
        "status": "RESOURCE_EXHAUSTED",
        "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "52s"}],
    }
}


@pytest.mark.parametrize("framing", ["sse", "bare"])
def test_in_stream_status_error_is_a_classified_provider_error(framing):
    """After a 200 the server can still fail the turn with a google.rpc.Status, framed or bare."""
    head = _frame(_chunk([{"text": "Partial "}]))
    tail = _frame(STATUS_429) if framing == "sse" else json.dumps(STATUS_429, indent=2).encode()
    with pytest.raises(ProviderError) as ei:
        _run(head + tail, pieces=3)
    err = ei.value
    assert err.kind == "rate" and err.status == 429 and err.code == "RESOURCE_EXHAUSTED"
    assert err.retry_after == 52
    assert err.partial.message.content == "Partial "  # the snapshot, for display only
    assert not err.partial.finished


def test_blocked_prompt_is_kind_content():
    body = _frame({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "usageMetadata": {"promptTokenCount": 7}})
    with pytest.raises(ProviderError) as ei:
        _run(body)
    assert ei.value.kind == "content" and ei.value.code == "PROHIBITED_CONTENT"
    assert "blocked" in str(ei.value)


def test_blocked_prompt_in_a_non_streaming_answer():
    body = json.dumps({"promptFeedback": {"blockReason": "SAFETY"}}).encode()
    p = GeminiProvider(model="gemini-2.5-flash", api_key=KEY, transport=serving(200, [body]))
    with pytest.raises(ProviderError) as ei:
        p.complete([UserMessage("hi")])
    assert ei.value.kind == "content" and ei.value.code == "SAFETY"


def test_a_stream_without_finish_reason_is_cut():
    body = _frame(_chunk([{"text": "Half an ans"}]))
    with pytest.raises(ProviderError) as ei:
        _run(body, pieces=5)
    assert ei.value.kind == "network"
    assert str(ei.value) == "gemini: the stream ended before the turn did"
    assert ei.value.partial.message.content == "Half an ans"


@pytest.mark.parametrize(
    ("gemini", "ours"),
    [("STOP", "stop"), ("MAX_TOKENS", "length"), ("SAFETY", "content_filter"), ("RECITATION", "content_filter"),
     ("PROHIBITED_CONTENT", "content_filter"), ("OTHER", "stop")],
)
def test_finish_reasons(gemini, ours):
    body = _frame(_chunk([{"text": "x"}])) + _frame(_chunk([{"text": "y"}], finish=gemini))
    assert _run(body).finish_reason == ours


def test_calls_then_max_tokens_still_finish_tool_calls():
    body = _frame(_chunk([{"functionCall": {"name": "f", "args": {"a": [1, "é"]}}}], finish="MAX_TOKENS"))
    turn = _run(body)
    assert turn.finish_reason == "tool_calls"
    assert turn.message.tool_calls[0].arguments == '{"a":[1,"é"]}'


def test_usage_reads_cache_and_thoughts_and_last_one_wins():
    u1 = {"promptTokenCount": 100, "candidatesTokenCount": 1, "thoughtsTokenCount": 5}
    u2 = {"promptTokenCount": 100, "cachedContentTokenCount": 64, "candidatesTokenCount": 9, "thoughtsTokenCount": 40}
    body = _frame(_chunk([{"text": "a"}], usage=u1)) + b": keep-alive\r\n\r\n" + _frame(_chunk([{"text": "b"}], "STOP", u2))
    turn = _run(body, pieces=4)
    assert turn.usage.to_dict() == {"input_tokens": 100, "cached_input_tokens": 64, "cache_write_tokens": 0,
                                    "output_tokens": 49, "reasoning_tokens": 40}


def test_one_frame_with_thoughts_text_and_calls_keeps_order_and_signatures():
    parts = [
        {"text": "plan ", "thought": True},
        {"text": "more", "thought": True, "thoughtSignature": "dGg="},
        {"text": "Sure", "thoughtSignature": "dHg="},
        {"text": "."},
        {"functionCall": {"name": "a", "args": {}}, "thoughtSignature": "YQ=="},
        {"functionCall": {"name": "b", "args": {"k": 1}, "id": "srv"}},
    ]
    turn = _run(_frame(_chunk(parts, "STOP")))
    m = turn.message
    assert (m.reasoning, m.content) == ("plan more", "Sure.")
    assert m.reasoning_items.items == [
        {"type": "thought", "offset": 5, "length": 4, "signature": "dGg="},
        {"type": "text", "offset": 0, "length": 4, "signature": "dHg="},
    ]
    assert [(c.id, c.name, c.thought_signature) for c in m.tool_calls] == [("call_0", "a", "YQ=="), ("srv", "b", None)]


# --------------------------------------------------------------------------- constructed cassettes


def _replay(name: str, model: str, *, stream: bool, messages=None):
    p = GeminiProvider(model=model, api_key=KEY)
    with vcr.use_cassette(str(OWN / name), record_mode="none") as cass:
        with pytest.raises(ProviderError) as ei:
            if stream:
                collect_turn(p.create_stream(messages or [UserMessage("hi")]))
            else:
                p.complete(messages or [UserMessage("hi")])
        assert cass.all_played
    assert KEY not in repr(ei.value) + str(ei.value) + (ei.value.body or "")
    return ei.value


def _recorded_history(name: str):
    """The broken request the constructed cassette holds, read back through our importer."""
    import yaml

    from providerkit_nb.wire.gemini import from_gemini_contents

    body = json.loads(yaml.safe_load((OWN / name).read_text())["interactions"][0]["request"]["body"])
    return from_gemini_contents(body["contents"], body.get("systemInstruction"))


def test_constructed_missing_thought_signature_400():
    name = "gemini_missing_thought_signature_400.yaml"
    err = _replay(name, "gemini-3-pro-preview", stream=True)
    assert err.kind == "invalid" and err.status == 400
    predicted = [p for p in validate_history(_recorded_history(name), wire="gemini") if p.rule == rules.MISSING_SIGNATURE.id]
    assert len(predicted) == 1 and predicted[0].index == 1
    assert predicted[0].provider_wording in err.message


def test_constructed_broken_history_400():
    name = "gemini_broken_history_400.yaml"
    err = _replay(name, "gemini-2.5-flash", stream=True)
    assert err.kind == "invalid" and err.status == 400
    broken = _recorded_history(name)
    predicted = [p for p in rules.check(broken) if p.rule == rules.RESPONSE_COUNT.id]
    assert len(predicted) == 1 and predicted[0].index == 1
    assert predicted[0].provider_wording in err.message
    assert rules.check(repair_history(broken).messages) == []  # what we would send instead


def test_constructed_429_with_retry_info():
    err = _replay("gemini_429_retry_info.yaml", "gemini-2.5-flash", stream=False)
    assert err.kind == "rate" and err.status == 429
    assert err.retry_after == 52
    assert err.is_transient


def test_constructed_cassettes_are_labelled():
    for name in ("gemini_missing_thought_signature_400.yaml", "gemini_broken_history_400.yaml", "gemini_429_retry_info.yaml"):
        assert (OWN / name).read_text().startswith("# CONSTRUCTED")
