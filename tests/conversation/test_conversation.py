"""The Conversation facade: the durable tool loop, with real stores.

The provider here is simulate.ScriptedProvider (the project's own deterministic teaching
provider, which streams chunks we wrote): these tests are about the order of saves and what a
Stop leaves behind, not about any wire. The wire-level version runs in a real kernel against a
real HTTP server in test_kernel.py.
"""

from __future__ import annotations

import io

import pytest

import providerkit_nb as pk
from providerkit_nb.errors import StepLimitReached
from providerkit_nb.stream import ChunkStream, TextDelta
from providerkit_nb.testing import simulate
from providerkit_nb.wire.validate import validate_history

# the exact texts, pinned here (not imported from the code under test)
MAY_HAVE_RUN = (
    "This call was interrupted before it returned. It may have partly run, so check its effect "
    "before calling it again."
)
DENIED = (
    "The user declined this call, so it did not run. Do not call it again unless the user asks you to."
)


@pytest.fixture(params=["memory", "sqlite"])
def store(request, tmp_path):
    if request.param == "memory":
        s = pk.MemoryStore()
    else:
        s = pk.NotebookStore(tmp_path / "convo.providerkit.sqlite")
    yield s
    s.close()


def _tools_recording_order(store, cid, seen):
    """Tools that look into the store while they run: the call must already be saved."""

    def read_file(args):
        seen.append([m.role for m in store.load(cid)])
        return "# Hello"

    def write_file(args):
        seen.append([m.role for m in store.load(cid)])
        return "ok"

    s = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    return pk.ToolRegistry(
        [
            pk.define_tool("read_file", "read", s, read_file, read_only=True),
            pk.define_tool("write_file", "write", s, write_file),
        ]
    )


def test_send_saves_the_call_before_its_tools_and_each_result_as_it_comes(store):
    seen: list[list[str]] = []
    tools = _tools_recording_order(store, "c1", seen)
    provider = simulate.ScriptedProvider(
        [
            simulate.call_turn([("read_file", {"path": "a"}), ("write_file", {"path": "b"})]),
            simulate.text_turn("Done: read a, wrote b."),
        ]
    )
    convo = pk.Conversation(store, "c1", provider, tools, system="Be terse.", display=False)
    turn = convo.send("Do it.")

    assert turn is not None and turn.message.content == "Done: read a, wrote b."
    # the first tool saw the assistant message already stored; the second also saw the first result
    assert seen == [
        ["system", "user", "assistant"],
        ["system", "user", "assistant", "tool"],
    ]
    roles = [m.role for m in store.load("c1")]
    assert roles == ["system", "user", "assistant", "tool", "tool", "assistant"]
    # the second request carried both results, under the ids of the calls
    second = provider.requests[1]
    assert [m.tool_call_id for m in second if m.role == "tool"] == ["call_1", "call_2"]
    assert validate_history(store.load("c1")) == []


def test_the_session_id_is_kept_with_the_conversation_across_restarts(tmp_path):
    path = tmp_path / "s.providerkit.sqlite"
    with pk.NotebookStore(path) as store:
        p1 = simulate.ScriptedProvider([simulate.text_turn("one")])
        c = pk.Conversation(store, "c", p1, display=False)
        c.send("hi")
        first = p1.session_ids[0]
    with pk.NotebookStore(path) as store:  # a restarted kernel
        p2 = simulate.ScriptedProvider([simulate.text_turn("two")])
        c = pk.Conversation(store, "c", p2, display=False)
        c.send("again")
    assert p2.session_ids == [first]
    assert first != p1.instance_session_id  # the store's id, not the provider's own


def test_stop_mid_stream_saves_nothing_of_the_turn_and_the_next_send_works(store):
    tools, _ = simulate.demo_tools()

    def interrupted_turn():
        yield TextDelta("Half an ans")
        raise KeyboardInterrupt

    class StopsOnce(simulate.ScriptedProvider):
        def _open(self, messages, tools, opts):
            if not self.requests:
                self.requests.append(messages)
                return ChunkStream(interrupted_turn(), provider=self.id)
            return super()._open(messages, tools, opts)

    provider = StopsOnce([simulate.text_turn("A whole answer.")])
    convo = pk.Conversation(store, "c", provider, tools, display=False)
    with pytest.raises(KeyboardInterrupt) as info:
        convo.send("Tell me.")
    assert info.value.partial.message.content == "Half an ans"
    assert [m.role for m in store.load("c")] == ["user"]  # the half answer never landed
    lost = store.lost_turns("c")
    assert len(lost) == 1 and "Half an ans" in str(lost[0].to_dict())

    provider._next = 0  # the script's only turn is still unused
    turn = convo.resume()
    assert turn is not None and turn.message.content == "A whole answer."
    assert [m.role for m in store.load("c")] == ["user", "assistant"]


def test_stop_mid_tool_leaves_a_history_that_repairs_and_resumes(store):
    tools, workspace = simulate.demo_tools()
    tools = pk.ToolRegistry([tools.get("read_file"), simulate.stop_in_tool(tools.get("write_file"))])
    provider = simulate.ScriptedProvider(
        [
            simulate.call_turn([("read_file", {"path": "README.md"}), ("write_file", {"path": "N.md", "content": "x"})]),
            simulate.text_turn("I will check N.md before writing again."),
        ]
    )
    convo = pk.Conversation(store, "c", provider, tools, display=False)
    with pytest.raises(KeyboardInterrupt):
        convo.send("Go.")
    assert workspace["N.md"] == "x"  # the effect happened; the result was never saved
    # right after Stop, without a reload, the conversation already says what happened
    assert [(r.name, r.read_only) for r in convo.interrupted] == [("write_file", False)]
    assert store.call_marks("c")["call_2"].state == "stopped"
    repaired = convo.reload()
    assert [(r.name, r.read_only) for r in repaired.interrupted] == [("write_file", False)]
    assert validate_history(repaired.messages) == []

    turn = convo.resume()
    assert turn.message.content.startswith("I will check")
    told = [m for m in provider.requests[1] if m.role == "tool" and m.name == "write_file"]
    assert told[0].content == (
        "The user stopped this call while it was running, before it returned. What it did up to "
        "that moment is done and the rest did not run, so check its effect before calling it again."
    )


def test_resume_reruns_only_read_only_calls_when_asked(store):
    ran: list[str] = []
    s = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    tools = pk.ToolRegistry(
        [
            pk.define_tool("read_file", "r", s, lambda a: ran.append("read") or "# Hi", read_only=True),
            pk.define_tool("write_file", "w", s, lambda a: ran.append("write") or "ok"),
        ]
    )
    # what a killed process left: a call turn saved, no results
    store.save("c", pk.UserMessage("go"))
    store.save(
        "c",
        pk.AssistantMessage(
            tool_calls=[pk.ToolCall("c_r", "read_file", '{"path":"a"}'), pk.ToolCall("c_w", "write_file", '{"path":"b"}')]
        ),
    )
    provider = simulate.ScriptedProvider([simulate.text_turn("Read it; the write may not have finished.")])
    convo = pk.Conversation(store, "c", provider, tools, display=False)
    assert {r.name for r in convo.interrupted} == {"read_file", "write_file"}

    convo.resume(rerun_read_only=True)
    assert ran == ["read"]  # never the write
    sent = {m.tool_call_id: m.content for m in provider.requests[0] if m.role == "tool"}
    assert sent == {"c_r": "# Hi", "c_w": MAY_HAVE_RUN}


def test_max_steps_bounds_a_model_that_never_stops_calling(store):
    tools, _ = simulate.demo_tools()
    loop = [simulate.call_turn([("read_file", {"path": "README.md"})], id_prefix=f"s{i}_") for i in range(5)]
    provider = simulate.ScriptedProvider(loop)
    convo = pk.Conversation(store, "c", provider, tools, max_steps=3, display=False)
    with pytest.raises(StepLimitReached, match="max_steps=3") as caught:
        convo.send("loop")
    assert caught.value.steps == 3 and isinstance(caught.value, pk.Error)
    assert provider.remaining == 2
    assert caught.value.turn.message.tool_calls and len(provider.requests) == 3
    assert caught.value.turn.finish_reason == "tool_calls"
    # every call it asked for ran and was saved: the history is whole, and resume goes on
    assert validate_history(store.load("c")) == []
    assert convo.interrupted == []


def test_reopening_with_another_system_prompt_says_so_unless_asked_to_replace(store):
    provider = simulate.ScriptedProvider([simulate.text_turn("ok")])
    pk.Conversation(store, "c", provider, system="You are terse.", display=False)
    pk.Conversation(store, "c", provider, system="You are terse.", display=False)  # the same: fine
    with pytest.raises(pk.Error, match="another system prompt") as caught:
        pk.Conversation(store, "c", provider, system="You are verbose.", display=False)
    assert "You are terse." in str(caught.value) and "You are verbose." in str(caught.value)
    convo = pk.Conversation(store, "c", provider, system="You are verbose.", replace_system=True, display=False)
    convo.send("hi")
    sent = provider.requests[-1]
    systems = [m for m in sent if m.role == "system"]
    assert [m.content for m in systems] == ["You are verbose."] and sent[0].role == "system"


def test_a_path_where_the_store_belongs_opens_a_notebook_store(tmp_path):
    provider = simulate.ScriptedProvider([simulate.text_turn("ok")])
    convo = pk.Conversation(str(tmp_path / "chat.sqlite"), "c", provider, display=False)
    convo.send("hi")
    assert [m.role for m in pk.NotebookStore(tmp_path / "chat.sqlite").load("c")] == ["user", "assistant"]
    with pytest.raises(TypeError, match="store must be a store"):
        pk.Conversation(42, "c", provider, display=False)  # type: ignore[arg-type]


def test_terminal_display_prints_the_turn_as_it_streams(store, capsys):
    provider = simulate.ScriptedProvider([simulate.text_turn("Streaming works.", pieces=3)])
    convo = pk.Conversation(store, "c", provider, display=True)
    convo.send("hi")
    assert "Streaming works." in capsys.readouterr().out


def test_outside_a_kernel_the_one_conversation_prints_and_asks_on_stdin_and_still_has_view(
    store, capsys, monkeypatch
):
    """One Conversation class: with no notebook at all (a terminal, a worker) it prints the send
    and asks on stdin; view() is the same class's."""
    from providerkit_nb.conversation import Conversation as Headless

    assert Headless is pk.Conversation
    provider = simulate.ScriptedProvider(
        [simulate.call_turn([("write_file", {"path": "x"})]), simulate.text_turn("Declined, then.")]
    )
    tools = _tools_recording_order(store, "h", [])
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))  # the person types n
    convo = Headless(store, "h", provider, tools, display=True, approve="ask")
    turn = convo.send("write x")
    out = capsys.readouterr().out
    assert "write_file" in out and "Declined, then." in out and turn.message.content == "Declined, then."
    result = [m for m in store.load("h") if m.role == "tool"][0]
    assert result.content == DENIED
    assert pk.Conversation(store, "h", provider, tools).view() is not None


def test_interrupted_the_view_and_inspect_agree_right_after_stop_after_a_restart_and_after_settling(store):
    tools, workspace = simulate.demo_tools()
    stopping = pk.ToolRegistry([tools.get("read_file"), simulate.stop_in_tool(tools.get("write_file"))])
    provider = simulate.ScriptedProvider(
        [simulate.call_turn([("read_file", {"path": "README.md"}), ("write_file", {"path": "N.md", "content": "x"})])]
    )
    convo = pk.Conversation(store, "c", provider, stopping, display=False)
    with pytest.raises(KeyboardInterrupt):
        convo.send("Go.")

    def seen(c):
        view = c.view()
        return (
            [r.id for r in c.interrupted],
            [r.id for r in pk.inspect(c).interrupted],
            "1 interrupted call(s)" in view.status.value
            and "(call_2) was stopped by the user while it ran" in view.findings.value,
        )

    assert seen(convo) == (["call_2"], ["call_2"], True)  # right after Stop, same process
    again = pk.Conversation(store, "c", simulate.ScriptedProvider([]), tools, display=False)
    assert seen(again) == (["call_2"], ["call_2"], True)  # after a restart
    assert again.interrupted[0].note.startswith("The user stopped this call while it was running")
    again.settle("call_2", "ran", note="It wrote N.md.")
    assert seen(again) == ([], [], False)  # after settling it, all three say so


def test_a_call_that_had_started_when_its_process_died_is_marked_lost_by_the_next_resume(store):
    store.save("c", pk.UserMessage("go"))
    store.save("c", pk.AssistantMessage(tool_calls=[pk.ToolCall("w1", "write_file", '{"path":"b"}')]))
    store.mark_call("c", "w1", "started")  # what a killed process left behind
    tools, _ = simulate.demo_tools()
    convo = pk.Conversation(store, "c", simulate.ScriptedProvider([simulate.text_turn("Checked.")]), tools, display=False)
    assert [r.id for r in convo.interrupted] == ["w1"]
    convo.resume()
    # lost (it had started, and has no result), then told: the resume's request carries the
    # repair text, which is saved as its result, and the mark says both
    mark = store.call_marks("c")["w1"]
    assert mark.state == "answered" and mark.detail == {"was": "lost", "settled": "model", "by": "library"}
    assert [(m.tool_call_id, m.content) for m in store.load("c") if m.role == "tool"] == [(
        "w1", "This call was interrupted before it returned. It may have partly run, so check its effect "
        "before calling it again.")]
