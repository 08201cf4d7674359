"""The per-conversation guard: one sender or resumer of a conversation at a time.

Two workers must not run the same conversation at once (an engine that re-runs a task, a user
who starts the same resume twice). A store refuses the second one with ``ConversationBusy``, or
waits for the first with a timeout when asked to. The lock is tied to the holder's process, so it
goes the moment that process dies; no lease to expire, nothing to clean up:

- within one store object, a set of the conversations its threads hold;
- PostgreSQL: a session advisory lock on the store's own connection (``PostgresStore``);
- a SQLite file: an open-file-description lock on one byte of ``<store file>-lock`` beside it
  (Linux), or an ``flock`` on one small file per conversation in ``<store file>-lock.d``
  elsewhere. Both are released by the kernel when the process dies.

This is not a job runner: nothing here decides who runs what, it only refuses to run one
conversation twice at the same moment.
"""

from __future__ import annotations

import errno
import hashlib
import os
import struct
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["conversation_key", "hold", "FileLocks", "FileGuard"]


def conversation_key(conversation_id: str, scope: str = "") -> int:
    """A signed 64-bit number for the conversation (a PostgreSQL bigint advisory lock key)."""
    digest = hashlib.sha256(f"providerkit-conversation\0{scope}\0{conversation_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@contextmanager
def hold(
    conversation_id: str,
    claim: Callable[[], bool],
    unclaim: Callable[[], None],
    busy: Callable[[float], Exception],
    wait: float = 0.0,
) -> Iterator[None]:
    """Hold the conversation for the ``with`` body: ``claim()`` until it succeeds or ``wait``
    seconds pass (then raise ``busy(wait)``), ``unclaim()`` on the way out."""
    deadline = time.monotonic() + max(0.0, wait)
    delay = 0.01
    while not claim():
        left = deadline - time.monotonic()
        if left <= 0:
            raise busy(wait)
        time.sleep(min(delay, left))
        delay = min(delay * 2, 0.2)
    try:
        yield
    finally:
        unclaim()


_FLOCK = struct.Struct("hhqqi4x")  # struct flock on Linux (x86-64, arm64): type, whence, start, len, pid


class FileLocks:
    """Exclusive locks per key on files beside a store file; gone when the process dies."""

    def __init__(self, store_path: Path) -> None:
        self.store_path = store_path
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._fds: dict[str, int] = {}
        import fcntl

        self._fcntl = fcntl
        self._ofd = hasattr(fcntl, "F_OFD_SETLK")

    @property
    def path(self) -> Path:
        p = self.store_path
        return p.with_name(p.name + ("-lock" if self._ofd else "-lock.d"))  # beside its -wal and -shm

    def try_lock(self, key: str) -> bool:
        """True when this object now holds ``key``; False when another holder has it."""
        fcntl = self._fcntl
        with self._lock:
            if self._ofd:
                fd = self._open_one()
                arg = _FLOCK.pack(fcntl.F_WRLCK, os.SEEK_SET, _offset(key), 1, 0)
                try:
                    fcntl.fcntl(fd, fcntl.F_OFD_SETLK, arg)
                except OSError as exc:
                    if exc.errno in (errno.EACCES, errno.EAGAIN):
                        return False
                    raise
                return True
            fd = self._open_key(key)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno in (errno.EACCES, errno.EAGAIN, errno.EWOULDBLOCK):
                    return False
                raise
            self._fds[key] = fd
            return True

    def unlock(self, key: str) -> None:
        fcntl = self._fcntl
        with self._lock:
            if self._ofd:
                if self._fd is not None:
                    arg = _FLOCK.pack(fcntl.F_UNLCK, os.SEEK_SET, _offset(key), 1, 0)
                    fcntl.fcntl(self._fd, fcntl.F_OFD_SETLK, arg)
                return
            fd = self._fds.pop(key, None)
            if fd is not None:
                os.close(fd)  # closing the descriptor drops its flock

    def close(self) -> None:
        with self._lock:
            for fd in [self._fd, *self._fds.values()]:
                if fd is not None:
                    os.close(fd)
            self._fd = None
            self._fds.clear()

    def _open_one(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        return self._fd

    def _open_key(self, key: str) -> int:
        self.path.mkdir(exist_ok=True)
        name = hashlib.sha256(key.encode()).hexdigest()[:32] + ".lock"
        return os.open(self.path / name, os.O_RDWR | os.O_CREAT, 0o644)


class FileGuard:
    """The per-conversation guard of a store kept in files (``BaseStore._lock_conversation``
    and ``_unlock_conversation``): ``FileLocks`` beside ``_guard_base()``, made on first use."""

    _lock: threading.RLock
    _check_open: Callable[[], None]  # the store's own

    def _guard_base(self) -> Path:
        """The path the lock file's name is made from (it gets ``-lock`` appended)."""
        raise NotImplementedError

    def _guard_failed(self, conversation_id: str, where: Path, exc: OSError) -> Exception:
        """The store's own error for a lock file it could not make."""
        raise NotImplementedError

    def _lock_conversation(self, conversation_id: str) -> bool:
        self._check_open()
        with self._lock:
            locks = self.__dict__.get("_file_locks")
            if locks is None:
                locks = self.__dict__["_file_locks"] = FileLocks(self._guard_base())
        try:
            return bool(locks.try_lock(conversation_id))
        except OSError as exc:
            raise self._guard_failed(conversation_id, locks.path, exc) from exc

    def _unlock_conversation(self, conversation_id: str) -> None:
        locks = self.__dict__.get("_file_locks")
        if locks is not None:
            locks.unlock(conversation_id)

    def _close_guard(self) -> None:
        locks = self.__dict__.pop("_file_locks", None)
        if locks is not None:
            locks.close()


def _offset(key: str) -> int:
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") >> 2  # < 2**62
