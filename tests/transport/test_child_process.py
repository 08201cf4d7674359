"""A child started through ``dies_with_this_process``: real processes, killed with SIGKILL.

The command keeps its own pid, stdio and exit status; when the process that started it dies
(SIGKILL: no atexit, no cleanup), it and what it started itself are killed at once; when it
ends on its own, nothing of the launcher stays behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from providerkit_nb.transport.child_process import LAUNCHER, dies_with_this_process
from tests.processes import alive, gone_within

pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes"),
    pytest.mark.timeout(60),
]
REPO = Path(__file__).resolve().parents[2]


def wait_for(path: Path, timeout: float = 20.0) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.exists() and path.read_text().endswith("\n"):
            return path.read_text()
        time.sleep(0.02)
    raise AssertionError(f"{path.name} did not appear within {timeout} s")


# The "server": starts a grandchild of its own, says both pids, and sleeps. A side effect is
# written after the sleep, as a tool's would be.
SERVER = """
import os, subprocess, sys, time
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
open(sys.argv[1], "w").write(f"{os.getpid()} {grandchild.pid}\\n")
time.sleep(30)
open(sys.argv[2], "w").write("done")
"""

# The "notebook": starts the server through the launcher, then waits to be killed.
STARTER = """
import subprocess, sys
from providerkit_nb.transport.child_process import dies_with_this_process
argv = dies_with_this_process([sys.executable, "-c", sys.argv[1], sys.argv[2], sys.argv[3]])
subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
open(sys.argv[4], "w").write("started\\n")
sys.stdin.read()
"""


@pytest.mark.parametrize("own_session", [False, True])
def test_sigkill_of_the_starter_kills_the_child_and_what_it_started(tmp_path, own_session):
    pids, effect, started = tmp_path / "pids", tmp_path / "effect", tmp_path / "started"
    starter = subprocess.Popen(
        [sys.executable, "-c", STARTER, SERVER, str(pids), str(effect), str(started)],
        stdin=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(REPO)}, start_new_session=own_session,
    )
    try:
        server, grandchild = map(int, wait_for(pids).split())
        wait_for(started)
        assert alive(server) and alive(grandchild)
        if own_session:  # the whole group of the starter, as a kernel restart or `kill -9 -PGID` does
            os.killpg(starter.pid, signal.SIGKILL)
        else:
            starter.kill()
        assert starter.wait(10) == -signal.SIGKILL
        assert gone_within([server, grandchild], 5.0), "the child outlived the process that started it"
        assert not effect.exists()
    finally:
        starter.kill()


def test_the_command_keeps_its_pid_stdio_and_exit_status():
    code = "import os, sys; data = sys.stdin.read(); print(os.getpid(), data); sys.exit(3)"
    proc = subprocess.Popen(dies_with_this_process([sys.executable, "-c", code]),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    out, _ = proc.communicate("hello", timeout=20)  # EOF on stdout comes when the command ends
    assert out.split() == [str(proc.pid), "hello"]
    assert proc.returncode == 3


def test_nothing_stays_behind_when_the_command_ends_on_its_own(tmp_path):
    proc = subprocess.Popen(dies_with_this_process([sys.executable, "-c", "import time; time.sleep(0.5)"]))
    assert proc.wait(20) == 0
    group = proc.pid  # the launcher made a process group of its own, led by the command's pid
    end = time.monotonic() + 5.0
    while time.monotonic() < end:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            break
        time.sleep(0.02)
    else:
        raise AssertionError("a process of the command's group (the watcher) is still running")


def test_a_signal_reaches_the_command_itself():
    proc = subprocess.Popen(dies_with_this_process([sys.executable, "-c", "import time; time.sleep(30)"]))
    time.sleep(0.3)
    proc.terminate()
    assert proc.wait(10) == -signal.SIGTERM


def test_a_program_that_is_not_there_raises_as_popen_would(tmp_path):
    with pytest.raises(FileNotFoundError) as err:
        dies_with_this_process(["no-such-program-anywhere", "--flag"])
    assert err.value.filename == "no-such-program-anywhere"
    plain = tmp_path / "not-executable"
    plain.write_text("#!/bin/sh\n")
    with pytest.raises(PermissionError):
        dies_with_this_process([str(plain)])
    with pytest.raises(FileNotFoundError):  # the child's own PATH is the one searched
        dies_with_this_process(["python3"], env={"PATH": str(tmp_path)})
    with pytest.raises(ValueError, match="empty"):
        dies_with_this_process([])


def test_a_launcher_whose_parent_is_already_gone_runs_nothing(tmp_path):
    marker = tmp_path / "ran"
    # pid 1 is not this test's pid: to the launcher, the process that asked for it is gone
    done = subprocess.run([sys.executable, "-I", "-S", LAUNCHER, "1", "--", sys.executable, "-c",
                           f"open({str(marker)!r}, 'w')"], timeout=20, capture_output=True)
    assert done.returncode == 1
    assert not marker.exists()


def test_a_command_that_cannot_be_run_says_so_on_stderr(tmp_path):
    script = tmp_path / "no-interpreter"
    script.write_text("#!/no/such/interpreter\n")
    script.chmod(0o755)
    done = subprocess.run(dies_with_this_process([str(script)]), timeout=20, capture_output=True, text=True)
    assert done.returncode == 127
    assert f"cannot run {str(script)!r}" in done.stderr
