"""Every upstream Anthropic recording parses to the turn the recording itself states.

Each body is served through ``httpx.MockTransport`` (the transport seam, not a mock of our code)
whole, and again cut into random small pieces (seeded) so frames split across reads. The
expected turn comes from ``expectations/anthropic.py``, which folds the recorded events itself;
the signature and redacted-block checks below read the raw text with plain string searches.
"""

from __future__ import annotations

import json
import re

import pytest

from providerkit_nb.core.errors import ProviderError
from providerkit_nb.core.messages import ReasoningItems
from providerkit_nb.core.turn import (
    ReasoningDelta,
    ReasoningItemsDelta,
    TextDelta,
    ToolCallDelta,
    collect_turn,
)
from providerkit_nb.providers import anthropic as a
from providerkit_nb.wire import anthropic as w

from .anthropic_cases import UPSTREAM, anthropic_cases, chopped, serving
from .expectations.anthropic import expected_turn, sse_payloads

CASES = anthropic_cases() if UPSTREAM.is_dir() else []
OK = [c for c in CASES if c.status == 200]
ERRORS = [c for c in CASES if c.status != 200]
STREAMS = [c for c in OK if not c.text.lstrip().startswith("{")]


def _turn(case, transport=None):
    imp = w.import_request(case.url, case.request)
    p = a.replay_provider(case.url, case.request, transport or serving(case.status, case.body))
    if imp.stream:
        return collect_turn(p.create_stream(imp.messages, imp.tools, **imp.options))
    return p.complete(imp.messages, imp.tools, **imp.options)


@pytest.mark.upstream
def test_the_recordings_are_there():
    # 13 files hold 19 Anthropic interactions; a silently shrinking set would hide regressions
    assert len(CASES) == 19, [c.id for c in CASES]
    assert len(ERRORS) == 4


@pytest.mark.upstream
@pytest.mark.parametrize("case", OK, ids=lambda c: c.id)
def test_recording_parses_to_what_it_states(case):
    stated = expected_turn(case.text, case.request)
    got = _turn(case).to_dict()
    assert got["message"] == stated["message"]
    assert got["usage"] == stated["usage"]
    assert got["finish_reason"] == stated["finish_reason"]
    assert got["model"] == stated["model"]


@pytest.mark.upstream
@pytest.mark.parametrize("case", STREAMS, ids=lambda c: c.id)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_recording_rechunked_into_small_pieces(case, seed):
    whole = _turn(case).to_dict()
    assert _turn(case, chopped(case, seed)).to_dict() == whole


@pytest.mark.upstream
@pytest.mark.parametrize("case", OK, ids=lambda c: c.id)
def test_every_signature_and_redacted_block_is_captured(case):
    raw = case.text
    if raw.lstrip().startswith("{"):
        content = json.loads(raw)["content"]
        sigs = [b["signature"] for b in content if b["type"] == "thinking"]
        redacted = [b["data"] for b in content if b["type"] == "redacted_thinking"]
    else:
        sigs = re.findall(r'"signature_delta",\s*"signature":\s*"([^"]*)"', raw)
        redacted = re.findall(r'"redacted_thinking",\s*"data":\s*"([^"]*)"', raw)
    items = (_turn(case).message.reasoning_items or ReasoningItems("anthropic", [])).items
    assert [i["signature"] for i in items if i["type"] == "thinking"] == sigs
    assert [i["data"] for i in items if i["type"] == "redacted_thinking"] == redacted
    if sigs or redacted:
        assert _turn(case).message.reasoning_items.provider == "anthropic"


@pytest.mark.upstream
def test_the_set_exercises_signatures_and_redaction():
    with_sigs = [c for c in OK if "signature_delta" in c.text or '"signature"' in c.text]
    with_redacted = [c for c in OK if "redacted_thinking" in c.text]
    assert len(with_sigs) >= 6 and len(with_redacted) == 1


@pytest.mark.upstream
@pytest.mark.parametrize("case", STREAMS, ids=lambda c: c.id)
def test_items_are_emitted_at_each_block_stop_in_stream_order(case):
    imp = w.import_request(case.url, case.request)
    p = a.replay_provider(case.url, case.request, serving(case.status, case.body))
    with p.create_stream(imp.messages, imp.tools, **imp.options) as stream:
        chunks = list(stream)
    # the block types in the order the recording opened them
    opened = [e["content_block"]["type"] for e in sse_payloads(case.text) if e.get("type") == "content_block_start"]
    # every chunk labelled with the block kind it belongs to
    kinds = []
    for c in chunks:
        if isinstance(c, ReasoningItemsDelta):
            kinds.append(c.items[0]["type"] + "/item")
        elif isinstance(c, ReasoningDelta):
            kinds.append("thinking")
        elif isinstance(c, TextDelta):
            kinds.append("text")
        elif isinstance(c, ToolCallDelta):
            kinds.append("tool_use")
    # collapse runs: each block shows up once, reasoning blocks end with their item
    runs = [k for i, k in enumerate(kinds) if i == 0 or k != kinds[i - 1]]
    expected = []
    for t in opened:
        if t == "thinking":
            expected += ["thinking", "thinking/item"]
        elif t == "redacted_thinking":
            expected += ["redacted_thinking/item"]
        else:
            expected.append(t)
    expected = [k for i, k in enumerate(expected) if i == 0 or k != expected[i - 1]]
    assert runs == expected


@pytest.mark.upstream
@pytest.mark.parametrize("case", ERRORS, ids=lambda c: c.id)
def test_error_recordings_raise_the_kind_their_status_and_body_say(case):
    want = {"authentication_error": "auth", "not_found_error": "model", "invalid_request_error": "invalid"}
    stated = expected_turn(case.text, case.request)
    with pytest.raises(ProviderError) as info:
        _turn(case)
    assert info.value.kind == want[stated["error"]]
    assert info.value.status == case.status
    assert "replay-key" not in str(info.value) and "replay-key" not in (info.value.body or "")


@pytest.mark.upstream
@pytest.mark.parametrize("case", STREAMS[:3], ids=lambda c: c.id)
def test_a_recording_cut_before_its_end_is_a_network_error_with_the_partial_turn(case):
    body = case.body
    cut = body.index(b"event: message_delta")
    imp = w.import_request(case.url, case.request)
    p = a.replay_provider(case.url, case.request, serving(case.status, body[:cut]))
    with pytest.raises(ProviderError) as info:
        collect_turn(p.create_stream(imp.messages, imp.tools, **imp.options))
    assert info.value.kind == "network"
    assert "ended before the turn did" in str(info.value)
    stated = expected_turn(case.text, case.request)["message"]
    partial = info.value.partial.message
    assert partial.content == stated["content"]
    assert (partial.reasoning_items.to_dict() if partial.reasoning_items else None) == stated.get("reasoning_items")
