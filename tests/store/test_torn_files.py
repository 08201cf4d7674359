"""A write cut short: the file stores truncated at every byte of their last record.

- JsonlStore: the last record is a message line, and then a step of several lines (a
  compaction's summary and copies with a mark). At every cut the store loads without raising,
  holds exactly what it held before that record (or all of it, when only the newline is
  missing), never part of a step; a new save then lands on a clean line, and the history is
  what was read plus the new message: the reader and the appender agree on what was torn.
  ``read_jsonl`` on the same cut file reads the same messages.
- The JSONL export (``write_jsonl``/``read_jsonl``): the same at every byte of its last line.
- Cuts inside a multi-byte UTF-8 character are torn tails like any other.
- SQLite: the WAL file (the last commits, not yet checkpointed) truncated at frame boundaries
  and inside frames: the store opens, ``integrity_check`` is ok, and the history is a prefix
  of what was saved that ends at a commit.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import providerkit_nb as pk
from providerkit_nb.core.messages import dump_message
from providerkit_nb.store import read_jsonl, write_jsonl
from providerkit_nb.store.jsonl_store import JsonlStore

HEAD = [
    pk.SystemMessage("You edit files."),
    pk.UserMessage("Résumé the README, s'il vous plaît: 日本語 ✓"),
    pk.AssistantMessage("Reading it.", tool_calls=[pk.ToolCall("c1", "read_file", '{"path": "README.md"}')]),
    pk.ToolMessage("c1", "read_file", "# Hallo Welt — Grüße aus Köln 🎉"),
]
LAST = pk.AssistantMessage("Fertig: Übersicht geschrieben — 日本語 ✓ 🎉")
STEP = [pk.UserMessage("[Earlier conversation, summarized]\n\nÜber README.md 🎉"), *HEAD[2:], pk.UserMessage("Weiter?")]
NEXT = pk.UserMessage("and then? ✓")


def _texts(messages: list[pk.Message]) -> list[str]:
    return [dump_message(m) for m in messages]


def _multibyte_cuts(data: bytes, start: int) -> int:
    """How many cut points after ``start`` fall inside a multi-byte UTF-8 character."""
    return sum(1 for i in range(start + 1, len(data)) if (data[i] & 0xC0) == 0x80)


def _quiet_read(path: Path) -> list[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = read_jsonl(path)
    return [r.json for rows in data.conversations.values() for r in rows]


@pytest.mark.parametrize("last", ["message", "step"])
def test_a_jsonl_store_cut_at_every_byte_of_its_last_record(tmp_path: Path, last: str) -> None:
    folder = tmp_path / "store"
    with JsonlStore(folder) as s:
        for m in HEAD:
            s.save("c", m)
        s.mark_call("c", "c1", "finished", {"kind": "ok"})
        if last == "message":
            s.save("c", LAST)
            after = [*HEAD, LAST]
        else:
            s.save_step("c", STEP, marks=[("c1", "finished", {"kind": "ok", "copied": True})])
            after = [*HEAD, *STEP]
    path = folder / "c.jsonl"
    full = path.read_bytes()
    # where the last record starts: the step's first line, or the last line
    lines = full.splitlines(keepends=True)
    n_last = len(STEP) + 2 if last == "step" else 1  # a step: its messages, its mark and its closing line
    start = len(full) - sum(len(x) for x in lines[-n_last:])
    assert _multibyte_cuts(full, start) > 10, "no cut falls inside a multi-byte character"
    before, whole = _texts(HEAD), _texts(after)
    for cut in range(start, len(full) + 1):
        copy = tmp_path / f"cut{cut}"
        copy.mkdir()
        shutil.copy(folder / "providerkit-store.json", copy)
        (copy / "c.jsonl").write_bytes(full[:cut])
        keeps_all = cut >= len(full) - 1  # only the newline (or nothing) is missing
        want = whole if keeps_all else before
        with JsonlStore(copy) as s:
            got = [r.json for r in s.records("c")]
            assert got == want, f"cut at byte {cut} of {len(full)}"
            assert s.load("c") == (after if keeps_all else HEAD)
            assert s.call_marks("c")["c1"].detail == ({"kind": "ok", "copied": True} if keeps_all and last == "step"
                                                       else {"kind": "ok"})
            assert _quiet_read(copy / "c.jsonl") == want, f"read_jsonl disagrees at byte {cut}"
            s.save("c", NEXT)  # the appender: what the reader kept, then the new line
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # nothing torn is left behind
            assert _quiet_read(copy / "c.jsonl") == [*want, dump_message(NEXT)]
        with JsonlStore(copy) as s:
            assert [r.json for r in s.records("c")] == [*want, dump_message(NEXT)]
            assert [r.seq for r in s.records("c")] == list(range(1, len(want) + 2))
        shutil.rmtree(copy)


def test_the_jsonl_export_cut_at_every_byte_of_its_last_line(tmp_path: Path) -> None:
    src = tmp_path / "export.jsonl"
    write_jsonl(src, [*HEAD, LAST], conversation_id="c")
    full = src.read_bytes()
    start = full.rstrip(b"\n").rfind(b"\n") + 1
    assert _multibyte_cuts(full, start) > 10
    for cut in range(start, len(full) + 1):
        p = tmp_path / f"cut{cut}.jsonl"
        p.write_bytes(full[:cut])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            data = read_jsonl(p)  # never a raw UnicodeDecodeError, never a ValueError
        kept = [r.json for r in data.conversations.get("c", [])]
        keeps_all = cut >= len(full) - 1
        assert kept == _texts([*HEAD, LAST] if keeps_all else HEAD), f"cut at byte {cut}"
        assert data.torn_tail == (start < cut < len(full) - 1) == bool(caught), f"cut at byte {cut}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            write_jsonl(p, [NEXT], conversation_id="c", append=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            again = read_jsonl(p)
        assert [r.json for r in again.conversations["c"]] == [*kept, dump_message(NEXT)], f"cut at byte {cut}"
        p.unlink()


def test_a_line_cut_inside_a_character_is_a_torn_tail_not_a_decode_error(tmp_path: Path) -> None:
    p = tmp_path / "cut.jsonl"
    write_jsonl(p, [pk.UserMessage("ok"), pk.UserMessage("🎉🎉🎉")], conversation_id="c")
    full = p.read_bytes()
    at = full.rfind("🎉".encode()) + 2  # inside the last emoji's four bytes
    p.write_bytes(full[:at])
    with pytest.warns(UserWarning, match="torn last line"):
        data = read_jsonl(p)
    assert data.torn_tail and data.messages("c") == [pk.UserMessage("ok")]
    folder = tmp_path / "store"
    with JsonlStore(folder) as s:
        s.save("c", pk.UserMessage("ok"))
        s.save("c", pk.UserMessage("🎉🎉🎉"))
    f = folder / "c.jsonl"
    body = f.read_bytes()
    f.write_bytes(body[: body.rfind("🎉".encode()) + 3])
    with JsonlStore(folder) as s:
        assert s.load("c") == [pk.UserMessage("ok")]


# --------------------------------------------------------------------------- SQLite's WAL

_WAL_WRITER = """
import os, sys
import providerkit_nb as pk
s = pk.NotebookStore(sys.argv[1])
for i in range(int(sys.argv[2])):
    s.save("c", pk.UserMessage(f"message {i}: " + "Grüße 日本語 ✓ " * (i * 7 % 50)))
    s.save_step("c", [pk.AssistantMessage(f"answer {i}"), pk.UserMessage(f"copy {i}")],
                marks=[(f"call{i}", "finished", None)])
print("saved", flush=True)
os.kill(os.getpid(), 9)  # no close, no checkpoint: the last commits are only in the WAL
"""

WAL_HEADER = 32
FRAME = 24 + 4096


def test_a_truncated_wal_keeps_a_prefix_of_whole_commits(tmp_path: Path) -> None:
    path = tmp_path / "wal.providerkit.sqlite"
    pk.NotebookStore(path).close()
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    proc = subprocess.run([sys.executable, "-c", _WAL_WRITER, str(path), "12"], env=env, capture_output=True,
                          timeout=60)
    assert proc.returncode == -signal.SIGKILL and proc.stdout == b"saved\n", proc.stderr
    wal = Path(str(path) + "-wal").read_bytes()
    assert len(wal) > WAL_HEADER + 10 * FRAME, "the commits were checkpointed: nothing left to cut"
    frames = (len(wal) - WAL_HEADER) // FRAME
    expected = [f"message {i}" for i in range(12)]
    cuts = sorted({WAL_HEADER + k * FRAME + d for k in range(frames + 1) for d in (-1, 0, 1, 24, 2000)}
                  | set(range(0, len(wal), 997)) | {len(wal)})
    seen_lengths = set()
    for cut in cuts:
        if not 0 <= cut <= len(wal):
            continue
        d = tmp_path / f"cut{cut}"
        d.mkdir()
        shutil.copy(path, d / path.name)
        (d / (path.name + "-wal")).write_bytes(wal[:cut])
        with pk.NotebookStore(d / path.name) as s:
            assert s.check() == ["ok"], f"WAL cut at {cut}"
            got = s.load("c")
            n = len(got)
            # whole commits only: a question alone, or a question with its whole step
            assert n % 3 in (0, 1), f"WAL cut at {cut}: {n} rows end inside a step"
            assert [str(m.content).split(":")[0] for m in got[::3]] == expected[: len(got[::3])]
            marks = s.call_marks("c")
            assert set(marks) == {f"call{i}" for i in range(n // 3)}, f"WAL cut at {cut}: marks without their rows"
            seen_lengths.add(n)
        shutil.rmtree(d)
    assert len(seen_lengths) > 5, f"the cuts kept only {sorted(seen_lengths)} messages"
