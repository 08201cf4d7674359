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
    with pytest.raises(approval.SettleError, match="already settled by you .*: the model read 'The user stopped"):
        convo.settle("call_2", "model")  # settled once: no longer open
    assert [m.role for m in store.load("c")].count("tool") == 2


STOPPED = (
    "The user stopped this call while it was running, before it returned. What it did up to "
    "that moment is done and the rest did not run, so check its effect before calling it again."
)


@pytest.mark.parametrize("go_on", ["send", "resume"])
def test_going_on_tells_the_model_once_and_the_store_says_so_everywhere(store, ws, go_on):
    """Stop in a tool, then the conversation goes on unsettled (a new message, or resume): the
    model reads the repair text for the stopped call, and that text is saved as the call's result
    (marked the library's), so the conversation, a new process, validate_history on the stored
    history and the views all stop calling it open, and settle says plainly what the model was
    told. (It used to stay "lost" everywhere while settle answered "open ones: none".)"""
    convo, provider = _interrupted(store, ws)
    if go_on == "send":
        convo.send("go on")
    else:
        convo.resume()
    stored = store.load("c")
    roles = ["user", "assistant", "tool", "tool"] + (["user"] if go_on == "send" else []) + ["assistant"]
    assert [m.role for m in stored] == roles
    assert (stored[3].tool_call_id, stored[3].content) == ("call_2", STOPPED)
    told = [m.content for m in provider.requests[1] if m.role == "tool" and m.tool_call_id == "call_2"]
    assert told == [STOPPED]  # what the model read is what the store keeps
    mark = store.call_marks("c")["call_2"]
    assert mark.state == "answered"
    assert {k: mark.detail[k] for k in ("settled", "by", "was")} == {"settled": "model", "by": "library", "was": "stopped"}
    assert mark.detail["seconds"] >= 0  # how long it ran before Stop, kept from its "stopped" mark

    assert convo.interrupted == [] and validate_history(stored) == []
    again = pk.Conversation(store, "c", provider, ws.registry(), display=False)  # a restarted kernel
    assert again.interrupted == [] and again.repaired.changes == []
    assert [f.kind for f in again.view().cards_page().findings] == []  # no "1 lost call(s)"
    inspected = pk.inspect(again)
    assert inspected.valid and inspected.problems == []
    with pytest.raises(approval.SettleError) as refused:
        again.settle("call_2", "ran", note="it wrote b.txt")
    said = str(refused.value)
    assert "already told the model, when the conversation went on" in said and STOPPED in said
    assert "say what really happened in your next message" in said
    assert [m.role for m in store.load("c")] == roles  # nothing saved by the refusal


def test_settling_before_going_on_is_what_the_model_reads(store, ws):
    convo, provider = _interrupted(store, ws)
    convo.settle("call_2", "ran", note="It wrote b.txt.")
    convo.send("go on")
    told = [m.content for m in provider.requests[1] if m.role == "tool" and m.tool_call_id == "call_2"]
    assert told == [f"{ENTERED}\nIt wrote b.txt."]
    assert [m.role for m in store.load("c")].count("tool") == 2  # settled once, not told twice
    assert store.call_marks("c")["call_2"].detail == {"settled": "ran", "by": "user"}


def test_a_history_that_went_on_without_a_saved_result_says_what_the_model_reads(store, ws):
    """A store written before the library saved what it told (the call in the middle, the
    conversation after it): the repair text is what the model reads every time, and settle
    says so instead of "open ones: none"."""
    call = pk.ToolCall("call_1", "write_file", '{"path": "b.txt"}')
    for m in [pk.UserMessage("go"), pk.AssistantMessage("", tool_calls=[call]), pk.UserMessage("go on"),
              pk.AssistantMessage("ok")]:
        store.save("c", m)
    convo = pk.Conversation(store, "c", simulate.ScriptedProvider([]), ws.registry(), display=False)
    assert [r.id for r in convo.interrupted] == ["call_1"]  # repaired each time, and shown as lost
    with pytest.raises(approval.SettleError, match=r"went on after it: the model reads 'This call was interrupted"):
        convo.settle("call_1", "ran", note="it wrote b.txt")


def test_the_live_display_shows_what_the_model_is_told_when_the_conversation_goes_on(store, ws):
    import io

    from providerkit_nb.conversation.console import TerminalLive

    convo, _ = _interrupted(store, ws)
    out = io.StringIO()
    convo.display = True
    convo._live_display = lambda: TerminalLive(out)  # type: ignore[method-assign]  # the terminal's face, captured
    convo.send("go on")
    assert f"<- write_file: interrupted: the model is told: {STOPPED}" in out.getvalue()
