"""JSONL: canonical lines, torn tails (real ones, from a killed writer, and hand-made), appends
that do not glue onto a fragment, and errors that name the line."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

import providerkit_nb as pk
from providerkit_nb.store import read_jsonl, write_jsonl
from providerkit_nb.store.jsonl import JsonlData

from .convo import first

REPO = Path(__file__).resolve().parents[2]


def canon(m) -> str:
    return json.dumps(m.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def test_write_read_roundtrip_lines_are_canonical(tmp_path):
    msgs = first(5, 30)
    p = tmp_path / "chat.jsonl"
    assert write_jsonl(p, msgs, conversation_id="chat") == 30
    lines = p.read_text(encoding="utf-8").splitlines()
    for line, m in zip(lines, msgs, strict=True):
        rec = json.loads(line)
        assert json.dumps(rec, sort_keys=True, separators=(",", ":"), ensure_ascii=False) == line
        assert canon(m) in line  # the message bytes are embedded verbatim
    data = read_jsonl(p)
    assert isinstance(data, JsonlData) and not data.torn_tail
    assert data.messages() == msgs
    assert [r.seq for r in data.conversations["chat"]] == list(range(1, 31))


def test_mapping_and_meta(tmp_path):
    p = tmp_path / "two.jsonl"
    write_jsonl(p, {"a": [pk.UserMessage("A")], "b": [pk.UserMessage("B")]},
                   meta={"a": pk.store.base.ConversationMeta(title="Alpha")})
    data = read_jsonl(p)
    assert data.messages("a") == [pk.UserMessage("A")] and data.messages("b") == [pk.UserMessage("B")]
    assert data.meta["a"].title == "Alpha"
    with pytest.raises(ValueError, match="pass conversation_id"):
        data.messages()


def test_bare_message_lines_import(tmp_path):
    p = tmp_path / "pasted.jsonl"
    p.write_text('{"role":"user","content":"hi"}\n{"role":"assistant","content":"hello"}\n')
    data = read_jsonl(p)
    assert list(data.conversations) == ["pasted"]
    assert data.messages() == [pk.UserMessage("hi"), pk.AssistantMessage("hello")]
    s = pk.MemoryStore()
    assert s.import_jsonl(p).added == {"pasted": 2}
    assert s.import_jsonl(p).total_added == 0


def test_torn_last_line_is_ignored_and_said(tmp_path):
    p = tmp_path / "t.jsonl"
    write_jsonl(p, first(2, 5))
    full = p.read_bytes()
    last_start = full.rstrip(b"\n").rfind(b"\n") + 1
    p.write_bytes(full[: last_start + 40])  # cut inside the fifth line
    with pytest.warns(UserWarning, match=r"torn last line 5 .*crash mid-write"):
        data = read_jsonl(p)
    assert data.torn_tail and data.messages() == first(2, 4)
    s = pk.MemoryStore()
    with pytest.warns(UserWarning, match="torn"):
        r = s.import_jsonl(p)
    assert r.torn_tail and r.added == {"default": 4}


def test_bad_line_in_the_middle_is_an_error_naming_it(tmp_path):
    p = tmp_path / "bad.jsonl"
    write_jsonl(p, first(2, 3))
    lines = p.read_text().splitlines(keepends=True)
    lines.insert(1, '{"conversation_id": "x", "message": {"role": "us\n')
    p.write_text("".join(lines))
    with pytest.raises(ValueError, match="line 2 is not valid JSON"):
        read_jsonl(p)


def test_edited_message_with_stale_hash_is_refused(tmp_path):
    p = tmp_path / "e.jsonl"
    write_jsonl(p, [pk.UserMessage("original")])
    p.write_text(p.read_text().replace("original", "edited"))
    with pytest.raises(ValueError, match="does not match its hash"):
        read_jsonl(p)


def test_unknown_fields_are_refused_not_dropped(tmp_path):
    p = tmp_path / "u.jsonl"
    p.write_text('{"conversation_id":"c","message":{"role":"user","content":"x"},"extra":1}\n')
    with pytest.raises(ValueError, match="line 1"):
        read_jsonl(p)


def test_append_cuts_a_torn_tail_first(tmp_path):
    p = tmp_path / "a.jsonl"
    write_jsonl(p, first(4, 3), conversation_id="a")
    with open(p, "ab") as f:
        f.write(b'{"conversation_id":"a","message":{"role":"user","con')  # a crash mid-write
    with pytest.warns(UserWarning, match="truncating"):
        write_jsonl(p, [pk.UserMessage("next")], conversation_id="a", append=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no torn tail any more
        data = read_jsonl(p)
    assert data.messages() == [*first(4, 3), pk.UserMessage("next")]


def test_stream_targets(tmp_path):
    buf = io.StringIO()
    write_jsonl(buf, [pk.UserMessage("x")])
    buf.seek(0)
    assert read_jsonl(buf).messages("default") == [pk.UserMessage("x")]


_WRITER = """
import json, os, sys
sys.path.insert(0, {here!r})
from convo import conversation
out = open({path!r}, "a", encoding="utf-8")
# two writes per record with an fsync between, so a kill often lands mid-record (the torn
# tail a real crash leaves)
for i, m in enumerate(conversation(9)):
    rec = {{"conversation_id": "k", "seq": i + 1, "message": m.to_dict()}}
    line = json.dumps(rec, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\\n"
    half = len(line) // 2
    out.write(line[:half]); out.flush(); os.fsync(out.fileno())
    out.write(line[half:]); out.flush()
    if i == 0:
        print("ready", flush=True)
"""


def test_killed_writer_leaves_a_readable_file(tmp_path):
    torn = 0
    for trial in range(8):
        p = tmp_path / f"k{trial}.jsonl"
        code = _WRITER.format(here=str(Path(__file__).parent), path=str(p))
        env = dict(os.environ, PYTHONPATH=str(REPO))
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, env=env)
        assert proc.stdout.readline() == b"ready\n"
        time.sleep(0.005 * trial)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            data = read_jsonl(p)
        torn += data.torn_tail
        assert data.torn_tail == bool(w)
        got = data.messages()
        assert len(got) >= 1 and got == first(9, len(got))
    assert torn >= 1, "no trial landed between the two writes; the torn-tail path went untested"
