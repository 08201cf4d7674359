"""The project's own constructed Chat cassettes (cassettes/openai_chat_*.yaml, see its README) replay to
the outcome each one was written to produce, over both transports; plus the replay command."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from providerkit_nb.testing.replay import load_interactions, replay_interaction
from tests.providers.cassette_loader import OWN, UPSTREAM

# file -> (kind, status, retry_after, text the message must quote)
OUTCOMES = {
    "rate_limit_429_retry_after": ("rate", 429, 20.0, "Please try again in 20s"),
    "server_error_500": ("overload", 500, None, "The server had an error"),
    "bad_gateway_502_html": ("overload", 502, None, "openai 502: 502 Bad Gateway"),
    "in_stream_error_frame": ("overload", 502, None, "Upstream error from DeepSeek"),
    "stream_cut_mid_turn": ("network", None, None, "the stream ended before the turn did"),
    "broken_history_dangling_tool_calls_400": ("invalid", 400, None, "must be followed by tool messages responding to each 'tool_call_id'"),
    "broken_history_orphan_tool_400": ("invalid", 400, None, "must be a response to a preceeding message with 'tool_calls'"),
    "deepseek_orphan_tool_400": ("invalid", 400, None, "Messages with role 'tool' must be a response to a preceding message"),
    "deepseek_thinking_missing_reasoning_400": ("invalid", 400, None, "The `reasoning_content` in the thinking mode must be passed back"),
}
OWN_FILES = sorted(OWN.glob("openai_chat_*.yaml"))


def test_every_own_cassette_is_listed_and_labelled() -> None:
    assert sorted(p.stem.removeprefix("openai_chat_") for p in OWN_FILES) == sorted(OUTCOMES)
    readme = (OWN / "README.md").read_text()
    for p in OWN_FILES:
        assert p.name in readme
    assert "constructed" in readme.lower()
    for p in OWN_FILES:
        assert p.read_text().startswith("# CONSTRUCTED, not recorded:")


@pytest.mark.parametrize("transport", ["httpx", "requests"])
@pytest.mark.parametrize("path", OWN_FILES, ids=lambda p: p.stem)
def test_own_cassette_outcome(path: Path, transport: str) -> None:
    kind, status, retry_after, quote = OUTCOMES[path.stem.removeprefix("openai_chat_")]
    (it,) = load_interactions(path)
    r = replay_interaction(path, it, transport)
    assert r.built and not r.ok
    assert (r.error["kind"], r.error["status"], r.error["retry_after"]) == (kind, status, retry_after)
    assert quote in r.error["message"]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "providerkit_nb", "replay", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.upstream
def test_replay_command_json_lines() -> None:
    out = _cli(str(UPSTREAM / "pydantic-ai" / "test_tool_use_failed_error_streaming.yaml"), "--json", "--transport", "requests")
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert [(d["interaction"], d["wire"], d["ok"]) for d in lines] == [(0, "openai_chat", False), (1, "openai_chat", True), (2, "openai_chat", True)]
    assert lines[0]["error"]["kind"] == "invalid" and lines[2]["turn"]["finish_reason"] == "stop"


def test_replay_reads_gzip_and_parsed_body_and_refuses_unreadable_files(tmp_path: Path) -> None:
    body = b'data: {"choices":[{"index":0,"delta":{"content":"zipped"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    doc = {"version": 1, "interactions": [{
        "request": {"method": "POST", "uri": "https://api.openai.com/v1/chat/completions", "headers": {},
                    "parsed_body": {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}},
        "response": {"status": {"code": 200, "message": "OK"},
                     "headers": {"Content-Encoding": ["gzip"], "content-type": ["text/event-stream"]},
                     "body": {"string": gzip.compress(body)}}}]}
    f = tmp_path / "zipped.yaml"
    f.write_text(yaml.safe_dump(doc))
    for transport in ("httpx", "requests"):
        out = _cli(str(f), "--json", "--transport", transport)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["turn"]["message"]["content"] == "zipped"
    bad = tmp_path / "bad.yaml"
    bad.write_text("interactions: [")
    out = _cli(str(bad))
    assert out.returncode != 0 and "not valid YAML" in out.stderr
    out = _cli(str(tmp_path / "missing.yaml"))
    assert out.returncode != 0 and "no such file" in out.stderr


def test_unbuilt_wire_is_reported_not_skipped(tmp_path: Path) -> None:
    doc = {"version": 1, "interactions": [{
        "request": {"method": "POST", "uri": "https://example.invalid/v9/embeddings", "headers": {}, "body": "{}"},
        "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": "{}"}}}]}
    f = tmp_path / "other.yaml"
    f.write_text(yaml.safe_dump(doc))
    out = _cli(str(f), "--json")
    assert out.returncode == 0
    line = json.loads(out.stdout)
    assert line["ok"] is False and line["built"] is False and "no wire speaks" in line["error"]["message"]


def test_cut_stream_keeps_a_partial_for_display() -> None:
    import providerkit_nb as pk
    from providerkit_nb.core.errors import ProviderError
    from providerkit_nb.providers.openai_chat import replay_provider
    from providerkit_nb.wire.openai_chat import import_request
    from tests.providers.cassette_loader import chopped_transport

    (it,) = load_interactions(OWN / "openai_chat_stream_cut_mid_turn.yaml")
    imported = import_request(it.url, it.request_json)
    p = replay_provider(it.url, it.request_json, chopped_transport(200, it.response_body, seed=5))
    with pytest.raises(ProviderError) as e:
        pk.collect_turn(p.create_stream(imported.messages, imported.tools))
    part = e.value.partial
    assert not part.finished and part.message.content == "Let me read it."
    assert [(c.id, c.name, c.arguments) for c in part.message.tool_calls] == [("call_constructedCut01", "read_file", '{"path": "READ')]
