"""Context overflow and compaction: the decision, the cut (never orphaning a result), the
summarised history, the window guess, and the numbers in each provider's overflow message."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import providerkit_nb as pk
from providerkit_nb.compaction import (
    apply_compaction,
    guess_context_window,
    history_budget_tokens,
    needs_compaction,
    parse_context_overflow,
    pick_cut,
)
from providerkit_nb.core.compaction import message_tokens
from providerkit_nb.core.errors import ErrorKind, ProviderError

# the exact texts, pinned here (not imported from the code under test)
SUMMARY = "[Earlier conversation, summarized]\n\n"

NAMES = ["read_file", "grep"]


def test_needs_compaction_and_budget() -> None:
    assert not needs_compaction(0, 200_000)  # never before the first usage
    assert not needs_compaction(167_999, 200_000)
    assert needs_compaction(168_000, 200_000)  # window - 32000
    assert history_budget_tokens(200_000) == 20_000
    assert history_budget_tokens(32_000) == 6000


@pytest.mark.parametrize(
    ("model", "window"),
    [("gemini-2.5-pro", 1_000_000), ("gpt-4.1-mini", 1_000_000), ("grok-4", 1_000_000),
     ("llama-4-scout", 1_000_000), ("claude-sonnet-5", 200_000), ("gpt-5-mini", 200_000),
     ("o3", 200_000), ("deepseek-chat", 200_000), ("kimi-k2", 200_000), ("glm-5", 200_000),
     ("qwen3-max", 200_000), ("mistral-large", 128_000), ("", 128_000)],
)
def test_guess_context_window(model: str, window: int) -> None:
    assert guess_context_window(model) == window


def _calls(ids: list[str]) -> pk.AssistantMessage:
    return pk.AssistantMessage("", tool_calls=[pk.ToolCall(i, "grep", "{}") for i in ids])


def test_pick_cut_moves_back_past_tool_results() -> None:
    h = [
        pk.SystemMessage("sys"),
        pk.UserMessage("x" * 400),
        _calls(["a", "b"]),
        pk.ToolMessage("a", "grep", "r" * 400),
        pk.ToolMessage("b", "grep", "r" * 40),
        pk.AssistantMessage("done"),
    ]
    # the budget fits "done" and the last result only: the cut would orphan it, so it moves
    # back to the assistant that made the calls
    cut = pick_cut(h, message_tokens(h[-1]) + message_tokens(h[-2]))
    assert cut == 2
    assert pick_cut(h, 0) == 5  # the newest message is always kept
    assert pick_cut(h, 10**6) == 1  # everything fits: cut at the first non-system message
    assert pick_cut([pk.SystemMessage("s")], 10) == 1


def test_apply_compaction_shape() -> None:
    h = [pk.SystemMessage("sys"), pk.UserMessage("old"), pk.AssistantMessage("old answer"), pk.UserMessage("new")]
    out = apply_compaction(h, 3, "they said old things")
    assert out == [pk.SystemMessage("sys"), pk.UserMessage(SUMMARY + "they said old things"), pk.UserMessage("new")]
    with pytest.raises(ValueError, match="outside"):
        apply_compaction(h, 9, "x")


@st.composite
def valid_histories(draw: st.DrawFn) -> list[pk.Message]:
    counter = itertools.count()
    out: list[pk.Message] = [pk.SystemMessage("sys")] if draw(st.booleans()) else []
    for _ in range(draw(st.integers(1, 6))):
        out.append(pk.UserMessage("u" * draw(st.integers(1, 200))))
        for _ in range(draw(st.integers(0, 3))):
            calls = [pk.ToolCall(f"id{next(counter)}", draw(st.sampled_from(NAMES)), "{}" * draw(st.integers(1, 30)))
                     for _ in range(draw(st.integers(1, 4)))]
            out.append(pk.AssistantMessage(draw(st.sampled_from(["", "let me look"])), tool_calls=calls))
            for c in draw(st.permutations(calls)):
                out.append(pk.ToolMessage(c.id, c.name, "r" * draw(st.integers(0, 300))))
        if draw(st.booleans()):
            out.append(pk.AssistantMessage("a" * draw(st.integers(1, 200))))
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_histories(), st.integers(0, 600))
def test_no_cut_of_a_valid_history_gives_one_validate_history_refuses(h: list[pk.Message], budget: int) -> None:
    assert pk.validate_history(h) == []
    cut = pick_cut(h, budget)
    assert cut < len(h)  # the newest message is always kept
    out = apply_compaction(h, cut, "summary")
    assert pk.validate_history(out) == []
    for wire in ("openai_chat", "anthropic", "gemini", "openai_responses"):
        if pk.validate_history(h, wire) == []:  # what a wire accepted before, it accepts after
            assert pk.validate_history(out, wire) == [], wire
    kept = [m for m in h[cut:] if not isinstance(m, pk.SystemMessage)]
    assert out[-len(kept):] == kept


# --------------------------------------------------------------------------- overflow numbers

# Wordings as the providers word them in their API error bodies.
OVERFLOWS = [
    # Anthropic, with max_tokens
    ("input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000, decrease input length "
     "or `max_tokens` and try again", (197000, 200000, 8192, 5192)),
    # Anthropic
    ("prompt is too long: 208000 tokens > 200000 maximum", (208000, 200000, None, 8000)),
    # OpenAI Chat
    ("This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. "
     "Please reduce the length of the messages.", (130000, 128000, None, 2000)),
    # DeepSeek / older OpenAI (messages + completion)
    ("This model's maximum context length is 65536 tokens. However, you requested 70000 tokens (65000 in the "
     "messages, 5000 in the completion). Please reduce the length of the messages or completion.",
     (65000, 65536, 5000, 4464)),
    # vLLM
    ("This model's maximum context length is 8192 tokens. However, your request has 9000 input tokens.",
     (9000, 8192, None, 808)),
    # Gemini
    ("The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
     (1200000, 1048576, None, 151424)),
    ("The input token count exceeds the maximum number of tokens allowed 1048576.", (None, 1048576, None, None)),
]


@pytest.mark.parametrize(("text", "numbers"), OVERFLOWS)
def test_parse_context_overflow(text: str, numbers: tuple) -> None:
    got = parse_context_overflow(text)
    assert got is not None
    assert (got.input_tokens, got.context_limit, got.max_tokens, got.excess_tokens) == numbers


def test_parse_context_overflow_reads_a_provider_error_body() -> None:
    err = ProviderError("anthropic", ErrorKind.CONTEXT, "anthropic 400", status=400,
                        body='{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 250123 tokens > 200000 maximum"}}')
    got = parse_context_overflow(err)
    assert got is not None and got.input_tokens == 250123 and got.context_limit == 200000


def test_parse_context_overflow_without_numbers() -> None:
    assert parse_context_overflow("Your input exceeds the context window of this model.") is None
    assert parse_context_overflow(ValueError("rate limited")) is None
