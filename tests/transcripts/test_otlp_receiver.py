"""The OTLP/HTTP receiver, fed by the real OpenTelemetry SDK and OTLP HTTP exporter (protobuf,
as agents send by default) and by plain JSON posts; a bounded flood shows what it keeps stays
capped. All traffic is to 127.0.0.1."""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest

# the test extra installs these (no skip: a missing exporter must fail the run)
from opentelemetry.exporter.otlp.proto.http import trace_exporter as otlp_http
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import providerkit_nb as pk


def _post(url: str, path: str, body: bytes, ctype: str = "application/json") -> tuple[int, dict[str, Any]]:
    host, port = url.removeprefix("http://").split(":")
    c = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        c.request("POST", path, body=body, headers={"Content-Type": ctype})
        r = c.getresponse()
        data = r.read()
        return r.status, (json.loads(data) if data else {})
    finally:
        c.close()


@pytest.fixture
def receiver():
    r = pk.otlp_receiver(port=0)
    yield r
    r.close()


def _agent_run(endpoint: str, *, finish: bool, gzip: bool = False) -> tuple[str, str]:
    """One agent run with the real SDK: a model span whose output asks for a tool, the tool span,
    and (if ``finish``) a second model span that saw the result. Returns (trace id, call id)."""
    provider = TracerProvider()
    from opentelemetry.exporter.otlp.proto.http import Compression

    exporter = otlp_http.OTLPSpanExporter(
        endpoint=f"{endpoint}/v1/traces", compression=Compression.Gzip if gzip else Compression.NoCompression
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test-agent")
    user = [{"role": "user", "parts": [{"type": "text", "content": "weather in Oslo?"}]}]
    call = {"type": "tool_call", "id": "call_oslo", "name": "get_weather", "arguments": {"city": "Oslo"}}
    asked = [{"role": "assistant", "parts": [call], "finish_reason": "tool_calls"}]
    with tracer.start_as_current_span("invoke_agent w") as agent:
        agent.set_attribute("gen_ai.operation.name", "invoke_agent")
        with tracer.start_as_current_span("chat m") as s:
            s.set_attribute("gen_ai.operation.name", "chat")
            s.set_attribute("gen_ai.provider.name", "openai")
            s.set_attribute("gen_ai.input.messages", json.dumps(user))
            s.set_attribute("gen_ai.output.messages", json.dumps(asked))
        with tracer.start_as_current_span("execute_tool get_weather") as s:
            s.set_attribute("gen_ai.operation.name", "execute_tool")
            s.set_attribute("gen_ai.tool.call.id", "call_oslo")
            s.set_attribute("gen_ai.tool.call.result", "snow, -3")
        if finish:
            with tracer.start_as_current_span("chat m") as s:
                result = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_oslo", "response": "snow, -3"}]}
                s.set_attribute("gen_ai.operation.name", "chat")
                s.set_attribute("gen_ai.input.messages", json.dumps(user + asked + [result]))
                s.set_attribute("gen_ai.output.messages", json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": "Snowy."}]}]))
        trace_id = format(agent.get_span_context().trace_id, "032x")
    provider.shutdown()
    return trace_id, "call_oslo"


def test_real_exporter_protobuf_run_is_inspected(receiver):
    trace_id, _ = _agent_run(receiver.url, finish=True)
    assert receiver.traces() == [trace_id]
    assert receiver.span_count() == 4
    report = pk.inspect(receiver)
    assert report.format == "otel" and report.thread == trace_id
    assert [m.role for m in report.messages] == ["user", "assistant", "tool", "assistant"]
    assert report.valid, report.problems


def test_real_exporter_run_cut_after_the_tool_offers_its_result(receiver):
    trace_id, call = _agent_run(receiver.url, finish=False, gzip=True)  # gzip-compressed protobuf
    assert receiver.refused == 0
    report = pk.inspect(receiver, thread=trace_id)
    assert [m.kind for m in report.markers] == ["tool_ran_unseen"]
    assert report.repaired.messages[-1].content == "snow, -3"


def test_json_and_several_traces_are_listed(receiver):
    a, _ = _agent_run(receiver.url, finish=True)
    span = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "chat x", "startTimeUnixNano": "1", "endTimeUnixNano": "2",
            "attributes": [{"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": "hi"}]}])}}]}
    status, _ = _post(receiver.url, "/v1/traces", json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode())
    assert status == 200
    report = pk.inspect(receiver)
    assert report.needs_thread and sorted(report.threads) == sorted([a, "ab" * 16])
    assert pk.inspect(receiver, thread="ab" * 16).messages[0].content == "hi"


def test_refusals_are_clear_http_errors():
    with pk.otlp_receiver(port=0, max_body=1000) as r:
        status, body = _post(r.url, "/v1/traces", b"{" + b" " * 2000 + b"}")
        assert status == 413 and "1000" in body["message"]
        assert _post(r.url, "/v1/traces", b"not json")[0] == 400
        assert _post(r.url, "/v1/traces", b"{}", ctype="text/plain")[0] == 415
        assert _post(r.url, "/v1/metrics", b"{}")[0] == 404
        assert _post(r.url, "/v1/traces", b"\x0a\xff\xff", ctype="application/x-protobuf")[0] == 400
        assert r.refused == 5 and r.traces() == []


def test_a_flood_keeps_memory_capped():
    """600 requests of 20 spans each, every request a new trace: the receiver keeps the newest
    ``max_traces`` and never more than ``max_bytes`` of request body behind them."""
    with pk.otlp_receiver(port=0, max_traces=50, max_bytes=200_000) as r:
        big = "x" * 400
        for n in range(600):
            spans = [{"traceId": f"{n:032x}", "spanId": f"{k + 1:016x}", "name": big, "startTimeUnixNano": "1"}
                     for k in range(20)]
            body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode()
            assert _post(r.url, "/v1/traces", body)[0] == 200
            assert len(r.traces()) <= 50 and r.held_bytes <= 200_000
        assert r.received == 600
        assert r.dropped_traces >= 550
        assert r.traces()[-1] == f"{599:032x}"  # the newest is kept


def test_watch_redraws_when_a_run_arrives(receiver):
    """The live view wakes on the receiver, not on a timer: after the real exporter returns, its
    table names the new run (waited for up to 10 s; the latency is measured by hand, not here)."""
    import time

    watch = pk.watch_traces(receiver)
    try:
        assert "<td><code>" not in watch.widget.value  # nothing yet
        trace_id, _ = _agent_run(receiver.url, finish=False)
        deadline = time.monotonic() + 10
        while "tool_ran_unseen" not in watch.widget.value and time.monotonic() < deadline:
            time.sleep(0.02)
        assert trace_id in watch.widget.value and "tool_ran_unseen" in watch.widget.value
    finally:
        watch.stop()


def test_log_records_alone_are_held_and_read(receiver):
    """What an agent exporting only its log records sends (the openai-v2 instrumentation's
    details records, with and without trace ids): the conversations are there to inspect."""
    from .conftest import FIXTURES

    for name in ("openai_v2_logs_only", "openai_v2_logs_untraced"):
        for line in (FIXTURES / "otel" / name / "logs.jsonl").read_text(encoding="utf-8").splitlines():
            assert _post(receiver.url, "/v1/logs", line.encode())[0] == 200
    traced = {json.loads(line)["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]["traceId"]
              for line in (FIXTURES / "otel" / "openai_v2_logs_only" / "logs.jsonl").read_text().splitlines()}
    assert sorted(receiver.traces()) == sorted(traced)  # the untraced ones are held, not listed as traces
    report = pk.inspect(receiver)
    assert sorted(report.threads) == sorted([*traced, "untraced-1", "untraced-2"])
    assert [m.role for m in pk.inspect(receiver, thread="untraced-1").messages] == [
        "system", "user", "assistant", "tool", "assistant"]
