"""Every upstream recording, every wire: replay gives the turn the recording itself states.

One test per recorded interaction, over both transports, whole (vcrpy playback, matching
method, host and path) and cut into seeded random pieces (httpx.MockTransport, and a real
127.0.0.1 server for requests, which cannot take a MockTransport). A wire joins by providing
its module (``matches``, ``import_request``, ``replay_provider``) and its reader of what a
recording states, ``expectations/<wire>.py``; until then its interactions are strict xfails
("wire not built yet") that turn into failures the day the wire lands without passing.

Expected values never come from the code under test: turns come from the wire's expectations
reader, and error kinds from the table below, each read off the recorded error.
"""

from __future__ import annotations

import importlib
import json
from typing import Any
from urllib.parse import urlsplit

import pytest

from providerkit_nb.core.errors import ProviderError
from providerkit_nb.core.turn import collect_turn
from providerkit_nb.testing.replay import replay_interaction, wire_module

from .cassette_loader import Case, cases, chopped_transport
from .local_server import LocalServer

ALL = cases()

# What each recorded failure is, read from the recording (status and provider wording).
ERROR_KINDS = {
    "crewai/TestAgentMultimodalGemini.test_video_file[gemini-gemini-2.0-flash]#0": "rate",  # 429 RESOURCE_EXHAUSTED "try again later"
    "mirascope/test_authentication_error__openai_gpt_4o_responses#0": "auth",  # 401 invalid_api_key
    "mirascope/test_authentication_error_stream__anthropic_claude_sonnet_4_0#0": "auth",  # 401 authentication_error
    "mirascope/test_authentication_error_stream__google_gemini_2_5_flash#0": "auth",  # 400 API_KEY_INVALID
    "mirascope/test_authentication_error_stream__openai_gpt_4o_completions#0": "auth",  # 401 invalid_api_key
    "mirascope/test_model_not_found_stream__anthropic_claude_sonnet_4_0#0": "model",  # 404 "model: ..."
    "mirascope/test_model_not_found_stream__anthropic_claude_sonnet_4_0#1": "model",
    "pydantic-ai/test_anthropic_explicit_effort_xhigh_unsupported_model_errors#0": "invalid",  # 400 bad effort level
    "pydantic-ai/test_deepseek_responses_rejects_interleaved_function_calls#0": "invalid",  # 400 broken history
    "pydantic-ai/test_openai_responses_thinking_with_modified_history#1": "invalid",  # 400 broken history
    "pydantic-ai/test_openrouter_errors_raised#0": "rate",  # 429 "rate-limited upstream"
    "pydantic-ai/test_openrouter_errors_raised#1": "rate",
    "pydantic-ai/test_openrouter_errors_raised#2": "rate",
    "pydantic-ai/test_tool_use_failed_error_streaming#0": "invalid",  # 200 stream, event: error status_code 400
}


def _expectations(wire: str) -> Any | None:
    try:
        return importlib.import_module(f".expectations.{wire}", __package__)
    except ImportError:
        return None


def _params(transports: tuple[str, ...] = ("httpx",)) -> list[Any]:
    out = []
    for case in ALL:
        built = wire_module(case.wire) is not None and _expectations(case.wire) is not None
        marks = () if built else (pytest.mark.xfail(strict=True, reason="wire not built yet"),)
        for t in transports:
            out.append(pytest.param(case, t, id=f"{case.id}-{t}", marks=marks))
    return out


def _normal(turn: dict[str, Any]) -> dict[str, Any]:
    """Tool-call arguments compared as parsed JSON (the only formatting a recording can vary)."""
    turn = json.loads(json.dumps(turn))
    for call in (turn.get("message") or {}).get("tool_calls") or ():
        call["arguments"] = json.loads(call["arguments"]) if call["arguments"].strip() else {}
    return turn


def _check_error(case: Case, kind: str | None, want: dict[str, Any] | None) -> None:
    assert case.id in ERROR_KINDS, f"{case.id}: a failure the table does not list ({kind})"
    assert kind == ERROR_KINDS[case.id], case.id


def _check(case: Case, got_turn: dict[str, Any] | None, got_error_kind: str | None) -> None:
    want = _expectations(case.wire).expected_turn(case.text, case.request) if case.status < 400 else None
    if case.status >= 400 or (want is not None and want.get("error")) or got_error_kind is not None:
        _check_error(case, got_error_kind, want)
        return
    assert case.id not in ERROR_KINDS, f"{case.id} should have failed"
    assert got_turn is not None
    got = _normal(got_turn)
    # the reader states message, usage and finish reason; the model only where the body says it
    assert {k: got.get(k) for k in want} == _normal(want)


@pytest.mark.upstream
def test_the_recordings_are_there() -> None:
    assert len({c.path for c in ALL}) == 51
    assert sum(1 for c in ALL if c.wire == "openai_chat") == 30


@pytest.mark.upstream
@pytest.mark.parametrize(("case", "transport"), _params(("httpx", "requests")))
def test_replay_through_vcrpy(case: Case, transport: str) -> None:
    r = replay_interaction(case.path, case.interaction, transport)
    assert r.built, r.error
    if not r.ok:
        assert r.error is not None and r.error["kind"] != "replay", r.error
    _check(case, r.turn, None if r.ok else r.error["kind"])


def _run(case: Case, transport: Any, url: str | None = None) -> tuple[dict[str, Any] | None, str | None]:
    mod = wire_module(case.wire)
    url = url or case.url
    imported = mod.import_request(url, case.request)
    provider = mod.replay_provider(url, case.request, transport)
    try:
        if imported.stream:
            turn = collect_turn(provider.create_stream(imported.messages, imported.tools, **imported.options))
        else:
            turn = provider.complete(imported.messages, imported.tools, **imported.options)
    except ProviderError as err:
        return None, err.kind.value
    finally:
        provider.close()
    return turn.to_dict(), None


@pytest.mark.upstream
@pytest.mark.parametrize(("case", "transport"), _params())
@pytest.mark.parametrize("seed", [1, 2])
def test_replay_cut_into_small_pieces(case: Case, transport: str, seed: int) -> None:
    turn, kind = _run(case, chopped_transport(case.status, case.body, seed=seed, content_type=case.content_type()))
    _check(case, turn, kind)


@pytest.fixture(scope="module")
def server() -> Any:
    with LocalServer() as srv:
        yield srv


@pytest.mark.upstream
@pytest.mark.parametrize(("case", "transport"), _params(("requests",)))
def test_replay_over_requests_from_a_real_socket(case: Case, transport: str, server: LocalServer) -> None:
    server.answer(case.status, case.body, content_type=case.content_type(), seed=len(case.body), max_piece=23)
    parts = urlsplit(case.url)
    local = server.url + parts.path + (f"?{parts.query}" if parts.query else "")
    turn, kind = _run(case, "requests", local)
    _check(case, turn, kind)
