"""The PostgreSQL connection pieces the store and the shared gate both use.

psycopg 3 is imported only when a connection is opened (the ``postgres`` extra).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["describe_dsn", "first_line", "connect"]


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
        kw["options"] = " ".join(f"-c {k}={v}" for k, v in options)
    if application_name is not None:
        kw["application_name"] = application_name
    return psycopg.connect(dsn, **kw)
