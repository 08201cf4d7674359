"""Tool calls a model wrote as text, in the markup of the common families: recognised (so a view
can say so), never run, and read within bounds whatever the text holds."""

from __future__ import annotations

import pytest

from providerkit_nb.core.text_calls import text_calls

# a runaway pattern on hostile text hangs: the timeout fails it (the real cost is milliseconds)
pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize(
    ("text", "form", "name"),
    [
        # Hermes / Qwen / SmolLM2
        ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>', "<tool_call>",
         "get_weather"),
        # cut off before its closing tag (a length finish)
        ('Let me check. <tool_call>{"name": "read_file", "arguments": {"path": "a', "<tool_call>", "read_file"),
        # Llama 3.1
        ('<|python_tag|>{"name": "search", "parameters": {"q": "x"}}<|eom_id|>', "<|python_tag|>", "search"),
        # Llama 3.1 custom tools / Functionary
        ('<function=lookup>{"id": 3}</function>', "<function=...>", "lookup"),
        # Mistral
        ('[TOOL_CALLS][{"name": "calc", "arguments": {"x": 1}}]', "[TOOL_CALLS]", "calc"),
        # OpenAI-shaped inside the tag
        ('<tool_call>{"type": "function", "function": {"name": "f1", "arguments": "{}"}}</tool_call>',
         "<tool_call>", "f1"),
        # no readable name
        ("<tool_call>call something</tool_call>", "<tool_call>", None),
    ],
)
def test_each_family_is_recognised_with_the_tool_it_names(text: str, form: str, name: str | None) -> None:
    found = text_calls(text)
    assert len(found) == 1
    assert found[0].form == form and found[0].name == name


def test_prose_about_tools_is_not_a_call() -> None:
    assert text_calls("I would call get_weather with {\"city\": \"Paris\"} if I could.") == []
    assert text_calls("") == [] and text_calls(None) == []  # type: ignore[arg-type]


def test_several_calls_in_order() -> None:
    text = '<tool_call>{"name": "a"}</tool_call> then <tool_call>{"name": "b"}</tool_call>'
    assert [c.name for c in text_calls(text)] == ["a", "b"]


@pytest.mark.parametrize(
    "hostile",
    [
        " " * 2_000_000,
        "<tool_call>" + " " * 500_000,
        "<tool_call>" * 200_000,
        "<function=x>" * 100_000,
        "<tool_call>" + "[" * 200_000,
        '"name": "' * 200_000,
    ],
    ids=["spaces", "open-tag-spaces", "many-tags", "many-functions", "deep", "many-names"],
)
def test_hostile_text_is_read_within_bounds(hostile: str) -> None:
    found = text_calls(hostile)
    assert len(found) <= 20
    assert all(len(c.text) <= 300 for c in found)
