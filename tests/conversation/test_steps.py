"""What one step writes is saved in one ``save_step``, and what the model is told about a call
agrees with what the store knows of it even in a store an older version left half-written.

The crash explorer (tests/conversation/crash) kills a real process at every point of these
writes; here each grouping is pinned on its own, with a store that records the calls it gets.
"""

from __future__ import annotations

from typing import Any

import pytest

import providerkit_nb as pk
from providerkit_nb.store.memory import MemoryStore
from providerkit_nb.testing import simulate

# the texts, pinned here (not imported from the code under test)
DENIED = "The user declined this call, so it did not run. Do not call it again unless the user asks you to."
SUMMARY = "[Earlier conversation, summarized]\n\n"
SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


class Recording(MemoryStore):
    """A MemoryStore that lists its writes: ("save", role), ("step", roles, marks), ("mark", id, state)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[tuple[Any, ...]] = []

    def save(self, conversation_id: str, message: Any) -> Any:
        self.writes.append(("save", message.role))
        return super().save(conversation_id, message)

    def save_step(self, conversation_id: str, messages: Any, *, marks: Any = ()) -> Any:
        marks = list(marks)
        self.writes.append(("step", tuple(m.role for m in messages), tuple((m[0], m[1]) for m in marks)))
        return super().save_step(conversation_id, messages, marks=marks)

    def mark_call(self, conversation_id: str, call_id: str, state: str, detail: Any = None) -> None:
        self.writes.append(("mark", call_id, state))
        super().mark_call(conversation_id, call_id, state, detail)


def _tools() -> pk.ToolRegistry:
    return pk.ToolRegistry([
        pk.define_tool("read_file", "Read.", SCHEMA, lambda a: f"contents of {a['path']}", read_only=True),
        pk.define_tool("write_file", "Write.", SCHEMA, lambda a: f"wrote {a['path']}"),
    ])


TWO_CALLS = simulate.call_turn([("read_file", {"path": "a.txt"}), ("write_file", {"path": "b.txt"})])


def _results(messages: list[Any]) -> dict[str, str]:
    return {m.tool_call_id: m.content for m in messages if m.role == "tool"}


def test_a_result_is_saved_with_its_finished_mark_and_a_denial_with_its_mark() -> None:
    store = Recording()
    provider = simulate.ScriptedProvider([TWO_CALLS, simulate.text_turn("ok")])
    convo = pk.Conversation(store, "c", provider, _tools(), display=False, approve=lambda call: False)
    convo.send("go")
    writes = [w for w in store.writes if w[0] != "save" or w[1] != "user"]
    assert writes == [
        ("step", ("assistant",), (("call_2", "asking"),)),  # the calling message and its waiting call
        ("mark", "call_1", "started"),
        ("step", ("tool",), (("call_1", "finished"),)),  # a result and its mark
        ("step", ("tool",), (("call_2", "denied"),)),  # a decision and the result it gives
        ("save", "assistant"),
    ]


def test_a_new_message_while_a_call_waits_saves_what_the_call_is_told_with_its_mark() -> None:
    store = Recording()

    def stop(call: pk.ToolCall) -> bool:
        raise KeyboardInterrupt

    provider = simulate.ScriptedProvider([TWO_CALLS, simulate.text_turn("fine")])
    convo = pk.Conversation(store, "c", provider, _tools(), display=False, approve=stop)
    with pytest.raises(KeyboardInterrupt):
        convo.send("go")
    store.writes.clear()
    convo.send("never mind")
    assert store.writes[:2] == [("step", ("tool",), (("call_2", "answered"),)), ("save", "user")]
    assert [m.role for m in store.load("c")][-3:] == ["tool", "user", "assistant"]


@pytest.mark.parametrize("how", ["ran", "model"])
def test_settling_by_hand_saves_the_mark_with_the_result(how: str) -> None:
    store = Recording()

    def stop_in_write(call: pk.ToolCall) -> bool:
        return True

    tools = pk.ToolRegistry([_tools().get("read_file"), simulate.stop_in_tool(_tools().get("write_file"))])
    convo = pk.Conversation(store, "c", simulate.ScriptedProvider([TWO_CALLS]), tools, display=False)
    with pytest.raises(KeyboardInterrupt):
        convo.send("go")
    store.writes.clear()
    convo.settle("call_2", how, note="it wrote b.txt" if how == "ran" else None)
    assert store.writes == [("step", ("tool",), (("call_2", "answered"),))]


def test_a_compaction_is_one_step() -> None:
    store = Recording()
    provider = simulate.ScriptedProvider([
        simulate.text_turn("first answer"), simulate.text_turn("second answer"),
        simulate.text_turn("the summary"),
    ])
    convo = pk.Conversation(store, "c", provider, _tools(), display=False, context_window=40_000)
    convo.send("x" * 30_000)  # older than what a compaction keeps verbatim
    convo.send("and now?")
    store.writes.clear()
    assert convo.compact_now()
    assert store.writes == [("step", ("user", "assistant", "user", "assistant"), ())]
    assert store.load("c")[-4].content == SUMMARY + "the summary"


def _half_compacted(store: MemoryStore) -> None:
    """What an older version could leave: a compaction's summary and the copy of a calling
    message saved, the copies of its results not yet, when the process died."""
    calling = pk.AssistantMessage("Two calls.", tool_calls=[pk.ToolCall("c_read", "read_file", '{"path": "a"}'),
                                                            pk.ToolCall("c_write", "write_file", '{"path": "b"}')])
    for m in [pk.SystemMessage("s"), pk.UserMessage("go"), calling, pk.ToolMessage("c_read", "read_file", "AAA"),
              pk.ToolMessage("c_write", "write_file", "wrote b"), pk.AssistantMessage("done"),
              pk.UserMessage("more?"), pk.UserMessage(SUMMARY + "They read a and wrote b."), calling]:
        store.save("c", m)
    store.mark_call("c", "c_read", "finished", {"kind": "ok"})
    store.mark_call("c", "c_write", "finished", {"kind": "ok"})


def test_a_half_written_compaction_tells_the_results_saved_before_it() -> None:
    store = MemoryStore()
    _half_compacted(store)
    provider = simulate.ScriptedProvider([simulate.text_turn("carried on")])
    convo = pk.Conversation(store, "c", provider, _tools(), display=False)
    assert _results(convo.repaired.messages) == {"c_read": "AAA", "c_write": "wrote b"}
    convo.resume()
    assert _results(provider.requests[0]) == {"c_read": "AAA", "c_write": "wrote b"}


def test_a_denial_saved_without_its_result_is_told_as_a_denial() -> None:
    store = MemoryStore()
    for m in [pk.UserMessage("go"),
              pk.AssistantMessage("", tool_calls=[pk.ToolCall("c_write", "write_file", '{"path": "b"}')])]:
        store.save("c", m)
    store.mark_call("c", "c_write", "denied", {"decision": "denied"})  # the result never came
    provider = simulate.ScriptedProvider([simulate.text_turn("understood")])
    convo = pk.Conversation(store, "c", provider, _tools(), display=False, approve=lambda call: True)
    assert _results(convo.repaired.messages) == {"c_write": DENIED}
    convo.resume()
    assert _results(provider.requests[0]) == {"c_write": DENIED}
