"""One event's JSON (``transport.sse.loads_data``) reads exactly as ``json.loads`` does, with and
without orjson (the optional ``fast-json`` extra), including the texts orjson reads differently
(integers beyond 64 bits) or refuses (NaN, lone surrogates, floats beyond range)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from providerkit_nb.transport import sse

CASES = [
    ('{"a":1,"b":2,"a":3}', "{'a': 3, 'b': 2}"),
    ("18446744073709551616", "18446744073709551616"),  # 2**64: orjson alone reads a float
    ("-9300000000000000000", "-9300000000000000000"),  # below -2**63, 19 digits
    ('{"n":123456789012345678901234567890}', "{'n': 123456789012345678901234567890}"),
    ("18446744073709551615", "18446744073709551615"),
    ("[1e400, -1e400]", "[inf, -inf]"),
    ("NaN", "nan"),
    ('{"x":"\\ud800"}', "{'x': '\\ud800'}"),
    ('{"t":"caf\u00e9 \\u00e9"}', "{'t': 'café é'}"),
    ("  [1.5e-320, -0.0, 0.1]", "[1.5e-320, -0.0, 0.1]"),
    ('{"id":"msg_1234567890123456789012"}', "{'id': 'msg_1234567890123456789012'}"),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_reads_as_the_standard_library(parser: str, text: str, expected: str) -> None:
    assert repr(sse.loads_data(text)) == expected


@pytest.mark.parametrize("text", ["", "not json", "{", '"\x01"'])
def test_refuses_what_it_cannot_read(parser: str, text: str) -> None:
    with pytest.raises(ValueError):
        sse.loads_data(text)


_scalars = (
    st.none() | st.booleans() | st.text()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False)
)
_values = st.recursive(_scalars, lambda kids: st.lists(kids, max_size=4)
                       | st.dictionaries(st.text(max_size=5), kids, max_size=4), max_leaves=20)


def _same(a: object, b: object) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return repr(a) == repr(b) or (math.isnan(a) and math.isnan(b))  # type: ignore[arg-type]
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))  # type: ignore[arg-type]
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)  # type: ignore[index]
    return a == b


@settings(max_examples=300, deadline=None)
@given(_values, st.booleans())
def test_any_value_reads_alike(value: object, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    want = json.loads(text)
    got = sse.loads_data(text)
    assert _same(got, want), (text, got, want)
