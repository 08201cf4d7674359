"""Real MCP servers for the tests: the SDK-built demo server (stdio child or streamable HTTP on
127.0.0.1) and a hand-written broken one. (It imports as ``tests.mcp``: ``import mcp`` is the SDK.)"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.processes import alive, gone_within  # noqa: F401  # the MCP tests import them from here

SERVERS = Path(__file__).resolve().parent / "servers"
DEMO = str(SERVERS / "demo_server.py")
BAD = str(SERVERS / "bad_server.py")

if os.environ.get("CI") == "true":
    import mcp  # noqa: F401  # under CI a missing extra fails instead of skipping
else:
    pytest.importorskip("mcp", reason="the mcp extra is not installed (make test installs it)")


def demo_command() -> list[str]:
    return [sys.executable, DEMO]


def wait_for(path: Path, timeout: float = 30.0) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.exists() and path.read_text():
            return path.read_text()
        time.sleep(0.02)
    raise AssertionError(f"{path.name} did not appear within {timeout} s")


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    d = tmp_path / "notes"
    d.mkdir()
    return d


@pytest.fixture
def http_server(notes: Path):
    """The demo server over streamable HTTP on a free port of 127.0.0.1 (a real process)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "DEMO_NOTES_DIR": str(notes)}
    proc = subprocess.Popen(
        [sys.executable, DEMO, "--http", str(port)], env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    end = time.monotonic() + 30
    while time.monotonic() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            time.sleep(0.05)
    else:
        proc.kill()
        raise AssertionError("the HTTP demo server did not start")
    yield f"http://127.0.0.1:{port}/mcp"
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
