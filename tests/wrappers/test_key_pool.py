"""Key pools against a real server that answers per key."""

from __future__ import annotations

import pytest

import providerkit_nb as pk
from providerkit_nb.core.turn import TextDelta
from providerkit_nb.wrappers import with_key_pool
from providerkit_nb.wrappers.key_pool import NoAvailableKeyError

from .helpers import HISTORY
from .server import ByKey, Ok, Status, StreamError, credential

pytestmark = pytest.mark.timeout(60)


class Clock:
    """The pool's clock, moved by the test (benches last minutes to hours)."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def pool(server, behaviour, keys, paid_key=None, **kw):
    base_url = server.url(behaviour)

    def factory(**k):
        return pk.openai(model="gpt-test", base_url=base_url, id="openai", **k)  # stands in for OpenAI

    return with_key_pool(factory, keys, paid_key, **kw), base_url


def keys_seen(server, base_url):
    return [credential(s) for s in server.requests_for(base_url)]


def test_free_keys_round_robin(server):
    p, url = pool(server, Ok(), ["sk-a", "sk-b", "sk-c"])
    for _ in range(4):
        assert pk.collect_turn(p.create_stream(HISTORY)).message.content == "Hello there"
    assert keys_seen(server, url) == ["sk-a", "sk-b", "sk-c", "sk-a"]
    p.close()


def test_a_throttled_key_is_benched_for_the_servers_hint_and_the_paid_key_comes_last(server):
    clock = Clock()
    behaviour = ByKey({"sk-a": Status(429, retry_after=30), "sk-b": Status(429, retry_after=0.2)})
    evicted: list[dict] = []
    p, url = pool(server, behaviour, ["sk-a", "sk-b"], paid_key="sk-paid", clock=clock, on_evict=evicted.append)
    assert pk.collect_turn(p.create_stream(HISTORY)).finish_reason == "stop"
    assert keys_seen(server, url) == ["sk-a", "sk-b", "sk-paid"]
    # 30 s as the server said; 0.2 s is raised to the 1 s floor
    assert evicted == [
        {"key": "free 1", "kind": "rate", "for": 30.0},
        {"key": "free 2", "kind": "rate", "for": 1.0},
    ]
    assert pk.collect_turn(p.create_stream(HISTORY)).finish_reason == "stop"
    assert keys_seen(server, url)[3:] == ["sk-paid"]  # both free keys still benched
    clock.t += 1.5  # free 2 is back (and still throttled: benched again), free 1 is not
    pk.collect_turn(p.create_stream(HISTORY))
    assert keys_seen(server, url)[4:] == ["sk-b", "sk-paid"]
    st = {r["key"]: r for r in p.status()}
    assert st["free 1"]["kind"] == "rate" and st["free 1"]["benched_for"] == pytest.approx(28.5)
    assert st["free 2"]["benched_for"] == pytest.approx(1.0)
    assert st["paid"]["benched_for"] == 0
    p.close()


@pytest.mark.parametrize(
    ("status", "kind", "bench"),
    [(402, "quota", 3600.0), (401, "auth", 12 * 3600.0), (529, "overload", 60.0)],
)
def test_bench_time_depends_on_the_kind(server, status, kind, bench):
    evicted: list[dict] = []
    p, url = pool(server, ByKey({"sk-a": Status(status)}), ["sk-a", "sk-b"], clock=Clock(), on_evict=evicted.append)
    assert pk.collect_turn(p.create_stream(HISTORY)).finish_reason == "stop"
    assert keys_seen(server, url) == ["sk-a", "sk-b"]
    assert evicted == [{"key": "free 1", "kind": kind, "for": bench}]
    p.close()


def test_a_single_key_is_never_benched(server):
    p, url = pool(server, Status(429, retry_after=5), ["sk-only"], clock=Clock())
    for _ in range(2):
        with pytest.raises(pk.ProviderError) as ei:
            pk.collect_turn(p.create_stream(HISTORY))
        assert ei.value.kind == "rate" and not isinstance(ei.value, NoAvailableKeyError)
    assert keys_seen(server, url) == ["sk-only", "sk-only"]
    p.close()


@pytest.mark.parametrize("status", [400, 404])
def test_failures_every_key_would_share_are_raised_without_rotating(server, status):
    p, url = pool(server, Status(status), ["sk-a", "sk-b"], clock=Clock())
    with pytest.raises(pk.ProviderError) as ei:
        pk.collect_turn(p.create_stream(HISTORY))
    assert ei.value.status == status
    assert keys_seen(server, url) == ["sk-a"]
    assert all(r["benched_for"] == 0 for r in p.status())
    p.close()


def test_no_rotation_after_the_first_chunk(server):
    """A rate error in the stream after text was delivered is the answer's, not the key's."""
    p, url = pool(server, ByKey({"sk-a": StreamError(before=1, message="Rate limit reached", code=429)}),
                  ["sk-a", "sk-b"], clock=Clock())
    texts = []
    with pytest.raises(pk.ProviderError) as ei:
        for c in p.create_stream(HISTORY):
            if isinstance(c, TextDelta) and c.text:
                texts.append(c.text)
    assert ei.value.kind == "rate"
    assert texts == ["p0 "] and keys_seen(server, url) == ["sk-a"]
    assert all(r["benched_for"] == 0 for r in p.status())
    p.close()


def test_an_in_stream_error_before_content_rotates(server):
    p, url = pool(server, ByKey({"sk-a": StreamError(before=0, message="Rate limit reached", code=429)}),
                  ["sk-a", "sk-b"], clock=Clock())
    assert pk.collect_turn(p.create_stream(HISTORY)).message.content == "Hello there"
    assert keys_seen(server, url) == ["sk-a", "sk-b"]
    p.close()


def test_all_keys_benched_says_when_the_first_returns(server):
    clock = Clock()
    p, url = pool(server, Status(429, retry_after=20), ["sk-a", "sk-b"], clock=clock)
    with pytest.raises(NoAvailableKeyError) as ei:
        pk.collect_turn(p.create_stream(HISTORY))
    assert ei.value.kind == "rate" and ei.value.retry_after == pytest.approx(20.0)
    assert isinstance(ei.value.__cause__, pk.ProviderError)
    clock.t += 5
    with pytest.raises(NoAvailableKeyError) as ei:  # nothing to try: no request at all
        pk.collect_turn(p.create_stream(HISTORY))
    assert ei.value.retry_after == pytest.approx(15.0)
    assert len(server.requests_for(url)) == 2
    p.close()


def test_one_session_id_for_every_key(server):
    p, url = pool(server, Ok(), ["sk-a", "sk-b", "sk-c"])
    for _ in range(3):
        pk.collect_turn(p.create_stream(HISTORY))
    sent = {s.body["prompt_cache_key"] for s in server.requests_for(url)}
    assert sent == {p.instance_session_id}
    fixed, url2 = pool(server, Ok(), ["sk-a", "sk-b"], instance_session_id="conv-42")
    pk.collect_turn(fixed.create_stream(HISTORY))
    pk.collect_turn(fixed.create_stream(HISTORY))
    assert {s.body["prompt_cache_key"] for s in server.requests_for(url2)} == {"conv-42"}
    p.close()
    fixed.close()


def test_keys_never_show_and_blank_keys_are_dropped(server):
    p, _ = pool(server, Ok(), ["", "sk-secret-a", ""], paid_key="sk-secret-paid")
    assert p.size == 2
    text = repr(p) + str(p.status())
    assert "sk-secret" not in text
    with pytest.raises(ValueError, match="at least one key"):
        pool(server, Ok(), ["", ""])
    with pytest.raises(TypeError, match="list of keys"):
        pool(server, Ok(), "sk-a")
    p.close()


def test_complete_rotates_too(server):
    p, url = pool(server, ByKey({"sk-a": Status(429, retry_after=9)}), ["sk-a", "sk-b"], clock=Clock())
    assert p.complete(HISTORY).message.content == "Hello there"
    assert keys_seen(server, url) == ["sk-a", "sk-b"]
    p.close()
