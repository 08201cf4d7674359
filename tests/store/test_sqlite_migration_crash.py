"""Migration 6 (the leaner row layout) killed at every moment: a store of schema 5 holding a few
thousand rows is opened by a child process that migrates it and is SIGKILLed part way, at
moments spread over the migration's own duration. The next open finds schema 5 (and migrates
it) or schema 6, never a mix; every row is there with its bytes, its seq and its duplicate_of,
SQLite's integrity check passes, and saves go on with the right seq and duplicates.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import providerkit_nb as pk
from providerkit_nb.store.base import encode_message
from providerkit_nb.store.sqlite import APPLICATION_ID, MIGRATIONS, NotebookStore

REPO = Path(__file__).resolve().parents[2]
TRIALS = 12
CHILD = """
import sys
from providerkit_nb.store.sqlite import NotebookStore
print("ready", flush=True)
sys.stdin.readline()
NotebookStore(sys.argv[1])
print("migrated", flush=True)
"""


def _messages(cid: str, n: int) -> list[pk.Message]:
    out: list[pk.Message] = []
    for i in range(n):
        if i % 50 == 49:
            out.append(out[0])  # a duplicate of the conversation's first message
        else:
            out.append(pk.UserMessage(f"{cid} message {i}: " + "Grüße ✓ " * (100 + i % 150)))
    return out


def _schema5(path: Path, conversations: dict[str, list[pk.Message]]) -> None:
    """A store as schema 5 wrote it: its migrations, and rows as its statement inserted them."""
    c = sqlite3.connect(path, isolation_level=None)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("BEGIN")
    for stmts in MIGRATIONS[:5]:
        for stmt in stmts:
            c.execute(stmt)
    c.execute("PRAGMA user_version = 5")
    for cid, msgs in conversations.items():
        seen: dict[str, int] = {}
        for seq, m in enumerate(msgs, 1):
            text, digest = encode_message(m)
            c.execute("INSERT INTO messages (conversation_id, seq, created_at, hash, body, duplicate_of) "
                      "VALUES (?, ?, '2026-01-01T00:00:00.000000+00:00', ?, ?, ?)", (cid, seq, digest, text, seen.get(digest)))
            seen[digest] = seq
    c.execute("COMMIT")
    assert c.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()


def _version(path: Path) -> int:
    c = sqlite3.connect(path)
    try:
        return int(c.execute("PRAGMA user_version").fetchone()[0])
    finally:
        c.close()


def test_a_migration_killed_at_any_moment_leaves_the_old_layout_or_the_new_one(tmp_path: Path) -> None:
    conversations = {cid: _messages(cid, n) for cid, n in (("a", 1200), ("b", 900), ("c", 300))}
    template = tmp_path / "v5.sqlite"
    _schema5(template, conversations)
    timing = tmp_path / "timing.sqlite"
    shutil.copy(template, timing)
    t0 = time.perf_counter()
    NotebookStore(timing).close()
    took = time.perf_counter() - t0
    outcomes = {5: 0, 6: 0}
    env = dict(os.environ, PYTHONPATH=str(REPO))
    for trial in range(TRIALS):
        path = tmp_path / f"t{trial}.sqlite"
        shutil.copy(template, path)
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(path)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, env=env, text=True)
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline() == "ready\n"
        proc.stdin.write("go\n")
        proc.stdin.flush()
        time.sleep(took * (0.2 + trial / TRIALS))  # from inside the migration to after its end
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        outcomes[_version(path)] += 1
        with NotebookStore(path) as s:
            assert s.schema_version == 6
            assert s.check() == ["ok"]
            for cid, msgs in conversations.items():
                rows = s.records(cid)
                assert [r.seq for r in rows] == list(range(1, len(msgs) + 1))
                assert [r.json for r in rows] == [encode_message(m)[0] for m in msgs]
                assert all(hashlib.sha256(r.json.encode()).hexdigest() == r.hash for r in rows)
                assert s.load(cid) == msgs
            saved = s.save("a", conversations["a"][0])  # the hash index of the new layout
            assert (saved.seq, saved.duplicate_of) == (1201, 1200)
        with NotebookStore(path) as s:  # a new object, no load: the index answers
            assert s.save("b", conversations["b"][1]).duplicate_of == 2
            assert {c.id: c.messages for c in s.conversations()} == {"a": 1201, "b": 901, "c": 300}
    print(f"migration {took * 1e3:.0f} ms; after the kills: {outcomes}")
    assert outcomes[5] >= 2 and outcomes[6] >= 1, f"the kills missed the migration: {outcomes}"
