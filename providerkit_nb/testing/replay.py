"""Replaying recorded provider traffic (vcrpy cassettes) through our own adapters.

For each recorded interaction: import the recorded request into canonical messages, let the
wire that speaks that URL build its own request from them, and answer it from the recording
(vcrpy in playback mode, matching method, host and path). What comes back is our turn, or our
classified error, for exactly what the provider really sent. Reads plain vcrpy YAML, the
``parsed_body`` variant some projects write, and gzip bodies.
"""

from __future__ import annotations

import gzip
import importlib
import json
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..core.errors import (
    CassetteError,  # noqa: F401 (defined at the bottom, kept importable here)
    )
from ..core.json_input import read_json

__all__ = [
    "CassetteError",
    "Interaction",
    "ReplayResult",
    "WIRE_MODULES",
    "read_cassette",
    "load_interactions",
    "guess_wire",
    "ReplayWire",
    "wire_module",
    "replay_cassette",
]

# Tried in this order; each is a module of providerkit_nb.wire (matches, import_request) and one of
# providerkit_nb.providers (replay_provider).
WIRE_MODULES = ("openai_chat", "openai_responses", "anthropic", "gemini")


def _yaml_load(text: str) -> Any:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader


def _dump_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _normalise(data: Any, path: str) -> dict[str, Any]:
    """vcrpy's own shape, with ``parsed_body`` turned back into JSON text."""
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise CassetteError(f"{path}: not a vcrpy cassette (no 'interactions' list at the top level)")
    for i, it in enumerate(data["interactions"]):
        if not isinstance(it, dict) or not isinstance(it.get("request"), dict) or not isinstance(it.get("response"), dict):
            raise CassetteError(f"{path}: interaction {i} has no request/response mapping")
        req, resp = it["request"], it["response"]
        if "parsed_body" in req:
            req["body"] = _dump_json(req.pop("parsed_body"))
        req.setdefault("body", None)
        req.setdefault("headers", {})
        if not req.get("uri") or not req.get("method"):
            raise CassetteError(f"{path}: interaction {i} request has no method or uri")
        if "parsed_body" in resp:
            resp["body"] = {"string": _dump_json(resp.pop("parsed_body"))}
            # the JSON was re-serialised: a recorded length would no longer match
            resp["headers"] = {k: v for k, v in (resp.get("headers") or {}).items() if k.lower() != "content-length"}
        resp.setdefault("headers", {})
        resp.setdefault("body", {"string": ""})
        if not isinstance(resp.get("status"), dict) or "code" not in resp["status"]:
            raise CassetteError(f"{path}: interaction {i} response has no status code")
    return data


def read_cassette(path: str | Path) -> dict[str, Any]:
    """A cassette file as vcrpy's dict, whatever recorder wrote it. Raises CassetteError."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CassetteError(f"{p}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CassetteError(f"{p}: cannot read it ({exc})") from exc
    try:
        data = _yaml_load(text)
    except Exception as exc:
        raise CassetteError(f"{p}: not valid YAML ({type(exc).__name__}: {str(exc)[:200]})") from exc
    return _normalise(data, str(p))


def _header(headers: dict[str, Any], name: str) -> str | None:
    for k, v in (headers or {}).items():
        if k.lower() == name:
            if isinstance(v, list):
                return str(v[0]) if v else None
            return str(v)
    return None


def _decode_body(raw: Any, encoding: str | None) -> bytes:
    if raw is None:
        return b""
    data = raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)
    enc = (encoding or "").lower()
    try:
        if "gzip" in enc or data[:2] == b"\x1f\x8b":
            return gzip.decompress(data)
        if "deflate" in enc:
            return zlib.decompress(data)
    except (OSError, zlib.error, EOFError):
        return data
    return data


@dataclass(slots=True)
class Interaction:
    """One recorded request and its response, bodies decoded (gzip undone)."""

    index: int
    method: str
    url: str
    request_headers: dict[str, list[str]]
    request_body: Any  # parsed JSON when it was JSON, else text, else None
    status: int
    response_headers: dict[str, list[str]]
    response_body: bytes

    @property
    def response_text(self) -> str:
        return self.response_body.decode("utf-8", "replace")

    def response_header(self, name: str) -> str | None:
        return _header(self.response_headers, name.lower())

    def request_header(self, name: str) -> str | None:
        return _header(self.request_headers, name.lower())

    @property
    def request_json(self) -> dict[str, Any]:
        return self.request_body if isinstance(self.request_body, dict) else {}


def _lower_headers(h: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for k, v in (h or {}).items():
        out[str(k).lower()] = [str(x) for x in v] if isinstance(v, list) else [str(v)]
    return out


def load_interactions(path: str | Path) -> list[Interaction]:
    """Every interaction of a cassette, with request JSON parsed and response bodies decoded."""
    data = read_cassette(path)
    out: list[Interaction] = []
    for i, it in enumerate(data["interactions"]):
        req, resp = it["request"], it["response"]
        body = req.get("body")
        if isinstance(body, bytes):
            body = _decode_body(body, _header(req["headers"], "content-encoding")).decode("utf-8", "replace")
        if isinstance(body, str):
            try:
                body = read_json(body)
            except ValueError:
                pass
        rbody = resp.get("body")
        raw = rbody.get("string") if isinstance(rbody, dict) else rbody
        out.append(
            Interaction(
                index=i,
                method=str(req["method"]).upper(),
                url=str(req["uri"]),
                request_headers=_lower_headers(req.get("headers")),
                request_body=body,
                status=int(resp["status"]["code"]),
                response_headers=_lower_headers(resp.get("headers")),
                response_body=_decode_body(raw, _header(resp.get("headers") or {}, "content-encoding")),
            )
        )
    return out


# --------------------------------------------------------------------------- wires


def guess_wire(url: str) -> str:
    """Which wire a URL belongs to, by its path alone (used to name a wire not built yet)."""
    path = urlsplit(url).path.rstrip("/")
    if path.endswith("/chat/completions"):
        return "openai_chat"
    if path.endswith("/responses"):
        return "openai_responses"
    if path.endswith("/messages"):
        return "anthropic"
    if ":generateContent" in path or ":streamGenerateContent" in path:
        return "gemini"
    return "unknown"


@dataclass(frozen=True, slots=True)
class ReplayWire:
    """What replay needs of one wire: its shape (``providerkit_nb.wire.<name>``: which URLs
    are its, and a recorded request read back) and a provider aimed at the recording
    (``providerkit_nb.providers.<name>``)."""

    name: str
    matches: Callable[[str], bool]
    import_request: Callable[[str, dict[str, Any]], Any]
    replay_provider: Callable[[str, dict[str, Any], Any], Any]


def wire_module(name: str) -> ReplayWire | None:
    """The replay contract of wire ``name``, or None when that wire is not built."""
    try:
        shape = importlib.import_module(f"providerkit_nb.wire.{name}")
        provider = importlib.import_module(f"providerkit_nb.providers.{name}")
    except ImportError:
        return None
    matches = getattr(shape, "matches", None)
    import_request = getattr(shape, "import_request", None)
    replay_provider = getattr(provider, "replay_provider", None)
    if not (callable(matches) and callable(import_request) and callable(replay_provider)):
        return None
    return ReplayWire(name, matches, import_request, replay_provider)


def route(url: str) -> tuple[str, ReplayWire | None]:
    """(wire name, its replay contract or None when that wire is not built yet) for a recorded URL."""
    for name in WIRE_MODULES:
        mod = wire_module(name)
        if mod is not None and mod.matches(url):
            return name, mod
    return guess_wire(url), None


# --------------------------------------------------------------------------- playback


class _OneInteraction:
    """A vcrpy persister that serves interaction N of a file: ``"<file>::<N>"``."""

    @staticmethod
    def load_cassette(cassette_path: str, serializer: Any) -> tuple[list[Any], list[Any]]:
        from vcr.request import Request
        from vcr.serializers import compat

        file, _, idx = str(cassette_path).rpartition("::")
        it = read_cassette(file)["interactions"][int(idx)]
        return [Request._from_dict(it["request"])], [compat.convert_to_bytes(it["response"])]

    @staticmethod
    def save_cassette(cassette_path: str, cassette_dict: Any, serializer: Any) -> None:
        return None  # playback only: nothing is ever written


def _vcr() -> Any:
    import vcr

    v = vcr.VCR(
        record_mode="none",
        match_on=["method", "host", "path"],
        decode_compressed_response=False,
    )
    v.register_persister(_OneInteraction)
    return v


@dataclass(slots=True)
class ReplayResult:
    interaction: int
    wire: str
    ok: bool
    built: bool = True
    turn: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    recorded_status: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"interaction": self.interaction, "wire": self.wire, "ok": self.ok}
        if not self.built:
            d["built"] = False
        if self.turn is not None:
            d["turn"] = self.turn
        if self.error is not None:
            d["error"] = self.error
        if self.recorded_status is not None:
            d["recorded_status"] = self.recorded_status
        return d


NOT_BUILT = "wire not built yet"


def replay_interaction(path: str | Path, it: Interaction, transport: str = "httpx") -> ReplayResult:
    """Replay one interaction of ``path`` through the wire that speaks its URL."""
    from ..core.errors import ProviderError
    from ..core.turn import collect_turn

    wire, mod = route(it.url)
    if mod is None:
        msg = NOT_BUILT if wire != "unknown" else f"no wire speaks {it.url.split('?', 1)[0]}"
        return ReplayResult(it.index, wire, False, built=False, error={"kind": None, "status": None, "message": msg}, recorded_status=it.status)
    body = it.request_json
    try:
        imported = mod.import_request(it.url, body)
        with _vcr().use_cassette(f"{path}::{it.index}", allow_playback_repeats=False):
            provider = mod.replay_provider(it.url, body, transport)
            try:
                if imported.stream:
                    turn = collect_turn(provider.create_stream(imported.messages, imported.tools, **imported.options))
                else:
                    turn = provider.complete(imported.messages, imported.tools, **imported.options)
            finally:
                close = getattr(provider, "close", None)
                if close is not None:
                    close()
    except ProviderError as err:
        return ReplayResult(
            it.index, wire, False,
            error={"kind": err.kind.value, "status": err.status, "message": err.message, "code": err.code,
                   "retry_after": err.retry_after},
            recorded_status=it.status,
        )
    except Exception as exc:  # an importer refusing the history, or playback not matching
        return ReplayResult(
            it.index, wire, False,
            error={"kind": "replay", "status": None, "message": f"{type(exc).__name__}: {str(exc)[:500]}"},
            recorded_status=it.status,
        )
    return ReplayResult(it.index, wire, True, turn=turn.to_dict(), recorded_status=it.status)


def replay_cassette(path: str | Path, transport: str = "httpx") -> Iterator[ReplayResult]:
    """Replay every interaction of a cassette, in order. Raises CassetteError up front when the
    file cannot be read."""
    interactions = load_interactions(path)
    for it in interactions:
        yield replay_interaction(path, it, transport)


# --------------------------------------------------------------------------- command line


def _scrubbed(text: str) -> str:
    from ..transport.scrub import scrub

    return scrub(text, ("replay-key",))


def _describe(r: ReplayResult) -> str:
    head = f"#{r.interaction} {r.wire}"
    if not r.built:
        return f"{head}: {r.error['message'] if r.error else NOT_BUILT}"
    if not r.ok:
        e = r.error or {}
        status = f" {e['status']}" if e.get("status") is not None else ""
        return f"{head}: error {e.get('kind')}{status}: {e.get('message')}"
    t = r.turn or {}
    msg = t.get("message", {})
    usage = t.get("usage") or {}
    lines = [
        f"{head}: ok finish={t.get('finish_reason')} model={t.get('model')} "
        f"in={usage.get('input_tokens')} out={usage.get('output_tokens')}"
    ]
    if msg.get("reasoning"):
        lines.append(f"  reasoning: {msg['reasoning'][:300]!r}")
    if msg.get("content"):
        lines.append(f"  text: {msg['content'][:500]!r}")
    for c in msg.get("tool_calls") or []:
        lines.append(f"  call {c['id']} {c['name']}({c['arguments']})")
    return "\n".join(lines)


def main(path: str, transport: str = "httpx", as_json: bool = False) -> int:
    """``python -m providerkit_nb replay``: 0 when the file was read (whatever the
    interactions said), 2 when it could not be."""
    import sys

    try:
        interactions = load_interactions(path)
    except CassetteError as exc:
        print(f"replay: {exc}", file=sys.stderr)
        return 2
    for it in interactions:
        r = replay_interaction(path, it, transport)
        line = json.dumps(r.to_dict(), ensure_ascii=False) if as_json else _describe(r)
        print(_scrubbed(line), flush=True)
    return 0
