"""Backup models against a real server: the next model on model/overload/quota before the
first chunk, never after one; other failures are not walked."""

from __future__ import annotations

import pytest

import providerkit_nb as pk
from providerkit_nb.core.errors import ErrorKind, ProviderError
from providerkit_nb.stream import TextDelta
from providerkit_nb.wrappers import with_backup_models

from .helpers import HISTORY, chat
from .server import Ok, Status, StreamError

pytestmark = pytest.mark.timeout(60)

UNKNOWN_MODEL = {"error": {"message": "The model `gpt-a` does not exist", "type": "invalid_request_error",
                           "code": "model_not_found"}}
QUOTA = {"error": {"message": "You exceeded your current quota", "type": "insufficient_quota",
                   "code": "insufficient_quota"}}


def models_asked(server, p) -> list[str]:
    return [s.body["model"] for s in server.requests_for(p.inner.base_url)]


@pytest.mark.parametrize(
    "failure",
    [Status(404, body=UNKNOWN_MODEL), Status(529), Status(429, body=QUOTA), StreamError(before=0, code=529)],
    ids=["model", "overload", "quota", "overload-in-stream"],
)
def test_walks_to_the_next_model_before_the_first_chunk(server, failure) -> None:
    events = []
    p = with_backup_models(chat(server, failure, Ok(text="from b")), ["gpt-b", "gpt-c"],
                              on_fallback=events.append, on_model_failed=events.append)
    turn = pk.collect_turn(p.create_stream(HISTORY))
    assert turn.message.content == "from b"
    assert models_asked(server, p) == ["gpt-test", "gpt-b"]
    assert events[0]["model"] == "gpt-test" and events[0]["position"] == 1 and events[0]["total"] == 3
    assert isinstance(events[0]["error"], ProviderError)
    assert events[1] == {"model": "gpt-b", "position": 2, "total": 3}


def test_never_walks_after_a_chunk(server) -> None:
    p = with_backup_models(chat(server, StreamError(before=1, code=529), Ok()), ["gpt-b"])
    got = []
    with pytest.raises(ProviderError) as info:
        for c in p.create_stream(HISTORY):
            got.append(c)
    assert info.value.kind == ErrorKind.OVERLOAD
    assert any(isinstance(c, TextDelta) for c in got)
    assert models_asked(server, p) == ["gpt-test"]


def test_other_kinds_are_not_walked(server) -> None:
    p = with_backup_models(chat(server, Status(401), Ok()), ["gpt-b"])
    with pytest.raises(ProviderError) as info:
        pk.collect_turn(p.create_stream(HISTORY))
    assert info.value.kind == ErrorKind.AUTH
    assert models_asked(server, p) == ["gpt-test"]


def test_the_last_failure_is_raised_when_every_model_fails(server) -> None:
    p = with_backup_models(chat(server, Status(529), Status(404, body=UNKNOWN_MODEL)), ["gpt-b"])
    with pytest.raises(ProviderError) as info:
        pk.collect_turn(p.create_stream(HISTORY))
    assert info.value.kind == ErrorKind.MODEL
    assert models_asked(server, p) == ["gpt-test", "gpt-b"]


def test_a_per_call_model_is_the_primary_and_kinds_can_be_chosen(server) -> None:
    p = with_backup_models(chat(server, Status(401), Ok()), ["gpt-b", "gpt-x"], kinds=["auth"])
    pk.collect_turn(p.create_stream(HISTORY, model="gpt-x"))
    assert models_asked(server, p) == ["gpt-x", "gpt-b"]  # gpt-x is not asked twice


def test_complete_walks_too(server) -> None:
    p = with_backup_models(chat(server, Status(529), Ok(text="whole")), ["gpt-b"])
    assert p.complete(HISTORY).message.content == "whole"
    assert models_asked(server, p) == ["gpt-test", "gpt-b"]


def test_arguments_are_checked() -> None:
    base = pk.openai(model="m", api_key="k")
    with pytest.raises(ValueError, match="at least one"):
        with_backup_models(base, [])
    with pytest.raises(TypeError, match="list of model ids"):
        with_backup_models(base, "gpt-b")  # type: ignore[arg-type]
