"""Golden cross-wire tests: one logical turn, one error table, one history, four wires.

1. The same turn written as raw bytes in every wire's streaming dialect (golden_dialects.py)
   assembles to one canonical Turn written by hand below, delivered in socket-like slices that
   cut frames apart (one between the CR and the LF of a CRLF CRLF separator), over
   httpx.MockTransport (the transport seam) and over requests from a real 127.0.0.1 server.
   Provider-owned signed state differs by design and is checked per wire.
2. The same table drives the failures: a throttle after the headers, a 429 with retry-after, a
   400 context-length body, a stream cut mid-turn, and effort "none" against silence.
3. One canonical history (parallel calls, an interrupted call, signed reasoning from every
   provider) goes through repair_history and into each wire's request, checked field by field
   against expectations written by hand, and by each wire's validator.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from providerkit_nb.core.errors import ErrorKind, ProviderError
from providerkit_nb.core.messages import (
    AssistantMessage,
    ReasoningItems,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from providerkit_nb.core.repair import repair_history
from providerkit_nb.core.tools import ToolDefinition
from providerkit_nb.core.turn import Turn, Usage, collect_turn
from providerkit_nb.providers.anthropic import AnthropicProvider
from providerkit_nb.providers.base import WireProvider
from providerkit_nb.providers.factory import preset
from providerkit_nb.providers.gemini import GeminiProvider
from providerkit_nb.providers.openai_chat import OpenAIChatProvider
from providerkit_nb.providers.openai_responses import ResponsesProvider
from providerkit_nb.wire.options import CallOptions
from providerkit_nb.wire.validate import WIRES, validate_history

from .golden_dialects import (
    ANTHROPIC_SIGNATURE,
    DIALECTS,
    GEMINI_CALL_SIGNATURE,
    RESPONSES_REASONING_ITEM,
)
from .local_server import LocalServer

# the exact texts, pinned here (not imported from the code under test)
MAY_HAVE_RUN = (
    "This call was interrupted before it returned. It may have partly run, so check its effect "
    "before calling it again."
)

WIRE_NAMES = tuple(DIALECTS)

# The one turn every dialect must produce (signed state stripped: it is compared per wire).
EXPECTED = Turn(
    message=AssistantMessage(
        content="Hello there",
        reasoning="Let me think.",
        tool_calls=[ToolCall("call_cats", "search", '{"q":"cats"}')],
    ),
    usage=Usage(input_tokens=1050, cached_input_tokens=900, cache_write_tokens=0, output_tokens=12, reasoning_tokens=4),
    finish_reason="tool_calls",
    model="golden-1",
)

# What each wire signs, and where it keeps it.
SIGNED: dict[str, tuple[ReasoningItems | None, str | None]] = {
    "openai_chat": (None, None),
    "anthropic": (
        ReasoningItems("anthropic", [{"type": "thinking", "thinking": "Let me think.", "signature": ANTHROPIC_SIGNATURE}]),
        None,
    ),
    "gemini": (None, GEMINI_CALL_SIGNATURE),
    "openai_responses": (ReasoningItems("openai-responses", [RESPONSES_REASONING_ITEM]), None),
}

# Where each wire's request goes, relative to the server root.
PATHS = {
    "openai_chat": "/v1/chat/completions",
    "anthropic": "/v1/messages",
    "gemini": "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    "openai_responses": "/v1/responses",
}

KEY = "golden-test-key"
ASK = [UserMessage("Find cats.")]
SEARCH = ToolDefinition(
    "search", "Search the web.", {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
)
SAVE_NOTE = ToolDefinition(
    "save_note", "Save a note.", {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
)


def make(wire: str, transport: Any, root: str | None = None) -> WireProvider:
    """The wire's provider aimed at ``root`` (a local server) or its real default base URL."""
    if wire == "openai_chat":
        return OpenAIChatProvider(model="gpt-5.1", api_key=KEY, base_url=root and root + "/v1", transport=transport)
    if wire == "anthropic":
        return AnthropicProvider(model="claude-sonnet-4-5", api_key=KEY, base_url=root, transport=transport)
    if wire == "gemini":
        return GeminiProvider(model="gemini-2.5-flash", api_key=KEY, base_url=root, transport=transport)
    return ResponsesProvider(model="gpt-5", api_key=KEY, base_url=root and root + "/v1", transport=transport)


# --------------------------------------------------------------------------- socket-like slices


def socket_slices(body: bytes, size: int) -> list[bytes]:
    """``body`` cut every ``size`` bytes, plus once between the second CR and its LF of the
    first CRLF CRLF separator (where a reader that normalises each read alone loses events)."""
    cuts = set(range(size, len(body), size))
    sep = body.find(b"\r\n\r\n")
    if sep >= 0:
        cuts.add(sep + 3)
    edges = [0, *sorted(cuts), len(body)]
    return [body[a:b] for a, b in zip(edges, edges[1:], strict=False) if b > a]


class _Slices(httpx.SyncByteStream):
    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    def __iter__(self) -> Iterator[bytes]:
        yield from self.pieces


def serve(
    status: int,
    body: bytes,
    *,
    size: int = 7,
    content_type: str = "text/event-stream",
    headers: dict[str, str] | None = None,
    seen: list[httpx.Request] | None = None,
) -> httpx.MockTransport:
    """An httpx transport (the seam, not a mock of our code) that hands ``body`` out in slices."""

    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        return httpx.Response(
            status,
            headers={"content-type": content_type, **(headers or {})},
            stream=_Slices(socket_slices(body, size)),
        )

    return httpx.MockTransport(handler)


def strip_signed(turn: Turn) -> Turn:
    """The turn without provider-owned signed state (compared separately, per wire)."""
    d = turn.to_dict()
    d["message"].pop("reasoning_items", None)
    for c in d["message"].get("tool_calls") or ():
        c.pop("thought_signature", None)
    return Turn.from_dict(d)


def check_golden(wire: str, turn: Turn) -> None:
    assert strip_signed(turn).to_dict() == EXPECTED.to_dict()
    items, call_sig = SIGNED[wire]
    assert turn.message.reasoning_items == items
    assert [c.thought_signature for c in turn.message.tool_calls or ()] == [call_sig]


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    with LocalServer() as srv:
        yield srv


# --------------------------------------------------------------------------- 1. the golden turn


def test_the_slices_cut_inside_frames_and_inside_a_crlf_pair() -> None:
    for wire, d in DIALECTS.items():
        body = d["turn"]
        pieces = socket_slices(body, 7)
        assert b"".join(pieces) == body
        # most boundaries fall inside a frame, not on a separator
        inside = sum(1 for p in pieces[:-1] if not p.endswith((b"\n\n", b"\r\n\r\n")))
        assert inside > len(pieces) // 2, wire
        if b"\r\n\r\n" in body:
            k = next(i for i, p in enumerate(pieces) if p.endswith(b"\r\n\r"))
            assert pieces[k + 1].startswith(b"\n"), wire
    assert b"\r\n\r\n" in DIALECTS["openai_chat"]["turn"] and b"data: [DONE]" in DIALECTS["openai_chat"]["turn"]
    assert b"event: ping" in DIALECTS["anthropic"]["turn"]


@pytest.mark.parametrize("size", [1, 7, 64, 100_000])
@pytest.mark.parametrize("wire", WIRE_NAMES)
def test_every_dialect_assembles_to_the_same_turn(wire: str, size: int) -> None:
    seen: list[httpx.Request] = []
    p = make(wire, serve(200, DIALECTS[wire]["turn"], size=size, seen=seen))
    turn = collect_turn(p.create_stream(ASK, [SEARCH]))
    check_golden(wire, turn)
    assert len(seen) == 1


@pytest.mark.parametrize("wire", WIRE_NAMES)
def test_a_last_frame_without_its_blank_line_still_counts(wire: str) -> None:
    body = DIALECTS[wire]["turn"].rstrip(b"\r\n")
    turn = collect_turn(make(wire, serve(200, body, size=10)).create_stream(ASK, [SEARCH]))
    check_golden(wire, turn)


@pytest.mark.parametrize("seed", [3, 11])
@pytest.mark.parametrize("wire", WIRE_NAMES)
def test_every_dialect_assembles_over_requests_from_a_real_socket(wire: str, seed: int, server: LocalServer) -> None:
    server.answer(200, DIALECTS[wire]["turn"], seed=seed, max_piece=9)
    before = len(server.requests)
    p = make(wire, "requests", server.url)
    try:
        turn = collect_turn(p.create_stream(ASK, [SEARCH]))
    finally:
        p.close()
    check_golden(wire, turn)
    assert [r[0] for r in server.requests[before:]] == [PATHS[wire]]


# --------------------------------------------------------------------------- 2. the error table


def _fail(run: Callable[[], Turn]) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        run()
    return info.value


@pytest.mark.parametrize("transport", ["httpx", "requests"])
@pytest.mark.parametrize("wire", WIRE_NAMES)
def test_a_throttle_after_the_headers_is_a_throttle(wire: str, transport: str, server: LocalServer) -> None:
    d = DIALECTS[wire]
    if transport == "httpx":
        p = make(wire, serve(200, d["throttle"], size=5))
    else:
        server.answer(200, d["throttle"], seed=5, max_piece=13)
        p = make(wire, "requests", server.url)
    err = _fail(lambda: collect_turn(p.create_stream(ASK, [SEARCH])))
    p.close()
    assert err.kind is ErrorKind.RATE
    assert err.is_transient
    assert d["throttle_words"] in (err.body or "")  # the provider's own words are kept
    # what arrived before the throttle is shown, not saved: the turn never finished
    assert err.partial is not None and not err.partial.finished
    assert (err.partial.message.content, err.partial.message.reasoning) == ("Hello there", "Let me think.")


@pytest.mark.parametrize("transport", ["httpx", "requests"])
@pytest.mark.parametrize("wire", WIRE_NAMES)
def test_a_429_with_retry_after_is_rate_with_its_wait(wire: str, transport: str, server: LocalServer) -> None:
    body = DIALECTS[wire]["rate_body"]
    headers = {"retry-after": "30"}
    if transport == "httpx":
        p = make(wire, serve(429, body, content_type="application/json", headers=headers))
    else:
        server.answer(429, body, content_type="application/json", headers=headers, seed=1)
        p = make(wire, "requests", server.url)
    err = _fail(lambda: collect_turn(p.create_stream(ASK, [SEARCH])))
    p.close()
    assert (err.kind, err.status, err.retry_after) == (ErrorKind.RATE, 429, 30.0)
    assert err.body == body.decode()
    assert err.partial is not None and err.partial.message.content == ""


@pytest.mark.parametrize("wire", WIRE_NAMES)
def test_a_400_context_length_body_is_context(wire: str) -> None:
    body = DIALECTS[wire]["context_body"]
    p = make(wire, serve(400, body, content_type="application/json"))
    err = _fail(lambda: collect_turn(p.create_stream(ASK, [SEARCH])))
    assert (err.kind, err.status) == (ErrorKind.CONTEXT, 400)
    assert not err.is_transient  # compact the history; a retry cannot help
    assert err.body == body.decode()


def _cut_before_the_call(body: bytes) -> int:
    """A cut inside the frame that starts the tool call: text and reasoning have arrived."""
    return body.index(b'"search"') - 5


@pytest.mark.parametrize("transport", ["httpx", "requests"])
@pytest.mark.parametrize("wire", WIRE_NAMES)
def test_a_stream_cut_mid_turn_is_network_with_what_arrived(wire: str, transport: str, server: LocalServer) -> None:
    body = DIALECTS[wire]["turn"]
    cut = _cut_before_the_call(body)
    if transport == "httpx":
        p = make(wire, serve(200, body[:cut], size=6))
    else:
        server.answer(200, body, seed=2, max_piece=11, cut_at=cut)
        p = make(wire, "requests", server.url)
    err = _fail(lambda: collect_turn(p.create_stream(ASK, [SEARCH])))
    p.close()
    assert err.kind is ErrorKind.NETWORK
    part = err.partial
    assert part is not None and not part.finished
    assert (part.message.content, part.message.reasoning, part.message.tool_calls) == ("Hello there", "Let me think.", None)
    assert part.model == "golden-1"


# effort "none" must be said out loud: (provider, what "none" adds that silence does not)
NONE_SAYS = [
    (lambda: OpenAIChatProvider(model="gpt-5.1", api_key=KEY), {"reasoning_effort": "none"}),
    (lambda: preset("deepseek", model="deepseek-reasoner", api_key=KEY), {"thinking": {"type": "disabled"}}),
    (lambda: ResponsesProvider(model="gpt-5.1", api_key=KEY), {"reasoning": {"effort": "none"}}),
    # models without a "none" level get their lowest one, never silence (the provider default)
    (lambda: ResponsesProvider(model="gpt-5-mini", api_key=KEY), {"reasoning": {"effort": "minimal"}}),
    (lambda: GeminiProvider(model="gemini-2.5-flash", api_key=KEY), {"generationConfig": {"thinkingConfig": {"thinkingBudget": 0}}}),
    (lambda: GeminiProvider(model="gemini-3-flash-preview", api_key=KEY), {"generationConfig": {"thinkingConfig": {"thinkingLevel": "MINIMAL"}}}),
    # Claude families that think unless told not to
    (lambda: AnthropicProvider(model="claude-opus-5", api_key=KEY), {"output_config": {"effort": "low"}}),
    (lambda: AnthropicProvider(model="claude-sonnet-5", api_key=KEY), {"thinking": {"type": "disabled"}}),
]


def _body(p: WireProvider, **opts: Any) -> dict[str, Any]:
    return p.build_request(ASK, [SEARCH], CallOptions(session_id="s1", **opts), stream=True).body


@pytest.mark.parametrize(
    ("factory", "says"),
    NONE_SAYS,
    ids=["chat", "deepseek", "responses", "responses-minimal", "gemini-2.5", "gemini-3", "claude-always-on", "claude-sonnet-5"],
)
def test_effort_none_is_never_the_same_request_as_silence(factory: Callable[[], WireProvider], says: dict[str, Any]) -> None:
    p = factory()
    none, silent = _body(p, effort="none"), _body(p)
    assert none != silent
    assert {k: v for k, v in none.items() if silent.get(k) != v} == says


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "claude-opus-4-6"])
def test_native_claude_where_silence_already_means_off(model: str) -> None:
    """The one exception: on these Claude models thinking is off unless asked for, so "none"
    and silence are the same request, and neither mentions thinking at all."""
    p = AnthropicProvider(model=model, api_key=KEY)
    none, silent = _body(p, effort="none"), _body(p)
    assert none == silent
    assert "thinking" not in silent and "output_config" not in silent
    assert "thinking" in _body(p, effort="low")  # effort is not ignored: asking turns it on


# --------------------------------------------------------------------------- 3. one history, every wire

A_SIG = ANTHROPIC_SIGNATURE
G_CALL_SIG = GEMINI_CALL_SIGNATURE
G_TEXT_SIG = "Z29sZGVuIGdlbWluaSB0ZXh0IHNpZ25hdHVyZQ=="
RS_ITEM = {
    "id": "rs_h1",
    "type": "reasoning",
    "encrypted_content": "Z29sZGVuIHJlc3BvbnNlcyBlbmNyeXB0ZWQgcmVhc29uaW5n",
    "summary": [{"type": "summary_text", "text": "Need birds too."}],
}
OR_DETAILS = [
    {"type": "reasoning.encrypted", "data": "Z29sZGVuIG9wZW5yb3V0ZXIgZGV0YWlscw==", "id": "rd_1", "format": "openai-responses-v1", "index": 0}
]
SIGNED_STRINGS = (A_SIG, G_CALL_SIG, G_TEXT_SIG, RS_ITEM["encrypted_content"], OR_DETAILS[0]["data"])


def _history() -> list[Any]:
    """Four providers took turns (a fallback chain); the process died while save_note ran."""
    return [
        SystemMessage("You are terse."),
        UserMessage("Find cats and dogs."),
        AssistantMessage(  # 2: Anthropic, extended thinking, two parallel calls
            content="",
            reasoning="Two searches.",
            reasoning_items=ReasoningItems("anthropic", [{"type": "thinking", "thinking": "Two searches.", "signature": A_SIG}]),
            tool_calls=[ToolCall("toolu_01", "search", '{"q":"cats"}'), ToolCall("toolu_02", "search", '{"q":"dogs"}')],
        ),
        ToolMessage("toolu_01", "search", "3 cats"),
        ToolMessage("toolu_02", "search", "2 dogs"),
        AssistantMessage(  # 5: Responses, encrypted reasoning, two parallel calls
            content="Checking birds.",
            reasoning="Need birds too.",
            reasoning_items=ReasoningItems("openai-responses", [RS_ITEM]),
            tool_calls=[ToolCall("call_r1", "search", '{"q":"birds"}'), ToolCall("call_r2", "save_note", '{"text":"pets"}')],
        ),
        ToolMessage("call_r1", "search", "1 bird"),
        # call_r2's result never came: the interruption repair fixes
        UserMessage("Go on."),
        AssistantMessage(  # 7: Gemini, a signed text part and a signed first call
            content="Counted.",
            reasoning="Summing up.",
            reasoning_items=ReasoningItems("gemini", [{"type": "text", "offset": 0, "length": 8, "signature": G_TEXT_SIG}]),
            tool_calls=[
                ToolCall("fc_g1", "search", '{"q":"fish"}', thought_signature=G_CALL_SIG),
                ToolCall("fc_g2", "search", '{"q":"frogs"}'),
            ],
        ),
        ToolMessage("fc_g1", "search", "0 fish"),
        ToolMessage("fc_g2", "search", "4 frogs"),
        AssistantMessage(content="6 pets, 4 frogs.", reasoning="Adding.", reasoning_details=OR_DETAILS),  # 10: OpenRouter
        UserMessage("Thanks. And snakes?"),
    ]


INTERRUPTED = ToolMessage("call_r2", "save_note", MAY_HAVE_RUN)


@pytest.fixture(scope="module")
def repaired() -> list[Any]:
    r = repair_history(_history(), is_read_only=lambda name: name == "search")
    assert [(c.id, c.name, c.read_only) for c in r.interrupted] == [("call_r2", "save_note", False)]
    return r.messages


def test_repair_adds_the_missing_result_after_the_one_that_came(repaired: list[Any]) -> None:
    h = _history()
    assert repaired == [*h[:7], INTERRUPTED, *h[7:]]
    assert "interrupted" in INTERRUPTED.content  # what the model reads in place of the result


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_the_repaired_history_passes_every_wire_validator(wire: str, repaired: list[Any]) -> None:
    assert validate_history(repaired, wire=wire) == []
    broken = validate_history(_history(), wire=wire)  # the unrepaired one does not
    assert ("dangling_call", 5) in [(p.rule, p.index) for p in broken]


def _chat_call(cid: str, name: str, args: str) -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


CHAT_MESSAGES = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Find cats and dogs."},
    {"role": "assistant", "content": "", "tool_calls": [
        _chat_call("toolu_01", "search", '{"q":"cats"}'), _chat_call("toolu_02", "search", '{"q":"dogs"}')]},
    {"role": "tool", "tool_call_id": "toolu_01", "content": "3 cats"},
    {"role": "tool", "tool_call_id": "toolu_02", "content": "2 dogs"},
    {"role": "assistant", "content": "Checking birds.", "tool_calls": [
        _chat_call("call_r1", "search", '{"q":"birds"}'), _chat_call("call_r2", "save_note", '{"text":"pets"}')]},
    {"role": "tool", "tool_call_id": "call_r1", "content": "1 bird"},
    {"role": "tool", "tool_call_id": "call_r2", "content": MAY_HAVE_RUN},
    {"role": "user", "content": "Go on."},
    {"role": "assistant", "content": "Counted.", "tool_calls": [
        _chat_call("fc_g1", "search", '{"q":"fish"}'), _chat_call("fc_g2", "search", '{"q":"frogs"}')]},
    {"role": "tool", "tool_call_id": "fc_g1", "content": "0 fish"},
    {"role": "tool", "tool_call_id": "fc_g2", "content": "4 frogs"},
    {"role": "assistant", "content": "6 pets, 4 frogs."},
    {"role": "user", "content": "Thanks. And snakes?"},
]


def _leaked(body: dict[str, Any], keep: tuple[str, ...] = ()) -> list[str]:
    text = json.dumps(body)
    return [s for s in SIGNED_STRINGS if s in text and s not in keep]


def test_openai_chat_request_carries_no_signed_state(repaired: list[Any]) -> None:
    body = OpenAIChatProvider(model="gpt-5.1", api_key=KEY).build_request(repaired, [SEARCH, SAVE_NOTE], CallOptions(), stream=True).body
    assert body["messages"] == CHAT_MESSAGES
    assert _leaked(body) == []


def test_openrouter_request_replays_only_its_reasoning_details(repaired: list[Any]) -> None:
    p = preset("openrouter", model="anthropic/claude-sonnet-4.5", api_key=KEY)
    body = p.build_request(repaired, [SEARCH, SAVE_NOTE], CallOptions(), stream=True).body
    want = [dict(m) for m in CHAT_MESSAGES]
    want[12] = {"role": "assistant", "content": "6 pets, 4 frogs.", "reasoning_details": OR_DETAILS}
    assert body["messages"] == want
    assert _leaked(body, keep=(OR_DETAILS[0]["data"],)) == []


def test_deepseek_request_sends_reasoning_text_back_and_nothing_signed(repaired: list[Any]) -> None:
    p = preset("deepseek", model="deepseek-reasoner", api_key=KEY)
    msgs = p.build_request(repaired, [SEARCH, SAVE_NOTE], CallOptions(), stream=True).body["messages"]
    assert [m.get("reasoning_content") for m in msgs if m["role"] == "assistant"] == [
        "Two searches.", "Need birds too.", "Summing up.", "Adding."]
    assert [{k: v for k, v in m.items() if k != "reasoning_content"} for m in msgs] == CHAT_MESSAGES
    assert _leaked({"messages": msgs}) == []


def _fc(cid: str, name: str, args: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": cid, "name": name, "arguments": args}


def _out(cid: str, output: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": cid, "output": output}


def _said(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}


RESPONSES_INPUT = [
    {"role": "user", "content": "Find cats and dogs."},
    _fc("toolu_01", "search", '{"q":"cats"}'),
    _fc("toolu_02", "search", '{"q":"dogs"}'),
    _out("toolu_01", "3 cats"),
    _out("toolu_02", "2 dogs"),
    RS_ITEM,  # its own reasoning, whole, right before the items it came with
    _said("Checking birds."),
    _fc("call_r1", "search", '{"q":"birds"}'),
    _fc("call_r2", "save_note", '{"text":"pets"}'),
    _out("call_r1", "1 bird"),
    _out("call_r2", MAY_HAVE_RUN),
    {"role": "user", "content": "Go on."},
    _said("Counted."),
    _fc("fc_g1", "search", '{"q":"fish"}'),
    _fc("fc_g2", "search", '{"q":"frogs"}'),
    _out("fc_g1", "0 fish"),
    _out("fc_g2", "4 frogs"),
    _said("6 pets, 4 frogs."),
    {"role": "user", "content": "Thanks. And snakes?"},
]


def test_responses_request_replays_its_own_encrypted_reasoning_only(repaired: list[Any]) -> None:
    body = ResponsesProvider(model="gpt-5", api_key=KEY).build_request(repaired, [SEARCH, SAVE_NOTE], CallOptions(), stream=True).body
    assert body["instructions"] == "You are terse."
    assert body["input"] == RESPONSES_INPUT
    assert (body["store"], body["include"]) == (False, ["reasoning.encrypted_content"])
    assert _leaked(body, keep=(RS_ITEM["encrypted_content"],)) == []


def test_the_chatgpt_backend_does_not_take_openai_api_reasoning(repaired: list[Any]) -> None:
    p = ResponsesProvider(model="gpt-5", api_key=KEY, backend="chatgpt")
    body = p.build_request(repaired, [SEARCH, SAVE_NOTE], CallOptions(), stream=True).body
    assert body["input"] == [it for it in RESPONSES_INPUT if it is not RS_ITEM]
    assert _leaked(body) == []


def _use(cid: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": cid, "name": name, "input": args}


def _result(cid: str, content: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": cid, "content": content}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


ANTHROPIC_MESSAGES = [
    {"role": "user", "content": [_text("Find cats and dogs.")]},
    {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "Two searches.", "signature": A_SIG},  # unchanged, in place
        _use("toolu_01", "search", {"q": "cats"}),
        _use("toolu_02", "search", {"q": "dogs"}),
    ]},
    {"role": "user", "content": [_result("toolu_01", "3 cats"), _result("toolu_02", "2 dogs")]},
    {"role": "assistant", "content": [
        _text("Checking birds."), _use("call_r1", "search", {"q": "birds"}), _use("call_r2", "save_note", {"text": "pets"})]},
    # tool results first, then the user's words, in one user turn
    {"role": "user", "content": [_result("call_r1", "1 bird"), _result("call_r2", MAY_HAVE_RUN), _text("Go on.")]},
    {"role": "assistant", "content": [_text("Counted."), _use("fc_g1", "search", {"q": "fish"}), _use("fc_g2", "search", {"q": "frogs"})]},
    {"role": "user", "content": [_result("fc_g1", "0 fish"), _result("fc_g2", "4 frogs")]},
    {"role": "assistant", "content": [_text("6 pets, 4 frogs.")]},
    {"role": "user", "content": [_text("Thanks. And snakes?")]},
]


def test_anthropic_request_replays_its_thinking_block_in_place(repaired: list[Any]) -> None:
    body = AnthropicProvider(model="claude-sonnet-4-5", api_key=KEY).build_request(
        repaired, [SEARCH, SAVE_NOTE], CallOptions(), stream=True
    ).body
    assert body["system"] == [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}]
    assert body["messages"] == ANTHROPIC_MESSAGES
    assert _leaked(body, keep=(A_SIG,)) == []


def test_an_anthropic_shaped_gateway_does_not_take_anthropic_signatures(repaired: list[Any]) -> None:
    """A signature verifies only where it was made: another server gets no thinking block."""
    p = AnthropicProvider(model="claude-sonnet-4-5", api_key=KEY, base_url="https://gateway.example/anthropic", id="gateway")
    body = p.build_request(repaired, [SEARCH, SAVE_NOTE], CallOptions(), stream=True).body
    want = [dict(t) for t in ANTHROPIC_MESSAGES]
    want[1] = {"role": "assistant", "content": ANTHROPIC_MESSAGES[1]["content"][1:]}
    assert body["messages"] == want
    assert _leaked(body) == []


def _call(cid: str, name: str, args: dict[str, Any], sig: str | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"functionCall": {"id": cid, "name": name, "args": args}}
    if sig is not None:
        part["thoughtSignature"] = sig
    return part


def _response(cid: str, name: str, text: str) -> dict[str, Any]:
    return {"functionResponse": {"id": cid, "name": name, "response": {"output": text}}}


GEMINI_CONTENTS = [
    {"role": "user", "parts": [{"text": "Find cats and dogs."}]},
    {"role": "model", "parts": [_call("toolu_01", "search", {"q": "cats"}), _call("toolu_02", "search", {"q": "dogs"})]},
    {"role": "user", "parts": [_response("toolu_01", "search", "3 cats"), _response("toolu_02", "search", "2 dogs")]},
    {"role": "model", "parts": [
        {"text": "Checking birds."}, _call("call_r1", "search", {"q": "birds"}), _call("call_r2", "save_note", {"text": "pets"})]},
    # the responses answer the call turn; the user's words are a turn of their own
    {"role": "user", "parts": [_response("call_r1", "search", "1 bird"), _response("call_r2", "save_note", MAY_HAVE_RUN)]},
    {"role": "user", "parts": [{"text": "Go on."}]},
    {"role": "model", "parts": [
        {"text": "Counted.", "thoughtSignature": G_TEXT_SIG},  # the signature back on the part it came with
        _call("fc_g1", "search", {"q": "fish"}, G_CALL_SIG),
        _call("fc_g2", "search", {"q": "frogs"}),
    ]},
    {"role": "user", "parts": [_response("fc_g1", "search", "0 fish"), _response("fc_g2", "search", "4 frogs")]},
    {"role": "model", "parts": [{"text": "6 pets, 4 frogs."}]},
    {"role": "user", "parts": [{"text": "Thanks. And snakes?"}]},
]


@pytest.mark.parametrize("model", ["gemini-2.5-flash", "gemini-3-flash-preview"])
def test_gemini_request_replays_its_signatures_beside_their_parts(model: str, repaired: list[Any]) -> None:
    body = GeminiProvider(model=model, api_key=KEY).build_request(repaired, [SEARCH, SAVE_NOTE], CallOptions(), stream=True).body
    assert body["systemInstruction"] == {"parts": [{"text": "You are terse."}]}
    assert body["contents"] == GEMINI_CONTENTS
    assert _leaked(body, keep=(G_CALL_SIG, G_TEXT_SIG)) == []
