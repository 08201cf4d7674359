"""The PostgreSQL connection pieces the store and the shared gate both use.

psycopg 3 is imported only when a connection is opened (the ``postgres`` extra).
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Hashable, Sequence
from typing import Any

__all__ = ["describe_dsn", "first_line", "connect", "quote_identifier", "KeptConnections", "KEPT"]


def describe_dsn(dsn: str) -> str:
    """user@host:port/dbname, never the password (a DSN may carry one)."""
    try:
        from psycopg.conninfo import conninfo_to_dict

        d = conninfo_to_dict(dsn)
    except Exception:
        return "postgresql://<unparsed dsn>"
    user = f"{d['user']}@" if d.get("user") else ""
    port = f":{d['port']}" if d.get("port") else ""
    return f"postgresql://{user}{d.get('host', '')}{port}/{d.get('dbname', '')}"


def first_line(exc: BaseException) -> str:
    """The first line of a driver error: enough to act on, short enough for a message."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def connect(
    dsn: str,
    *,
    connect_timeout: float = 5.0,
    keepalive: tuple[int, int, int] | None = None,
    settings: Sequence[tuple[str, str]] = (),
    application_name: str | None = None,
) -> Any:
    """An autocommit psycopg connection. ``keepalive`` (idle, interval, count seconds) sets TCP
    keepalives on both ends, so a peer that vanishes without closing its socket is noticed in
    about ``idle + interval * count`` seconds; ``settings`` are server settings for the session."""
    import psycopg

    kw: dict[str, Any] = {"autocommit": True, "connect_timeout": max(1, int(connect_timeout))}
    options: list[tuple[str, Any]] = []
    if keepalive is not None:
        idle, interval, count = keepalive
        options += [("tcp_keepalives_idle", idle), ("tcp_keepalives_interval", interval),
                    ("tcp_keepalives_count", count)]
        kw.update(keepalives=1, keepalives_idle=idle, keepalives_interval=interval, keepalives_count=count)
    options += settings
    if options:
        ours = " ".join(f"-c {k}={_escape_option(str(v))}" for k, v in options)
        kw["options"] = " ".join(filter(None, (_dsn_options(dsn), ours)))  # the DSN's own come first
    if application_name is not None:
        kw["application_name"] = application_name
    return psycopg.connect(dsn, **kw)


def quote_identifier(name: str) -> str:
    """An SQL identifier in double quotes, for a setting's value (``search_path``)."""
    return '"' + name.replace('"', '""') + '"'


def _escape_option(value: str) -> str:
    """The server splits ``options`` at white space; a backslash keeps a character literal."""
    return "".join("\\" + ch if ch.isspace() or ch == "\\" else ch for ch in value)


def _dsn_options(dsn: str) -> str:
    """The ``options`` the DSN itself carries, which a keyword argument would otherwise replace."""
    try:
        from psycopg.conninfo import conninfo_to_dict

        return str(conninfo_to_dict(dsn).get("options") or "")
    except Exception:
        return ""  # psycopg.connect reports an unparsable DSN itself


class KeptConnections:
    """Idle connections kept across a close and the next open with the same key, one per key.

    Opening a connection is most of what opening a store costs (TCP, the server's backend
    start, its catalog caches warming): a re-run notebook cell or a worker's next task that
    opens the same store again takes the kept one instead. A kept connection is closed after
    ``idle_limit`` seconds unused and at exit; a forked child never uses its parent's (the
    socket is the parent's session).
    """

    def __init__(self, idle_limit: float = 60.0) -> None:
        self.idle_limit = idle_limit
        self._lock = threading.Lock()
        self._kept: dict[Hashable, tuple[Any, threading.Timer]] = {}

    def take(self, key: Hashable) -> Any | None:
        """The kept connection for ``key``, or None. The caller checks it with a round trip."""
        with self._lock:
            got = self._kept.pop(key, None)
        if got is None:
            return None
        conn, timer = got
        timer.cancel()
        if conn.closed or conn.broken:
            conn.close()
            return None
        return conn

    def keep(self, key: Hashable, conn: Any) -> None:
        """Keep ``conn`` for the next ``take(key)``, or close it if it is not idle and sound."""
        from psycopg.pq import TransactionStatus

        if conn.closed or conn.broken or conn.info.transaction_status != TransactionStatus.IDLE:
            conn.close()
            return
        timer = threading.Timer(self.idle_limit, self._expire, (key, conn))
        timer.daemon = True
        with self._lock:
            old = self._kept.pop(key, None)
            self._kept[key] = (conn, timer)
        timer.start()
        if old is not None:
            old[1].cancel()
            old[0].close()

    def close_all(self) -> None:
        with self._lock:
            kept, self._kept = list(self._kept.values()), {}
        for conn, timer in kept:
            timer.cancel()
            conn.close()

    def _expire(self, key: Hashable, conn: Any) -> None:
        with self._lock:
            now = self._kept.get(key)
            if now is None or now[0] is not conn:
                return  # taken (or replaced) meanwhile
            del self._kept[key]
        conn.close()

    def after_fork_in_child(self) -> None:
        """The child forgets its parent's connections (freeing them does not end the parent's
        sessions: the driver says goodbye only in the process that connected)."""
        self._kept = {}
        self._lock = threading.Lock()  # another thread may have held it at the fork


KEPT = KeptConnections()
atexit.register(KEPT.close_all)
os.register_at_fork(after_in_child=KEPT.after_fork_in_child)
