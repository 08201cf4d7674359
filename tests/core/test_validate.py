"""validate_history: the generic rules, their indexes, and dispatch to a wire's rules."""

from __future__ import annotations

import sys
import types

import pytest

import providerkit_nb as pk
from providerkit_nb.core import validate as validate_mod
from providerkit_nb.errors import Problem


def test_each_generic_rule_with_its_index() -> None:
    h = [
        {"role": "system", "content": "s"},  # 0
        {"role": "tool", "tool_call_id": "nope", "name": "g", "content": "x"},  # 1 orphan
        {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "name": "t", "arguments": ""}, {"id": "b", "name": "t", "arguments": ""}]},  # 2
        {"role": "tool", "tool_call_id": "a", "name": "t", "content": "1"},  # 3
        {"role": "tool", "tool_call_id": "a", "name": "t", "content": "1 again"},  # 4 duplicate result
        {"role": "assistant", "content": " "},  # 5 empty
        {"role": "user", "content": "u"},  # 6
        {"role": "tool", "tool_call_id": "b", "name": "t", "content": "late"},  # 7 misplaced
        {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "name": "t", "arguments": ""}]},  # 8 dup id + dangling
    ]
    got = [(p.rule, p.index) for p in pk.validate_history(h)]
    assert got == [
        ("orphan_result", 1),
        ("dangling_call", 2),
        ("duplicate_result", 4),
        ("empty_assistant", 5),
        ("misplaced_result", 7),
        ("duplicate_id", 8),
        ("dangling_call", 8),
    ]
    problems = pk.validate_history(h)
    assert "'b'" in problems[1].message and "message 2" not in problems[1].message
    assert "already used by an earlier call in message 2" in problems[5].message
    assert all(p.provider_wording is None for p in problems)
    assert problems[0].to_dict() == {
        "rule": "orphan_result",
        "index": 1,
        "message": problems[0].message,
        "provider_wording": None,
    }


def test_repaired_output_validates_clean() -> None:
    h = [{"role": "assistant", "content": "", "tool_calls": [{"id": "a", "name": "t", "arguments": ""}]}]
    assert [p.rule for p in pk.validate_history(h)] == ["dangling_call"]
    assert pk.validate_history(pk.repair_history(h).messages) == []


def test_unknown_wire_names_the_known_ones() -> None:
    with pytest.raises(ValueError) as exc:
        pk.validate_history([], wire="cohere")
    for name in ("anthropic", "deepseek", "gemini", "openai", "openai_chat", "responses"):
        assert name in str(exc.value)


def test_missing_rules_module_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(validate_mod.WIRES, "future_wire", ("no_such_rules_module", None))
    with pytest.raises(ValueError, match="no rules for wire 'future_wire' yet.*known wires: "):
        pk.validate_history([], wire="future_wire")


def test_wire_rules_run_after_the_generic_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    # a stand-in rules module (the real ones are written per wire): it proves the dispatch only
    seen: dict = {}

    def check(messages, dialect=None):
        seen["dialect"] = dialect
        seen["types"] = [type(m).__name__ for m in messages]
        return [Problem("fake_rule", 0, "fake", provider_wording="Fake wording")]

    module = types.ModuleType("providerkit_nb.core.rules.fake_wire")
    module.RULES = [("fake_rule", "Fake wording")]
    module.check = check
    monkeypatch.setitem(sys.modules, "providerkit_nb.core.rules.fake_wire", module)
    monkeypatch.setitem(validate_mod.WIRES, "fakeseek", ("fake_wire", "fakeseek"))
    monkeypatch.setitem(validate_mod.WIRES, "fake", ("fake_wire", None))
    h = [{"role": "assistant", "content": " "}]
    got = pk.validate_history(h, wire="fakeseek")
    assert [(p.rule, p.provider_wording) for p in got] == [("empty_assistant", None), ("fake_rule", "Fake wording")]
    assert seen == {"dialect": "fakeseek", "types": ["AssistantMessage"]}
    pk.validate_history(h, wire="fake")
    assert seen["dialect"] is None
