"""validate_history's generic rules, with their indexes (the dispatch to a wire's rules is
tests/wire/test_validate.py's)."""

from __future__ import annotations

import providerkit_nb as pk


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
