"""Every upstream Gemini recording parses to the turn the recording itself states.

Each body is served by ``httpx.MockTransport`` (the transport seam, not a mock of our code)
whole, and again cut into random small pieces (seeded) so frames and CRLF pairs split across
reads. Expectations come from ``expectations/gemini.py``, which reads the bodies directly.
"""

from __future__ import annotations

import json

import pytest

from providerkit_nb.core.errors import ProviderError
from providerkit_nb.core.turn import collect_turn
from providerkit_nb.providers import gemini as g
from providerkit_nb.wire import gemini as gw

from .expectations.gemini import all_signatures, expected_turn, responses_of
from .gemini_cases import UPSTREAM, gemini_cases, rechunk, serving

CASES = list(gemini_cases(UPSTREAM)) if UPSTREAM.is_dir() else []
OK = [c for c in CASES if c.status == 200]
ERRORS = [c for c in CASES if c.status != 200]


def _turn(case, pieces=None, fmt=None):
    imp = gw.import_request(case.url, case.request)
    p = g.replay_provider(case.url, case.request, serving(case, pieces))
    if fmt is not None:
        p.stream_format = fmt
    if imp.stream:
        return collect_turn(p.create_stream(imp.messages, imp.tools, **imp.options))
    return p.complete(imp.messages, imp.tools, **imp.options)


def _stated(case) -> dict:
    t = expected_turn(case.text, case.request)
    assert t["finish_reason"] is not None, "every 200 recording here ends with a finishReason"
    return t


def _ours(turn) -> dict:
    d = turn.to_dict()
    return {k: d[k] for k in ("message", "usage", "finish_reason")}


@pytest.mark.upstream
def test_all_gemini_recordings_are_found(upstream_dir):
    assert UPSTREAM == upstream_dir
    # 12 files with Gemini traffic: 17 successful interactions and 2 errors (400 key, 429)
    assert len({c.path for c in CASES}) == 12
    assert (len(OK), len(ERRORS)) == (17, 2)


@pytest.mark.upstream
@pytest.mark.parametrize("case", OK, ids=lambda c: c.id)
def test_recording_parses_to_what_it_states(case):
    assert _ours(_turn(case)) == _stated(case)


@pytest.mark.upstream
@pytest.mark.parametrize("case", OK, ids=lambda c: c.id)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_recording_rechunked(case, seed):
    pieces = rechunk(case.body, seed)
    assert len(pieces) > 10
    assert _ours(_turn(case, pieces)) == _stated(case)


@pytest.mark.upstream
@pytest.mark.parametrize("case", OK, ids=lambda c: c.id)
def test_every_signature_is_captured(case):
    msg = _turn(case).message
    kept = [c.thought_signature for c in msg.tool_calls or () if c.thought_signature]
    if msg.reasoning_items is not None:
        assert msg.reasoning_items.provider == "gemini"
        kept += [it["signature"] for it in msg.reasoning_items.items]
    assert sorted(kept) == sorted(all_signatures(case.text))


@pytest.mark.upstream
def test_signature_count_across_recordings():
    """The set really exercises signatures: on calls, on text, on the empty last part."""
    on_calls = on_text = 0
    for case in OK:
        msg = _turn(case).message
        on_calls += sum(1 for c in msg.tool_calls or () if c.thought_signature)
        on_text += len(msg.reasoning_items.items) if msg.reasoning_items else 0
    assert (on_calls, on_text) == (6, 4)


def _as_json_array(text: str) -> bytes:
    return ("[" + ",\r\n".join(json.dumps(r, indent=1) for r in responses_of(text)) + "]").encode()


@pytest.mark.upstream
@pytest.mark.parametrize("case", [c for c in OK if "alt=sse" in c.url], ids=lambda c: c.id)
def test_sse_recordings_also_parse_as_a_json_array(case):
    """The same responses, served the way streamGenerateContent answers without alt=sse."""
    body = _as_json_array(case.text)
    seen = []
    imp = gw.import_request(case.url, case.request)
    p = g.GeminiProvider(model=imp.model, api_key="k", stream_format="json-array",
                         transport=serving(200, rechunk(body, 7, 50), seen=seen))
    turn = collect_turn(p.create_stream(imp.messages, imp.tools, **imp.options))
    assert "alt=sse" not in str(seen[0].url) and str(seen[0].url).endswith(":streamGenerateContent")
    assert _ours(turn) == _stated(case)


@pytest.mark.upstream
def test_json_array_recordings_are_requested_without_alt():
    arrays = [c for c in OK if ":streamGenerateContent" in c.url and "alt=sse" not in c.url]
    assert len(arrays) == 5  # llm-gemini streams without alt=sse
    for case in arrays:
        assert case.text.lstrip().startswith("[")
        p = g.replay_provider(case.url, case.request, serving(case))
        assert p.stream_format == "json-array"


@pytest.mark.upstream
def test_thought_parts_become_reasoning_and_bill_as_output():
    case = next(c for c in OK if c.path.stem == "test_google_model_thinking_part_iter")
    turn = _turn(case)
    assert turn.message.reasoning.startswith("**Clarifying User Goals**")
    assert "**Crafting Safe Instructions**" in turn.message.reasoning
    assert not turn.message.content.startswith("**")
    last = responses_of(case.text)[-1]["usageMetadata"]
    assert turn.usage.output_tokens == last["candidatesTokenCount"] + last["thoughtsTokenCount"] == 1256
    assert turn.usage.reasoning_tokens == 787
    # the signature sat on the first answer part: item marks exactly that part's text
    item = turn.message.reasoning_items.items[0]
    first = responses_of(case.text)[4]["candidates"][0]["content"]["parts"][0]
    assert turn.message.content[item["offset"]:item["offset"] + item["length"]] == first["text"]
    assert item["signature"] == first["thoughtSignature"]


@pytest.mark.upstream
def test_stop_after_calls_finishes_tool_calls():
    """STOP arrives on a later chunk than the call (Gemini 3): still tool_calls."""
    case = next(c for c in OK if c.path.stem == "test_google_streaming_tool_call_thought_signature" and c.interaction.index == 0)
    frames = responses_of(case.text)
    assert "finishReason" not in frames[0]["candidates"][0] and frames[1]["candidates"][0]["finishReason"] == "STOP"
    assert _turn(case).finish_reason == "tool_calls"


@pytest.mark.upstream
def test_calls_without_ids_get_stable_ones_and_ids_are_kept():
    crew = next(c for c in OK if "unique_ids" in c.path.stem)
    calls = _turn(crew).message.tool_calls
    assert [c.id for c in calls] == ["call_0", "call_1"]
    assert [json.loads(c.arguments) for c in calls] == [{"city": "Paris"}, {"city": "London"}]
    oi = next(c for c in OK if c.path.stem == "test_streaming_reasoning_with_multiple_tool_calls")
    calls = _turn(oi).message.tool_calls
    assert [c.id for c in calls] == ["dv8szvqe", "j80tal12"]
    assert calls[0].thought_signature and calls[1].thought_signature is None


@pytest.mark.upstream
@pytest.mark.parametrize("transport", ["httpx", "requests"])
def test_error_recordings_classify(transport):
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    kinds = {}
    for case in ERRORS:
        class H(BaseHTTPRequestHandler):
            def do_POST(self, case=case):
                self.rfile.read(int(self.headers["content-length"]))
                self.send_response(case.status)
                self.send_header("content-type", case.content_type())
                self.send_header("content-length", str(len(case.body)))
                self.end_headers()
                self.wfile.write(case.body)

            def log_message(self, *a):
                pass

        srv = HTTPServer(("127.0.0.1", 0), H)
        th = threading.Thread(target=srv.serve_forever, daemon=True)
        th.start()
        try:
            imp = gw.import_request(case.url, case.request)
            p = g.GeminiProvider(model=imp.model, api_key="AIza-test-key-123", base_url=f"http://127.0.0.1:{srv.server_port}",
                                 transport=transport)
            with pytest.raises(ProviderError) as ei:
                if imp.stream:
                    collect_turn(p.create_stream(imp.messages, imp.tools))
                else:
                    p.complete(imp.messages, imp.tools)
            kinds[case.status] = ei.value.kind.value
            assert "AIza-test-key-123" not in repr(ei.value) + str(ei.value) + (ei.value.body or "")
        finally:
            srv.shutdown()
            srv.server_close()
    assert kinds == {400: "auth", 429: "rate"}
