"""Small shared pieces for the resilience tests (real adapters against the local server)."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable

import providerkit_nb as pk

HISTORY = [{"role": "user", "content": "hi"}]


def chat(server, *behaviours, **kw):
    """A real OpenAI Chat adapter pointed at a fresh scenario on the test server, which stands
    in for OpenAI's own (id="openai": a base_url elsewhere is otherwise a compatible server)."""
    kw.setdefault("api_key", "sk-test-0000")
    kw.setdefault("id", "openai")
    return pk.openai(model="gpt-test", base_url=server.url(*behaviours), **kw)


def anthropic(server, *behaviours, **kw):
    kw.setdefault("api_key", "sk-ant-test-0000")
    return pk.anthropic(model="claude-test", base_url=server.url(*behaviours, suffix=""), **kw)


def wait_until(pred: Callable[[], bool], timeout: float = 5.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.001)
    return pred()


def sigint_when(pred: Callable[[], bool], settle: float = 0.05) -> threading.Thread:
    """Send a real SIGINT to this process (as Jupyter's interrupt does) once ``pred`` holds;
    it lands in the main thread."""

    def run() -> None:
        if wait_until(pred, 10):
            time.sleep(settle)
            os.kill(os.getpid(), signal.SIGINT)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def sockets_to(port: int) -> list[str]:
    """This process's open sockets whose other end is ``port`` on this machine (read from
    /proc, so fds that other tests' threads open or close meanwhile do not count)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if len(cols) > 9 and int(cols[2].rsplit(":", 1)[1], 16) == port:
                inodes.add(cols[9])
    ours: list[str] = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:[") and target[8:-1] in inodes:
            ours.append(fd)
    return ours


def responses(server, *behaviours, **kw):
    kw.setdefault("api_key", "sk-test-0000")
    return pk.responses(model="gpt-test", base_url=server.url(*behaviours), **kw)


def gemini(server, *behaviours, **kw):
    kw.setdefault("api_key", "gm-test-0000")
    return pk.gemini(model="gemini-test", base_url=server.url(*behaviours, suffix=""), **kw)


WIRES = {"chat": chat, "anthropic": anthropic, "responses": responses, "gemini": gemini}
# every wire over httpx; the two most used also over requests (abort must wake both)
WIRE_TRANSPORTS = [(w, "httpx") for w in WIRES] + [("chat", "requests"), ("anthropic", "requests")]
