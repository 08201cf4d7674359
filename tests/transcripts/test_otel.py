"""OpenTelemetry GenAI traces: the fixtures under fixtures/otel/ were written by the real
instrumentations (openai-v2 + opentelemetry-util-genai, OpenLLMetry, OpenInference) through the
real OTLP exporter (see VERSIONS.json and scripts/make_transcript_fixtures/otel.py). Expectations
come from the files, read here with plain ``json``; damaged copies are made in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

import providerkit_nb as pk
from providerkit_nb.transcripts import MultipleThreads, TranscriptError, load
from providerkit_nb.transcripts.otel import messages_from_parts

from .conftest import FIXTURES

OTEL = FIXTURES / "otel"
COMPLETE = ("openai_v2_latest", "openai_v2_events", "openllmetry", "openinference")


def _spans(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in (path / "traces.jsonl").read_text(encoding="utf-8").splitlines():
        for rs in json.loads(line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                out += ss["spans"]
    return out


def _attrs(span: dict[str, Any]) -> dict[str, Any]:
    return {a["key"]: next(iter(a["value"].values())) for a in span.get("attributes", [])}


def _tool_result(path: Path) -> tuple[str, str]:
    """(call id, recorded result) of the run's one execute_tool span."""
    [tool] = [a for a in map(_attrs, _spans(path)) if a.get("gen_ai.operation.name") == "execute_tool"]
    return tool["gen_ai.tool.call.id"], tool["gen_ai.tool.call.result"]


def _last_model_output_calls(path: Path) -> tuple[str, list[str]]:
    """(span id, call ids) of the last model span's output, from its gen_ai.output.messages."""
    model = [s for s in _spans(path) if _attrs(s).get("gen_ai.operation.name") == "chat"]
    last = max(model, key=lambda s: int(s["startTimeUnixNano"]))
    out = json.loads(_attrs(last)["gen_ai.output.messages"])
    return last["spanId"], [p["id"] for m in out for p in m["parts"] if p["type"] == "tool_call"]


@pytest.mark.parametrize("name", COMPLETE)
def test_complete_run_loads_as_one_valid_conversation(name):
    path = OTEL / name
    report = pk.inspect(path)
    assert report.format == "otel"
    [trace] = {s["traceId"] for s in _spans(path)}
    assert report.thread == trace
    assert report.valid, report.problems
    assert [m.role for m in report.messages] == ["system", "user", "assistant", "tool", "assistant"]
    [tool] = [a for a in map(_attrs, _spans(path)) if a.get("gen_ai.operation.name") == "execute_tool"]
    call_id = tool["gen_ai.tool.call.id"]
    assert report.messages[2].tool_calls[0].id == call_id
    assert report.messages[3].tool_call_id == call_id
    assert json.loads(report.messages[3].content) == {"city": "Paris", "sky": "rainy", "celsius": 12}  # the fixture's tool
    assert report.messages[4].content == "It is rainy in Paris, 12 degrees."  # the fixture server's answer
    assert not report.interrupted
    assert report.wire == "openai_chat"


def test_each_dialect_is_named():
    dialects = {n: load(OTEL / n).meta["dialects"] for n in COMPLETE}
    assert dialects == {
        "openai_v2_latest": ["attributes"],
        "openai_v2_events": ["events"],  # EVENT_ONLY: the spans carry no content at all
        "openllmetry": ["attributes"],
        "openinference": ["openinference"],
    }
    raw = [_attrs(s) for s in _spans(OTEL / "openai_v2_events")]
    assert not any("gen_ai.input.messages" in a for a in raw)


def test_a_traces_file_alone_and_a_single_request_load(tmp_path):
    path = OTEL / "openllmetry" / "traces.jsonl"
    assert load(path).format == "otel"
    lines = path.read_text(encoding="utf-8").splitlines()
    merged: dict[str, Any] = {"resourceSpans": []}
    for line in lines:
        merged["resourceSpans"] += json.loads(line)["resourceSpans"]
    one = tmp_path / "request.json"
    one.write_text(json.dumps(merged, indent=2), encoding="utf-8")
    t = load(one)
    assert [m.role for m in t.messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert load(merged).messages == t.messages  # a parsed request too


def test_killed_mid_tool_is_a_dangling_call_naming_its_spans():
    path = OTEL / "openai_v2_killed_mid_tool"
    span_id, calls = _last_model_output_calls(path)
    assert calls and not any(
        _attrs(s).get("gen_ai.operation.name") == "execute_tool" for s in _spans(path)
    ), "the killed run should have lost its tool span"
    report = pk.inspect(path)
    [marker] = [m for m in report.markers if m.kind == "dangling_call"]
    assert marker.ids == calls and span_id in marker.text
    assert [r.original_id for r in report.interrupted] == calls
    assert any(p.rule == "dangling_call" for p in report.problems)
    assert any("parent span never arrived" in w for w in report.warnings)
    assert pk.validate_history(report.repaired.messages, wire=report.wire) == []


def test_tool_that_ran_unseen_offers_its_recorded_result():
    path = OTEL / "openai_v2_killed_after_tool"
    call_id, result = _tool_result(path)
    report = pk.inspect(path)
    [marker] = [m for m in report.markers if m.kind == "tool_ran_unseen"]
    assert marker.ids == [call_id]
    [r] = report.interrupted
    assert r.original_id == call_id and r.note == result
    answer = report.repaired.messages[-1]
    assert answer.role == "tool" and answer.tool_call_id == call_id and answer.content == result
    assert any(c.kind == "recorded_result" for c in report.repaired.changes)
    assert pk.validate_history(report.repaired.messages, wire=report.wire) == []


def _copy(src: Path, dst: Path, edit) -> Path:
    dst.mkdir()
    lines = []
    for line in (src / "traces.jsonl").read_text(encoding="utf-8").splitlines():
        req = json.loads(line)
        for rs in req["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for s in ss["spans"]:
                    edit(s)
        lines.append(json.dumps(req))
    (dst / "traces.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return dst


def test_several_runs_are_listed_and_picked_by_trace_or_conversation_id(tmp_path):
    a, b = OTEL / "openai_v2_latest" / "traces.jsonl", OTEL / "openllmetry" / "traces.jsonl"
    both = tmp_path / "both.jsonl"
    both.write_text(a.read_text() + b.read_text(), encoding="utf-8")
    ta, tb = ({s["traceId"] for s in _spans(p.parent)}.pop() for p in (a, b))
    with pytest.raises(MultipleThreads) as e:
        load(both)
    assert sorted(e.value.threads) == sorted([ta, tb])
    assert pk.inspect(both).needs_thread
    assert load(both, thread=tb).meta["traces"] == [tb]

    def tag(s: dict[str, Any]) -> None:
        s["attributes"].append({"key": "gen_ai.conversation.id", "value": {"stringValue": "conv-7"}})

    tagged = _copy(OTEL / "openinference", tmp_path / "tagged", tag)
    t = load(tagged, thread="conv-7")
    assert t.thread == "conv-7" and len(t.messages) == 5
    with pytest.raises(TranscriptError, match="conv-8"):
        load(tagged, thread="conv-8")


def test_failed_and_unfinished_tool_spans_are_markers(tmp_path):
    def fail(s: dict[str, Any]) -> None:
        if s["name"].startswith("execute_tool"):
            s["status"] = {"code": 2, "message": "weather service down"}

    def unfinished(s: dict[str, Any]) -> None:
        if s["name"].startswith("execute_tool"):
            del s["endTimeUnixNano"]

    failed = load(_copy(OTEL / "openllmetry", tmp_path / "failed", fail))
    assert [(m.kind, "weather service down" in m.text) for m in failed.markers] == [("tool_error", True)]
    open_ = load(_copy(OTEL / "openllmetry", tmp_path / "open", unfinished))
    assert [m.kind for m in open_.markers] == ["tool_unfinished"]


def test_truncated_line_is_a_warning_not_an_error(tmp_path):
    src = (OTEL / "openai_v2_latest" / "traces.jsonl").read_text(encoding="utf-8")
    cut = tmp_path / "traces.jsonl"
    cut.write_text(src[: len(src) - 200], encoding="utf-8")  # the last request torn
    t = load(cut)
    assert t.skipped.get("malformed_line") == 1
    assert any("line" in w and "not valid JSON" in w for w in t.warnings)


def test_wrong_typed_attributes_and_non_json_messages(tmp_path):
    def damage(s: dict[str, Any]) -> None:
        for a in s["attributes"]:
            if a["key"] == "gen_ai.usage.input_tokens":
                a["value"] = {"intValue": "many"}
            if a["key"] == "gen_ai.input.messages":
                a["value"] = {"stringValue": "[{'role': 'user'"}  # not JSON
        if s["name"].startswith("execute_tool"):
            s["attributes"] = "not a list"

    t = load(_copy(OTEL / "openllmetry", tmp_path / "bad", damage))
    assert t.skipped.get("malformed_messages", 0) >= 1
    assert t.skipped.get("malformed_attribute", 0) >= 1
    assert any("gen_ai.input.messages is not JSON" in w for w in t.warnings)
    assert [m.role for m in t.messages] == ["assistant"]  # the last call's output survives


@pytest.mark.parametrize("content", ["", "\n\n", "{}\n", '{"resourceSpans": 3}\n', "[1, 2]"])
def test_nothing_readable_is_our_error(tmp_path, content):
    p = tmp_path / "traces.jsonl"
    p.write_text(content, encoding="utf-8")
    with pytest.raises(TranscriptError):
        load(p, format="otel")


def test_legacy_per_message_events_as_log_records():
    """Constructed (no instrumentation writes these any more): the older event names, one
    message per log record body, tied to a model span by trace and span id."""
    trace, span = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"

    def kv(d: dict[str, Any]) -> dict[str, Any]:
        def val(v: Any) -> dict[str, Any]:
            if isinstance(v, dict):
                return {"kvlistValue": {"values": [{"key": k, "value": val(x)} for k, x in v.items()]}}
            if isinstance(v, list):
                return {"arrayValue": {"values": [val(x) for x in v]}}
            return {"stringValue": v}
        return val(d)

    def rec(name: str, body: dict[str, Any], at: int) -> dict[str, Any]:
        return {"timeUnixNano": str(at), "traceId": trace, "spanId": span, "eventName": name, "body": kv(body)}

    call = {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "x"}'}}
    logs = {"resourceLogs": [{"scopeLogs": [{"logRecords": [
        rec("gen_ai.user.message", {"content": "find x"}, 1),
        rec("gen_ai.choice", {"index": "0", "finish_reason": "tool_calls",
                              "message": {"role": "assistant", "tool_calls": [call]}}, 2),
    ]}]}]}
    spans = {"resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": trace, "spanId": span, "name": "chat m", "startTimeUnixNano": "1", "endTimeUnixNano": "3",
        "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}]}]}]}]}
    report = pk.inspect([spans, logs])
    assert [m.role for m in report.messages] == ["user", "assistant"]
    assert [m.kind for m in report.markers] == ["dangling_call"]
    assert report.markers[0].ids == ["call_1"] and span in report.markers[0].text


CASES = sorted((OTEL / "semconv_cases").glob("*.yaml"))


def test_the_conventions_cases_are_all_here():
    assert len(CASES) == 9
    assert (OTEL / "semconv_cases" / "LICENSE").read_text().lstrip().startswith("Apache License")


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_conventions_case(path):
    case = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc = case["document"]
    if case["schema"] == "gen-ai-system-instructions.json":
        t = messages_from_parts([], system=doc)
        texts = [p["content"] for p in doc if p["type"] == "text"]
        assert [m.content for m in t.messages] == ["\n".join(texts)]
        return
    t = messages_from_parts(json.dumps(doc))  # as the attribute carries it: a JSON string
    known = {"text", "tool_call", "tool_call_response", "reasoning"}
    if case["errors"]:
        # an invalid document: what is left out is counted or named, never raised
        assert t.skipped and (t.warnings or any(k.startswith("part:") for k in t.skipped))
        return
    unknown = [p["type"] for m in doc for p in m["parts"] if p["type"] not in known]
    assert sorted(k.removeprefix("part:") for k, n in t.skipped.items() for _ in range(n)) == sorted(unknown)
    texts = [p["content"] for m in doc for p in m["parts"] if p["type"] == "text"]
    assert [m.content for m in t.messages if m.role in ("system", "user", "assistant") and m.content] == texts
    calls = [p["id"] for m in doc for p in m["parts"] if p["type"] == "tool_call"]
    results = [p["id"] for m in doc for p in m["parts"] if p["type"] == "tool_call_response"]
    assert [c.id for m in t.messages if m.role == "assistant" for c in (m.tool_calls or [])] == calls
    assert [m.tool_call_id for m in t.messages if m.role == "tool"] == results


def test_older_openllmetry_indexed_attributes():
    """Constructed in the shape OpenLLMetry wrote before 0.62 (``gen_ai.prompt.N.*``): the real
    0.62.4 fixture no longer has it."""

    def s(k: str, v: str) -> dict[str, Any]:
        return {"key": k, "value": {"stringValue": v}}

    attrs = [s("gen_ai.prompt.0.role", "user"), s("gen_ai.prompt.0.content", "2+2?"),
             s("gen_ai.completion.0.role", "assistant"),
             s("gen_ai.completion.0.tool_calls.0.id", "call_9"), s("gen_ai.completion.0.tool_calls.0.name", "calc"),
             s("gen_ai.completion.0.tool_calls.0.arguments", '{"e": "2+2"}')]
    req = {"resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": "1" * 32, "spanId": "2" * 16, "name": "openai.chat", "startTimeUnixNano": "1",
        "endTimeUnixNano": "2", "attributes": attrs}]}]}]}
    t = load(req)
    assert t.meta["dialects"] == ["indexed"]
    assert [m.role for m in t.messages] == ["user", "assistant"]
    assert [(c.id, c.name, c.arguments) for c in t.messages[1].tool_calls] == [("call_9", "calc", '{"e": "2+2"}')]
    assert [m.kind for m in t.markers] == ["dangling_call"]


# --------------------------------------------------------------------------- log records alone

LOGS_ONLY, UNTRACED = OTEL / "openai_v2_logs_only", OTEL / "openai_v2_logs_untraced"
DETAILS = "gen_ai.client.inference.operation.details"


def _plain(v: dict[str, Any]) -> Any:
    """An OTLP AnyValue as plain data (the test's own decoding)."""
    kind, x = next(iter(v.items()))
    if kind == "arrayValue":
        return [_plain(i) for i in x.get("values", [])]
    if kind == "kvlistValue":
        return {i["key"]: _plain(i["value"]) for i in x.get("values", [])}
    return int(x) if kind == "intValue" else x


def _records(path: Path) -> list[dict[str, Any]]:
    """Each log record of the folder's logs.jsonl, in file order: ids, time, decoded attributes."""
    out = []
    for line in (path / "logs.jsonl").read_text(encoding="utf-8").splitlines():
        for rl in json.loads(line)["resourceLogs"]:
            for sl in rl["scopeLogs"]:
                for r in sl["logRecords"]:
                    out.append({"event": r.get("eventName"), "trace": r.get("traceId"),
                                "time": int(r.get("timeUnixNano") or r["observedTimeUnixNano"]),
                                **{a["key"]: _plain(a["value"]) for a in r["attributes"]}})
    return out


def _conversation_of(record: dict[str, Any]) -> list[dict[str, Any]]:
    """What a model call's record says the conversation was: its input, then its output."""
    return record["gen_ai.input.messages"] + record["gen_ai.output.messages"]


def _check_messages(found, expected: list[dict[str, Any]]) -> None:
    """The transcript's messages are the record's messages, part for part."""
    assert [m.role for m in found.messages] == [m["role"] for m in expected]
    for m, want in zip(found.messages, expected, strict=True):
        parts = want["parts"]
        texts = [p["content"] for p in parts if p["type"] == "text"]
        if m.role == "tool":
            [resp] = [p for p in parts if p["type"] == "tool_call_response"]
            assert (m.tool_call_id, m.content) == (resp["id"], resp["response"])
        else:
            assert m.content == "\n".join(texts)
        if m.role == "assistant":
            calls = [p for p in parts if p["type"] == "tool_call"]
            assert [(c.id, c.name, json.loads(c.arguments)) for c in m.tool_calls or []] == [
                (p["id"], p["name"], p["arguments"]) for p in calls]


def _asked_and_unanswered(record: dict[str, Any]) -> list[str]:
    return [p["id"] for m in record["gen_ai.output.messages"] for p in m["parts"] if p["type"] == "tool_call"]


def test_log_records_alone_are_read_one_conversation_per_trace():
    """What opentelemetry-instrumentation-openai-v2 writes with SPAN_AND_EVENT when only the log
    records are exported: one details record per call, no spans. Two processes wrote the file:
    one ran to its end, one was killed while its tool ran."""
    assert not (LOGS_ONLY / "traces.jsonl").exists()
    records = _records(LOGS_ONLY)
    assert {r["event"] for r in records} == {DETAILS}
    traces = list(dict.fromkeys(r["trace"] for r in records))
    assert len(traces) == 2
    listed = pk.inspect(LOGS_ONLY)
    assert listed.needs_thread and sorted(listed.threads) == sorted(traces)
    complete, killed = traces  # the file's order: the run to its end was written first
    for trace in traces:
        mine = sorted((r for r in records if r["trace"] == trace), key=lambda r: r["time"])
        report = pk.inspect(LOGS_ONLY, thread=trace)
        assert (report.format, report.thread, report.wire) == ("otel", trace, "openai_chat")
        assert report.meta["calls_from_log_records"] == len(mine)
        _check_messages(report, _conversation_of(mine[-1]))
        if trace == complete:
            assert len(mine) == 2 and report.valid and not report.interrupted, report.problems
            assert report.messages[-1].content == "It is rainy in Paris, 12 degrees."  # the fixture server's answer
        else:
            [last] = mine
            asked = _asked_and_unanswered(last)
            assert asked and [r.original_id for r in report.interrupted] == asked
            [marker] = [m for m in report.markers if m.kind == "dangling_call"]
            assert marker.ids == asked and trace in marker.text
            assert "whether the tool ran is not recorded" in marker.text
            assert [p.rule for p in report.problems] == ["dangling_call"]
            assert pk.validate_history(report.repaired.messages, wire=report.wire) == []
    assert killed != complete


def test_log_records_without_trace_ids_are_joined_by_their_history():
    """No tracer provider was set: the records carry no trace or span id. A call whose input goes
    on from an earlier call's input and output is the same conversation."""
    records = sorted(_records(UNTRACED), key=lambda r: r["time"])
    assert not any(r["trace"] for r in records)
    first, second, other = records  # the run to its end (two calls), then the killed one (one call)
    [asked] = _asked_and_unanswered(first)
    assert asked in json.dumps(second["gen_ai.input.messages"])  # the second call answers the first's tool
    assert asked not in json.dumps(other["gen_ai.input.messages"])
    listed = pk.inspect(UNTRACED)
    assert listed.threads == ["untraced-1", "untraced-2"]
    done = pk.inspect(UNTRACED, thread="untraced-1")
    _check_messages(done, _conversation_of(second))
    assert done.valid and done.meta["traces"] == [] and done.meta["calls_from_log_records"] == 2
    cut = pk.inspect(UNTRACED, thread="untraced-2")
    _check_messages(cut, _conversation_of(other))
    assert [r.original_id for r in cut.interrupted] == _asked_and_unanswered(other)
    [marker] = [m for m in cut.markers if m.kind == "dangling_call"]
    assert "carries no trace id" in marker.text


def test_log_records_next_to_their_spans_are_read_as_before_and_a_lone_record_fills_in(tmp_path):
    """With the spans there, the records go onto them (no stand-ins); a record whose span was
    lost (the traces file cut) still gives its call."""
    both = load(OTEL / "openai_v2_events")
    assert "calls_from_log_records" not in both.meta
    kept = tmp_path / "cut"
    kept.mkdir()
    (kept / "logs.jsonl").write_text((OTEL / "openai_v2_events" / "logs.jsonl").read_text(encoding="utf-8"))
    spans = (OTEL / "openai_v2_events" / "traces.jsonl").read_text(encoding="utf-8").splitlines()
    model_lines = [i for i, line in enumerate(spans) if '"gen_ai.operation.name"' in line and '"chat"' in line]
    dropped = model_lines[-1]  # the last model call's span is lost
    (kept / "traces.jsonl").write_text("\n".join(s for i, s in enumerate(spans) if i != dropped) + "\n")
    t = load(kept)
    assert t.meta["calls_from_log_records"] == 1
    assert [m.role for m in t.messages] == [m.role for m in both.messages]


def test_log_records_that_hold_no_model_call_are_our_error(tmp_path):
    record = {"observedTimeUnixNano": "1", "eventName": "gen_ai.user.message",
              "body": {"kvlistValue": {"values": [{"key": "content", "value": {"stringValue": "hi"}}]}}}
    p = tmp_path / "logs.jsonl"
    p.write_text(json.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": [record]}]}]}) + "\n")
    with pytest.raises(TranscriptError, match=f"no span and no {DETAILS} log record"):
        load(p)


def test_the_real_instrumentation_writes_log_records_this_reads(tmp_path):
    """The fixture script run now, with the installed openai SDK, opentelemetry-instrumentation-
    openai-v2 and the OTLP log exporter against its scripted model server on 127.0.0.1."""
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[2] / "scripts" / "make_transcript_fixtures" / "otel.py"
    done = subprocess.run([sys.executable, str(script), "drive", str(tmp_path), "--v2", sys.executable,
                           "--only", "openai_v2_logs_only"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    made = tmp_path / "otel" / "openai_v2_logs_only"
    records = _records(made)
    assert len(records) == 3 and {r["event"] for r in records} == {DETAILS}
    for trace in dict.fromkeys(r["trace"] for r in records):
        mine = sorted((r for r in records if r["trace"] == trace), key=lambda r: r["time"])
        _check_messages(load(made, thread=trace), _conversation_of(mine[-1]))
