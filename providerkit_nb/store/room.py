"""Why a store could not write: no room on the disk, or a file size limit.

SQLite says only "database or disk is full" or "disk I/O error"; the OS says ENOSPC, EDQUOT or
EFBIG. Either way the person needs to know which limit it was and that nothing earlier was lost,
so both file stores word it here, from a look at the disk and the process's own limit.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

__all__ = ["NO_ROOM_ERRNOS", "no_room_reason", "no_room_text"]

NO_ROOM_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
_LOW = 1 << 20  # less than this free counts as a full disk


def no_room_reason(folder: Path) -> str | None:
    """Which limit a failed write most likely met (None when neither looks reached)."""
    try:
        st = os.statvfs(folder)
        free = st.f_bavail * st.f_frsize
        if free < _LOW:
            return f"the disk holding it has {free:,} bytes free"
    except OSError:
        pass
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
        if soft != resource.RLIM_INFINITY:
            return f"this process may not write files past {soft:,} bytes (RLIMIT_FSIZE, ulimit -f)"
    except (ImportError, OSError, ValueError):
        pass
    return None


def no_room_text(doing: str, reason: str) -> str:
    """The sentence after the store's name: what happened and what to do."""
    return (
        f"no room to {doing}: {reason}. Nothing of this write was kept and everything saved "
        "before is intact; free some space (or move the store to another disk, or raise the "
        "limit) and save again."
    )
