"""Every recording the tests read, damaged thousands of ways: a turn or a ProviderError, never
a raw exception, never a hang.

Each mutant goes through the real adapter (``replay_provider`` of its wire) over httpx's
transport seam, the body handed out in seeded pieces, exactly as tests/providers replays the
healthy recordings. The outcome must be a Turn, or a ProviderError that names the wire and says
something. A failure prints the seed, the file, the interaction and the mutation; set
PROVIDERKIT_MUTATION_SEED to replay another seed.
"""

from __future__ import annotations

import math
import os
import random
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from providerkit_nb.core.errors import ProviderError
from providerkit_nb.core.turn import collect_turn
from providerkit_nb.testing.replay import wire_module

from ..cassette_loader import OWN, UPSTREAM, Case, ChoppedStream, cases
from .mutants import KINDS, SINGLE, Mutant, mutate

SEED = int(os.environ.get("PROVIDERKIT_MUTATION_SEED", "20261203"))
AT_LEAST = 2000
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _all_cases() -> list[Case]:
    return [c for c in cases() + cases(OWN) if wire_module(c.wire) is not None]


def _transport(status: int, body: bytes, content_type: str, seed: int) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, headers={"content-type": content_type}, stream=ChoppedStream(body, seed, 1024))

    return httpx.MockTransport(handler)


def _is_sse(case: Case) -> bool:
    return case.status < 400 and case.streamed and case.body.lstrip()[:1] not in (b"[", b"{")


def _mutants(all_cases: list[Case]) -> Iterator[tuple[Case, str, int, Mutant]]:
    per_kind = max(2, math.ceil(AT_LEAST * 1.1 / (max(1, len(all_cases)) * len(KINDS))))
    for case in all_cases:
        sse = _is_sse(case)
        for kind in KINDS:
            for variant in range(1 if kind in SINGLE else per_kind):
                rng = random.Random(f"{SEED}:{case.id}:{kind}:{variant}")
                m = mutate(case.body, sse=sse, kind=kind, rng=rng)
                if m is not None:
                    yield case, kind, variant, m


def run_one(case: Case, body: bytes, seed: int) -> tuple[str, Any]:
    """("turn", Turn) or ("error", ProviderError) or ("raw", exception) for one body."""
    mod = wire_module(case.wire)
    assert mod is not None, case.wire
    imported = mod.import_request(case.url, case.request)
    provider = mod.replay_provider(case.url, case.request, _transport(case.status, body, case.content_type(), seed))
    try:
        if imported.stream:
            turn = collect_turn(provider.create_stream(imported.messages, imported.tools, **imported.options))
        else:
            turn = provider.complete(imported.messages, imported.tools, **imported.options)
        return "turn", turn
    except ProviderError as err:
        err.wire_expected = provider.id  # type: ignore[attr-defined]
        return "error", err
    except Exception as exc:  # noqa: BLE001 - exactly what this test exists to catch
        return "raw", exc
    finally:
        provider.close()


def _problem(outcome: str, value: Any) -> str | None:
    if outcome == "turn":
        return None if value.finish_reason is not None else "a turn without a finish reason"
    if outcome == "raw":
        return f"raw {type(value).__name__}: {str(value)[:200]}"
    err: ProviderError = value
    if err.provider != err.wire_expected:  # type: ignore[attr-defined]
        return f"ProviderError names {err.provider!r}, not the wire {err.wire_expected!r}"  # type: ignore[attr-defined]
    if not err.message.strip():
        return "ProviderError with an empty message"
    return None


@pytest.mark.timeout(110)
def test_damaged_recordings_give_a_turn_or_a_provider_error() -> None:
    if not UPSTREAM.is_dir() and IN_CI:
        pytest.fail(f"upstream recordings not found at {UPSTREAM} (CI=true: they must be present)")
    all_cases = _all_cases()
    assert all_cases, "no recordings found"
    kinds: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    failures: list[str] = []
    start = time.perf_counter()
    n = 0
    for case, kind, variant, m in _mutants(all_cases):
        n += 1
        kinds[kind] += 1
        outcome, value = run_one(case, m.body, seed=n)
        outcomes[outcome] += 1
        problem = _problem(outcome, value)
        if problem is not None:
            failures.append(
                f"seed={SEED} file={case.path} interaction={case.interaction.index} "
                f"mutation={kind}#{variant} ({m.detail}) -> {problem}"
            )
    took = time.perf_counter() - start
    print(f"\n{n} mutants of {len(all_cases)} interactions in {took:.1f} s: {dict(outcomes)}; by kind {dict(kinds)}")
    assert not failures, f"{len(failures)} of {n} mutants escaped:\n" + "\n".join(failures[:40])
    assert n >= AT_LEAST
    assert set(kinds) == set(KINDS), f"kinds that produced no mutant: {set(KINDS) - set(kinds)}"
    # the damage is real: many mutants must fail, and some must still assemble (leniency)
    assert outcomes["error"] > n // 4 and outcomes["turn"] > n // 20, dict(outcomes)
