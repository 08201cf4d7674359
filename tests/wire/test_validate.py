"""validate_history's dispatch to a wire's rules: unknown wires, missing rules modules, and the
wire's rules after the generic ones."""

from __future__ import annotations

import sys
import types

import pytest

import providerkit_nb as pk
from providerkit_nb.errors import Problem
from providerkit_nb.wire import validate as validate_mod


def test_unknown_wire_names_the_known_ones() -> None:
    with pytest.raises(ValueError) as exc:
        pk.validate_history([], wire="cohere")
    for name in ("anthropic", "deepseek", "gemini", "openai", "openai_chat", "responses"):
        assert name in str(exc.value)


def test_missing_rules_module_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(validate_mod.WIRES, "future_wire", ("providerkit_nb.wire.no_such_rules_module", None))
    with pytest.raises(ValueError, match="no rules for wire 'future_wire' yet.*known wires: "):
        pk.validate_history([], wire="future_wire")


def test_wire_rules_run_after_the_generic_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    # a stand-in rules module (the real ones are written per wire): it proves the dispatch only
    seen: dict = {}

    def check(messages, dialect=None):
        seen["dialect"] = dialect
        seen["types"] = [type(m).__name__ for m in messages]
        return [Problem("fake_rule", 0, "fake", provider_wording="Fake wording")]

    module = types.ModuleType("providerkit_nb.wire.fake_wire")
    module.RULES = [("fake_rule", "Fake wording")]
    module.check = check
    monkeypatch.setitem(sys.modules, "providerkit_nb.wire.fake_wire", module)
    monkeypatch.setitem(validate_mod.WIRES, "fakeseek", ("providerkit_nb.wire.fake_wire", "fakeseek"))
    monkeypatch.setitem(validate_mod.WIRES, "fake", ("providerkit_nb.wire.fake_wire", None))
    h = [{"role": "assistant", "content": " "}]
    got = pk.validate_history(h, wire="fakeseek")
    assert [(p.rule, p.provider_wording) for p in got] == [("empty_assistant", None), ("fake_rule", "Fake wording")]
    assert seen == {"dialect": "fakeseek", "types": ["AssistantMessage"]}
    pk.validate_history(h, wire="fake")
    assert seen["dialect"] is None
