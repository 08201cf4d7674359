"""convo.settle(call_id, "ran" | "run" | "model"): a person decides what became of an
interrupted call that may have run; the choice is saved, and the next resume uses it."""

from __future__ import annotations

from typing import Any

import pytest

import providerkit_nb as pk
from providerkit_nb.conversation import approval
from providerkit_nb.core.validate import validate_history
from providerkit_nb.testing import simulate

# the exact texts, pinned here (not imported from the code under test)
ENTERED = (
    "[Entered by the user: this call was interrupted before it returned; the user checked what "
    "happened and wrote the following.]"
)
MAY_HAVE_RUN = (
    "This call was interrupted before it returned. It may have partly run, so check its effect "
    "before calling it again."
)


def _interrupted(store: Any, ws: Any, answer: str = "carrying on") -> tuple[Any, Any]:
    """A conversation whose write_file call was stopped mid-run (a real KeyboardInterrupt)."""
    tools = ws.registry()
    stopping = pk.ToolRegistry([tools.get("read_file"), simulate.stop_in_tool(tools.get("write_file"))])
    provider = simulate.ScriptedProvider(
        [
            simulate.call_turn([("read_file", {"path": "a.txt"}), ("write_file", {"path": "b.txt"})]),
            simulate.text_turn(answer),
        ]
    )
    convo = pk.Conversation(store, "c", provider, stopping, display=False)
    with pytest.raises(KeyboardInterrupt):
        convo.send("go")
    convo.tools = tools  # "run it now" runs the real tool
    convo.reload()
    return convo, provider


def test_it_ran_records_the_users_note_as_the_result_and_resume_sends_it(store, ws):
    convo, provider = _interrupted(store, ws)
    assert [r.id for r in convo.approval.open_interrupted()] == ["call_2"]
    saved = convo.settle("call_2", "ran", note="  It wrote b.txt, 12 bytes.  ")

    assert saved.content == f"{ENTERED}\nIt wrote b.txt, 12 bytes."
    assert store.load("c")[-1].to_dict() == saved.to_dict()
    assert convo.interrupted == [] and validate_history(convo.repaired.messages) == []
    assert store.call_marks("c")["call_2"].detail == {"settled": "ran", "by": "user"}
    convo.resume()
    told = [m.content for m in provider.requests[1] if m.role == "tool" and m.tool_call_id == "call_2"]
    assert told == [saved.content]


def test_run_it_now_runs_the_tool_and_saves_the_real_result(store, ws):
    convo, provider = _interrupted(store, ws)
    before = len(ws.ran)
    saved = convo.settle("call_2", "run")
    assert ws.ran[before:] == [("write_file", {"path": "b.txt"})]
    assert saved.content == "wrote b.txt" and store.load("c")[-1].content == "wrote b.txt"
    assert convo.interrupted == []


def test_leave_it_to_the_model_saves_the_repair_text(store, ws):
    convo, _ = _interrupted(store, ws)
    saved = convo.settle("call_2", "model")
    assert saved.content == (  # the call was stopped by the user: the repair text says so
        "The user stopped this call while it was running, before it returned. What it did up to "
        "that moment is done and the rest did not run, so check its effect before calling it again."
    )
    assert convo.interrupted == [] and convo.repaired.changes == []  # nothing left to repair


def test_a_call_that_is_not_open_is_a_clear_error(store, ws):
    convo, _ = _interrupted(store, ws)
    with pytest.raises(approval.SettleError, match=r"'call_9' is not an open interrupted call .*open ones: call_2"):
        convo.settle("call_9", "model")
    with pytest.raises(approval.SettleError, match="not an open interrupted call"):
        convo.settle("call_1", "model")  # it returned: nothing to settle
    with pytest.raises(approval.SettleError, match="needs a note"):
        convo.settle("call_2", "ran", note=" ")
    with pytest.raises(approval.SettleError, match='takes "ran", "run" or "model"'):
        convo.settle("call_2", "later")  # type: ignore[arg-type]
    convo.settle("call_2", "model")
    with pytest.raises(approval.SettleError, match="open ones: none"):
        convo.settle("call_2", "model")  # settled once: no longer open
    assert [m.role for m in store.load("c")].count("tool") == 2


def test_a_call_the_conversation_went_on_without_cannot_be_settled(store, ws):
    convo, _ = _interrupted(store, ws)
    convo.resume()  # the model was told, and answered: the result can no longer go in place
    assert [r.id for r in convo.interrupted] == ["call_2"]
    with pytest.raises(approval.SettleError, match="last assistant message"):
        convo.settle("call_2", "model")
