"""Usage per turn is kept with the history: the frames read it back after a restart."""

from __future__ import annotations

import sqlite3

import providerkit_nb as pk
from providerkit_nb import simulate
from providerkit_nb.conversation.console import Live
from providerkit_nb.store.sqlite import NotebookStore


def _talk(store, answers):
    provider = simulate.ScriptedProvider(answers)
    convo = pk.Conversation(store, "c", provider, display=False)
    for i in range(len(answers)):
        convo.send(f"question {i}")
    return convo


def test_usage_per_turn_survives_a_new_store_object_and_a_new_conversation(backing):
    store = backing.new()
    _talk(store, [simulate.text_turn("One."), simulate.text_turn("Two, longer.")])
    before = [r.json for r in store.records("c")]

    again = backing.new()  # a new store object on the same file, schema or dict: a restart
    convo = pk.Conversation(again, "c", simulate.ScriptedProvider([]), display=False)
    frame = pk.turns_frame(convo)
    assert list(frame["input_tokens"]) == [100, 100]
    assert list(frame["output_tokens"]) == [2, 4]  # len(text) // 4 + 1, as the script reports
    assert list(frame["model"]) == ["scripted-1", "scripted-1"]
    totals = pk.usage_frame(convo)
    assert int(totals["calls"][0]) == 2 and int(totals["output_tokens"][0]) == 6
    assert [r.json for r in again.records("c")] == before  # the history's JSON is untouched


def test_a_turn_stopped_mid_stream_is_counted_with_its_error(backing):
    store = backing.new()
    provider = simulate.ScriptedProvider([simulate.text_turn("Half an answer that never ends.", pieces=8)])
    convo = pk.Conversation(store, "c", provider, display=False)
    calls = {"n": 0}

    def show(asm, final):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt

    convo._live_display = lambda: _Stopper(show)  # type: ignore[method-assign]
    try:
        convo.send("go")
    except KeyboardInterrupt:
        pass
    rows = store.turn_usage("c")
    assert len(rows) == 1 and rows[0]["error"] == "KeyboardInterrupt: stopped by the user"


class _Stopper(Live):
    def __init__(self, fn) -> None:
        self.fn = fn

    def turn(self, asm, final):
        self.fn(asm, final)

    def stopped(self, asm):
        pass

    def tool(self, call, status, result=None):
        pass

    def note(self, text):
        pass


def test_a_store_of_schema_3_gains_the_usage_table(tmp_path):
    from providerkit_nb.store.sqlite import MIGRATIONS

    path = tmp_path / "old.providerkit.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    for migration in MIGRATIONS[:3]:  # the schema as version 3 shipped it
        for stmt in migration:
            conn.execute(stmt)
    conn.execute("PRAGMA user_version = 3")
    conn.close()
    with NotebookStore(path) as store:
        assert store.schema_version == 6
        store.save_turn_usage("c", {"usage": None, "step": 0})
        assert store.turn_usage("c") == [{"usage": None, "step": 0}]
