"""parse_tool_args never raises and salvages what a cut-off or glued stream left."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from providerkit_nb.core.tool_args import is_complete_json, normalize_tool_id, parse_tool_args


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", {}),
        ("  \n", {}),
        (None, {}),
        ('{"path": "a.txt"}', {"path": "a.txt"}),
        ('"just a string"', {}),
        ("[1, 2]", {}),
        ("42", {}),
        ('{}{"q":"x"}', {"q": "x"}),
        ('{"a":1}{"b":2}', {"b": 2}),
        ('{"a":{"b":1}}{"c":3}', {"c": 3}),
        ('{"path":"a.txt","content":"hel', {"path": "a.txt", "content": "hel"}),
        ('{"path":"a.txt","n":5,"content":"line\\nnext', {"path": "a.txt", "content": "line\nnext"}),
        ('{"path":"a.txt","content":"end\\', {"path": "a.txt", "content": "end"}),
        ('{"path":"a.txt","content":"caf\\u00', {"path": "a.txt", "content": "caf"}),
        ('{"q":"say \\"hi\\"","r":"x', {"q": 'say "hi"', "r": "x"}),
        ('{"n": 12, "flag": tru', {}),
        ('{"a":"aten\\\\u00e7\\\\u00e3o"}', {"a": "atenção"}),
        ('{"a":"line\\\\n kept"}', {"a": "line\\n kept"}),
        ('{"e":"\\\\ud83d\\\\ude00","lone":"\\\\ud83d"}', {"e": "😀", "lone": "\\ud83d"}),
        ('{"list":["\\\\u00e9", {"deep": "\\\\u00e8"}]}', {"list": ["é", {"deep": "è"}]}),
    ],
)
def test_salvage_rules(raw: object, expected: dict) -> None:
    assert parse_tool_args(raw) == expected


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=60))
def test_never_raises_and_always_gives_a_dict(raw: str) -> None:
    assert isinstance(parse_tool_args(raw), dict)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.text(max_size=8), st.text(max_size=20), max_size=4))
def test_any_cut_of_a_string_object_keeps_the_complete_pairs(obj: dict) -> None:
    import json

    raw = json.dumps(obj, ensure_ascii=False)
    for cut in range(len(raw) + 1):
        got = parse_tool_args(raw[:cut])
        assert isinstance(got, dict)
        for k, v in got.items():
            assert k in obj
            assert obj[k].startswith(v) or "\\u" in obj[k]  # a salvaged value is a prefix


def test_is_complete_json() -> None:
    assert is_complete_json('{"a": 1}')
    assert not is_complete_json('{"a": ')
    assert not is_complete_json("  ")
    assert not is_complete_json(None)


def test_normalize_tool_id() -> None:
    assert normalize_tool_id("  call_1 ") == "call_1"
    fresh = normalize_tool_id("")
    assert re.fullmatch(r"call_pk_[0-9a-z]{8}", fresh)
    assert normalize_tool_id(None, prefix="x_").startswith("x_")
    long_id = "fc_" + "9" * 90
    short = normalize_tool_id(long_id)
    assert len(short) == 57 and short.startswith(long_id[:48] + "_")
    assert re.fullmatch(r"[0-9a-f]{8}", short[49:])
    assert normalize_tool_id(long_id) == short  # stable, so results keep matching their calls
    assert normalize_tool_id(long_id + "0") != short
    assert normalize_tool_id("x" * 64) == "x" * 64
