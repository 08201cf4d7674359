"""Whether real processes are still there: a pid alive (a zombie child of ours counts as gone),
and waiting, bounded, for processes to be gone."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie child of ours counts as gone
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        return True  # not our child: it exists


def gone_within(pids: int | Iterable[int], timeout: float = 15.0) -> bool:
    """True once none of ``pids`` is alive; False if ``timeout`` seconds pass first."""
    wanted = [pids] if isinstance(pids, int) else list(pids)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not any(alive(p) for p in wanted):
            return True
        time.sleep(0.02)
    return False
