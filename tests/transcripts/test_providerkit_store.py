"""This library's own store file (``NotebookStore``) as a transcript: ``pk.inspect(path,
thread=...)`` and ``providerkit-nb inspect PATH --thread ID`` read it read-only, and show each
call that has no result the way the Conversation itself does (``convo.interrupted``,
``convo.repaired``: what ``convo.view()`` shows and what the model is sent).

The store is written by real Conversations: one stopped by a real SIGINT while its tool ran, one
whose process was killed with SIGKILL mid-tool, one that finished."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import providerkit_nb as pk
from providerkit_nb.errors import ApprovalError
from providerkit_nb.testing import simulate
from providerkit_nb.transcripts import MultipleThreads, TranscriptError, detect, load

REPO = Path(__file__).resolve().parents[2]
IDS = ("stopped-one", "killed", "plain", "asking")


def _slow_tools() -> pk.ToolRegistry:
    def slow_write(args: dict) -> str:
        time.sleep(2)
        return "written"

    return pk.ToolRegistry([pk.define_tool("slow_write", "Write slowly.", {"type": "object", "properties": {}}, slow_write)])


def _shown(convo) -> tuple[list, list, list]:
    """What the Conversation shows (its view's repair: the store read again): the calls without
    a result, with the text the model is told, the repaired history, and the calls waiting for
    a person."""
    repaired = convo.reload()
    return list(repaired.interrupted), list(repaired.messages), [c.id for c in repaired.pending]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """A store three real conversations wrote, closed; with what each Conversation showed."""
    path = tmp_path_factory.mktemp("store") / "notes.providerkit.sqlite"
    store = pk.NotebookStore(path)
    provider = simulate.ScriptedProvider([simulate.call_turn([("slow_write", {})]), simulate.text_turn("done")])
    convo = pk.Conversation(store, "stopped-one", provider, _slow_tools(), display=False)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))  # Stop, as Jupyter sends it
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            convo.send("Write it slowly.")
    finally:
        timer.cancel()
    shown = {"stopped-one": _shown(convo)}
    plain = pk.Conversation(store, "plain", simulate.ScriptedProvider([simulate.text_turn("Hello.")]), display=False)
    plain.send("hi")
    shown["plain"] = _shown(plain)
    tools, _ = simulate.demo_tools()
    asks = simulate.ScriptedProvider([simulate.call_turn([("write_file", {"path": "a.txt", "content": "x"})])])
    waiting = pk.Conversation(store, "asking", asks, tools, display=False, approve="ask")
    with pytest.MonkeyPatch.context() as mp:  # the person never answered (the kernel went away)
        mp.setattr("sys.stdin", io.StringIO(""))
        with pytest.raises(ApprovalError):
            waiting.send("Write a.txt.")
    shown["asking"] = _shown(waiting)
    store.close()
    killed = simulate.kill_process(path, "killed")  # a child process SIGKILLed inside write_file
    assert killed.returncode == -signal.SIGKILL
    return path, shown


def _files(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def _calls(rows) -> list[tuple[str, str, str]]:
    return [(r.original_id, r.name, r.note) for r in rows]


def test_each_conversation_is_shown_as_the_conversation_shows_it(written):
    path, shown = written
    before = _files(path.parent)
    assert detect(path) == "providerkit"
    listed = pk.inspect(path)
    assert listed.needs_thread and sorted(listed.threads) == sorted(IDS)
    found = {cid: pk.inspect(path, thread=cid) for cid in IDS}
    assert _files(path.parent) == before  # read-only: nothing written, nothing created beside it
    # the killed one as a Conversation opened afterwards sees it (opening one writes a session id)
    tools, _ = simulate.demo_tools()
    with pk.NotebookStore(path) as store:
        again = pk.Conversation(store, "killed", simulate.ScriptedProvider([]), tools, display=False)
        shown["killed"] = _shown(again)
    for cid in IDS:
        interrupted, repaired, pending = shown[cid]
        ins = found[cid]
        assert (ins.format, ins.thread) == ("providerkit", cid)
        assert _calls(ins.interrupted) == _calls(interrupted), cid
        assert ins.repaired.messages == repaired, cid
        assert [c.id for c in ins.repaired.pending] == pending, cid
    stopped, killed, plain, asking = (found[c] for c in IDS)
    # the stopped call: the stopped text (not the generic one), and a marker naming its state
    [(call_id, name, note)] = _calls(stopped.interrupted)
    assert name == "slow_write" and note.startswith("The user stopped this call")
    assert stopped.meta["call_marks"].startswith(f"slow_write {call_id}: stopped ")
    # the killed one: started, never finished (the generic text: it may have partly run)
    [(call_id, name, _)] = _calls(killed.interrupted)
    assert name == "write_file" and killed.meta["call_marks"].startswith(f"write_file {call_id}: started ")
    # one finding per call, as the view counts: the state is a fact of the source, not a marker
    assert not stopped.markers and not killed.markers
    assert plain.valid and not plain.markers and not plain.interrupted
    assert [m.role for m in plain.messages] == ["user", "assistant"]
    # the call waiting for its approval: pending, not broken
    [call] = asking.messages[-1].tool_calls
    assert asking.pending_approval == [call.id] and not asking.interrupted and asking.valid


def test_the_html_report_says_what_the_model_is_told(written, tmp_path):
    path, _ = written
    ins = pk.inspect(path, thread="stopped-one")
    html = ins.report_html()
    note = ins.interrupted[0].note
    assert note.split(",")[0] in html and "slow_write" in html


def test_a_wrong_or_missing_conversation_lists_the_ones_it_holds(written):
    path, _ = written
    with pytest.raises(MultipleThreads) as many:
        load(path)
    assert sorted(many.value.threads) == sorted(IDS)
    with pytest.raises(TranscriptError) as wrong:
        load(path, thread="stoped-one")
    text = str(wrong.value)
    assert "no conversation 'stoped-one'" in text and all(repr(c) in text for c in IDS)


def _hold_open(path: Path, cid: str, text: str) -> subprocess.Popen[str]:
    """Another process (a notebook) with the store open, one message saved; it runs until its
    stdin closes."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, providerkit_nb as pk\n"
         "s = pk.NotebookStore(sys.argv[1]); s.save(sys.argv[2], {'role': 'user', 'content': sys.argv[3]})\n"
         "print('ready', flush=True); sys.stdin.read()", str(path), cid, text],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
    return holder


def test_a_store_open_in_another_process_is_read_without_touching_it(written, tmp_path):
    """While a notebook holds the store open (its -wal and -shm files exist), the inspection
    reads through them and changes neither the database nor its write-ahead log."""
    path = tmp_path / "open.providerkit.sqlite"
    shutil.copy(written[0], path)
    holder = _hold_open(path, "live", "still here")
    try:
        wal = Path(f"{path}-wal")
        assert wal.exists()
        db_before, wal_before = path.read_bytes(), wal.read_bytes()
        names = sorted(p.name for p in tmp_path.iterdir())
        ins = pk.inspect(path, thread="live")  # the row is in the -wal file only
        assert [m.content for m in ins.messages] == ["still here"]
        assert path.read_bytes() == db_before and wal.read_bytes() == wal_before
        assert sorted(p.name for p in tmp_path.iterdir()) == names
    finally:
        holder.stdin.close()
        holder.wait(20)


def test_damaged_rows_are_named_and_the_rest_is_read(written, tmp_path):
    path = tmp_path / "damaged.providerkit.sqlite"
    shutil.copy(written[0], path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE messages SET body = '[1' WHERE conversation_id = 'plain' AND seq = 2")
        db.execute("UPDATE messages SET body = replace(body, 'hi', 'ho') WHERE conversation_id = 'plain' AND seq = 1")
    db.close()
    t = load(path, thread="plain")
    assert [m.content for m in t.messages] == ["ho"]
    assert t.skipped == {"corrupt_row": 1}
    assert any("row seq=2 does not decode" in w for w in t.warnings)
    assert any("row seq=1: its content no longer matches its hash" in w for w in t.warnings)


def test_our_id_without_our_tables_is_our_error(tmp_path):
    path = tmp_path / "odd.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA application_id = 1886088802")  # the store's id, 'pknb'
        db.execute("CREATE TABLE other (x)")
    db.close()
    with pytest.raises(TranscriptError, match="carries the providerkit store's id but has no messages table"):
        load(path, format="providerkit")
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE messages (conversation_id, seq, created_at, hash, body)")
    db.close()
    assert detect_or_none(other) is None  # the same table without the store's id is not ours
    with pytest.raises(TranscriptError, match="not a providerkit store"):
        load(other, format="providerkit")


def detect_or_none(path: Path) -> str | None:
    try:
        return detect(path)
    except TranscriptError:
        return None


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "providerkit_nb", "inspect", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})


def test_the_command_line_reads_the_store(written, tmp_path):
    path, _ = written
    before = _files(path.parent)
    listed = _cli(str(path))
    assert listed.returncode == 2
    assert f"holds {len(IDS)} threads; pick one with --thread" in listed.stderr
    assert sorted(line.strip() for line in listed.stderr.splitlines()[1:]) == sorted(IDS)
    wrong = _cli(str(path), "--thread", "nope")
    assert wrong.returncode == 2 and "no conversation 'nope'" in wrong.stderr and "'killed'" in wrong.stderr
    shown = _cli(str(path), "--thread", "stopped-one")
    assert shown.returncode == 1, shown.stderr  # a call without a result is a problem until repaired
    assert f"{path}: providerkit, thread stopped-one, 2 messages" in shown.stdout
    assert "interrupted: slow_write call_1" in shown.stdout
    report = tmp_path / "report.html"
    as_json = _cli(str(path), "--thread", "stopped-one", "--json", "--html", str(report))
    data = json.loads(as_json.stdout)
    [row] = data["interrupted"]
    assert (row["name"], data["format"], data["thread"]) == ("slow_write", "providerkit", "stopped-one")
    assert report.exists()
    assert _files(path.parent) == before


def test_a_killed_store_with_a_wal_but_no_shm_file_is_read_from_a_private_copy(tmp_path):
    """SQLite cannot read a -wal file without a -shm beside it, and would create one: the two
    files are read from a private copy instead, and the folder stays as it was."""
    path = tmp_path / "k.providerkit.sqlite"
    holder = _hold_open(path, "c", "in the wal")
    holder.kill()  # SIGKILL: no checkpoint, the row stays in the -wal file
    holder.wait(20)
    Path(f"{path}-shm").unlink()
    before = _files(tmp_path)
    assert sorted(before) == ["k.providerkit.sqlite", "k.providerkit.sqlite-wal"]
    assert [m.content for m in load(path).messages] == ["in the wal"]
    assert _files(tmp_path) == before


def test_lost_turns_and_metadata_are_facts_of_the_source(tmp_path):
    path = tmp_path / "m.providerkit.sqlite"
    with pk.NotebookStore(path) as store:
        cut = simulate.cut_stream(simulate.ScriptedProvider([simulate.text_turn("A long answer " * 20)]), 3)
        convo = pk.Conversation(store, "cut", cut, display=False)
        with pytest.raises(pk.ProviderError) as err:
            convo.send("Tell me more.")
        store.set_meta("cut", title="A cut stream", tags=["demo"])
        [lost] = store.lost_turns("cut")
    t = load(path)
    assert t.thread == "cut" and [m.role for m in t.messages] == ["user"]
    assert t.meta["lost_turns"].startswith("1 (the last: ")
    assert lost.error.split()[0] in t.meta["lost_turns"] and "cut after 3 chunks" in str(err.value)
    assert (t.meta["title"], t.meta["tags"]) == ("A cut stream", ["demo"])
    assert t.meta["session_id"] == convo.session_id


def test_a_reader_of_the_file_and_the_conversation_tell_the_model_the_same_for_each_mark(tmp_path):
    """One rule turns a call's mark into what the model reads: a call Stop landed in and a call a
    person declined (a decision saved without its result, as older stores did) read the same
    through ``pk.inspect(path)`` as through the Conversation itself."""
    from providerkit_nb.messages import AssistantMessage, ToolCall, UserMessage

    path = tmp_path / "marks.providerkit.sqlite"
    with pk.NotebookStore(path) as store:
        store.save("c", UserMessage("go"))
        store.save("c", AssistantMessage("", tool_calls=[ToolCall("stop_me", "slow_write", "{}"), ToolCall("deny_me", "slow_write", "{}")]))
        store.mark_call("c", "stop_me", "stopped", {"seconds": 1.0})
        store.mark_call("c", "deny_me", "denied", {"decision": "denied"})
        convo = pk.Conversation(store, "c", simulate.ScriptedProvider([]), _slow_tools(), display=False)
        by_conversation = {r.id: r.note for r in convo.reload().interrupted}
    by_reader = {r.id: r.note for r in pk.inspect(path, thread="c").repaired.interrupted}
    assert by_reader == by_conversation
    assert by_reader["stop_me"].startswith("The user stopped this call while it was running")
    assert by_reader["deny_me"].startswith("The user declined this call, so it did not run")
