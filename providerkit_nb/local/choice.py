"""The teaching notebooks' model: the real local one when the ``local`` extra is installed,
the project's recordings otherwise, said on screen."""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Callable
from pathlib import Path

from ..providers.base import Provider
from .server import MODEL_NAME, LocalModelError, LocalServer, missing, start

__all__ = ["offline_provider", "shared_server", "MODE_VARIABLE"]

_shared: LocalServer | None = None
_shared_lock = threading.Lock()

MODE_VARIABLE = "PK_NOTEBOOK_PROVIDER"  # "local" or "recordings": forces the choice (make notebooks)


def shared_server() -> LocalServer:
    """One server for this process, started on first use (notebooks call this many times)."""
    global _shared
    with _shared_lock:
        if _shared is None or not _shared.running:
            _shared = start()
        return _shared


def offline_provider(
    recordings: str | os.PathLike[str], *, recorded_model: str = "gpt-4o-mini", say: Callable[[str], object] | None = print
) -> Provider:
    """A provider that needs no API key, and a line on screen that says which one it is.

    With the ``local`` extra installed: the real SmolLM2-135M model on a local server (started
    once per process). Without it: ``pk.openai(model=recorded_model)`` answered from the vcrpy
    cassette ``recordings`` (requests matched by their conversation). The environment variable
    PK_NOTEBOOK_PROVIDER=local or =recordings forces one (``make notebooks`` saves the
    notebooks' outputs from the recordings, so they do not change from run to run)."""
    forced = os.environ.get(MODE_VARIABLE, "").strip().lower()
    if forced not in ("", "local", "recordings"):
        raise ValueError(f"{MODE_VARIABLE} must be 'local' or 'recordings', got {forced!r}")
    reason = missing()
    if forced == "local" and reason:
        raise LocalModelError(f"{MODE_VARIABLE}=local, but {reason}")
    if forced != "recordings" and not reason:
        server = shared_server()
        if say is not None:
            say(f"Model: the real {MODEL_NAME} on this machine (llama-cpp-python's server at "
                f"{server.base_url}, started for this kernel and stopped with it). No API key needed.")
        return server.provider()
    from ..providers.factory import openai
    from ..testing import offline

    cassette = Path(recordings)
    if not offline.active():  # (active: a recorder already answers, as `make notebooks-cassette` runs)
        if not cassette.is_file():
            raise LocalModelError(f"no recordings at {cassette.resolve()}, and {reason or 'the local model was not chosen'}")
        offline.replay(cassette)
    if say is not None:
        why = f"{MODE_VARIABLE}=recordings, as `make notebooks` sets to save these outputs" if forced else reason
        say(f"Model: the answers saved in {cassette.name}, replayed ({why}). No API key needed; "
            f"a request they do not hold fails.")
    return openai(model=recorded_model, api_key=offline.OFFLINE_KEY)


def _kill_shared() -> None:  # pragma: no cover - interpreter exit
    if _shared is not None:
        _shared.close()


atexit.register(_kill_shared)
