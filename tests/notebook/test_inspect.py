"""pk.inspect on one transcript of each foreign format, each with a known fault.

The transcripts are the ones notebook 3 uses (notebooks/transcripts/); the rule ids expected
here are the faults each file was written with, named by the generic validator and by the
wire's own rules with the provider's wording."""

from __future__ import annotations

from pathlib import Path

import pytest

import providerkit_nb as pk

TRANSCRIPTS = Path(__file__).resolve().parents[2] / "notebooks" / "transcripts"


@pytest.mark.parametrize(
    ("name", "fmt", "rules"),
    [
        # one broken call, one finding (the wire's dangling rule is its provider wording)
        ("openai_chat_dangling_call.json", "openai_chat", {"dangling_call"}),
        ("responses_dangling_call.json", "responses", {"dangling_call"}),
        ("anthropic_orphan_result.json", "anthropic", {"orphan_result", "empty_assistant", "anthropic.orphan_tool_result"}),
        ("gemini_unanswered_call.json", "gemini", {"dangling_call"}),
    ],
)
def test_inspect_names_each_fault_with_the_provider_wording(name, fmt, rules):
    report = pk.inspect(TRANSCRIPTS / name)
    assert report.format == fmt
    assert {p.rule for p in report.problems} == rules
    assert all(p.provider_wording for p in report.problems if "." in p.rule)
    assert any(p.provider_wording for p in report.problems)  # a wire rule's, or attached to its finding
    # repair makes it sendable on that wire
    repaired = pk.repair_history(report.messages)
    wire = {"openai_chat": "openai_chat", "responses": "responses", "anthropic": "anthropic", "gemini": "gemini"}[fmt]
    assert pk.validate_history(repaired.messages, wire=wire) == []
    # and the view shows the same problems
    view = report.view
    shown = view.findings.value  # each problem is linked from the findings at its message
    assert all(f'href="#{view.id_prefix}m-{p.index}"' in shown for p in report.problems if p.index is not None)
    frame = report.problems_frame()
    assert set(frame["rule"]) == rules


def test_the_dangling_openai_call_gets_the_right_words():
    report = pk.inspect(TRANSCRIPTS / "openai_chat_dangling_call.json")
    assert [p.rule for p in report.problems] == ["dangling_call"]
    wording = report.problems[0].provider_wording
    assert "must be followed by tool messages responding to each 'tool_call_id'" in wording
    assert "call_tag_1" in wording


def test_the_unanswered_gemini_call_is_one_finding_with_gemini_wording():
    report = pk.inspect(TRANSCRIPTS / "gemini_unanswered_call.json")
    assert [(p.rule, p.index) for p in report.problems] == [("dangling_call", 2)]
    assert report.problems[0].provider_wording.startswith(
        "Please ensure that the number of function response parts is equal to the number of function call parts"
    )


def test_a_gemini_count_finding_stays_when_not_every_call_of_the_message_lacks_a_result(tmp_path):
    """The count rule names no call: it is attached only when all calls of its message are
    unanswered; with one of two answered, both findings stay (each says something else)."""
    import json

    path = tmp_path / "two_calls.json"
    path.write_text(json.dumps({"contents": [
        {"role": "user", "parts": [{"text": "Weather in Lisbon and Porto?"}]},
        {"role": "model", "parts": [
            {"functionCall": {"name": "get_weather", "args": {"city": "Lisbon"}}, "thoughtSignature": "c2ln"},
            {"functionCall": {"name": "get_weather", "args": {"city": "Porto"}}},
        ]},
        {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"t": 20}}}]},
    ]}))
    report = pk.inspect(path)
    assert report.format == "gemini"
    assert sorted(p.rule for p in report.problems) == ["dangling_call", "gemini.function_response_count"]
    assert next(p for p in report.problems if p.rule == "dangling_call").provider_wording in (None, "")


def test_inspect_reads_our_jsonl_export(tmp_path):
    store = pk.MemoryStore()
    store.save("c", pk.UserMessage("go"))
    store.save("c", pk.AssistantMessage(tool_calls=[pk.ToolCall("a", "read_file", "{}")]))
    path = tmp_path / "c.jsonl"
    store.export_jsonl(path)
    report = pk.inspect(path)
    assert report.format == "canonical"
    assert [p.rule for p in report.problems] == ["dangling_call"]


def test_inspect_refuses_what_it_cannot_read(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"prompt": "hi"}')
    with pytest.raises(ValueError, match="must have 'messages'"):
        pk.inspect(bad)
    with pytest.raises(FileNotFoundError, match="no such transcript"):
        pk.inspect(tmp_path / "missing.json")
