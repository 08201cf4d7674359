"""The registry: configuration, wiring, session ids, status, and the resume storm."""

from __future__ import annotations

import threading
from collections import Counter

import pytest

import providerkit_nb as pk
from providerkit_nb.wrappers.gate import GatedProvider
from providerkit_nb.wrappers.key_pool import KeyPoolProvider
from providerkit_nb.wrappers.retry import RetryProvider
from providerkit_nb.wrappers.watchdog import WatchdogProvider

from .helpers import HISTORY, sockets_to, wait_until
from .server import ByKey, Ok, StallHeaders, Status, credential

pytestmark = pytest.mark.timeout(60)


def test_provider_is_wired_gate_retry_watchdog_adapter_and_cached(server):
    reg = pk.Registry({"local": {"preset": "openai", "base_url": server.url(Ok()), "api_key": "sk-reg-secret"}})
    p = reg.provider("local/gpt-test")
    assert reg.provider("local/gpt-test") is p
    assert isinstance(p, GatedProvider) and p.gate is reg.gate("local")
    assert isinstance(p.inner, RetryProvider)
    assert isinstance(p.inner.inner, WatchdogProvider)
    assert p.model == "gpt-test" and p.id == "openai"
    assert pk.collect_turn(p.create_stream(HISTORY)).message.content == "Hello there"
    reg.close()


def test_one_session_id_per_model_for_the_life_of_the_registry(server):
    url = server.url(Ok())
    reg = pk.Registry({"local": {"preset": "openai", "base_url": url, "api_key": "sk-x"}})
    a = reg.provider("local/model-a")
    b = reg.provider("local/org/model-b")  # a model id may contain '/'
    assert b.model == "org/model-b"
    assert a.instance_session_id != b.instance_session_id
    for _ in range(2):
        pk.collect_turn(a.create_stream(HISTORY))
        pk.collect_turn(b.create_stream(HISTORY))
    pk.collect_turn(a.create_stream(HISTORY, session_id="conv-1"))
    sent = [(s.body["model"], s.body["prompt_cache_key"]) for s in server.requests_for(url)]
    sa, sb = a.instance_session_id, b.instance_session_id
    assert sent == [("model-a", sa), ("org/model-b", sb), ("model-a", sa), ("org/model-b", sb), ("model-a", "conv-1")]
    assert reg.session_id("local/model-a") == sa
    reg.close()


def test_key_pool_connection_keeps_the_models_session_across_keys(server):
    url = server.url(ByKey({"sk-a": Status(429, retry_after=30)}))
    reg = pk.Registry({"pool": {"preset": "openai", "base_url": url, "keys": ["sk-a", "sk-b"]}})
    p = reg.provider("pool/gpt-test")
    assert isinstance(p.inner.inner, KeyPoolProvider)
    pk.collect_turn(p.create_stream(HISTORY))
    seen = server.requests_for(url)
    assert [credential(s) for s in seen] == ["sk-a", "sk-b"]
    assert {s.body["prompt_cache_key"] for s in seen} == {p.instance_session_id}
    reg.close()


def test_watchdog_and_retry_settings_reach_the_wrappers(server):
    url = server.url(StallHeaders(), Ok(text="second try"))
    reg = pk.Registry({"local": {
        "preset": "openai", "base_url": url, "api_key": "sk-x",
        "watchdog": {"first_byte": 0.2}, "retry": {"base": 0.01},
    }})
    turn = pk.collect_turn(reg.provider("local/m").create_stream(HISTORY))
    assert turn.message.content == "second try"
    bare = pk.Registry({"local": {"preset": "openai", "base_url": url, "api_key": "sk-x",
                                  "watchdog": False, "retry": False}})
    p = bare.provider("local/m")
    assert isinstance(p, GatedProvider) and not isinstance(p.inner, RetryProvider | WatchdogProvider)
    reg.close()
    bare.close()


def test_secrets_never_show(server):
    reg = pk.Registry({
        "a": {"preset": "openai", "base_url": server.url(Ok()), "api_key": "sk-very-secret-1"},
        "b": {"preset": "openai", "base_url": server.url(Ok()), "keys": ["sk-very-secret-2"], "paid_key": "sk-very-secret-3"},
    })
    p = reg.provider("a/m")
    reg.provider("b/m")
    text = repr(reg) + str(reg.status()) + repr(p) + repr(reg.connections)
    assert "very-secret" not in text
    assert "max_concurrent=4" in repr(reg)
    reg.close()


def test_status_for_the_views(server):
    reg = pk.Registry({"local": {"preset": "openai", "base_url": server.url(Ok(delay=0.3)), "api_key": "sk-x",
                                 "max_concurrent": 1}})
    p = reg.provider("local/m")
    threads = [threading.Thread(target=lambda: pk.collect_turn(p.create_stream(HISTORY))) for _ in range(3)]
    for t in threads:
        t.start()
    assert wait_until(lambda: reg.status()["local"]["queued"] == 2)
    st = reg.status()["local"]
    assert st["in_use"] == 1 and st["max_concurrent"] == 1 and st["models"] == ["m"]
    assert st["credential"] == "api key"
    for t in threads:
        t.join(5)
    st = reg.status()["local"]
    assert st["in_use"] == 0 and st["granted"] == 3 and len(st["recent_waits"]) == 3
    assert st["max_wait"] >= 0.25  # the third caller waited for two 0.3 s answers
    reg.close()


def test_configuration_from_toml(tmp_path, server):
    path = tmp_path / "providers.toml"
    path.write_text(
        f"""
[connections.work]
preset = "openai"
base_url = "{server.url(Ok(text='from toml'))}"
api_key_env = "MY_TEST_KEY"
max_concurrent = 2

[connections.work.watchdog]
idle = 30
""",
        encoding="utf-8",
    )
    reg = pk.Registry.from_toml(path, environ={"MY_TEST_KEY": "sk-from-env"})
    assert reg.gate("work").limit == 2
    p = reg.provider("work/gpt-test")
    assert p.inner.inner.idle == 30
    assert pk.collect_turn(p.create_stream(HISTORY)).message.content == "from toml"
    assert credential(server.seen[-1]) == "sk-from-env"
    reg.close()
    path.write_text("[connections.work\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid TOML"):
        pk.Registry.from_toml(path)


def test_configuration_from_environment(server):
    env = {
        "PROVIDERKIT_CONNECTIONS": "local,pool",
        "PROVIDERKIT_LOCAL_PRESET": "openai",
        "PROVIDERKIT_LOCAL_BASE_URL": server.url(Ok()),
        "PROVIDERKIT_LOCAL_API_KEY": "sk-env",
        "PROVIDERKIT_LOCAL_MAX_CONCURRENT": "3",
        "PROVIDERKIT_POOL_PRESET": "openai",
        "PROVIDERKIT_POOL_KEYS": "sk-1, sk-2",
    }
    reg = pk.Registry.from_env(environ=env)
    assert reg.gate("local").limit == 3 and reg.gate("pool").limit == 4
    assert reg.connections["pool"].credential == "key pool (2 keys)"
    assert pk.collect_turn(reg.provider("local/m").create_stream(HISTORY)).finish_reason == "stop"
    with pytest.raises(ValueError, match="PROVIDERKIT_CONNECTIONS"):
        pk.Registry.from_env(environ={})
    reg.close()


def test_bad_configuration_says_what_to_do():
    with pytest.raises(ValueError, match="unknown preset"):
        pk.Registry({"x": {"preset": "no-such-preset"}})
    with pytest.raises(ValueError, match="exactly one of preset"):
        pk.Registry({"x": {}})
    with pytest.raises(ValueError, match="max_concurrent"):
        pk.Registry({"x": {"preset": "openai", "max_concurrent": 0}})
    with pytest.raises(ValueError, match="unknown setting"):
        pk.Registry({"x": {"preset": "openai", "max_concurent": 2}})
    with pytest.raises(ValueError, match="one kind of credential"):
        pk.Registry({"x": {"preset": "openai", "api_key": "a", "keys": ["b"]}})
    reg = pk.Registry({"x": {"preset": "openai", "api_key": "sk"}})
    with pytest.raises(ValueError, match="connection/model"):
        reg.provider("x")
    with pytest.raises(KeyError, match="known: x"):
        reg.provider("y/m")


def test_an_adapter_factory_connection(server):
    url = server.url(Ok(text="factory"))
    built: list[dict] = []

    def factory(**kw):
        built.append({k: v for k, v in kw.items() if k != "api_key"})
        return pk.openai(base_url=url, **kw)

    reg = pk.Registry()
    reg.add("mine", factory=factory, api_key="sk-f", max_concurrent=2)
    p = reg.provider("mine/some-model")
    assert pk.collect_turn(p.create_stream(HISTORY)).message.content == "factory"
    assert built == [{"model": "some-model", "instance_session_id": p.instance_session_id}]
    reg.close()


@pytest.mark.timeout(120)
def test_resume_storm_1000_conversations_through_4_slots(server):
    """Every conversation that was running resumes at the same moment."""
    n = 1000
    url = server.url(Ok(delay=0.004, pieces=2))
    # threads of earlier tests (an asyncio executor, tqdm's monitor) may end meanwhile: only
    # the threads this storm starts must be gone at the end
    threads_before = set(threading.enumerate())
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    assert sockets_to(port) == []
    reg = pk.Registry({"local": {"preset": "openai", "base_url": url, "api_key": "sk-storm", "max_concurrent": 4}})
    provider = reg.provider("local/gpt-test")
    start = threading.Barrier(n)
    results: dict[int, str] = {}
    order: dict[int, tuple[int, int]] = {}
    errors: list[BaseException] = []

    def resume(i: int) -> None:
        try:
            start.wait()
            s = provider.create_stream(HISTORY, session_id=f"conv-{i}")
            results[i] = pk.collect_turn(s).message.content
            order[i] = (s.info["gate_arrived"], s.info["gate_granted"])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=resume, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(100)
    assert not errors
    assert len(results) == n and set(results.values()) == {"Hello there"}
    assert server.peak == 4
    seen = server.requests_for(url)
    twice = Counter(s.body["prompt_cache_key"] for s in seen)
    assert len(seen) == n, [(s.body["prompt_cache_key"], s.outcome) for s in seen if twice[s.body["prompt_cache_key"]] > 1]
    assert {s.body["prompt_cache_key"] for s in seen} == {f"conv-{i}" for i in range(n)}
    # FIFO: taken in the order the gate saw them arrive, every one of them
    by_arrival = [granted for _, granted in sorted(order.values())]
    assert by_arrival == list(range(n))
    st = reg.status()["local"]
    assert st["in_use"] == 0 and st["queued"] == 0 and st["granted"] == n
    reg.close()
    assert wait_until(lambda: server.connections == 0 and server.in_flight == 0)
    def new_threads() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t not in threads_before and t not in threads]

    assert wait_until(lambda: not new_threads()), new_threads()
    assert not any(t.is_alive() for t in threads)
    # no socket to the server is left open in this process (counted by the server's port, so
    # files other tests' threads open or close meanwhile do not count)
    assert wait_until(lambda: sockets_to(port) == []), sockets_to(port)
