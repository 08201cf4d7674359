"""Every wrapper reaches the provider it wraps through ``Provider.open_stream``, the public seam:
a provider that watches that one method sees each wrapper's call, with the caller's options."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import providerkit_nb as pk
from providerkit_nb.core.messages import Message
from providerkit_nb.core.tools import ToolDefinition
from providerkit_nb.providers.base import ChunkStream, Provider
from providerkit_nb.testing.simulate import ScriptedProvider, text_turn
from providerkit_nb.wire.options import CallOptions
from providerkit_nb.wrappers import (
    TokenSource,
    create_gate,
    with_backup_models,
    with_key_pool,
    with_token,
)


class Watched(ScriptedProvider):
    """A scripted provider (offline turns) that records what came through the public seam."""

    def __init__(self, **kw: Any) -> None:
        super().__init__([text_turn("hello there")], **kw)
        self.seen: list[CallOptions] = []

    def open_stream(
        self, messages: list[Message], tools: list[ToolDefinition] | None, opts: CallOptions
    ) -> ChunkStream:
        self.seen.append(opts)
        return super().open_stream(messages, tools, opts)


def _no_refresh(cred: Any) -> Any:
    raise AssertionError("a token without an expiry is never refreshed")


def _single(wrap: Callable[[Provider], Provider]) -> Callable[[], tuple[Provider, list[Watched]]]:
    def make() -> tuple[Provider, list[Watched]]:
        inner = Watched()
        return wrap(inner), [inner]

    return make


def _factory(wrap: Callable[[Callable[..., Provider]], Provider]) -> Callable[[], tuple[Provider, list[Watched]]]:
    def make() -> tuple[Provider, list[Watched]]:
        built: list[Watched] = []

        def factory(**kw: Any) -> Provider:
            p = Watched(id="scripted")
            built.append(p)
            return p

        return wrap(factory), built

    return make


WRAPS: dict[str, Callable[[], tuple[Provider, list[Watched]]]] = {
    "gate": _single(lambda p: pk.with_gate(p, create_gate(1))),
    "watchdog": _single(lambda p: pk.with_watchdog(p, first_byte=5.0, idle=5.0)),
    "retry": _single(lambda p: pk.with_retry(p, attempts=2, sleep=lambda s: None)),
    "backup models": _single(lambda p: with_backup_models(p, ["other-model"])),
    "key pool": _factory(lambda f: with_key_pool(f, ["key-a", "key-b"])),
    "token": _factory(lambda f: with_token(f, TokenSource(lambda: {"access_token": "tok-1"}, _no_refresh))),
}


@pytest.mark.parametrize("name", list(WRAPS))
def test_a_wrapper_opens_its_inner_stream_through_the_public_seam(name: str) -> None:
    wrapped, inners = WRAPS[name]()
    turn = pk.collect_turn(wrapped.create_stream([pk.UserMessage("hi")], session_id="conv-9", max_tokens=7))
    assert turn.message.content == "hello there"
    seen = [opts for p in inners for opts in p.seen]
    assert len(seen) == 1, name
    assert seen[0].session_id == "conv-9" and seen[0].max_tokens == 7
