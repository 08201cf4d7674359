"""Every upstream Responses recording replays to the turn the recording itself states.

The recorded body is served by httpx.MockTransport (the transport seam, not a mock of our
code), whole and cut into random small pieces, so SSE frames and UTF-8 characters split
across reads. Expectations come from the recording's own ``.done`` items and terminal event
(tests/providers/expectations/openai_responses.py), never from the parser under test.
Multi-turn recordings are also checked on the request side: the history imported from a
recorded request, built back into a request, equals the recorded input on the fields that
matter.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from providerkit_nb.core.errors import ProviderError
from providerkit_nb.core.turn import collect_turn
from providerkit_nb.providers.openai_responses import replay_provider
from providerkit_nb.wire.openai_responses import import_request, matches
from providerkit_nb.wire.options import CallOptions

from .expectations.openai_responses import expected_turn
from .responses_cases import CASES, Case, serving

OK = [c for c in CASES if 200 <= c.status < 300]
FAILED = [c for c in CASES if c.status >= 400]


def _turn(case: Case, seed: int | None) -> dict[str, Any]:
    imp = import_request(case.url, case.request)
    ctype = "text/event-stream" if case.streamed else "application/json"
    p = replay_provider(case.url, case.request, serving(case.status, case.body, seed=seed, content_type=ctype))
    if case.streamed:
        turn = collect_turn(p.create_stream(imp.messages, imp.tools, **imp.options))
    else:
        turn = p.complete(imp.messages, imp.tools, **imp.options)
    return turn.to_dict()


@pytest.mark.upstream
def test_the_recordings_are_there():
    # 12 files hold Responses interactions; a lost directory must not pass as "nothing to test"
    assert len({c.path for c in CASES}) == 12
    assert len(OK) == 18 and len(FAILED) == 3
    assert all(matches(c.url) for c in CASES)


@pytest.mark.upstream
@pytest.mark.parametrize("case", OK, ids=lambda c: c.id)
@pytest.mark.parametrize("seed", [None, 1, 2])
def test_recording_replays_to_the_stated_turn(case: Case, seed: int | None):
    want = expected_turn(case.text, case.request)
    got = _turn(case, seed)
    assert got == want
    for call in got["message"].get("tool_calls") or ():
        assert not call["id"].startswith("fc_")  # results must quote call_id


@pytest.mark.upstream
def test_every_encrypted_reasoning_item_is_kept_whole():
    """Counted straight from the raw bodies: each rs_ item with encrypted_content, byte-equal."""
    seen = 0
    for case in OK:
        raw_items = []
        if case.streamed:
            for line in case.text.splitlines():
                if line.startswith("data:") and '"response.output_item.done"' in line:
                    item = json.loads(line[5:])["item"]
                    if item.get("encrypted_content"):
                        raw_items.append(item)
        else:
            raw_items = [o for o in json.loads(case.text)["output"] if o.get("encrypted_content")]
        got = (_turn(case, 7)["message"].get("reasoning_items") or {}).get("items", [])
        encrypted = [i for i in got if i.get("encrypted_content")]
        assert encrypted == raw_items, case.id
        seen += len(raw_items)
    assert seen == 9  # interleaved 4, modified-history 2, phase 1, streaming-usage 1, part-iter 1


@pytest.mark.upstream
@pytest.mark.parametrize("case", FAILED, ids=lambda c: c.id)
def test_error_recordings_raise_classified_errors(case: Case):
    stated = json.loads(case.text)["error"]["message"]
    with pytest.raises(ProviderError) as info:
        _turn(case, None)
    err = info.value
    assert err.status == case.status
    assert stated[:80] in str(err)
    assert err.kind == ("auth" if case.status == 401 else "invalid")


# --------------------------------------------------------------------------- request side


def _norm_content(content: Any) -> Any:
    if isinstance(content, str):
        return content
    return [(p.get("type").replace("output_", "").replace("input_", ""), p.get("text")) for p in content]


def _norm_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.get("text") or "" for p in content)


def _fields(items: list[dict[str, Any]]) -> list[tuple]:
    """What the server reads from each input item (ids of messages/calls, status and phase
    are bookkeeping; our requests never send them)."""
    out = []
    for it in items:
        kind = it.get("type") or "message"
        if kind == "message" and it.get("role") == "assistant":
            out.append(("assistant", _norm_text(it["content"])))
        elif kind == "message":
            out.append((it["role"], _norm_content(it["content"])))
        elif kind == "reasoning":
            out.append(("reasoning", it.get("id"), it.get("encrypted_content"), json.dumps(it.get("summary")),
                        json.dumps(it.get("content"))))
        elif kind == "function_call":
            out.append(("function_call", it["call_id"], it["name"], it["arguments"]))
        elif kind == "function_call_output":
            out.append(("function_call_output", it["call_id"], it["output"]))
        else:
            out.append((kind,))
    return out


MULTI = [c for c in CASES if isinstance(c.request.get("input"), list)
         and any((i.get("type") or i.get("role")) not in ("user", "message") or i.get("role") == "assistant"
                 for i in c.request["input"])]


@pytest.mark.upstream
def test_round_trip_cases_cover_tool_results_and_reasoning():
    kinds = {i.get("type") for c in MULTI for i in c.request["input"]}
    assert {"reasoning", "function_call", "function_call_output"} <= kinds
    assert len(MULTI) == 10


@pytest.mark.upstream
@pytest.mark.parametrize("case", MULTI, ids=lambda c: c.id)
def test_request_built_from_the_imported_history_equals_the_recorded_one(case: Case):
    imp = import_request(case.url, case.request)
    p = replay_provider(case.url, case.request, serving(200, b""))
    wr = p.build_request(imp.messages, imp.tools, CallOptions(**imp.options), stream=imp.stream)
    body, rec = wr.body, case.request
    assert _fields(body["input"]) == _fields(rec["input"])
    assert body.get("instructions") == rec.get("instructions")
    assert body["model"] == rec["model"]
    assert body["store"] is False and body["stream"] == bool(rec.get("stream"))
    if rec.get("tools"):
        assert [(t["name"], t["description"] or "", t["parameters"]) for t in body["tools"]] == [
            (t["name"], t.get("description") or "", t["parameters"]) for t in rec["tools"]
        ]
    assert body.get("tool_choice") == rec.get("tool_choice")
    if (rec.get("reasoning") or {}).get("effort"):
        assert body["reasoning"]["effort"] == rec["reasoning"]["effort"]
    else:
        assert "reasoning" not in body
    # results quote the call ids the model made, and each call's output follows it
    calls = [i["call_id"] for i in body["input"] if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in body["input"] if i.get("type") == "function_call_output"]
    assert sorted(calls) == sorted(outputs)
