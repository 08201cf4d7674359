"""Answer provider requests from a cassette, for demos and notebooks run without a key.

``replay(path)`` makes every request this process sends (through httpx) be answered from a
vcrpy cassette, matched by method, host, path and the conversation the request carries (model,
messages, tool names). The session id is left out of the match, since every fresh store mints
its own. vcrpy is imported only when this is used (it comes with the ``notebook`` extra).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["replay", "stop", "active", "same_conversation", "OFFLINE_KEY"]

OFFLINE_KEY = "offline-replay"
_active: list[Any] = []


def _conversation(body: bytes | str | None) -> Any:
    try:
        b = json.loads(body or b"{}")
    except (TypeError, ValueError):
        return body
    tools = [t.get("function", {}).get("name") for t in b.get("tools", [])]
    return b.get("model"), b.get("messages"), tools


def same_conversation(r1: Any, r2: Any) -> None:
    """A vcrpy matcher: the same model, messages and tools (raises when they differ)."""
    assert _conversation(r1.body) == _conversation(r2.body), "a different conversation"


def _scrub(request: Any) -> Any:
    for h in ("authorization", "Authorization", "x-api-key", "x-goog-api-key"):
        if h in request.headers:
            request.headers[h] = "REDACTED"
    return request


def replay(path: str | os.PathLike[str], *, record: bool = False, env_key: str = "OPENAI_API_KEY") -> None:
    """Serve requests from the cassette at ``path`` for the rest of the process (or until
    ``stop()``). With ``record=True``, new requests are sent for real and added to it."""
    try:
        import vcr
    except ImportError as exc:  # pragma: no cover - the test extra brings it
        raise RuntimeError("offline replay needs vcrpy: pip install 'providerkit_nb[notebook]'") from exc
    if not os.environ.get(env_key):
        os.environ[env_key] = OFFLINE_KEY
    my_vcr = vcr.VCR(
        record_mode="new_episodes" if record else "none",
        match_on=["method", "host", "path", "conversation"],
        before_record_request=_scrub,
        decode_compressed_response=True,
    )
    my_vcr.register_matcher("conversation", same_conversation)
    cassette = my_vcr.use_cassette(str(Path(path)), allow_playback_repeats=True)
    cassette.__enter__()
    _active.append(cassette)


def active() -> bool:
    """Whether a cassette answers this process's requests now (replaying or recording)."""
    return bool(_active)


def stop() -> None:
    """Stop replaying; a recording cassette is written now."""
    while _active:
        _active.pop().__exit__(None, None, None)
