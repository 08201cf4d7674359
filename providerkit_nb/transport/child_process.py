"""A child process that dies with this one: a kill -9, a kernel restart or a crash included.

A server this library starts (an MCP stdio server, a local model server) must not outlive the
process that uses it. Closing its stdin is not enough: a server finishes the request it is
running first (a blocking tool runs to its end: the side effect lands after the crash), and
atexit handlers do not run on SIGKILL. So the child is started through a small launcher:

    argv = dies_with_this_process(["python", "server.py"])
    subprocess.Popen(argv, ...)          # or any API that takes a command line

The launcher (this file, run by path with ``python -I -S``: nothing of the library is imported)
puts itself in a process group of its own, forks a watcher, and execs the command: the server
keeps the launcher's pid, stdio and exit status, so signals and ``wait()`` reach it directly.
The watcher holds no pipe of the server's; it waits for either this process or the server to
end. When this process ends first, it sends SIGKILL to the server's whole process group (what
the server started itself goes too, unless it made a group of its own); when the server ends
first, it just exits. Waiting is a pidfd on Linux (no polling), a 0.1 s poll elsewhere on POSIX.
A parent already gone before the watcher starts is noticed too (the launcher checks that its
parent is still the caller once it holds the pidfd).

The parent is this *process* (not the thread that started the child, unlike
``PR_SET_PDEATHSIG``), so any thread may start it. The group of its own also means a Ctrl-C
in a terminal (sent to the foreground group) does not reach the server: stopping it is the
caller's job. On Windows the command is returned unchanged (a Job Object does this there).
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
from collections.abc import Mapping, Sequence

__all__ = ["dies_with_this_process", "LAUNCHER"]

LAUNCHER = os.path.abspath(__file__)
_POLL = 0.1  # seconds between checks where no pidfd is available


def dies_with_this_process(argv: Sequence[str], env: Mapping[str, str] | None = None) -> list[str]:
    """The command line that runs ``argv`` so that it dies when this process does.

    ``env`` is the environment the child gets (its PATH finds the program). A program that is
    not there raises ``FileNotFoundError`` (one that cannot be run: ``PermissionError``) here,
    as ``subprocess.Popen`` would, since through the launcher the start itself always works."""
    argv = [os.fspath(a) for a in argv]
    if not argv:
        raise ValueError("the command line is empty")
    if sys.platform == "win32":  # pragma: no cover - a Job Object ties children there
        return argv
    path = (env or {}).get("PATH", os.environ.get("PATH", os.defpath))
    program = argv[0]
    found = shutil.which(program, path=path)
    if found is None:
        if os.sep in program and os.path.exists(program):
            raise PermissionError(13, "Permission denied (not an executable file)", program)
        raise FileNotFoundError(2, "No such file or directory", program)
    return [sys.executable, "-I", "-S", LAUNCHER, str(os.getpid()), "--", *argv]


# --------------------------------------------------------------------------- the launcher
# Everything below runs in the launcher process: the standard library only.


def _launch(args: list[str]) -> None:
    """``LAUNCHER PARENT_PID -- COMMAND...``: watch PARENT_PID, then become COMMAND."""
    if len(args) < 3 or args[1] != "--":
        sys.stderr.write("usage: child_process.py PARENT_PID -- COMMAND [ARGS...]\n")
        os._exit(2)
    parent, command = int(args[0]), args[2:]
    try:
        os.setpgid(0, 0)  # a group of our own (a session leader already leads one: EPERM)
    except OSError:
        pass
    me = os.getpid()
    fds = _pidfds(parent, me)
    if os.getppid() != parent:  # the caller is gone already (checked after opening its pidfd)
        os._exit(1)
    if os.fork() == 0:
        _watch(parent, me, fds)
    try:
        os.execvp(command[0], command)  # the pidfds are close-on-exec
    except OSError as exc:
        sys.stderr.write(f"cannot run {command[0]!r}: {exc.strerror or exc}\n")
        os._exit(127)


def _pidfds(parent: int, server: int) -> tuple[int, int] | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return opener(parent), opener(server)
    except OSError:  # an old kernel (before 5.3), or not allowed: poll instead
        return None


def _watch(parent: int, server: int, fds: tuple[int, int] | None) -> None:
    """The watcher: no stdio of the server's kept open; kill the group if ``parent`` ends first."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent_gone = False
    try:
        if fds is not None:
            import select

            ready, _, _ = select.select(list(fds), [], [])
            parent_gone = fds[0] in ready
        else:
            import time

            while True:
                time.sleep(_POLL)
                if os.getppid() != server:  # the server ended (this watcher was handed on)
                    break
                try:
                    os.kill(parent, 0)
                except ProcessLookupError:
                    parent_gone = True
                    break
                except PermissionError:
                    pass
        if parent_gone:
            os.killpg(os.getpgrp(), signal.SIGKILL)  # the server, what it started, and this watcher
    finally:
        os._exit(0)


if __name__ == "__main__":
    _launch(sys.argv[1:])
