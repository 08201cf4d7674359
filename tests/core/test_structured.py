"""Structured output, the provider-neutral part: json= normalisation, strictness, the schema
prompt, and reading a JSON answer out of a model's text (never raising)."""

from __future__ import annotations

import json
from pathlib import Path

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import providerkit_nb as pk
import providerkit_nb.structured as pk_structured
from providerkit_nb.core.structured import (
    JsonFormat,
    is_strict_schema,
    json_format,
    read_answer,
    schema_prompt,
)

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


class Person(pydantic.BaseModel):
    name: str
    age: int


# --------------------------------------------------------------------------- parse_json_answer


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('```JSON\n{"a": 1}\n```\nthat is all', {"a": 1}),
        ('Sure! Here it is:\n```\n[1, 2]\n```', [1, 2]),
        ('```python\nx = {"no": 1}\n```\nAnswer:\n{"a": {"b": "}"}}\ntrailing prose', {"a": {"b": "}"}}),
        ('Answer:\n{"a": "brace } and \\" quote"} done', {"a": 'brace } and " quote'}),
        ("The result is [1, [2, 3]] as asked.", [1, [2, 3]]),
        ('```json {"a":\n1}\n```', {"a": 1}),  # JSON starting on the fence line itself
        ("42", 42),
        ('"just a string"', "just a string"),
    ],
)
def test_parse_json_answer_finds_the_json(text: str, value: object) -> None:
    got = pk_structured.parse_json_answer(text)
    assert got.ok and got.error is None
    assert got.value == value


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("I cannot answer that.", "no JSON object in the answer"),
        ("", "no JSON object in the answer (empty)"),
        ('```json\n{"a": 1,,}\n```', "fenced JSON block is not valid JSON"),
        ('{"a": 1, "b": ', "not valid"),  # cut off by max_tokens
        ("{'a': 1}", "not valid"),  # Python, not JSON
    ],
)
def test_parse_json_answer_says_what_it_could_not_parse(text: str, says: str) -> None:
    got = pk_structured.parse_json_answer(text)
    assert not got.ok and got.value is None
    assert says in got.error


def test_the_error_names_the_place() -> None:
    got = pk_structured.parse_json_answer('{\n  "a": 1\n  "b": 2\n}')
    assert "line 3 column 3" in got.error


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from('{}[]"\\`json \nab:,1'), max_size=60))
def test_parse_json_answer_never_raises(text: str) -> None:
    got = pk_structured.parse_json_answer(text)
    assert got.ok == (got.error is None)
    if not got.ok:
        assert got.value is None and got.error


def test_parse_json_answer_on_something_that_is_not_text() -> None:
    got = pk_structured.parse_json_answer(None)  # type: ignore[arg-type]
    assert not got.ok and "expected the answer text" in got.error


# --------------------------------------------------------------------------- json= forms


def test_json_format_forms() -> None:
    f = json_format(PERSON)
    assert f == JsonFormat("answer", PERSON, None, None) and f.is_strict
    assert json_format({**PERSON, "title": "Person record"}).name == "Person_record"
    obj = json_format("object")
    assert obj.schema is None and not obj.is_strict and obj.prompt.startswith("Respond with a single JSON object.")
    m = json_format(Person)
    assert m.name == "Person" and m.model is Person and m.schema == Person.model_json_schema()
    rf = json_format({"type": "json_schema", "json_schema": {"name": "p", "schema": PERSON, "strict": False}})
    assert (rf.name, rf.schema, rf.is_strict) == ("p", PERSON, False)
    with pytest.raises(ValueError, match="'object'"):
        json_format("json")
    with pytest.raises(ValueError, match="model_json_schema"):
        json_format(42)


def test_a_duck_typed_model_works_without_pydantic() -> None:
    class Point:
        @classmethod
        def model_json_schema(cls) -> dict:
            return {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}

        @classmethod
        def model_validate(cls, value: dict) -> tuple:
            return ("point", value["x"])

    got = read_answer('{"x": 2.5}', json_format(Point))
    assert got.value == ("point", 2.5)


def test_the_package_never_imports_pydantic() -> None:
    root = Path(pk.__file__).parent
    for path in root.rglob("*.py"):
        text = path.read_text()
        assert "import pydantic" not in text and "from pydantic" not in text, path


@pytest.mark.parametrize(
    ("schema", "strict"),
    [
        (PERSON, True),
        ({**PERSON, "additionalProperties": True}, False),
        ({**PERSON, "required": ["name"]}, False),
        ({"type": "object", "properties": {"p": PERSON}, "required": ["p"], "additionalProperties": False}, True),
        ({"type": "object", "properties": {"p": {**PERSON, "required": []}}, "required": ["p"],
          "additionalProperties": False}, False),
        ({"type": "array", "items": PERSON}, True),
        ({"anyOf": [PERSON, {"type": "null"}]}, True),
        ({"$ref": "#/$defs/x"}, False),
        ({"allOf": [PERSON]}, False),
        ({"type": "string"}, True),
        ({"type": "object"}, False),  # free-form: OpenAI's strict mode refuses it
        ({"type": "object", "properties": {"meta": {"type": "object"}}, "required": ["meta"],
          "additionalProperties": False}, False),
        ({"type": "object", "properties": {}, "additionalProperties": False}, True),
        ("not a schema", False),
    ],
)
def test_is_strict_schema(schema: object, strict: bool) -> None:
    assert is_strict_schema(schema) is strict


def test_schema_prompt_text() -> None:
    assert schema_prompt({"type": "object"}) == (
        "Respond with a single JSON object matching this schema. No prose, no code fence.\n"
        "Write a line break inside a string value as \\n. A real line break there is invalid JSON.\n"
        '{"type":"object"}'
    )


# --------------------------------------------------------------------------- validation


def test_read_answer_validates_into_the_model() -> None:
    ok = read_answer('Here:\n```json\n{"name": "Ada", "age": 36}\n```', json_format(Person))
    assert ok.value == Person(name="Ada", age=36)
    bad = read_answer('{"name": "Ada", "age": "old"}', json_format(Person))
    assert bad.value is None and "does not fit Person" in bad.error and "age" in bad.error


def test_read_answer_checks_a_plain_schema() -> None:
    assert read_answer('{"name": "Ada", "age": 36}', json_format(PERSON)).ok
    bad = read_answer('{"name": "Ada"}', json_format(PERSON))
    assert "missing required property 'age'" in bad.error
    assert "expected a JSON object" in read_answer("[1]", json_format("object")).error
    assert read_answer(json.dumps({"any": [1]}), json_format("object")).value == {"any": [1]}


def test_a_json_reply_shows_as_its_value() -> None:
    from IPython.lib.pretty import pretty

    from providerkit_nb.core.structured import JsonReply

    assert pretty(JsonReply({"city": "Oslo", "days": 3}, None)) == "{'city': 'Oslo', 'days': 3}"
    assert pretty(JsonReply(None, None, "the answer is not JSON")) == "JsonReply(error='the answer is not JSON')"
