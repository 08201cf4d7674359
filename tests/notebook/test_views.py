"""Views without a browser: widgets render through their values and expose DataFrames, so
clicking a button and reading the state is an ordinary test (ipywidgets runs headless)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import providerkit_nb as pk
from providerkit_nb.core import repair as R
from providerkit_nb.notebook import StoreBrowser, gate_frame
from providerkit_nb.testing import simulate
from providerkit_nb.wrappers import create_gate

# the exact texts, pinned here (not imported from the code under test)
MAY_HAVE_RUN = (
    "This call was interrupted before it returned. It may have partly run, so check its effect "
    "before calling it again."
)


def _broken() -> list:
    return [
        pk.SystemMessage("sys"),
        pk.UserMessage("go"),
        pk.AssistantMessage(
            "",
            tool_calls=[
                pk.ToolCall("a", "read_file", '{"path":"x"}'),
                pk.ToolCall("b", "write_file", '{"path":"y","content":"z"}'),
            ],
        ),
        pk.ToolMessage("a", "read_file", "X"),
        pk.ToolMessage("zzz", "read_file", "an orphan result"),
    ]


def test_history_frame_columns_and_rows():
    f = pk.history_frame(_broken())
    assert list(f.columns) == ["role", "text", "tool_calls", "call_id", "reasoning", "signatures", "tokens"]
    assert list(f["role"]) == ["system", "user", "assistant", "tool", "tool"]
    assert f.loc[2, "call_id"] == "a, b"
    assert f.loc[3, "call_id"] == "a"


def test_repair_button_shows_repaired_rows_highlighted_by_kind():
    view = pk.HistoryView(_broken(), is_read_only=lambda n: n == "read_file")
    assert "Repair" in view.repair_button.description and view.actions.layout.display != "none"
    view.repair_button.click()
    assert view.repaired is not None
    # the missing result for b, and the orphan turned into a user note
    assert [m.role for m in view.repaired.messages] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert view.cards.value.count(f"pk-badge pk-k-{R.ADDED_RESULT}") == 1
    assert view.cards.value.count(f"pk-badge pk-k-{R.RESULT_TO_NOTE}") == 1
    assert view.status.value.startswith("repaired: 2 change(s)") and "; 1 interrupted call(s)" in view.status.value
    inter = view.interrupted_frame()
    assert list(inter["name"]) == ["write_file"] and list(inter["read_only"]) == [False]
    assert inter.loc[0, "note"] == MAY_HAVE_RUN


def test_role_filter_limits_the_rows_shown():
    view = pk.HistoryView(_broken())
    view.repair()
    view.role.value = "tool"
    # the result of a, the one repair adds for b, and the orphan (stored as a tool result)
    assert view.cards.value.count('<div class="pk-row') == 3
    view.role.value = "all"
    assert view.cards.value.count('<div class="pk-row') == 6  # five stored rows and the added result


def test_resume_button_continues_a_conversation():
    store = pk.MemoryStore()
    for m in _broken()[:3]:
        store.save("c", m)
    tools, _ = simulate.demo_tools()
    provider = simulate.ScriptedProvider([simulate.text_turn("Recovered.")])
    convo = pk.Conversation(store, "c", provider, tools, display=False)
    view = convo.view()
    view.repair_button.click()
    assert len(view.interrupted_frame()) == 2
    view.resume_button.click()
    assert [m.role for m in store.load("c")][-1] == "assistant"
    assert store.load("c")[-1].content == "Recovered."
    assert view.status.value.startswith("repaired:")


def test_store_browser_lists_and_shows_conversations():
    store = pk.MemoryStore()
    store.save("one", pk.UserMessage("first"))
    for m in _broken():
        store.save("two", m)
    browser = StoreBrowser(store)
    assert set(browser.picker.options) == {"one", "two"}
    browser.picker.value = "two"
    assert browser.view is not None and len(browser.view.messages) == 5
    frame = browser.frame()
    assert set(frame["id"]) == {"one", "two"}


def test_turns_and_changes_frames():
    store = pk.MemoryStore()
    provider = simulate.ScriptedProvider([simulate.text_turn("ok")])
    convo = pk.Conversation(store, "c", provider, display=False)
    convo.send("hi")
    t = pk.turns_frame(convo, prices={"scripted-1": {"input": 1.0, "output": 2.0}})
    assert t.loc[0, "input_tokens"] == 100
    # cost from the stated prices: 100 input at $1/M and the output tokens at $2/M
    out = t.loc[0, "output_tokens"]
    assert t.loc[0, "cost_usd"] == pytest.approx((100 * 1.0 + out * 2.0) / 1e6)
    ch = pk.changes_frame(pk.repair_history(_broken()))
    assert set(ch["kind"]) == {"added_interrupted_result", "result_to_note"}


def test_gate_frame_reads_a_gate():
    gate = create_gate(2)
    with gate:
        f = gate_frame(gate)
    assert isinstance(f, pd.DataFrame) and len(f) == 1
    assert f.iloc[0]["in_use"] == 1


def test_frames_never_show_a_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-1234567890")
    provider = pk.openai(model="gpt-4o-mini")
    assert "sk-test-secret" not in repr(provider)
    assert "sk-test-secret" not in json.dumps(pk.history_frame(_broken()).to_dict())


def test_the_view_shows_the_interrupted_calls_before_repair_is_pressed():
    store = pk.MemoryStore()
    for m in _broken()[:3]:
        store.save("c", m)
    tools, _ = simulate.demo_tools()
    convo = pk.Conversation(store, "c", simulate.ScriptedProvider([]), tools, display=False)
    view = convo.view()
    assert "2 interrupted call(s)" in view.status.value
    assert "write_file (" in view.findings.value and "read_file (" in view.findings.value  # each lost call, named


def test_resume_with_an_approval_pending_asks_in_the_view_and_never_waits():
    """What a restart leaves: a call saved while its question was open. The view's Resume runs
    in a button callback, which must not wait for a person: it shows the question in the view
    and returns; the question's own Approve button carries on, and the status lines end in what
    happened."""
    store = pk.MemoryStore()
    store.save("c", pk.UserMessage("write it"))
    store.save("c", pk.AssistantMessage("", tool_calls=[pk.ToolCall("w1", "write_file", '{"path":"n.md","content":"x"}')]))
    store.mark_call("c", "w1", "asking")
    tools, workspace = simulate.demo_tools()
    provider = simulate.ScriptedProvider([simulate.text_turn("Written.")])
    convo = pk.Conversation(store, "c", provider, tools, display="notebook", approve="ask")
    view = convo.view()
    assert "1 waiting for approval" in view.status.value

    view.resume_button.click()  # returns at once: nothing ran, nothing waits
    assert "n.md" not in workspace and [m.role for m in store.load("c")] == ["user", "assistant"]
    assert len(view.asks.children) == 1
    assert view.status.value == "waiting for your answer about write_file (call id w1) in the box above"
    box = view.asks.children[0]
    approve = box.children[2].children[0]
    assert approve.description == "Approve"

    approve.click()
    assert workspace["n.md"] == "x"
    assert [m.role for m in store.load("c")] == ["user", "assistant", "tool", "assistant"]
    assert store.call_marks("c")["w1"].state == "finished"
    assert box.children[-1].value == "approved: done"
    assert "Written." in view.live.value and 'data-status="done"' in view.live.value
    assert view.status.value.startswith("repaired: nothing to change")
