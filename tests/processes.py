"""Whether real processes are still there: a pid alive (a zombie counts as gone), and waiting,
bounded, for processes to be gone."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs. A zombie counts as gone: it runs no code, and one whose parent
    died waits for init to reap it, which can take seconds in a container."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie child of ours is reaped here
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        pass  # not our child
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc here: it exists
    return state not in ("Z", "X")


def gone_within(pids: int | Iterable[int], timeout: float = 15.0) -> bool:
    """True once none of ``pids`` is alive; False if ``timeout`` seconds pass first."""
    wanted = [pids] if isinstance(pids, int) else list(pids)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not any(alive(p) for p in wanted):
            return True
        time.sleep(0.02)
    return False
