"""Fixtures for the resilience tests: a real HTTP server on 127.0.0.1, started and stopped here."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .server import TestServer


@pytest.fixture
def server() -> Iterator[TestServer]:
    srv = TestServer().start()
    try:
        yield srv
    finally:
        srv.stop()
