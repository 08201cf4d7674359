"""One behaviour suite, run against every store (memory, SQLite file, PostgreSQL server)."""

from __future__ import annotations

import hashlib
import io
import json
import threading
from datetime import UTC, datetime

import pytest

import providerkit_nb as pk
from providerkit_nb.store import read_jsonl
from providerkit_nb.store.base import (
    ConversationInfo,
    ConversationMeta,
    SavedMessage,
    StoreError,
)
from providerkit_nb.stream import Usage

from .convo import first

CANON = dict(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canon(m: pk.Message) -> str:
    # independent of the store: the canonical JSON encoding every store writes
    return json.dumps(m.to_dict(), **CANON)


def test_is_a_store(store):
    assert isinstance(store, pk.Store)


def test_save_returns_seq_hash_and_load_is_byte_for_byte(store):
    msgs = first(7, 40)
    saved = [store.save("c", m) for m in msgs]
    assert [s.seq for s in saved] == list(range(1, 41))
    assert [s.hash for s in saved] == [hashlib.sha256(canon(m).encode()).hexdigest() for m in msgs]
    loaded = store.load("c")
    assert loaded == msgs
    assert [canon(m) for m in loaded] == [canon(m) for m in msgs]
    rows = store.records("c")
    assert [r.json for r in rows] == [canon(m) for m in msgs]
    assert all(isinstance(r.created_at, datetime) and r.created_at.tzinfo for r in rows)
    assert [r.created_at for r in rows] == sorted(r.created_at for r in rows)
    assert [s.created_at for s in saved] == [r.created_at for r in rows]


def test_accepts_canonical_dicts_and_refuses_junk(store):
    store.save("c", {"role": "user", "content": "as a dict"})
    assert store.load("c") == [pk.UserMessage("as a dict")]
    with pytest.raises(ValueError, match="unknown role"):
        store.save("c", {"role": "robot", "content": "x"})
    with pytest.raises(TypeError, match="canonical messages"):
        store.save("c", "just a string")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="conversation_id"):
        store.save("", pk.UserMessage("x"))
    assert len(store.load("c")) == 1  # the refused saves wrote nothing


def test_duplicate_is_saved_and_reported(store):
    a = store.save("c", pk.UserMessage("again"))
    store.save("c", pk.UserMessage("other"))
    b = store.save("c", pk.UserMessage("again"))
    c = store.save("c", pk.UserMessage("again"))
    assert a.duplicate_of is None
    assert b.duplicate_of == 1 and b.hash == a.hash
    assert c.duplicate_of == 3
    assert [m.content for m in store.load("c")] == ["again", "other", "again", "again"]
    store.save("d", pk.UserMessage("again"))  # duplicates are per conversation
    assert store.records("d")[0].seq == 1


def test_conversations_are_separate_and_listed(store):
    store.save("a", pk.UserMessage("1"))
    store.save("b", pk.UserMessage("1"))
    store.save("a", pk.UserMessage("2"))
    assert [m.content for m in store.load("a")] == ["1", "2"]
    assert store.load("missing") == []
    infos = {c.id: c for c in store.conversations()}
    assert set(infos) == {"a", "b"}
    assert infos["a"].messages == 2 and infos["b"].messages == 1
    assert infos["a"].updated_at == store.records("a")[-1].created_at
    # newest first
    assert [c.id for c in store.conversations()] == ["a", "b"]
    assert ConversationInfo.from_dict(infos["a"].to_dict()) == infos["a"]


def test_delete_removes_messages_meta_and_lost_turns(store):
    store.save("a", pk.UserMessage("x"))
    store.save("a", pk.UserMessage("y"))
    store.set_meta("a", title="T")
    store.save_lost_turn("a", pk.Turn(pk.AssistantMessage("part")), "boom")
    store.save("b", pk.UserMessage("keep"))
    assert store.delete("a") == 2
    assert store.load("a") == [] and store.lost_turns("a") == []
    assert store.get_meta("a") == ConversationMeta()
    assert [c.id for c in store.conversations()] == ["b"]
    assert store.delete("a") == 0
    assert store.save("a", pk.UserMessage("fresh")).seq == 1


def test_meta_set_get_partial_updates(store):
    assert store.get_meta("c") == ConversationMeta()
    m = store.set_meta("c", title="Plan", model="gpt-5-mini", tags=["x", "y"])
    assert m == ConversationMeta(None, "Plan", "gpt-5-mini", ["x", "y"])
    store.set_meta("c", title=None)
    assert store.get_meta("c") == ConversationMeta(None, None, "gpt-5-mini", ["x", "y"])
    info = {c.id: c for c in store.conversations()}["c"]
    assert (info.messages, info.model, info.tags) == (0, "gpt-5-mini", ["x", "y"])
    assert info.updated_at is not None
    with pytest.raises(ValueError, match="tags"):
        store.set_meta("c", tags="not-a-list")
    with pytest.raises(ValueError, match="title"):
        store.set_meta("c", title=3)


def test_session_id_created_once(store):
    sid = store.session_id("c")
    assert isinstance(sid, str) and len(sid) >= 16
    assert store.session_id("c") == sid
    assert store.session_id("other") != sid
    assert store.get_meta("c").session_id == sid
    store.set_meta("c", title="t")
    assert store.session_id("c") == sid


def test_session_id_survives_reopen(durable):
    s1 = durable.new()
    sid = s1.session_id("c")
    s1.save("c", pk.UserMessage("hi"))
    s1.close()
    s2 = durable.new()
    assert s2.session_id("c") == sid
    assert s2.load("c") == [pk.UserMessage("hi")]
    assert s2.save("c", pk.UserMessage("more")).seq == 2


def test_session_id_race_between_store_objects(durable):
    """Two handles (as two processes would be) asking at once agree on one id."""
    stores = [durable.new() for _ in range(4)]
    got: list[str] = []
    barrier = threading.Barrier(len(stores))

    def ask(s):
        barrier.wait()
        got.append(s.session_id("race"))

    threads = [threading.Thread(target=ask, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 4 and len(set(got)) == 1


def test_lost_turns_side_table(store):
    partial = pk.Turn(
        pk.AssistantMessage("half an ans", tool_calls=[pk.ToolCall("c1", "read_file", '{"pa')]),
        Usage(input_tokens=10, output_tokens=3),
    )
    i = store.save_lost_turn("c", partial, RuntimeError("stream cut"))
    j = store.save_lost_turn("c", pk.Turn(pk.AssistantMessage("x")), "KeyboardInterrupt")
    lost = store.lost_turns("c")
    assert [t.id for t in lost] == [i, j] and i != j
    assert lost[0].turn == partial
    assert lost[0].error == "RuntimeError: stream cut"
    assert lost[1].error == "KeyboardInterrupt"
    assert store.load("c") == []  # never in the history
    assert store.lost_turns("other") == []
    with pytest.raises(TypeError):
        store.save_lost_turn("c", pk.AssistantMessage("not a turn"), "x")  # type: ignore[arg-type]


def test_threads_of_one_process(store):
    """8 threads appending to one conversation: no loss, contiguous seqs, per-thread order."""
    per = 40
    results: dict[int, list[SavedMessage]] = {}

    def worker(t: int) -> None:
        results[t] = [store.save("c", pk.UserMessage(f"t{t}-{i}")) for i in range(per)]

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rows = store.load("c")
    assert len(rows) == 8 * per
    seqs = sorted(s.seq for r in results.values() for s in r)
    assert seqs == list(range(1, 8 * per + 1))
    for t, saved in results.items():
        assert [s.seq for s in saved] == sorted(s.seq for s in saved)
        assert [rows[s.seq - 1].content for s in saved] == [f"t{t}-{i}" for i in range(per)]


def test_two_handles_interleave_without_loss(durable):
    """Two store objects (separate connections) on one conversation, as two notebooks would."""
    a, b = durable.new(), durable.new()
    for i in range(30):
        assert a.save("c", pk.UserMessage(f"a{i}")).seq == 2 * i + 1
        assert b.save("c", pk.UserMessage(f"b{i}")).seq == 2 * i + 2
    assert [m.content for m in a.load("c")] == [x for i in range(30) for x in (f"a{i}", f"b{i}")]


def test_export_import_roundtrip_idempotent(backing):
    src = backing.new()
    msgs = first(3, 25)
    for m in msgs:
        src.save("one", m)
    src.save("two", pk.UserMessage("hello"))
    src.set_meta("one", title="First", tags=["t"])
    sid = src.session_id("one")
    buf = io.StringIO()
    lines = src.export_jsonl(buf)
    assert lines == 25 + 1 + 1  # messages + one meta line ("two" has none)

    dst = pk.MemoryStore()
    buf.seek(0)
    r1 = dst.import_jsonl(buf)
    assert r1.added == {"one": 25, "two": 1}
    buf.seek(0)
    r2 = dst.import_jsonl(buf)
    assert r2.total_added == 0 and r2.already_present == {"one": 25, "two": 1}
    assert [x.json for x in dst.records("one")] == [x.json for x in src.records("one")]
    assert [x.created_at for x in dst.records("one")] == [x.created_at for x in src.records("one")]
    assert dst.session_id("one") == sid and dst.get_meta("one").title == "First"

    # and back into a store of this kind, after it got one more message: only the rest is added
    other = backing.new() if backing.kind != "memory" else pk.MemoryStore()
    other.delete("one")
    other.delete("two")
    for m in msgs[:10]:
        other.save("one", m)
    buf.seek(0)
    r3 = other.import_jsonl(buf)
    assert r3.added["one"] == 15 and r3.already_present["one"] == 10
    assert other.load("one") == msgs


def test_export_selected_ids_to_file(store, tmp_path):
    store.save("a", pk.UserMessage("A"))
    store.save("b", pk.UserMessage("B"))
    path = tmp_path / "out.jsonl"
    assert store.export_jsonl(path, ids=["b"]) == 1
    data = read_jsonl(path)
    assert list(data.conversations) == ["b"] and data.messages() == [pk.UserMessage("B")]


def test_import_conflict_refused_without_writing(store):
    store.save("c", pk.UserMessage("mine"))
    text = json.dumps({"conversation_id": "c", "message": {"role": "user", "content": "theirs"}}) + "\n"
    with pytest.raises(StoreError, match="differs"):
        store.import_jsonl(io.StringIO(text))
    assert store.load("c") == [pk.UserMessage("mine")]


def test_context_manager_and_close(backing):
    with backing.new() as s:
        s.save("c", pk.UserMessage("x"))
    if backing.durable:
        assert "closed" in repr(s)
        with pytest.raises(StoreError, match="closed"):
            s.save("c", pk.UserMessage("y"))
        s.close()  # twice is fine
        with backing.new() as again:
            assert again.load("c") == [pk.UserMessage("x")]


def test_records_to_dict(store):
    saved = store.save("c", pk.UserMessage("x"))
    d = saved.to_dict()
    assert SavedMessage.from_dict(d) == saved
    assert store.records("c")[0].to_dict()["message"] == {"role": "user", "content": "x"}
    assert datetime.fromisoformat(d["created_at"]).tzinfo is not None
    assert abs((datetime.now(UTC) - saved.created_at).total_seconds()) < 60
