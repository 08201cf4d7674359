"""The tier against the real local model: llama-cpp-python's server with SmolLM2-135M (the
``local`` extra). Every test here is marked ``local_model``: it skips without the extra (the
reason says what to install) and fails under CI=true, where .ci/run installs it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import unavailable


@pytest.fixture(scope="session")
def local_server() -> Iterator[object]:
    """One server for the whole session, started by the library's own helper."""
    from providerkit_nb import local

    reason = local.missing()
    if reason:
        unavailable(reason)
    with local.start() as server:
        yield server
