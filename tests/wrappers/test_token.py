"""Token sources: refresh only when expired, one refresh for many callers, reload on refusal."""

from __future__ import annotations

import threading
import time

import pytest

import providerkit_nb as pk
from providerkit_nb.wrappers import TokenSource, with_token
from providerkit_nb.wrappers.token import Credential

from .helpers import HISTORY
from .server import ByKey, Ok, Status, credential

pytestmark = pytest.mark.timeout(60)

NOW = 1_700_000_000.0


class Storage:
    """A credential file another process could also write (here: a dict and a lock)."""

    def __init__(self, cred: dict | None) -> None:
        self.cred = cred
        self.saves: list[dict] = []
        self.lock = threading.Lock()

    def load(self):
        with self.lock:
            return dict(self.cred) if self.cred else None

    def save(self, cred: Credential) -> None:
        with self.lock:
            self.cred = cred.to_dict()
            self.saves.append(cred.to_dict())


def test_no_refresh_while_the_token_is_valid():
    store = Storage({"access_token": "at-1", "refresh_token": "rt-1", "expires_at": NOW + 60})
    refreshes: list = []
    src = TokenSource(store.load, lambda c: refreshes.append(c), store.save, clock=lambda: NOW)
    assert [src.get_token() for _ in range(3)] == ["at-1"] * 3
    assert refreshes == [] and store.saves == []


def test_concurrent_callers_share_one_refresh_and_it_is_saved_before_use():
    store = Storage({"access_token": "at-1", "refresh_token": "rt-1", "expires_at": NOW - 1})
    calls: list[str] = []

    def refresh(cred: Credential) -> dict:
        calls.append(cred.refresh_token)
        time.sleep(0.2)  # a slow token endpoint: everyone else arrives meanwhile
        return {"access_token": "at-2", "refresh_token": "rt-2", "expires_at": NOW + 3600}

    src = TokenSource(store.load, refresh, store.save, clock=lambda: NOW)
    got: list[str] = []
    threads = [threading.Thread(target=lambda: got.append(src.get_token())) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    assert got == ["at-2"] * 20
    assert calls == ["rt-1"]
    assert store.saves == [{"access_token": "at-2", "refresh_token": "rt-2", "expires_at": NOW + 3600}]


def test_a_refused_refresh_uses_a_credential_another_context_saved():
    store = Storage({"access_token": "at-1", "refresh_token": "rt-1", "expires_at": NOW - 1})

    def refresh(cred: Credential) -> dict:
        # Another notebook rotated the refresh token first; ours is now refused.
        store.cred = {"access_token": "at-9", "refresh_token": "rt-9", "expires_at": NOW + 3600}
        raise pk.ProviderError("auth", "auth", "invalid_grant", status=400)

    src = TokenSource(store.load, refresh, store.save, clock=lambda: NOW)
    assert src.get_token() == "at-9"


def test_a_refused_refresh_with_nothing_newer_says_sign_in_again():
    store = Storage({"access_token": "at-1", "refresh_token": "rt-1", "expires_at": NOW - 1})

    def refresh(cred: Credential) -> dict:
        raise pk.ProviderError("auth", "auth", "invalid_grant", status=400)

    src = TokenSource(store.load, refresh, store.save, clock=lambda: NOW)
    with pytest.raises(pk.ProviderError) as ei:
        src.get_token()
    assert ei.value.kind == "auth" and ei.value.code == "refresh_dead" and "sign in again" in str(ei.value)


def test_a_network_failure_keeps_the_credential():
    store = Storage({"access_token": "at-1", "refresh_token": "rt-1", "expires_at": NOW - 1})

    def refresh(cred: Credential) -> dict:
        raise pk.ProviderError("auth", "network", "connection refused")

    src = TokenSource(store.load, refresh, store.save, clock=lambda: NOW)
    with pytest.raises(pk.ProviderError) as ei:
        src.get_token()
    assert ei.value.kind == "network"
    assert store.cred["refresh_token"] == "rt-1" and store.saves == []


def test_nothing_stored_is_a_clear_error():
    src = TokenSource(lambda: None, lambda c: c)
    with pytest.raises(pk.ProviderError, match="sign in again"):
        src.get_token()


def test_with_token_refreshes_once_on_a_401_and_keeps_the_session(server):
    """The stored token looks valid but the server refuses it (revoked): refresh, try again."""
    store = Storage({"access_token": "at-old", "refresh_token": "rt-1", "expires_at": NOW + 60})
    src = TokenSource(
        store.load,
        lambda c: {"access_token": "at-new", "refresh_token": "rt-2", "expires_at": NOW + 3600},
        store.save,
        clock=lambda: NOW,
    )
    base_url = server.url(ByKey({"at-old": Status(401)}, default=Ok(text="signed in")))
    p = with_token(lambda **kw: pk.openai(model="gpt-test", base_url=base_url, id="openai", **kw), src)
    assert pk.collect_turn(p.create_stream(HISTORY)).message.content == "signed in"
    assert pk.collect_turn(p.create_stream(HISTORY)).message.content == "signed in"
    seen = server.requests_for(base_url)
    assert [credential(s) for s in seen] == ["at-old", "at-new", "at-new"]
    assert {s.body["prompt_cache_key"] for s in seen} == {p.instance_session_id}
    assert src.refreshes == 1 and p.model == "gpt-test"


def test_with_token_passes_the_given_session_id(server):
    store = Storage({"access_token": "at-1", "expires_at": NOW + 60})
    src = TokenSource(store.load, lambda c: c, store.save, clock=lambda: NOW)
    base_url = server.url(Ok())
    p = with_token(lambda **kw: pk.openai(model="gpt-test", base_url=base_url, id="openai", **kw), src, instance_session_id="conv-7")
    pk.collect_turn(p.create_stream(HISTORY))
    assert p.instance_session_id == "conv-7"
    assert server.requests_for(base_url)[0].body["prompt_cache_key"] == "conv-7"


def test_credentials_never_show():
    c = Credential("at-secret", "rt-secret", NOW)
    assert "secret" not in repr(c)
    assert Credential.from_dict(c.to_dict()) == c
    with pytest.raises(ValueError, match="access_token"):
        Credential.from_dict({"refresh_token": "x"})
