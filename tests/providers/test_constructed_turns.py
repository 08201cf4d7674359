"""The project's own per-wire turn cassettes (cassettes/turn_*.yaml), replayed end to end.

Each wire has, in ``cassettes/``, a streamed turn whose tool call arrives in fragments, a turn
with reasoning and its signed or encrypted state, and an error response, so a lone clone (no
upstream recordings beside it) still drives every adapter from HTTP bytes to an assembled turn.
The request held in each cassette is imported by the wire's own importer, sent through the
adapter over httpx and over requests (vcrpy answers), and again with the body cut into small
random pieces; the expected turns below are written from the cassettes' events, by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from providerkit_nb.core.turn import collect_turn
from providerkit_nb.testing.replay import load_interactions, replay_interaction, route

from .cassette_loader import OWN, chopped_transport

README_CALL = '{"path": "README.md"}'

# file stem -> the turn its events add up to (arguments as the fragments concatenate)
TURNS: dict[str, dict[str, Any]] = {
    "turn_openai_chat_tool_call_fragments": {
        "message": {
            "role": "assistant",
            "content": "I'll read both files.",
            "tool_calls": [
                {"id": "call_Cn5tructedReadme01", "name": "read_file", "arguments": README_CALL},
                {"id": "call_Cn5tructedNotes02", "name": "read_file", "arguments": '{"path": "NOTES.md"}'},
            ],
        },
        "usage": {"input_tokens": 87, "cached_input_tokens": 64, "cache_write_tokens": 0, "output_tokens": 52, "reasoning_tokens": 0},
        "finish_reason": "tool_calls",
        "model": "gpt-4.1-mini-2025-04-14",
    },
    "turn_openai_chat_deepseek_reasoning": {
        "message": {
            "role": "assistant",
            "content": "17 × 23 = 391",
            "reasoning": "17 × 23: 17 × 20 = 340, 17 × 3 = 51, 340 + 51 = 391.",
        },
        # prompt_cache_hit_tokens 16 of 21 prompt tokens; 88 of the 96 completion tokens reasoned
        "usage": {"input_tokens": 21, "cached_input_tokens": 16, "cache_write_tokens": 0, "output_tokens": 96, "reasoning_tokens": 88},
        "finish_reason": "stop",
        "model": "deepseek-reasoner",
    },
    "turn_responses_tool_call_fragments": {
        "message": {
            "role": "assistant",
            "content": "Reading it.",
            "tool_calls": [{"id": "call_Cn5tructedResp03", "name": "read_file", "arguments": '{"path":"README.md"}'}],
        },
        "usage": {"input_tokens": 120, "cached_input_tokens": 0, "cache_write_tokens": 0, "output_tokens": 31, "reasoning_tokens": 0},
        "finish_reason": "tool_calls",
        "model": "gpt-4.1-mini-2025-04-14",
    },
    "turn_anthropic_tool_use_fragments": {
        "message": {
            "role": "assistant",
            "content": "I'll read the file.",
            "tool_calls": [{"id": "toolu_01Cn5tructedRead0001", "name": "read_file", "arguments": README_CALL}],
        },
        "usage": {"input_tokens": 410, "cached_input_tokens": 0, "cache_write_tokens": 0, "output_tokens": 48, "reasoning_tokens": 0},
        "finish_reason": "tool_calls",
        "model": "claude-sonnet-4-5-20250929",
    },
}

THINKING = "17 × 23: 17 × 20 = 340, 17 × 3 = 51, so 391."
ANTHROPIC_SIGNATURE = "EqQBCkgIBxABGAIiQConstructedNotARealSignatureZ3xWq8Jt5Lr0Ym2Nb6Vc1Ud7Ke4Pf9Sg0Th3Ai8Bj5Ck2Dl=="
TURNS["turn_anthropic_thinking_signature"] = {
    "message": {
        "role": "assistant",
        "content": "391",
        "reasoning": THINKING,
        # the signed block exactly as it streamed, for replay to Anthropic only
        "reasoning_items": {
            "provider": "anthropic",
            "items": [{"type": "thinking", "thinking": THINKING, "signature": ANTHROPIC_SIGNATURE}],
        },
    },
    # input counts the 200 cache-read tokens; Anthropic does not report thinking tokens apart
    "usage": {"input_tokens": 230, "cached_input_tokens": 200, "cache_write_tokens": 0, "output_tokens": 90, "reasoning_tokens": 0},
    "finish_reason": "stop",
    "model": "claude-sonnet-4-5-20250929",
}

SUMMARY = "**Multiplying 17 by 23**\n\n17 × 20 = 340 and 17 × 3 = 51, so 391."
ENCRYPTED = "gAAAAABpConstructedNotARealCiphertext_8f3Kq1xZ0vYw9TnLm2Pb7Rc4Hd6Sj1Ue5Vf0Wg3Xh8Yi2Zk7=="
GEMINI_CALL_SIGNATURE = "CiQBcsjafConstructedNotARealThoughtSignature9Xw2Lq7Zt4Rm1Pn8Vb5Hc3Jd6Kf0Sg=="
GEMINI_TEXT_SIGNATURE = "Cs8BAcsjafConstructedNotARealTextSignature4Tq9Wm2Lx7Zr1Pn5Vb8Hc3Jd6Kf0=="

# per wire: (tool call in fragments, reasoning, error) files, each kind at least once
COVERAGE: dict[str, tuple[str, str, str]] = {
    "openai_chat": ("turn_openai_chat_tool_call_fragments", "turn_openai_chat_deepseek_reasoning", "openai_chat_server_error_500"),
    "openai_responses": ("turn_responses_tool_call_fragments", "turn_responses_encrypted_reasoning", "openai_responses_dangling_function_call_400"),
    "anthropic": ("turn_anthropic_tool_use_fragments", "turn_anthropic_thinking_signature", "anthropic_529_overloaded"),
    "gemini": ("turn_gemini_function_call_fragments", "turn_gemini_thought_signature", "gemini_429_retry_info"),
}
# error file -> (kind, status) its response states
ERRORS = {
    "openai_chat_server_error_500": ("overload", 500),
    "openai_responses_dangling_function_call_400": ("invalid", 400),
    "anthropic_529_overloaded": ("overload", 529),
    "gemini_429_retry_info": ("rate", 429),
}
TURN_FILES = sorted(OWN.glob("turn_*.yaml"))


def _replay(stem: str, transport: str) -> dict[str, Any]:
    path = OWN / f"{stem}.yaml"
    (it,) = load_interactions(path)
    r = replay_interaction(path, it, transport)
    assert r.ok and r.turn is not None, r.error
    return r.turn


def _replay_chopped(stem: str, seed: int) -> dict[str, Any]:
    """The same body served in pieces of 1..17 bytes, so frames and UTF-8 characters split."""
    (it,) = load_interactions(OWN / f"{stem}.yaml")
    _, mod = route(it.url)
    assert mod is not None, it.url
    body = it.request_json
    imported = mod.import_request(it.url, body)
    provider = mod.replay_provider(it.url, body, chopped_transport(it.status, it.response_body, seed=seed))
    return collect_turn(provider.create_stream(imported.messages, imported.tools, **imported.options)).to_dict()


def test_every_wire_has_its_three_constructed_cases() -> None:
    readme = (OWN / "README.md").read_text(encoding="utf-8")
    stems = {p.stem for p in OWN.glob("*.yaml")}
    for wire, files in COVERAGE.items():
        for stem in files:
            assert stem in stems, f"{wire}: cassettes/{stem}.yaml is missing"
            assert f"`{stem}.yaml`" in readme, f"cassettes/README.md does not list {stem}.yaml"
            assert (OWN / f"{stem}.yaml").read_text(encoding="utf-8").startswith("# CONSTRUCTED, not recorded:")
            (it,) = load_interactions(OWN / f"{stem}.yaml")
            assert route(it.url)[0] == wire, f"{stem} is not {wire} traffic"
    listed = {s for files in COVERAGE.values() for s in files}
    assert {p.stem for p in TURN_FILES} <= listed, "a turn_*.yaml without a row in COVERAGE"


@pytest.mark.parametrize("transport", ["httpx", "requests"])
@pytest.mark.parametrize("stem", sorted(TURNS))
def test_turn_assembles_to_what_its_events_say(stem: str, transport: str) -> None:
    assert _replay(stem, transport) == TURNS[stem]


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("stem", sorted(TURNS))
def test_turn_survives_a_body_cut_into_small_pieces(stem: str, seed: int) -> None:
    assert _replay_chopped(stem, seed) == TURNS[stem]


@pytest.mark.parametrize("transport", ["httpx", "requests"])
def test_responses_encrypted_reasoning_item_is_kept_whole(transport: str) -> None:
    turn = _replay("turn_responses_encrypted_reasoning", transport)
    m = turn["message"]
    assert (m["content"], m["reasoning"]) == ("391", SUMMARY)
    ri = m["reasoning_items"]
    assert ri["provider"] == "openai-responses"
    # the item from output_item.done, not the partial one from output_item.added
    (item,) = ri["items"]
    assert (item["id"], item["type"], item["encrypted_content"]) == ("rs_constructed0001", "reasoning", ENCRYPTED)
    assert item["summary"] == [{"type": "summary_text", "text": SUMMARY}]
    assert turn["usage"] == {"input_tokens": 14, "cached_input_tokens": 0, "cache_write_tokens": 0, "output_tokens": 75, "reasoning_tokens": 64}
    assert turn["finish_reason"] == "stop"


@pytest.mark.parametrize("transport", ["httpx", "requests"])
def test_gemini_calls_over_several_chunks_keep_their_signature(transport: str) -> None:
    turn = _replay("turn_gemini_function_call_fragments", transport)
    m = turn["message"]
    assert m["content"] == "I'll read both files."
    calls = m["tool_calls"]
    assert [(c["name"], json.loads(c["arguments"])) for c in calls] == [
        ("read_file", {"path": "README.md"}),
        ("read_file", {"path": "NOTES.md"}),
    ]
    # Gemini sends no call ids: each call still gets its own, and only the first is signed
    assert all(c["id"] for c in calls) and calls[0]["id"] != calls[1]["id"]
    assert [c.get("thought_signature") for c in calls] == [GEMINI_CALL_SIGNATURE, None]
    # STOP on a turn that made calls; output = 30 candidate + 60 thought tokens
    assert turn["finish_reason"] == "tool_calls"
    assert turn["usage"] == {"input_tokens": 60, "cached_input_tokens": 0, "cache_write_tokens": 0, "output_tokens": 90, "reasoning_tokens": 60}


@pytest.mark.parametrize("transport", ["httpx", "requests"])
def test_gemini_thought_summary_and_signed_text(transport: str) -> None:
    turn = _replay("turn_gemini_thought_signature", transport)
    m = turn["message"]
    assert m["content"] == "391"
    assert m["reasoning"] == "**Multiplying 17 by 23**\n\n17 × 20 = 340 and 17 × 3 = 51; together 391."
    ri = m["reasoning_items"]
    assert ri["provider"] == "gemini"
    assert [i["signature"] for i in ri["items"]] == [GEMINI_TEXT_SIGNATURE]
    assert turn["usage"] == {"input_tokens": 12, "cached_input_tokens": 0, "cache_write_tokens": 0, "output_tokens": 88, "reasoning_tokens": 85}


@pytest.mark.parametrize("seed", [4, 5])
@pytest.mark.parametrize("stem", ["turn_responses_encrypted_reasoning", "turn_gemini_function_call_fragments", "turn_gemini_thought_signature"])
def test_signed_turns_survive_small_pieces(stem: str, seed: int) -> None:
    assert _replay_chopped(stem, seed) == _replay(stem, "httpx")


@pytest.mark.parametrize("transport", ["httpx", "requests"])
@pytest.mark.parametrize("stem", sorted(ERRORS))
def test_each_wire_error_is_classified(stem: str, transport: str) -> None:
    kind, status = ERRORS[stem]
    path = OWN / f"{stem}.yaml"
    (it,) = load_interactions(path)
    assert it.status == status
    r = replay_interaction(path, it, transport)
    assert not r.ok and r.error is not None
    assert (r.error["kind"], r.error["status"]) == (kind, status)


def test_turn_files_hold_no_credentials() -> None:
    for path in TURN_FILES:
        text = Path(path).read_text(encoding="utf-8").lower()
        for word in ("authorization", "x-api-key", "x-goog-api-key", "bearer ", "sk-"):
            assert word not in text, f"{path.name} holds {word!r}"
