"""Providers that wrap providers: gate, watchdog, retry, key pool, token, backup models; and the
registry that wires them per connection."""

from .backup import with_backup_models
from .gate import Gate, GateLike, create_gate, with_gate
from .key_pool import NoAvailableKeyError, with_key_pool
from .pg_gate import GateError, PostgresGate
from .registry import Registry
from .retry import with_retry
from .token import TokenSource, with_token
from .watchdog import with_watchdog

__all__ = [
    "Gate",
    "GateError",
    "GateLike",
    "NoAvailableKeyError",
    "PostgresGate",
    "Registry",
    "TokenSource",
    "create_gate",
    "with_backup_models",
    "with_gate",
    "with_key_pool",
    "with_retry",
    "with_token",
    "with_watchdog",
]
