"""approve=None | "ask" | callable: who decides before a side effect, and what is saved."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

import providerkit_nb as pk
from providerkit_nb.conversation import approval
from providerkit_nb.core.validate import validate_history
from providerkit_nb.notebook.approval import ApprovalWidget
from providerkit_nb.testing import simulate

# the exact texts, pinned here (not imported from the code under test)
DENIED = (
    "The user declined this call, so it did not run. Do not call it again unless the user asks you to."
)
MAY_HAVE_RUN = (
    "This call was interrupted before it returned. It may have partly run, so check its effect "
    "before calling it again."
)

TWO_CALLS = [("read_file", {"path": "a.txt"}), ("write_file", {"path": "b.txt"})]


def _provider(*turns: Any) -> simulate.ScriptedProvider:
    return simulate.ScriptedProvider(list(turns))


def _tool_results(messages: list[Any]) -> dict[str, str]:
    return {m.tool_call_id: m.content for m in messages if m.role == "tool"}


def test_without_approve_tools_run_as_before(store, ws):
    provider = _provider(simulate.call_turn(TWO_CALLS), simulate.text_turn("done"))
    convo = pk.Conversation(store, "c", provider, ws.registry(), display=False)
    convo.send("go")
    assert [n for n, _ in ws.ran] == ["read_file", "write_file"]
    # each call's mark follows it to its end, asked or not
    marks = store.call_marks("c")
    assert {cid: (m.state, m.detail["kind"]) for cid, m in marks.items()} == {
        "call_1": ("finished", "ok"),
        "call_2": ("finished", "ok"),
    }


def test_a_callable_is_asked_only_about_tools_that_are_not_read_only(store, ws):
    asked: list[pk.ToolCall] = []
    seen_when_asked: list[list[str]] = []

    def approve(call: pk.ToolCall) -> bool:
        asked.append(call)
        seen_when_asked.append([m.role for m in store.load("c")])
        return True

    provider = _provider(simulate.call_turn(TWO_CALLS), simulate.text_turn("done"))
    convo = pk.Conversation(store, "c", provider, ws.registry(), display=False, approve=approve)
    turn = convo.send("go")

    assert turn is not None and turn.message.content == "done"
    assert [(c.id, c.name, json.loads(c.arguments)) for c in asked] == [("call_2", "write_file", {"path": "b.txt"})]
    # the call was saved (and the read-only one had run) before the question was asked
    assert seen_when_asked == [["user", "assistant", "tool"]]
    assert ws.ran == [("read_file", {"path": "a.txt"}), ("write_file", {"path": "b.txt"})]
    marks = store.call_marks("c")
    assert marks["call_2"].state == "finished"  # approved, ran, and its result is saved
    assert marks["call_2"].detail["decision"] == "approved" and marks["call_2"].detail["kind"] == "ok"
    assert _tool_results(store.load("c"))["call_2"] == "wrote b.txt"


def test_a_denial_is_saved_as_the_result_with_the_fixed_text_and_the_tool_never_runs(store, ws):
    provider = _provider(simulate.call_turn(TWO_CALLS), simulate.text_turn("ok, I will not write"))
    convo = pk.Conversation(store, "c", provider, ws.registry(), display=False, approve=lambda call: False)
    convo.send("go")

    assert [n for n, _ in ws.ran] == ["read_file"]
    assert _tool_results(store.load("c"))["call_2"] == DENIED
    assert "declined" in DENIED and "unless the user asks" in DENIED
    # the model read the denial under the call's id in the next request
    told = [m for m in provider.requests[1] if m.role == "tool" and m.tool_call_id == "call_2"]
    assert [m.content for m in told] == [DENIED]
    assert store.call_marks("c")["call_2"].detail == {"decision": "denied"}
    assert validate_history(store.load("c")) == []


def test_an_edit_runs_the_edited_arguments_and_records_both(store, ws):
    provider = _provider(simulate.call_turn(TWO_CALLS), simulate.text_turn("done"))
    convo = pk.Conversation(
        store, "c", provider, ws.registry(), display=False, approve=lambda call: {"path": "safe.txt"}
    )
    convo.send("go")

    assert ws.ran[-1] == ("write_file", {"path": "safe.txt"})
    stored = store.load("c")
    result = _tool_results(stored)["call_2"]
    assert result.startswith(approval.EDITED_BY_USER)
    assert '{"path": "b.txt"}' in result and '{"path": "safe.txt"}' in result and "wrote safe.txt" in result
    # the call itself keeps the model's arguments: the canonical message is not rewritten
    call = next(c for m in stored if m.role == "assistant" and m.tool_calls for c in m.tool_calls if c.id == "call_2")
    assert json.loads(call.arguments) == {"path": "b.txt"}
    detail = store.call_marks("c")["call_2"].detail
    assert detail["decision"] == "edited"
    assert json.loads(detail["original"]) == {"path": "b.txt"} and json.loads(detail["arguments"]) == {"path": "safe.txt"}


def test_an_answer_that_is_not_true_false_or_a_dict_is_a_clear_error(store, ws):
    provider = _provider(simulate.call_turn(TWO_CALLS), simulate.text_turn("done"))
    convo = pk.Conversation(store, "c", provider, ws.registry(), display=False, approve=lambda call: "yes")
    with pytest.raises(approval.ApprovalError, match="must return True .* False .* or a dict"):
        convo.send("go")
    with pytest.raises(ValueError, match="approve must be None, 'ask' or a callable"):
        pk.Conversation(store, "d", provider, ws.registry(), display=False, approve="always")


def test_stop_while_asking_leaves_the_call_pending_and_a_restart_asks_again(store, ws):
    def stop(call: pk.ToolCall) -> bool:
        raise KeyboardInterrupt

    provider = _provider(simulate.call_turn(TWO_CALLS), simulate.text_turn("done after approval"))
    convo = pk.Conversation(store, "c", provider, ws.registry(), display=False, approve=stop)
    with pytest.raises(KeyboardInterrupt):
        convo.send("go")
    assert [m.role for m in store.load("c")] == ["user", "assistant", "tool"]
    assert store.call_marks("c")["call_2"].state == "asking"

    # a new Conversation object on the same store: what a restarted kernel builds
    asked: list[str] = []
    again = pk.Conversation(
        store, "c", provider, ws.registry(), display=False, approve=lambda call: asked.append(call.id) or True
    )
    assert [p.id for p in again.repaired.pending] == ["call_2"]
    assert again.repaired.interrupted == []  # never started: not "may have partly run"
    turn = again.resume()
    assert asked == ["call_2"]
    assert turn is not None and turn.message.content == "done after approval"
    assert ws.ran[-1] == ("write_file", {"path": "b.txt"})
    sent = _tool_results(provider.requests[1])
    assert sent["call_2"] == "wrote b.txt"
    assert MAY_HAVE_RUN not in sent.values()


def test_a_new_message_while_a_call_waits_tells_the_model_it_did_not_run(store, ws):
    def stop(call: pk.ToolCall) -> bool:
        raise KeyboardInterrupt

    provider = _provider(simulate.call_turn(TWO_CALLS), simulate.text_turn("fine"))
    convo = pk.Conversation(store, "c", provider, ws.registry(), display=False, approve=stop)
    with pytest.raises(KeyboardInterrupt):
        convo.send("go")
    convo.send("never mind")
    assert [n for n, _ in ws.ran] == ["read_file"]
    assert _tool_results(store.load("c"))["call_2"] == approval.NOT_ANSWERED_TEXT
    assert [m.role for m in store.load("c")][-2:] == ["user", "assistant"]
    assert validate_history(store.load("c")) == []


def _answer_on_stdin(store: Any, ws: Any, monkeypatch: Any, capsys: Any, answers: str) -> str:
    """approve="ask" in a terminal, ``answers`` typed on stdin: what the prompt printed."""
    monkeypatch.setattr("sys.stdin", io.StringIO(answers))
    provider = _provider(simulate.call_turn(TWO_CALLS), simulate.text_turn("done"))
    convo = pk.Conversation(store, "c", provider, ws.registry(), display=False, approve="ask")
    convo.send("go")
    return capsys.readouterr().out


def test_ask_in_a_terminal_reads_stdin(store, ws, monkeypatch, capsys):
    out = _answer_on_stdin(store, ws, monkeypatch, capsys, "maybe\ne\nnot json\ne\n{\"path\": \"c.txt\"}\n")
    assert "write_file" in out and '"path": "b.txt"' in out
    assert "Please answer y, n or e." in out and "That is not JSON" in out
    assert ws.ran[-1] == ("write_file", {"path": "c.txt"})


def test_ask_with_no_answer_on_stdin_is_a_clear_error(store, ws, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    provider = _provider(simulate.call_turn(TWO_CALLS), simulate.text_turn("done"))
    convo = pk.Conversation(store, "c", provider, ws.registry(), display=False, approve="ask")
    with pytest.raises(approval.ApprovalError, match="stdin gave no answer"):
        convo.send("go")
    assert store.call_marks("c")["call_2"].state == "asking"  # still open for the next resume


# --------------------------------------------------------------------------- the widget, headless


def _widget_approver(action: str, edited: str | None = None) -> Any:
    """An approve callable that answers through the widget, as a person's clicks would."""
    shown: list[ApprovalWidget] = []

    def approve(call: pk.ToolCall) -> Any:
        wid = ApprovalWidget(call)
        shown.append(wid)
        if action == "edit":
            wid.edit_button.click()
            wid.editor.value = edited or ""
            wid.run_edited_button.click()
        else:
            getattr(wid, f"{action}_button").click()
        return wid.wait(poll=lambda: None)

    approve.shown = shown  # type: ignore[attr-defined]
    return approve


@pytest.mark.parametrize("action", ["approve", "deny", "edit"])
def test_the_widget_answers_for_the_conversation(store, ws, action):
    approve = _widget_approver(action, '{"path": "w.txt"}')
    provider = _provider(simulate.call_turn(TWO_CALLS), simulate.text_turn("done"))
    convo = pk.Conversation(store, "c", provider, ws.registry(), display=False, approve=approve)
    convo.send("go")
    wid = approve.shown[0]
    assert "write_file" in wid.header.value and "b.txt" in wid.arguments_html.value
    assert all(b.disabled for b in wid.buttons)  # one answer per question
    result = _tool_results(store.load("c"))["call_2"]
    expected = {"approve": "wrote b.txt", "deny": DENIED}.get(action)
    if expected is not None:
        assert result == expected
    else:
        assert ws.ran[-1] == ("write_file", {"path": "w.txt"}) and "wrote w.txt" in result


def test_the_widget_escapes_the_arguments_and_refuses_bad_edits():
    call = pk.ToolCall("call_x", "write_file", json.dumps({"path": "<script>alert(1)</script>"}))
    wid = ApprovalWidget(call)
    assert "<script>" not in wid.arguments_html.value and "&lt;script&gt;" in wid.arguments_html.value
    assert wid.editor.layout.display == "none"
    wid.edit()
    assert wid.editor.layout.display is None
    wid.editor.value = "{not json"
    wid.submit_edit()
    assert wid.decision is None and "not JSON" in wid.status.value
    wid.editor.value = "[1, 2]"
    wid.submit_edit()
    assert wid.decision is None and "JSON object" in wid.status.value
    wid.deny()
    wid.approve()  # a second answer does not change the first
    assert wid.decision == approval.Decision("deny")


def test_the_widget_wait_blocks_until_a_click_arrives():
    wid = ApprovalWidget(pk.ToolCall("call_x", "write_file", '{"path": "a"}'))
    polls: list[int] = []

    def poll() -> None:  # what jupyter-ui-poll does: deliver the click that arrived meanwhile
        polls.append(1)
        if len(polls) == 3:
            wid.approve_button.click()

    assert wid.wait(poll=poll, interval=0.001) == approval.Decision("approve")
    assert len(polls) == 3


def test_stop_while_the_widget_waits_disables_it_and_propagates():
    wid = ApprovalWidget(pk.ToolCall("call_x", "write_file", '{"path": "a"}'))

    def poll() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        wid.wait(poll=poll)
    assert wid.decision is None and all(b.disabled for b in wid.buttons)
    assert "resume() asks again" in wid.status.value


def test_stop_inside_an_approved_tool_is_interrupted_at_once_not_pending(store, ws):
    """Approved, then Stop lands inside the tool: the call is no longer waiting for a person,
    it was stopped while it ran, and ``interrupted`` says so without a reload."""
    tools = pk.ToolRegistry([ws.registry().get("read_file"), simulate.stop_in_tool(ws.registry().get("write_file"))])
    provider = _provider(simulate.call_turn(TWO_CALLS), simulate.text_turn("done"))
    convo = pk.Conversation(store, "c", provider, tools, display=False, approve=lambda call: True)
    with pytest.raises(KeyboardInterrupt):
        convo.send("go")
    assert [r.id for r in convo.interrupted] == ["call_2"] and convo.repaired.pending == []
    assert store.call_marks("c")["call_2"].state == "stopped"
    assert store.call_marks("c")["call_2"].detail["decision"] == "approved"


def test_the_terminal_display_ends_each_call_in_what_happened(store, ws, capsys):
    provider = _provider(simulate.call_turn(TWO_CALLS), simulate.text_turn("ok, I will not write"))
    convo = pk.Conversation(store, "c", provider, ws.registry(), display=True, approve=lambda call: False)
    convo.send("go")
    out = capsys.readouterr().out
    assert "<- read_file: done: contents of a.txt" in out
    assert "<- write_file: denied: The user declined this call" in out


# --------------------------------------------------------------------------- edits that do not fit


def test_the_widget_refuses_an_edit_that_does_not_fit_the_schema_then_runs_the_fixed_one(store, ws):
    """The real widget objects, driven by clicks: a bad edit (not JSON, then not what the
    tool takes) is refused in the box with the reason shown, the question stays open, and the
    fixed edit runs. The model never reads a refusal it did not cause."""
    shown: list[ApprovalWidget] = []
    statuses: list[str] = []
    problems: list[str] = []

    def approve(call: pk.ToolCall) -> Any:
        wid = ApprovalWidget(call, check=convo.approval.check(call))
        shown.append(wid)
        wid.edit_button.click()
        for bad in ('{"path": "c.txt"', '{"path": 5}', '{"name": "c.txt"}'):
            wid.editor.value = bad
            wid.run_edited_button.click()
            assert wid.decision is None and not any(b.disabled for b in wid.buttons)
            statuses.append(wid.status.value)
            problems.append(wid.edit_problems.value)
        wid.editor.value = '{"path": "c.txt"}'
        wid.run_edited_button.click()
        return wid.wait(poll=lambda: None)

    provider = _provider(simulate.call_turn(TWO_CALLS), simulate.text_turn("done"))
    convo = pk.Conversation(store, "c", provider, ws.registry(), display=False, approve=approve)
    convo.send("go")

    assert "not JSON" in statuses[0]
    assert "do not fit the input schema of write_file" in statuses[1]
    assert "$.path: expected string, got integer" in problems[1]
    assert "missing required property &#x27;path&#x27;" in problems[2]  # escaped HTML
    assert shown[0].edit_problems.value == ""  # cleared once an edit was taken
    assert ws.ran[-1] == ("write_file", {"path": "c.txt"})
    result = _tool_results(store.load("c"))["call_2"]
    assert "wrote c.txt" in result and "invalid arguments" not in result
    assert [m.role for m in provider.requests[1]].count("tool") == 2


def test_stdin_refuses_an_edit_that_does_not_fit_the_schema(store, ws, monkeypatch, capsys):
    out = _answer_on_stdin(store, ws, monkeypatch, capsys, 'e\n{"path": 5}\ne\n{"path": "c.txt"}\n')
    assert "do not fit the schema of write_file ($.path: expected string, got integer); answer again." in out
    assert ws.ran[-1] == ("write_file", {"path": "c.txt"})
    assert [args for name, args in ws.ran if name == "write_file"] == [{"path": "c.txt"}]


def test_an_approver_edit_that_does_not_fit_is_an_error_and_the_call_keeps_waiting(store, ws):
    provider = _provider(simulate.call_turn(TWO_CALLS), simulate.text_turn("done"))
    convo = pk.Conversation(store, "c", provider, ws.registry(), display=False, approve=lambda call: {"path": 5})
    with pytest.raises(approval.ApprovalError, match=r"do not fit the tool's input schema: \$\.path: expected string"):
        convo.send("go")
    assert [n for n, _ in ws.ran] == ["read_file"]  # the write never ran
    assert "call_2" not in _tool_results(store.load("c"))  # and the model was told nothing
    assert store.call_marks("c")["call_2"].state == "asking"  # resume() asks again
    with pytest.raises(approval.ApprovalError, match="do not fit"):
        convo.approval.answer("call_2", {"path": ["x"]})
    convo.approval.answer("call_2", {"path": "ok.txt"})
    convo.resume()
    assert ws.ran[-1] == ("write_file", {"path": "ok.txt"})
