"""The loop of a fork server: one interpreter that has imported everything once, and a forked
child process per run (a real process a test can kill with SIGKILL). Requests on stdin, one JSON
object per line, each answered with one JSON line on stdout:

- ``{"op": "run", ...}`` -> ``{"pid"}``: forks; the child calls ``child(request)`` and exits
  with the status it returns (2 if it raises);
- ``{"op": "wait", "pid"}`` -> ``{"status"}``: reaps that child; -9 when SIGKILL ended it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any


def serve(child: Callable[[dict[str, Any]], int]) -> None:
    for line in sys.stdin:
        req = json.loads(line)
        if req["op"] == "run":
            pid = os.fork()
            if pid == 0:
                code = 2
                try:
                    code = child(req)
                finally:
                    os._exit(code)
            reply: dict[str, Any] = {"pid": pid}
        elif req["op"] == "wait":
            _, status = os.waitpid(int(req["pid"]), 0)
            reply = {"status": os.waitstatus_to_exitcode(status)}
        else:
            reply = {"error": f"unknown op {req['op']!r}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
