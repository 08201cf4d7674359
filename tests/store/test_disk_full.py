"""Disk full at every write: a clear error naming the store and what to do, nothing earlier lost,
nothing of the failed write kept, and the store takes the write once there is room.

Two ways to fill the disk, both real: a file size limit (RLIMIT_FSIZE, set in a child process
right before write k, one byte above what the file that write grows holds: the write fails
with EFBIG at exactly that write, on any machine) and a small tmpfs filled to its last page
(ENOSPC, as a full disk gives it; mounting needs root, so it runs where the tests run as root).
The writes are the ones a conversation makes (disk_child.OPS); what must be stored after k of
them comes from the same writes applied to a MemoryStore.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from providerkit_nb.store.base import StoreError
from providerkit_nb.store.memory import MemoryStore

from .disk_child import CID, OPS, apply, open_store

REPO = Path(__file__).resolve().parents[2]
KINDS = ("sqlite-normal", "sqlite-full", "jsonl")


def _state(store: Any) -> tuple[list[str], dict[str, str], int, int]:
    return ([r.json for r in store.records(CID)], {c: m.state for c, m in store.call_marks(CID).items()},
            len(store.turn_usage(CID)), len(store.lost_turns(CID)))


def _expected() -> list[tuple[list[str], dict[str, str], int, int]]:
    """The state after each prefix of OPS, from a MemoryStore."""
    m = MemoryStore()
    out = [_state(m)]
    for op in OPS:
        apply(m, op)
        out.append(_state(m))
    return out


def _where(kind: str, folder: Path) -> str:
    return str(folder / ("s.providerkit.sqlite" if kind.startswith("sqlite") else "s-jsonl"))


def _files(folder: Path) -> dict[str, int]:
    return {str(p): p.stat().st_size for p in folder.rglob("*") if p.is_file()}


def _blocks(folder: Path) -> int:
    return sum(p.stat().st_blocks for p in folder.rglob("*") if p.is_file())


def _check_error(text: str, kind: str, where: str) -> None:
    assert where in text, f"the error does not name the store: {text}"
    assert "no room" in text and "free some space" in text, text


@pytest.mark.parametrize("kind", KINDS)
def test_a_file_size_limit_at_every_write(kind: str, tmp_path: Path) -> None:
    expected = _expected()
    # which file each write grows, from a run with room
    dry = tmp_path / "dry"
    dry.mkdir()
    grows: list[str] = []
    store = open_store(kind, _where(kind, dry))
    for op in OPS:
        before = _files(dry)
        apply(store, op)
        after = _files(dry)
        grown = max(after, key=lambda f: after[f] - before.get(f, 0))
        grows.append(grown.replace(str(dry), "{dir}") if after[grown] > before.get(grown, 0) else "")
    store.close()
    failed = 0
    for k, grown in enumerate(grows):
        if not grown:
            continue
        folder = tmp_path / f"k{k}"
        folder.mkdir()
        where = _where(kind, folder)
        env = dict(os.environ, PYTHONPATH=str(REPO))
        proc = subprocess.run(
            [sys.executable, "-m", "tests.store.disk_child", kind, where, str(k), grown.format(dir=folder)],
            capture_output=True, text=True, env=env, cwd=REPO, timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        assert lines[:k] == [f"ack {i}" for i in range(k)], lines
        assert len(lines) == k + 1
        if lines[k] == f"ack {k}":  # the write found room below the limit (a page already there)
            continue
        failed += 1
        assert lines[k].startswith("error StoreError "), lines[k]
        _check_error(lines[k], kind, where)
        with open_store(kind, where) as s:  # with room again: what came before, and nothing of write k
            assert _state(s) == expected[k], f"after a failed write {k} ({OPS[k][0]})"
            apply(s, OPS[k])
            assert _state(s) == expected[k + 1]
        shutil.rmtree(folder)
    assert failed >= len([g for g in grows if g]) * 3 // 4, f"only {failed} writes failed"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs of its own (unmounted after the test)."""
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()}); the file size limit test covers "
                    "the same writes")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def _fill(folder: Path) -> Path:
    """Fill the file system to its last byte with a file of zeros."""
    filler = folder / f"filler-{uuid.uuid4().hex[:6]}"
    block = b"\0" * 4096
    with open(filler, "wb", buffering=0) as f:
        while True:
            try:
                f.write(block)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
                break
        try:
            while f.write(b"\0"):
                pass
        except OSError:
            pass
    return filler


@pytest.mark.parametrize("kind", KINDS)
def test_a_full_tmpfs_at_every_write(kind: str, small_disk: Path) -> None:
    expected = _expected()
    failed = fitted = 0
    for k in range(len(OPS)):
        folder = small_disk / f"k{k}"
        folder.mkdir()
        where = _where(kind, folder)
        store = open_store(kind, where)
        for op in OPS[:k]:
            apply(store, op)
        filler = _fill(small_disk)
        blocks = _blocks(folder)
        try:
            apply(store, OPS[k])
            got_room = True
            # it fitted in pages its files already had (a full disk has no other)
            assert _blocks(folder) == blocks, f"write {k} took room from a full disk"
            fitted += 1
        except StoreError as exc:
            got_room = False
            failed += 1
            _check_error(str(exc), kind, where)
            assert _state(store) == expected[k], f"after a failed write {k} ({OPS[k][0]})"
        filler.unlink()
        with open_store(kind, where) as fresh:
            assert _state(fresh) == expected[k + 1 if got_room else k]
        if not got_room:  # the same store object, with room again, takes the write
            apply(store, OPS[k])
        assert _state(store) == expected[k + 1]
        store.close()
        shutil.rmtree(folder)
    assert failed + fitted == len(OPS) and failed >= 5, f"{failed} writes found the disk full, {fitted} fitted"
