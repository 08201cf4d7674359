"""The per-conversation guard and ``unfinished()``, on every store.

The guard is checked the way it is used: two threads of one process, and a second real process
(spawned) that holds a conversation and is then SIGKILLed; the lock must go with it.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time

import pytest

import providerkit_nb as pk
from providerkit_nb.core.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from providerkit_nb.errors import ConversationBusy

from .conftest import Backing
from .guard_child import hold_conversation


def test_unfinished_reads_the_history(backing: Backing) -> None:
    store = backing.new()
    call = ToolCall("c1", "lookup", "{\"q\": \"x\"}")
    histories = {
        "asked": [UserMessage("hi")],
        "called": [UserMessage("hi"), AssistantMessage(tool_calls=[call])],
        "half-results": [UserMessage("hi"), AssistantMessage(tool_calls=[call, ToolCall("c2", "lookup", "{}")]),
                         ToolMessage("c1", "lookup", "r")],
        "results-unseen": [UserMessage("hi"), AssistantMessage(tool_calls=[call]), ToolMessage("c1", "lookup", "r")],
        "answered": [SystemMessage("be brief"), UserMessage("hi"), AssistantMessage("hello")],
        "answered-after-tools": [UserMessage("hi"), AssistantMessage(tool_calls=[call]),
                                 ToolMessage("c1", "lookup", "r"), AssistantMessage("done")],
        "system-only": [SystemMessage("be brief")],
        "asked-with-system": [SystemMessage("be brief"), UserMessage("hi")],
    }
    for cid, msgs in histories.items():
        for m in msgs:
            store.save(cid, m)
    store.set_meta("meta-only", title="no messages")
    assert store.unfinished() == sorted(
        ["asked", "called", "half-results", "results-unseen", "asked-with-system"]
    )


def test_hold_refuses_a_second_holder_in_the_same_process(backing: Backing) -> None:
    store = backing.new()
    with store.hold("c"):
        with pytest.raises(ConversationBusy, match="'c'") as info:
            with store.hold("c"):
                pass
        assert info.value.conversation_id == "c"
        with store.hold("other"):  # another conversation is free
            pass
        errors: list[BaseException] = []

        def second() -> None:
            try:
                with store.hold("c"):
                    pass
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)

        t = threading.Thread(target=second)
        t.start()
        t.join()
        assert len(errors) == 1 and isinstance(errors[0], ConversationBusy)
    with store.hold("c"):  # released on the way out
        pass


def test_hold_waits_when_asked(backing: Backing) -> None:
    store = backing.new()
    released = threading.Event()

    def holder() -> None:
        with store.hold("c"):
            released.wait(5)
            time.sleep(0.2)

    t = threading.Thread(target=holder)
    t.start()
    time.sleep(0.1)
    released.set()
    t0 = time.monotonic()
    with store.hold("c", wait=5):
        waited = time.monotonic() - t0
    t.join()
    assert 0.1 < waited < 4
    with store.hold("c"):
        t2 = threading.Thread(target=lambda: None)
        t2.start()
        t2.join()
        t0 = time.monotonic()
        other = backing.new() if backing.durable else store
        with pytest.raises(ConversationBusy, match="after waiting 0.3 s"):
            with other.hold("c", wait=0.3):
                pass
        assert time.monotonic() - t0 >= 0.3


def test_hold_across_processes_goes_with_a_killed_holder(durable: Backing) -> None:
    store = durable.new()
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    child = ctx.Process(target=hold_conversation,
                        args=(durable.kind, durable.target, durable.schema, "shared", ready))
    child.start()
    try:
        assert ready.wait(60), "the child never took the guard"
        with pytest.raises(ConversationBusy, match="'shared'"):
            with store.hold("shared"):
                pass
        with store.hold("another"):
            pass
        os.kill(child.pid or 0, signal.SIGKILL)
        child.join(10)
        t0 = time.monotonic()
        with store.hold("shared", wait=5):
            freed = time.monotonic() - t0
        assert freed < 2.0, f"the dead holder's lock went only after {freed:.2f} s"
    finally:
        if child.is_alive():
            child.kill()
        child.join(5)


def test_conversation_send_and_resume_are_guarded(backing: Backing) -> None:
    store = backing.new()
    store.save("c", UserMessage("hi"))
    # No provider call can happen: the guard refuses before the loop starts.
    conv = pk.Conversation(store, "c", provider=None, display=False)
    with store.hold("c"):
        with pytest.raises(ConversationBusy):
            conv.resume()
        with pytest.raises(ConversationBusy):
            conv.send("again")
    assert [m.role for m in store.load("c")] == ["user"]  # the refused send saved nothing
