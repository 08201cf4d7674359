"""Running one tool on the calling thread, with a timeout that stops it where it runs.

A tool used to run on a worker thread so that a timeout could abandon it; the Stop button then
only abandoned the wait, and the tool went on writing its file seconds later. Here the tool runs
on the thread that called it, exactly like a plain function call in a cell, so the Stop button's
KeyboardInterrupt lands inside the tool. The timeout is raised inside the tool as well, as
``ToolTimeout`` (a BaseException, so a tool's ``except Exception`` does not swallow it):

- on the main thread (a notebook cell, a script) by a SIGALRM timer, which also interrupts a
  tool waiting in ``time.sleep``, a lock or a socket, as Ctrl-C does;
- on any other thread (``resume_many`` workers), or when SIGALRM is already in use, by a timer
  that raises the exception asynchronously in the tool's thread; this lands at the tool's next
  Python instruction.

A tool blocked inside C code that neither mechanism reaches keeps running: ``notify`` is told so
once (what it is and what to do), and if the tool returns after all its result is marked late.
"""

from __future__ import annotations

import ctypes
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import ToolTimeout  # noqa: F401 (defined at the bottom, kept importable here)

__all__ = ["ToolTimeout", "Outcome", "run_here", "STILL_RUNNING_AFTER"]

STILL_RUNNING_AFTER = 2.0  # seconds past the timeout before ``notify`` hears the tool is stuck


@dataclass(slots=True, frozen=True)
class Outcome:
    value: Any
    late: bool  # the timeout fired, yet the tool returned: it was blocked where it could not be stopped


class _Deadline:
    """Raises ToolTimeout in one thread at a moment, unless disarmed first."""

    def __init__(self, limit: float, name: str, notify: Callable[[str], None] | None) -> None:
        self.limit = limit
        self.name = name
        self.notify = notify
        self.fired = False
        self._armed = True
        self._lock = threading.Lock()
        self._tid = threading.get_ident()
        self._started = time.monotonic()
        self._old_handler: Any = None
        self._use_alarm = (
            threading.current_thread() is threading.main_thread()
            and hasattr(signal, "setitimer")
            and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.SIG_IGN, None)
            and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        )
        self._timers: list[threading.Timer] = []

    def start(self) -> None:
        if self._use_alarm:
            self._old_handler = signal.signal(signal.SIGALRM, self._on_alarm)
            signal.setitimer(signal.ITIMER_REAL, self.limit)
        else:
            self._timer(self.limit, self._raise_async)
        if self.notify is not None:
            self._timer(self.limit + STILL_RUNNING_AFTER, self._say_stuck)

    def _timer(self, after: float, fn: Callable[[], None]) -> None:
        t = threading.Timer(after, fn)
        t.daemon = True
        t.name = f"tool-deadline:{self.name}"
        self._timers.append(t)
        t.start()

    def _on_alarm(self, signum: int, frame: Any) -> None:
        with self._lock:
            if not self._armed:
                return
            self.fired = True
        raise ToolTimeout(f"{self.name} did not finish within {self.limit:g} s")

    def _raise_async(self) -> None:
        with self._lock:
            if not self._armed:
                return
            self.fired = True
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._tid), ctypes.py_object(ToolTimeout))

    def _say_stuck(self) -> None:
        with self._lock:
            if not self._armed or self.notify is None:
                return
        ran = time.monotonic() - self._started
        self.notify(
            f"{self.name} is still running after {ran:.0f} s (its timeout is {self.limit:g} s): it is "
            "blocked where Python cannot stop it (inside C code). Wait for it (its result will be "
            "saved, marked late), or restart the kernel to end it (the call is then told to the "
            "model as interrupted)."
        )

    def disarm(self) -> None:
        with self._lock:
            self._armed = False
        for t in self._timers:
            t.cancel()
        if self._use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._old_handler if self._old_handler is not None else signal.SIG_DFL)
        elif self.fired:  # an exception raised into this thread may not have landed yet: withdraw it
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._tid), None)


def run_here(
    fn: Callable[[], Any], limit: float, name: str, notify: Callable[[str], None] | None = None
) -> Outcome:
    """Call ``fn()`` on this thread; ToolTimeout is raised inside it after ``limit`` seconds.

    KeyboardInterrupt (the Stop button) and anything ``fn`` raises propagate; so does
    ToolTimeout when it stopped the tool."""
    deadline = _Deadline(limit, name, notify)
    box: list[Any] = []
    deadline.start()
    try:
        box.append(fn())
    except ToolTimeout:
        if not box:
            raise
    finally:
        deadline.disarm()
    return Outcome(box[0], deadline.fired)  # it returned, though the timeout fired: late
