"""Named connections, each with its own gate, and one provider (and session id) per model.

A connection is where calls go and what they may use at once: a preset (or your own adapter
factory), credentials (one key, a key pool, or a token source) and ``max_concurrent``. The
registry makes one FIFO gate per connection for its whole life, and hands out one provider
per ``"connection/model"``, wired as::

    gate( retry( [key pool | token]( watchdog( adapter ) ) ) )

- the gate is outermost, so every clock starts when the call gets its slot;
- the watchdog sits on each adapter, so a silent key is benched and the next key tried, and
  every retry gets fresh clocks (a fired clock is a transient ``timeout``);
- the retry is outside the key pool, so "every key is benched" waits for the first key back
  if that is soon, and gives up at once if it is not.

The provider for a model keeps one ``instance_session_id`` for the life of the registry, so a
conversation sent without its own ``session_id`` still lands on the same prompt cache.

Configuration comes from a dict, a TOML file or environment variables; keys may be named by
the environment variable that holds them (``api_key_env``), so files need not hold secrets.
Secrets never appear in a repr or in ``status()``.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..providers.base import Provider
from .gate import GateLike, create_gate, with_gate
from .key_pool import with_key_pool
from .retry import with_retry
from .token import TokenSource, with_token
from .watchdog import with_watchdog

__all__ = ["Registry", "Connection"]

_CONNECTION_FIELDS = (
    "preset", "factory", "api_key", "api_key_env", "keys", "keys_env", "paid_key", "paid_key_env",
    "token_source", "max_concurrent", "watchdog", "retry", "gate",
)
_OPTION_FIELDS = ("base_url", "headers", "timeout", "transport", "effort", "id")


@dataclass
class Connection:
    """One place calls go. Credentials are kept out of the repr."""

    name: str
    preset: str | None = None
    factory: Callable[..., Provider] | None = field(default=None, repr=False)
    api_key: str | None = field(default=None, repr=False)
    keys: list[str] = field(default_factory=list, repr=False)
    paid_key: str | None = field(default=None, repr=False)
    token_source: TokenSource | None = field(default=None, repr=False)
    max_concurrent: int = 4
    options: dict[str, Any] = field(default_factory=dict)
    watchdog: dict[str, Any] | None = field(default_factory=dict)  # None: no watchdog
    retry: dict[str, Any] | None = field(default_factory=dict)  # None: no retries

    def __post_init__(self) -> None:
        if not self.name or "/" in self.name:
            raise ValueError(f"a connection name must be non-empty and without '/': {self.name!r}")
        if (self.preset is None) == (self.factory is None):
            raise ValueError(
                f"connection {self.name!r}: give exactly one of preset='openai' (see pk.PRESETS) "
                "or factory=callable(model=..., api_key=..., instance_session_id=...)"
            )
        if sum(bool(x) for x in (self.api_key, self.keys or self.paid_key, self.token_source)) > 1:
            raise ValueError(
                f"connection {self.name!r}: give one kind of credential: api_key, keys/paid_key, "
                "or token_source"
            )
        m = self.max_concurrent
        if isinstance(m, bool) or not isinstance(m, int) or m < 1:
            raise ValueError(f"connection {self.name!r}: max_concurrent must be a whole number >= 1, got {m!r}")
        if self.preset is not None:
            from ..providers.factory import PRESETS

            if self.preset not in PRESETS:
                raise ValueError(
                    f"connection {self.name!r}: unknown preset {self.preset!r}; known presets: "
                    f"{', '.join(sorted(PRESETS))}"
                )

    @property
    def credential(self) -> str:
        """What kind of credential, for the views (never the credential itself)."""
        if self.token_source is not None:
            return "token"
        if self.keys or self.paid_key:
            return f"key pool ({len([k for k in self.keys if k]) + (1 if self.paid_key else 0)} keys)"
        return "api key" if self.api_key else "environment"

    def adapter(self, model: str, api_key: str | None, instance_session_id: str) -> Provider:
        kw: dict[str, Any] = {**self.options, "model": model, "instance_session_id": instance_session_id}
        if api_key is not None:
            kw["api_key"] = api_key
        if self.factory is not None:
            p = self.factory(**kw)
        else:
            from ..providers.factory import preset

            p = preset(self.preset, **kw)  # type: ignore[arg-type]  # set when there is no factory (checked at construction)
        if not isinstance(p, Provider):
            raise TypeError(f"connection {self.name!r}: the factory must return a Provider, got {type(p).__name__}")
        return p


def _env(name: str | None, environ: Mapping[str, str]) -> str | None:
    return environ.get(name) if name else None


def _split(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value]


class Registry:
    """Connections by name; ``provider("connection/model")`` gives the wired provider."""

    def __init__(self, config: Mapping[str, Any] | None = None, *, environ: Mapping[str, str] | None = None) -> None:
        self._lock = threading.Lock()
        self._connections: dict[str, Connection] = {}
        self._gates: dict[str, GateLike] = {}
        self._providers: dict[tuple[str, str], Provider] = {}
        self._sessions: dict[tuple[str, str], str] = {}
        self._environ = os.environ if environ is None else environ
        if config:
            self.configure(config)

    # configuration ---------------------------------------------------------------

    def add(
        self,
        name: str,
        preset: str | None = None,
        *,
        factory: Callable[..., Provider] | None = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
        keys: list[str] | str | None = None,
        keys_env: list[str] | str | None = None,
        paid_key: str | None = None,
        paid_key_env: str | None = None,
        token_source: TokenSource | None = None,
        max_concurrent: int = 4,
        watchdog: Mapping[str, Any] | bool | None = True,
        retry: Mapping[str, Any] | bool | None = True,
        gate: GateLike | Mapping[str, Any] | None = None,
        **options: Any,
    ) -> Connection:
        """Add (or replace, while unused) a connection. Options go to the adapter (base_url,
        headers, timeout, transport, ...); ``watchdog``/``retry`` take their wrapper's
        keywords, or False to leave that wrapper out."""
        unknown = set(options) - set(_OPTION_FIELDS) - {"extra"}
        if unknown and factory is None:
            raise ValueError(
                f"connection {name!r}: unknown setting(s) {sorted(unknown)}; known: "
                f"{sorted((*_CONNECTION_FIELDS, *_OPTION_FIELDS))}"
            )
        env = self._environ
        key_list = _split(keys) + [v for n in _split(keys_env) if (v := env.get(n))]
        conn = Connection(
            name=name,
            preset=preset,
            factory=factory,
            api_key=api_key or _env(api_key_env, env),
            keys=key_list,
            paid_key=paid_key or _env(paid_key_env, env),
            token_source=token_source,
            max_concurrent=int(max_concurrent),
            options=dict(options),
            watchdog=_wrapper_opts(watchdog, "watchdog"),
            retry=_wrapper_opts(retry, "retry"),
        )
        with self._lock:
            if any(c == name for c, _ in self._providers):
                raise ValueError(f"connection {name!r} is in use; make a new Registry to change it")
            self._connections[name] = conn
            self._gates[name] = _gate_for(conn, gate, env)
        return conn

    def configure(self, config: Mapping[str, Any]) -> Registry:
        """``{"connections": {"name": {...}}}`` or just ``{"name": {...}}``."""
        conns = config.get("connections", config)
        if not isinstance(conns, Mapping):
            raise ValueError("registry config: expected a table of connections, e.g. {'work': {'preset': 'openai'}}")
        for name, settings in conns.items():
            if not isinstance(settings, Mapping):
                raise ValueError(f"registry config: connection {name!r} must be a table of settings")
            settings = dict(settings)
            self.add(name, settings.pop("preset", None), **settings)
        return self

    @classmethod
    def from_dict(cls, config: Mapping[str, Any], *, environ: Mapping[str, str] | None = None) -> Registry:
        return cls(config, environ=environ)

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str], *, environ: Mapping[str, str] | None = None) -> Registry:
        """A TOML file with one ``[connections.<name>]`` table per connection."""
        import tomllib

        p = Path(path)
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{p}: not valid TOML ({exc})") from exc
        return cls(data, environ=environ)

    @classmethod
    def from_env(cls, prefix: str = "PROVIDERKIT_", environ: Mapping[str, str] | None = None) -> Registry:
        """``PROVIDERKIT_CONNECTIONS=work,local`` then ``PROVIDERKIT_WORK_PRESET=openai``,
        ``_API_KEY``, ``_KEYS`` (comma-separated), ``_PAID_KEY``, ``_MAX_CONCURRENT``, ``_BASE_URL``."""
        env = os.environ if environ is None else environ
        names = _split(env.get(f"{prefix}CONNECTIONS"))
        if not names:
            raise ValueError(f"no connections: set {prefix}CONNECTIONS=name1,name2")
        config: dict[str, Any] = {}
        for name in names:
            up = f"{prefix}{name.upper().replace('-', '_')}_"
            c: dict[str, Any] = {}
            for key in ("preset", "api_key", "keys", "paid_key", "base_url", "max_concurrent"):
                v = env.get(up + key.upper())
                if v:
                    c[key] = int(v) if key == "max_concurrent" else v
            config[name] = c
        return cls(config, environ=env)

    # use ---------------------------------------------------------------------------

    @property
    def connections(self) -> dict[str, Connection]:
        return dict(self._connections)

    def gate(self, connection: str) -> GateLike:
        return self._gates[self._conn(connection).name]

    def _conn(self, name: str) -> Connection:
        try:
            return self._connections[name]
        except KeyError:
            known = ", ".join(sorted(self._connections)) or "none yet"
            raise KeyError(f"no connection {name!r} in the registry (known: {known})") from None

    def session_id(self, spec: str) -> str:
        """The session id the provider for ``spec`` sends when a call gives none."""
        return self.provider(spec).instance_session_id

    def provider(self, spec: str) -> Provider:
        """``"connection/model"`` (the model may contain '/'): the same object every time."""
        if "/" not in spec:
            raise ValueError(f"expected 'connection/model', got {spec!r}")
        name, model = spec.split("/", 1)
        if not model:
            raise ValueError(f"no model in {spec!r}: expected 'connection/model'")
        conn = self._conn(name)
        key = (name, model)
        with self._lock:
            p = self._providers.get(key)
            if p is None:
                sid = self._sessions.setdefault(key, str(uuid.uuid4()))
                p = self._build(conn, model, sid)
                self._providers[key] = p
            return p

    def _build(self, conn: Connection, model: str, sid: str) -> Provider:
        wd = conn.watchdog

        def adapter(api_key: str | None = None, instance_session_id: str = sid) -> Provider:
            p = conn.adapter(model, api_key, instance_session_id)
            return with_watchdog(p, **wd) if wd is not None else p

        if conn.token_source is not None:
            p: Provider = with_token(adapter, conn.token_source, sid)
        elif conn.keys or conn.paid_key:
            p = with_key_pool(adapter, conn.keys, conn.paid_key, sid, label=conn.name)
        else:
            p = adapter(conn.api_key, sid)
        if conn.retry is not None:
            p = with_retry(p, **conn.retry)
        return with_gate(p, self._gates[conn.name])

    def status(self) -> dict[str, dict[str, Any]]:
        """Per connection: slots in use, queued, longest wait, recent waits (for the views)."""
        out: dict[str, dict[str, Any]] = {}
        for name, conn in self._connections.items():
            d = self._gates[name].status()
            d["max_concurrent"] = conn.max_concurrent
            d["credential"] = conn.credential
            d["models"] = sorted(m for c, m in self._providers if c == name)
            out[name] = d
        return out

    def close(self) -> None:
        """Close every provider built (their HTTP connection pools)."""
        with self._lock:
            providers = list(self._providers.values())
        for p in providers:
            close = getattr(p, "close", None)
            if close is not None:
                close()

    def __repr__(self) -> str:
        parts = [f"{n}({c.preset or 'factory'}, max_concurrent={c.max_concurrent}, {c.credential})"
                 for n, c in self._connections.items()]
        return f"<Registry {', '.join(parts) or 'empty'}>"

    def __enter__(self) -> Registry:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _gate_for(conn: Connection, gate: GateLike | Mapping[str, Any] | None, env: Mapping[str, str]) -> GateLike:
    """The connection's gate: in-process by default; one you give (a ``pk.PostgresGate`` shared
    by every process); or ``{"dsn": ..., "name": ..., "quarantine": ...}`` (``dsn_env`` names the
    variable that holds the DSN), which builds a ``PostgresGate`` with ``max_concurrent`` slots, so
    every process that builds the registry from the same dict shares one limit."""
    if gate is None:
        return create_gate(conn.max_concurrent, conn.name)
    if isinstance(gate, GateLike):
        return gate
    if not isinstance(gate, Mapping):
        raise ValueError(f"connection {conn.name!r}: gate must be a pk.PostgresGate or a table "
                         f"{{dsn or dsn_env, name, quarantine}}; got {type(gate).__name__}")
    from .pg_gate import PostgresGate

    spec = dict(gate)
    dsn = spec.pop("dsn", None) or _env(spec.pop("dsn_env", None), env)
    unknown = set(spec) - {"name", "quarantine", "poll", "dsn_env"}
    if not dsn or unknown:
        raise ValueError(f"connection {conn.name!r}: a shared gate needs dsn= (or dsn_env= naming "
                         f"a set variable) and takes name, quarantine, poll; got {sorted(gate)}")
    spec.pop("dsn_env", None)
    return PostgresGate(dsn, str(spec.pop("name", conn.name)), conn.max_concurrent, **spec)


def _wrapper_opts(value: Mapping[str, Any] | bool | None, what: str) -> dict[str, Any] | None:
    if value is None or value is True:
        return {}
    if value is False:
        return None
    if isinstance(value, Mapping):
        return dict(value)
    raise ValueError(f"{what} must be a table of its settings, True or False; got {value!r}")
