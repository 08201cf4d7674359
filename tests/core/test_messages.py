"""Canonical messages: exact round trips, clear refusals, nothing dropped."""

from __future__ import annotations

import json

import pytest

import providerkit_nb as pk
from providerkit_nb.core.messages import ensure_messages, message_from_dict
from providerkit_nb.messages import ImagePart, dumps, loads

# Written by hand in the canonical encoding (sorted keys, compact, non-ASCII kept), so the
# expected bytes do not come from the code under test.
CANONICAL = (
    '[{"content":"You are terse.","role":"system"},'
    '{"content":"Qu\'y a-t-il dans README.md ? 日本","role":"user"},'
    '{"content":[{"text":"this?","type":"text"},{"data":"iVBORw0KGgo=","mime_type":"image/png","type":"image"},'
    '{"data":"JVBERi0=","mime_type":"application/pdf","name":"a.pdf","type":"file"}],"role":"user"},'
    '{"content":"","reasoning":"I should read it.","reasoning_details":[{"data":"x","type":"reasoning.encrypted"}],'
    '"reasoning_items":{"items":[{"signature":"sig","thinking":"...","type":"thinking"}],"provider":"anthropic"},'
    '"role":"assistant","tool_calls":[{"arguments":"{\\"path\\": \\"README.md\\"}","id":"toolu_01","name":"read_file",'
    '"thought_signature":"c2ln"},{"arguments":"","id":"toolu_02","name":"list_dir"}]},'
    '{"content":"# Hello","name":"read_file","role":"tool","tool_call_id":"toolu_01"},'
    '{"content":"a\\nb","images":[{"data":"R0lGOD","mime_type":"image/gif","type":"image"}],"name":"list_dir",'
    '"role":"tool","tool_call_id":"toolu_02"},'
    '{"content":"Done.","role":"assistant"}]'
)


def test_round_trip_is_byte_exact() -> None:
    msgs = loads(CANONICAL)
    assert [type(m).__name__ for m in msgs] == [
        "SystemMessage",
        "UserMessage",
        "UserMessage",
        "AssistantMessage",
        "ToolMessage",
        "ToolMessage",
        "AssistantMessage",
    ]
    assert dumps(msgs) == CANONICAL
    assert dumps(loads(dumps(msgs))) == CANONICAL


def test_fields_survive_round_trip() -> None:
    msgs = loads(CANONICAL)
    a = msgs[3]
    assert isinstance(a, pk.AssistantMessage)
    assert a.tool_calls[0].arguments == '{"path": "README.md"}'  # raw text, verbatim
    assert a.tool_calls[0].thought_signature == "c2ln"
    assert a.reasoning_items.provider == "anthropic"
    assert a.reasoning_details == [{"type": "reasoning.encrypted", "data": "x"}]
    assert isinstance(msgs[2].content[1], ImagePart)
    assert msgs[2].content[2].name == "a.pdf"
    assert msgs[5].images[0].mime_type == "image/gif"


def test_absent_fields_left_out() -> None:
    text = dumps([pk.AssistantMessage("hi"), pk.ToolMessage("c", "t", "r")])
    assert text == (
        '[{"content":"hi","role":"assistant"},'
        '{"content":"r","name":"t","role":"tool","tool_call_id":"c"}]'
    )


@pytest.mark.parametrize(
    ("doc", "index", "needle"),
    [
        ([{"role": "robot", "content": "x"}], 0, "unknown role 'robot'"),
        ([{"role": "user", "content": "a"}, {"role": "tool", "name": "t", "content": "x"}], 1, "[1].tool_call_id: missing"),
        (
            [{"role": "assistant", "tool_calls": [{"name": "t", "arguments": "{}"}]}],
            0,
            "[0].tool_calls[0].id: missing",
        ),
        (
            [{"role": "assistant", "tool_calls": [{"id": "c", "name": "t", "arguments": {"a": 1}}]}],
            0,
            "[0].tool_calls[0].arguments: expected str, got dict",
        ),
        ([{"role": "user", "content": "a"}, {"role": "user"}], 1, "[1].content: missing"),
        ([{"role": "user", "content": 5}], 0, "[0].content: expected str or a list of parts, got int"),
        ([{"role": "system", "content": "s", "extra": 1}], 0, "unknown field(s) ['extra']"),
        ([{"role": "user", "content": [{"type": "image", "mime_type": "image/bmp", "data": "x"}]}], 0, "image/bmp"),
        ([{"role": "user", "content": [{"type": "video"}]}], 0, "unknown part type 'video'"),
        (["not an object"], 0, "must be a JSON object"),
        ([{"role": "assistant", "reasoning_items": {"provider": "x", "items": "nope"}}], 0, "[0].reasoning_items.items: expected list, got str"),
    ],
)
def test_from_dict_errors_name_field_and_index(doc: list, index: int, needle: str) -> None:
    with pytest.raises(ValueError) as exc:
        loads(json.dumps(doc))
    text = str(exc.value)
    assert f"message {index}" in text
    assert needle in text


def test_loads_rejects_non_json_and_non_arrays() -> None:
    with pytest.raises(ValueError, match="not valid JSON"):
        loads("[{")
    with pytest.raises(ValueError, match="JSON array"):
        loads('{"role": "user"}')


def test_unknown_fields_are_refused_not_dropped() -> None:
    # a field we do not know must never vanish on a load/save cycle
    with pytest.raises(ValueError, match="refusing rather than dropping"):
        message_from_dict({"role": "tool", "tool_call_id": "c", "name": "t", "content": "x", "is_error": True}, 3)


def test_ensure_messages_accepts_dicts_and_objects() -> None:
    obj = pk.UserMessage("hi")
    out = ensure_messages([obj, {"role": "assistant", "content": "yo"}])
    assert out[0] is obj
    assert out[1] == pk.AssistantMessage("yo")
    with pytest.raises(ValueError, match="message 1"):
        ensure_messages([obj, {"role": "assistant", "content": 3}])
