"""``otel``: OpenTelemetry GenAI traces as OTLP JSON (what the Collector's file exporter writes).

A source is a file of ``ExportTraceServiceRequest`` / ``ExportLogsServiceRequest`` JSON objects,
one per line (or one request, pretty-printed), a folder holding such files (traces and logs side
by side), a parsed request, or a live ``OtlpReceiver``. Three dialects carry the messages:

- the current conventions: ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (and
  ``gen_ai.system_instructions``) span attributes, JSON strings of role + parts;
- events, on the span or as OTLP log records tied to it by trace and span id:
  ``gen_ai.client.inference.operation.details`` with the same attributes as structured values,
  and the older ``gen_ai.system.message`` / ``gen_ai.user.message`` / ``gen_ai.assistant.message``
  / ``gen_ai.tool.message`` / ``gen_ai.choice`` whose body holds one message each;
- OpenInference's flattened ``llm.input_messages.N.message.*`` / ``llm.output_messages.N...``
  (and older OpenLLMetry's ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*``, read alike).

A model call's input holds the history so far, so a run's conversation is its last model call's
input plus output. Runs are the spans under one ``invoke_agent`` span (else the whole trace);
runs that share a ``gen_ai.conversation.id`` are one thread. A last output asking for tools that
no later call answers is a dangling call: its marker names the spans, and where the tool's own
``execute_tool`` span recorded a result the model never saw, that result is offered in
``Transcript.recorded_results``. Tool spans that failed or never ended become markers.

Log records alone are read too (spans exported elsewhere, or not at all): each
``gen_ai.client.inference.operation.details`` record holds one model call's whole input and
output, so a record whose span is not in the source stands in for that span, grouped into runs by
its trace id. Records that carry no trace id (no tracer provider was set) are joined into runs by
their history: a call whose input begins with an earlier call's input and output goes on from it.
Without tool spans, whether an unanswered call's tool ran is not recorded.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from .base import Marker, MultipleThreads, Source, Transcript, TranscriptError, _json_loads

__all__ = ["detect", "load", "messages_from_parts", "requests_of", "reads_dirs"]

reads_dirs = True  # a folder holding trace and log files is one source

_MODEL_OPS = frozenset({"chat", "text_completion", "generate_content", "completion"})
_DETAILS_EVENT = "gen_ai.client.inference.operation.details"
_MESSAGE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
_CHOICE_EVENT = "gen_ai.choice"
_MAX_FILES = 1000
# gen_ai.provider.name (or OpenInference's llm.provider / llm.system) -> whose rules apply
_WIRE_OF = {"openai": "openai_chat", "azure.ai.openai": "openai_chat", "deepseek": "deepseek",
            "anthropic": "anthropic", "gcp.gemini": "gemini", "gcp.vertex_ai": "gemini", "google": "gemini"}
_STATUS_ERROR = 2


# --------------------------------------------------------------------------- detection


def _is_request(obj: Any) -> bool:
    return isinstance(obj, dict) and (
        isinstance(obj.get("resourceSpans"), list) or isinstance(obj.get("resourceLogs"), list)
    )


def _files(path: Path) -> list[Path]:
    files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in (".json", ".jsonl"))
    return files[:_MAX_FILES]


def detect(source: Source, name: str) -> bool:
    obj = source.parsed
    if obj is not None:
        if hasattr(obj, "otlp_requests"):
            return True
        return _is_request(obj) or (isinstance(obj, list) and bool(obj) and all(_is_request(x) for x in obj))
    if source.path is None:
        return False
    if source.path.is_dir():
        return any(_is_request(x) for f in _files(source.path)[:8] for x in Source(f).first_json_lines(2))
    head = source.head().lstrip()
    if not head.startswith(b"{"):
        return False
    if any(_is_request(x) for x in source.first_json_lines(2)):
        return True
    return b'"resourceSpans"' in head[:4096] or b'"resourceLogs"' in head[:4096]


# --------------------------------------------------------------------------- reading requests


def requests_of(source: Source, t: Transcript) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, request) for each OTLP request of the source; bad lines become warnings."""
    obj = source.parsed
    if obj is not None:
        if hasattr(obj, "otlp_requests"):
            for i, r in enumerate(obj.otlp_requests()):
                yield f"request {i + 1}", r
        elif isinstance(obj, list):
            for i, r in enumerate(obj):
                yield f"request {i + 1}", r
        else:
            yield "request", obj
        return
    assert source.path is not None
    files = _files(source.path) if source.path.is_dir() else [source.path]
    if not files:
        raise TranscriptError(f"{source.name}: the folder holds no .json or .jsonl file")
    for f in files:
        yield from _file_requests(f, source.name if f == source.path else f"{source.name}/{f.name}", t)


def _file_requests(path: Path, name: str, t: Transcript) -> Iterator[tuple[str, dict[str, Any]]]:
    loads = _json_loads()
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TranscriptError(f"{name}: cannot read ({exc.strerror or exc})") from exc
    try:  # one request, perhaps pretty-printed
        whole = loads(data)
    except ValueError:
        whole = None
    if isinstance(whole, dict):
        yield name, whole
        return
    for n, raw in enumerate(data.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            obj = loads(raw)
        except ValueError as exc:
            t.skip("malformed_line")
            t.warnings.append(f"{name}: line {n} is not valid JSON ({exc}); skipped (a torn last line?)")
            continue
        if not _is_request(obj):
            t.skip("malformed_line")
            t.warnings.append(f"{name}: line {n} is not an OTLP trace or logs request; skipped")
            continue
        yield f"{name}: line {n}", obj


def _any_value(v: Any, where: str, t: Transcript) -> Any:
    """An OTLP JSON AnyValue as a Python value (None, with a warning, when it is malformed)."""
    if not isinstance(v, dict):
        t.warnings.append(f"{where}: a value that is not an OTLP AnyValue object; ignored")
        return None
    if "stringValue" in v:
        s = v["stringValue"]
        if isinstance(s, str):
            return s
    elif "boolValue" in v:
        if isinstance(v["boolValue"], bool):
            return v["boolValue"]
    elif "intValue" in v:
        try:
            return int(v["intValue"])
        except (TypeError, ValueError):
            pass
    elif "doubleValue" in v:
        if isinstance(v["doubleValue"], (int, float, str)):
            try:
                return float(v["doubleValue"])
            except ValueError:
                pass
    elif "arrayValue" in v:
        vals = (v["arrayValue"] or {}).get("values", []) if isinstance(v["arrayValue"], dict) else None
        if isinstance(vals, list):
            return [_any_value(x, where, t) for x in vals]
    elif "kvlistValue" in v:
        vals = (v["kvlistValue"] or {}).get("values", []) if isinstance(v["kvlistValue"], dict) else None
        if isinstance(vals, list):
            return _kv(vals, where, t)
    elif "bytesValue" in v:
        return v["bytesValue"] if isinstance(v["bytesValue"], str) else None
    elif not v:
        return None
    t.skip("malformed_attribute")
    t.warnings.append(f"{where}: a malformed attribute value ({json.dumps(v)[:80]}); ignored")
    return None


def _kv(items: Any, where: str, t: Transcript) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if not isinstance(items, list):
        if items is not None:
            t.skip("malformed_attribute")
            t.warnings.append(f"{where}: attributes that are not a list; ignored")
        return out
    for kv in items:
        if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
            t.skip("malformed_attribute")
            t.warnings.append(f"{where}: an attribute without a string key; ignored")
            continue
        out[kv["key"]] = _any_value(kv.get("value"), f"{where}, attribute {kv['key']}", t)
    return out


def _hex_id(v: Any, size: int) -> str | None:
    """A trace or span id as hex: OTLP JSON writes hex, protobuf's JSON mapping base64."""
    if not isinstance(v, str) or not v:
        return None
    if len(v) == size * 2:
        try:
            bytes.fromhex(v)
            return v.lower()
        except ValueError:
            pass
    try:
        raw = base64.b64decode(v, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw.hex() if len(raw) == size else None


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _nanos(v: Any) -> int | None:
    try:
        n = int(v)
    except (TypeError, ValueError):
        return None
    return n or None


@dataclass
class _Event:
    name: str
    time: int
    attrs: dict[str, Any]
    body: Any = None
    where: str = ""


@dataclass
class _Span:
    trace: str
    id: str
    parent: str | None
    name: str
    start: int
    end: int | None
    attrs: dict[str, Any]
    where: str
    status: int = 0
    status_message: str = ""
    events: list[_Event] = field(default_factory=list)
    # a stand-in made from log records: "traced" (its span is not in the source), "untraced"
    # (the records carry no trace id), "" for a real span
    from_records: str = ""

    @property
    def op(self) -> str:
        op = self.attrs.get("gen_ai.operation.name")
        return op if isinstance(op, str) else ""


_Log = tuple[str | None, str | None, _Event]  # (trace id, span id, record): ids None when absent


def _collect(source: Source, t: Transcript) -> tuple[dict[tuple[str, str], _Span], list[_Log]]:
    spans: dict[tuple[str, str], _Span] = {}
    logs: list[_Log] = []
    seen = False
    for where, req in requests_of(source, t):
        if not isinstance(req, dict):
            t.warnings.append(f"{where}: not an OTLP request object; skipped")
            continue
        for rs in _list(req.get("resourceSpans"), where, t):
            for ss in _list(rs.get("scopeSpans", rs.get("instrumentationLibrarySpans")), where, t):
                for k, s in enumerate(_list(ss.get("spans"), where, t)):
                    seen = True
                    sp = _span(s, f"{where}, span {k + 1}", t)
                    if sp is not None:
                        if (sp.trace, sp.id) in spans:
                            t.skip("duplicate_span")
                        spans[(sp.trace, sp.id)] = sp
        for rl in _list(req.get("resourceLogs"), where, t):
            for sl in _list(rl.get("scopeLogs", rl.get("instrumentationLibraryLogs")), where, t):
                for k, r in enumerate(_list(sl.get("logRecords"), where, t)):
                    seen = True
                    ev = _log(r, f"{where}, log record {k + 1}", t)
                    if ev is not None:
                        logs.append(ev)
    if not seen:
        raise TranscriptError(f"{source.name}: holds no OTLP span or log record")
    return spans, logs


def _list(v: Any, where: str, t: Transcript) -> list[dict[str, Any]]:
    if v is None:
        return []
    if not isinstance(v, list):
        t.warnings.append(f"{where}: a field that should be a list is {type(v).__name__}; ignored")
        return []
    return [x for x in v if isinstance(x, dict)]


def _span(s: dict[str, Any], where: str, t: Transcript) -> _Span | None:
    trace, sid = _hex_id(s.get("traceId"), 16), _hex_id(s.get("spanId"), 8)
    if trace is None or sid is None:
        t.skip("malformed_span")
        t.warnings.append(f"{where}: no valid traceId/spanId; skipped")
        return None
    name = _str(s.get("name"))
    sp = _Span(trace, sid, _hex_id(s.get("parentSpanId"), 8), name, _nanos(s.get("startTimeUnixNano")) or 0,
               _nanos(s.get("endTimeUnixNano")), _kv(s.get("attributes"), f"{where} ({name})", t), where)
    status = _dict(s.get("status"))
    code = status.get("code", 0)
    sp.status = _STATUS_ERROR if code in (_STATUS_ERROR, "STATUS_CODE_ERROR") else 0
    sp.status_message = _str(status.get("message"))
    for e in _list(s.get("events"), where, t):
        ename = _str(e.get("name"))
        sp.events.append(_Event(ename, _nanos(e.get("timeUnixNano")) or 0, _kv(e.get("attributes"), f"{where}, event {ename}", t)))
    return sp


def _log(r: dict[str, Any], where: str, t: Transcript) -> _Log | None:
    attrs = _kv(r.get("attributes"), where, t)
    name = r.get("eventName") if isinstance(r.get("eventName"), str) and r.get("eventName") else attrs.get("event.name")
    if not isinstance(name, str) or not name.startswith("gen_ai."):
        t.skip("log_record:other")
        return None
    trace, sid = _hex_id(r.get("traceId"), 16), _hex_id(r.get("spanId"), 8)
    body = _any_value(r["body"], where, t) if isinstance(r.get("body"), dict) and r["body"] else None
    time = _nanos(r.get("timeUnixNano")) or _nanos(r.get("observedTimeUnixNano")) or 0
    return trace, sid, _Event(name, time, attrs, body, where)


# --------------------------------------------------------------------------- log records alone

_CONTENT_KEYS = frozenset({"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"})


def _tie(spans: dict[tuple[str, str], _Span], logs: list[_Log], t: Transcript) -> None:
    """Each record onto its span; a model call's record whose span is not in the source becomes
    a stand-in span (records of one span id together), and records without ids are joined into
    runs by their history (``_untraced_runs``)."""
    orphans: dict[tuple[str, str], list[_Event]] = {}
    untraced: list[_Event] = []
    for trace, sid, ev in logs:
        if trace is None or sid is None:
            if ev.name == _DETAILS_EVENT:  # one record is a whole call: it can stand alone
                untraced.append(ev)
            else:
                t.skip("log_record:no_span")
                t.warnings.append(f"{ev.where}: a {ev.name} record tied to no span; skipped")
            continue
        sp = spans.get((trace, sid))
        if sp is not None:
            sp.events.append(ev)
        else:
            orphans.setdefault((trace, sid), []).append(ev)
    for (trace, sid), evs in orphans.items():
        spans[(trace, sid)] = _stand_in(trace, sid, evs, "traced")
    for n, (run, ev) in enumerate(_untraced_runs(untraced), 1):
        spans[(run, f"record-{n}")] = _stand_in(run, f"record-{n}", [ev], "untraced")


def _stand_in(trace: str, sid: str, evs: list[_Event], kind: str) -> _Span:
    """A model span made of the records that describe it: their attributes but the content."""
    attrs: dict[str, Any] = {}
    for ev in evs:
        src = {**(ev.body if isinstance(ev.body, dict) else {}), **ev.attrs}
        attrs.update({k: v for k, v in src.items() if k not in _CONTENT_KEYS})
    times = [ev.time for ev in evs]
    op, model = attrs.get("gen_ai.operation.name"), attrs.get("gen_ai.request.model")
    name = " ".join(x for x in (op, model) if isinstance(x, str)) or evs[0].name
    return _Span(trace, sid, None, name, min(times), max(times), attrs, evs[0].where, events=list(evs),
                 from_records=kind)


def _signature(v: Any) -> tuple[Any, ...]:
    """A message list as (role, (type, id, text) per part): what stays the same when an
    output message comes back as the next call's input (finish_reason and the like go)."""
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except ValueError:
            return ()
    if not isinstance(v, list):
        return ()
    out = []
    for m in v:
        if not isinstance(m, dict):
            continue
        parts = m.get("parts")
        if not isinstance(parts, list):
            parts = []
        out.append((m.get("role"), tuple(
            (p.get("type"), p.get("id"), p.get("content") if isinstance(p.get("content"), str) else None)
            for p in parts if isinstance(p, dict))))
    return tuple(out)


def _untraced_runs(events: list[_Event]) -> list[tuple[str, _Event]]:
    """(run name, record) for records that carry no trace id, in time order: a call whose input
    begins with the input and output of a run's latest call goes on that run (the longest such
    history wins); any other starts ``untraced-N``."""
    runs: list[tuple[str, tuple[Any, ...]]] = []  # (name, the history after its latest call)
    out: list[tuple[str, _Event]] = []
    for ev in sorted(events, key=lambda e: e.time):
        src = {**(ev.body if isinstance(ev.body, dict) else {}), **ev.attrs}
        inp, outp = _signature(src.get("gen_ai.input.messages")), _signature(src.get("gen_ai.output.messages"))
        best: int | None = None
        for k, (_, sig) in enumerate(runs):
            if sig and inp[: len(sig)] == sig and (best is None or len(sig) > len(runs[best][1])):
                best = k
        if best is None:
            runs.append((f"untraced-{len(runs) + 1}", inp + outp))
            best = len(runs) - 1
        else:
            runs[best] = (runs[best][0], inp + outp)
        out.append((runs[best][0], ev))
    return out


# --------------------------------------------------------------------------- messages of a model call


@dataclass
class _Call:
    span: _Span
    input: list[dict[str, Any]]
    output: list[dict[str, Any]]
    system: list[dict[str, Any]]
    dialect: str


def _json_attr(v: Any, key: str, sp: _Span, t: Transcript) -> list[dict[str, Any]] | None:
    if v is None:
        return None
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except ValueError:
            t.skip("malformed_messages")
            t.warnings.append(f"{sp.where} ({sp.name}): {key} is not JSON; that call's messages are left out")
            return None
    if isinstance(v, dict):
        v = [v]
    if not isinstance(v, list):
        t.skip("malformed_messages")
        t.warnings.append(f"{sp.where} ({sp.name}): {key} is a {type(v).__name__}, not a list of messages; left out")
        return None
    return [m for m in v if isinstance(m, dict)]


def _model_call(sp: _Span, events: list[_Event], t: Transcript) -> _Call | None:
    a = sp.attrs
    if "gen_ai.input.messages" in a or "gen_ai.output.messages" in a:
        inp = _json_attr(a.get("gen_ai.input.messages"), "gen_ai.input.messages", sp, t)
        out = _json_attr(a.get("gen_ai.output.messages"), "gen_ai.output.messages", sp, t)
        sys_ = _json_attr(a.get("gen_ai.system_instructions"), "gen_ai.system_instructions", sp, t) or []
        if inp is not None or out is not None:
            return _Call(sp, inp or [], out or [], sys_, "attributes")
    for e in events:
        if e.name == _DETAILS_EVENT:
            src = {**(e.body if isinstance(e.body, dict) else {}), **e.attrs}
            inp = _json_attr(src.get("gen_ai.input.messages"), "gen_ai.input.messages", sp, t)
            out = _json_attr(src.get("gen_ai.output.messages"), "gen_ai.output.messages", sp, t)
            sys_ = _json_attr(src.get("gen_ai.system_instructions"), "gen_ai.system_instructions", sp, t) or []
            if inp is not None or out is not None:
                return _Call(sp, inp or [], out or [], sys_, "events")
    legacy = [e for e in events if e.name in _MESSAGE_EVENTS or e.name == _CHOICE_EVENT]
    if legacy:
        return _legacy_call(sp, legacy)
    if any(k.startswith(("llm.input_messages.", "llm.output_messages.")) for k in a):
        return _Call(sp, _oi_messages(a, "llm.input_messages."), _oi_messages(a, "llm.output_messages."), [], "openinference")
    if any(k.startswith(("gen_ai.prompt.", "gen_ai.completion.")) for k in a):
        return _Call(sp, _indexed_messages(a, "gen_ai.prompt."), _indexed_messages(a, "gen_ai.completion."), [],
                     "indexed")
    if sp.op in _MODEL_OPS or a.get("openinference.span.kind") == "LLM":
        t.skip("model_call_without_content")
    return None


def _legacy_call(sp: _Span, events: list[_Event]) -> _Call:
    """The older events: one message per event, its body ``{content, tool_calls, id}``."""
    inp: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []
    for e in sorted(events, key=lambda e: e.time):
        body = e.body if isinstance(e.body, dict) else {}
        body = {**{k.split(".")[-1]: v for k, v in e.attrs.items() if k.startswith("gen_ai.") and k.count(".") == 1}, **body}
        if e.name == _CHOICE_EVENT:
            msg = _dict(body.get("message"))
            out.append(_legacy_message("assistant", msg, body.get("finish_reason")))
        else:
            inp.append(_legacy_message(_MESSAGE_EVENTS[e.name], body, None))
    return _Call(sp, inp, out, [], "events")


def _legacy_message(role: str, body: dict[str, Any], finish: Any) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    content = body.get("content")
    if role == "tool":
        parts.append({"type": "tool_call_response", "id": body.get("id"), "response": content})
    elif isinstance(content, str) and content:
        parts.append({"type": "text", "content": content})
    for c in body.get("tool_calls") or []:
        if isinstance(c, dict):
            fn = _dict(c.get("function"))
            parts.append({"type": "tool_call", "id": c.get("id"), "name": fn.get("name"), "arguments": fn.get("arguments")})
    return {"role": role, "parts": parts, **({"finish_reason": finish} if finish else {})}


def _oi_messages(a: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """OpenInference's flattened ``<prefix>N.message.*`` attributes as role + parts messages."""
    msgs: dict[int, dict[str, Any]] = {}
    for key, v in a.items():
        if not key.startswith(prefix):
            continue
        head, _, rest = key[len(prefix):].partition(".message.")
        if not head.isdigit() or not rest:
            continue
        msgs.setdefault(int(head), {})[rest] = v
    out: list[dict[str, Any]] = []
    for i in sorted(msgs):
        m = msgs[i]
        role, parts = _role_and_content(m)
        texts: dict[int, str] = {}
        calls: dict[int, dict[str, Any]] = {}
        for k, v in m.items():
            bits = k.split(".")
            if bits[0] == "contents" and len(bits) > 2 and bits[1].isdigit() and bits[-1] == "text" and isinstance(v, str):
                texts[int(bits[1])] = v
            if bits[0] == "tool_calls" and len(bits) > 2 and bits[1].isdigit():
                field_ = ".".join(bits[2:]).removeprefix("tool_call.")
                calls.setdefault(int(bits[1]), {})[field_] = v
        parts += [{"type": "text", "content": texts[j]} for j in sorted(texts)]
        for j in sorted(calls):
            c = calls[j]
            parts.append({"type": "tool_call", "id": c.get("id"), "name": c.get("function.name"),
                          "arguments": c.get("function.arguments")})
        out.append({"role": role, "parts": parts})
    return out


def _role_and_content(m: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """A flattened message's role and its first part: a tool's response, or its plain content."""
    given = m.get("role")
    role = given if isinstance(given, str) else "user"
    parts: list[dict[str, Any]] = []
    if role == "tool":
        parts.append({"type": "tool_call_response", "id": m.get("tool_call_id"), "response": m.get("content")})
    elif isinstance(m.get("content"), str) and m["content"]:
        parts.append({"type": "text", "content": m["content"]})
    return role, parts


def _indexed_messages(a: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Older OpenLLMetry: ``gen_ai.prompt.N.role`` / ``.content`` / ``.tool_calls.K.{id,name,
    arguments}`` / ``.tool_call_id`` (and ``gen_ai.completion.N...``) as role + parts messages."""
    msgs: dict[int, dict[str, Any]] = {}
    for key, v in a.items():
        if key.startswith(prefix):
            head, _, rest = key[len(prefix):].partition(".")
            if head.isdigit() and rest:
                msgs.setdefault(int(head), {})[rest] = v
    out: list[dict[str, Any]] = []
    for i in sorted(msgs):
        m = msgs[i]
        role, parts = _role_and_content(m)
        calls: dict[int, dict[str, Any]] = {}
        for k, v in m.items():
            bits = k.split(".")
            if bits[0] == "tool_calls" and len(bits) == 3 and bits[1].isdigit():
                calls.setdefault(int(bits[1]), {})[bits[2]] = v
        for j in sorted(calls):
            c = calls[j]
            parts.append({"type": "tool_call", "id": c.get("id"), "name": c.get("name"), "arguments": c.get("arguments")})
        out.append({"role": role, "parts": parts})
    return out


def _args_text(v: Any) -> str:
    if v is None:
        return ""
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def _response_text(v: Any) -> str:
    if v is None:
        return ""
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def _to_messages(msgs: list[dict[str, Any]], t: Transcript, names: dict[str, str], where: str) -> list[Message]:
    """Role + parts messages (the conventions' schema) as canonical messages."""
    out: list[Message] = []
    for k, m in enumerate(msgs):
        role = m.get("role")
        parts = m.get("parts")
        if not isinstance(parts, list):
            if isinstance(m.get("content"), str):  # a plain {role, content}
                parts = [{"type": "text", "content": m["content"]}]
            else:
                t.skip("malformed_message")
                t.warnings.append(f"{where}: message {k} has no parts list; skipped")
                continue
        texts: list[str] = []
        reasoning: list[str] = []
        calls: list[ToolCall] = []
        results: list[ToolMessage] = []
        for p in parts:
            kind = p.get("type") if isinstance(p, dict) else None
            if kind == "text" and isinstance(p.get("content"), str):
                texts.append(p["content"])
            elif kind == "reasoning" and isinstance(p.get("content"), str):
                reasoning.append(p["content"])
            elif kind == "tool_call" and isinstance(p.get("name"), str):
                cid = p.get("id") if isinstance(p.get("id"), str) and p.get("id") else f"call_{len(names)}"
                names[cid] = p["name"]
                calls.append(ToolCall(cid, p["name"], _args_text(p.get("arguments"))))
            elif kind == "tool_call_response" and isinstance(p.get("id"), str):
                results.append(ToolMessage(p["id"], names.get(p["id"], ""), _response_text(p.get("response"))))
            else:
                t.skip(f"part:{kind if isinstance(kind, str) else '(no type)'}")
        if role == "system":
            if texts:
                out.append(SystemMessage("\n".join(texts)))
        elif role == "assistant":
            if texts or calls or reasoning:
                out.append(AssistantMessage("\n".join(texts), reasoning="\n".join(reasoning) or None,
                                            tool_calls=calls or None))
        elif role == "tool" or results:
            out.extend(results)
            if texts:
                out.append(UserMessage("\n".join(texts)))
        elif role == "user":
            if texts:
                out.append(UserMessage("\n".join(texts)))
        else:
            t.skip(f"role:{role if isinstance(role, str) else '(none)'}")
            t.warnings.append(f"{where}: message {k} has role {role!r}, which is none of system, user, "
                              "assistant, tool; skipped")
    return out


def _system(parts: list[dict[str, Any]], t: Transcript) -> list[Message]:
    """``gen_ai.system_instructions``: a list of parts (text, or generic for anything else)."""
    texts: list[str] = []
    for p in parts:
        if p.get("type") == "text" and isinstance(p.get("content"), str):
            texts.append(p["content"])
        elif "role" in p:  # a message where parts belong: read it as one
            texts += [m.content for m in _to_messages([p], t, {}, "system instructions") if isinstance(m, SystemMessage)]
        else:
            kind = p.get("type")
            t.skip(f"system_part:{kind if isinstance(kind, str) else '(no type)'}")
    return [SystemMessage("\n".join(texts))] if texts else []


def messages_from_parts(messages: Any, *, system: Any = None) -> Transcript:
    """Canonical messages of a ``gen_ai.input.messages`` / ``gen_ai.output.messages`` value (a
    list, or its JSON text) and optional ``gen_ai.system_instructions``; what cannot be
    represented is counted in ``skipped`` and named in ``warnings``."""
    t = Transcript("gen_ai messages", "otel", [])
    sp = _Span("", "", None, "value", 0, None, {}, "gen_ai messages")
    msgs = _json_attr(messages, "messages", sp, t) or []
    sys_ = _json_attr(system, "gen_ai.system_instructions", sp, t) or []
    t.messages = _system(sys_, t) + _to_messages(msgs, t, {}, "gen_ai messages")
    return t


# --------------------------------------------------------------------------- runs


@dataclass
class _Run:
    key: str
    trace: str
    spans: list[_Span] = field(default_factory=list)
    conversation: str | None = None


def _runs(spans: dict[tuple[str, str], _Span], t: Transcript) -> dict[str, _Run]:
    runs: dict[str, _Run] = {}
    agents_per_trace: dict[str, int] = {}
    for sp in spans.values():
        if sp.op == "invoke_agent":
            agents_per_trace[sp.trace] = agents_per_trace.get(sp.trace, 0) + 1
    orphans: set[str] = set()
    for sp in sorted(spans.values(), key=lambda s: s.start):
        agent: _Span | None = None
        at: _Span | None = sp
        steps = 0
        while at is not None and steps < 10_000:
            if at.op == "invoke_agent":
                agent = at
                break
            if at.parent is None:
                break
            up = spans.get((at.trace, at.parent))
            if up is None:
                orphans.add(f"{at.name or at.id} (span {at.id}, parent {at.parent})")
            at, steps = up, steps + 1
        key = sp.trace if agent is None or agents_per_trace.get(sp.trace, 0) <= 1 else f"{sp.trace}/{agent.id}"
        run = runs.setdefault(key, _Run(key, sp.trace))
        run.spans.append(sp)
        conv = sp.attrs.get("gen_ai.conversation.id")
        if isinstance(conv, str) and conv and run.conversation is None:
            run.conversation = conv
    for o in sorted(orphans)[:20]:
        t.warnings.append(f"{t.source}: {o}: its parent span never arrived (the process died, or the file was cut)")
    if orphans:
        t.skip("parent_missing", len(orphans))
    return runs


def _threads(runs: dict[str, _Run]) -> dict[str, list[_Run]]:
    """Thread name -> its runs in time order: a conversation id joins runs, else one run each."""
    out: dict[str, list[_Run]] = {}
    for run in sorted(runs.values(), key=lambda r: min(s.start for s in r.spans)):
        out.setdefault(run.conversation or run.key, []).append(run)
    return out


def load(source: Source, name: str, *, thread: str | None = None) -> Transcript:
    t = Transcript(source.name, name, [])
    spans, logs = _collect(source, t)
    _tie(spans, logs, t)
    threads = _threads(_runs(spans, t))
    if not threads:
        raise TranscriptError(
            f"{source.name}: holds no span and no {_DETAILS_EVENT} log record (the one that holds a "
            "model call's messages); its GenAI log records alone do not make a conversation"
        )
    if thread is None:
        if len(threads) > 1:
            raise MultipleThreads(source.name, list(threads))
        thread = next(iter(threads))
    picked = threads.get(thread)
    if picked is None:  # a trace id of a run inside a conversation, or a run key's trace part
        picked = [r for rs in threads.values() for r in rs if thread in (r.trace, r.key)]
        if not picked:
            raise TranscriptError(f"{source.name}: no trace or conversation {thread!r}; it has {', '.join(threads)}")
    t.thread = thread
    _build(t, picked)
    return t


def _build(t: Transcript, runs: list[_Run]) -> None:
    run_spans = sorted((s for r in runs for s in r.spans), key=lambda s: (s.start, s.end or 0))
    calls: list[_Call] = []
    dialects: set[str] = set()
    for sp in run_spans:
        c = _model_call(sp, sp.events, t)
        if c is not None:
            calls.append(c)
            dialects.add(c.dialect)
    tools = [s for s in run_spans if s.op == "execute_tool"]
    t.meta.update({"traces": sorted({s.trace for s in run_spans if s.from_records != "untraced"}),
                   "model_calls": len(calls), "tool_spans": len(tools), "dialects": sorted(dialects)})
    from_records = sum(1 for c in calls if c.span.from_records)
    if from_records:
        t.meta["calls_from_log_records"] = from_records  # their spans are not in the source
    for key in ("gen_ai.agent.name", "gen_ai.request.model", "gen_ai.provider.name", "gen_ai.system",
                "gen_ai.conversation.id"):
        for s in run_spans:
            if isinstance(s.attrs.get(key), str):
                t.meta[key.removeprefix("gen_ai.")] = s.attrs[key]
                break
    for s in tools:
        tool = s.attrs.get("gen_ai.tool.name") or s.name
        cid = s.attrs.get("gen_ai.tool.call.id")
        ids = [cid] if isinstance(cid, str) else []
        if s.end is None:
            t.markers.append(Marker("tool_unfinished", None, f"tool {tool} (span {s.id}) never ended", ids))
        elif s.status == _STATUS_ERROR:
            why = s.status_message or s.attrs.get("error.type") or "error status"
            t.markers.append(Marker("tool_error", None, f"tool {tool} (span {s.id}) failed: {why}", ids))
    provider = t.meta.get("provider.name") or t.meta.get("system") or _oi_provider(run_spans)
    t.wire = _WIRE_OF.get(provider) if isinstance(provider, str) else None
    if not calls:
        t.warnings.append(f"{t.source}: thread {t.thread} has no model call with messages")
        return
    last = calls[-1]
    names: dict[str, str] = {}
    where = f"{last.span.where} ({last.span.name})"
    msgs = _system(last.system, t) + _to_messages(last.input, t, names, where)
    out = _to_messages(last.output, t, names, where)
    if len(out) > 1:  # several choices: the first is the one an agent goes on with
        t.skip("extra_choice", len(out) - 1)
        out = out[:1]
    msgs += out
    t.messages = msgs
    if len(calls) > 1:
        t.skip("earlier_model_call", len(calls) - 1)
    _dangling(t, last, out, tools)


def _oi_provider(spans: list[_Span]) -> str | None:
    for s in spans:
        for key in ("llm.provider", "llm.system"):
            if isinstance(s.attrs.get(key), str):
                return str(s.attrs[key])
    return None


def _dangling(t: Transcript, last: _Call, out: list[Message], tools: list[_Span]) -> None:
    final = out[-1] if out else None
    if not isinstance(final, AssistantMessage) or not final.tool_calls:
        return
    index = len(t.messages) - 1
    sp = last.span
    if sp.from_records == "untraced":
        asker = f"the model call of log record {sp.where} (it carries no trace id)"
    elif sp.from_records:
        asker = f"the log record of model span {sp.id} of trace {sp.trace} (the span is not in the source)"
    else:
        asker = f"model span {sp.id} of trace {sp.trace}"
    for c in final.tool_calls:
        spans = [s for s in tools if s.start >= last.span.start and (
            s.attrs.get("gen_ai.tool.call.id") == c.id
            or ("gen_ai.tool.call.id" not in s.attrs and (s.attrs.get("gen_ai.tool.name") or "") == c.name))]
        text = f"{c.name} (call {c.id}) was asked for by {asker}; no later model call answers it"
        ran = next((s for s in spans if s.end is not None and s.status != _STATUS_ERROR
                    and s.attrs.get("gen_ai.tool.call.result") is not None), None)
        if ran is not None:
            result = _response_text(ran.attrs["gen_ai.tool.call.result"])
            t.recorded_results[c.id] = result
            t.markers.append(Marker("tool_ran_unseen", index,
                                    f"{text}: the tool ran (span {ran.id}) and recorded its result, "
                                    "which the model never saw; repair offers that result", [c.id]))
        else:
            if spans:
                seen = f"; its tool span {spans[0].id} has no result"
            elif not tools and last.span.from_records:
                seen = "; the source holds no tool spans, so whether the tool ran is not recorded"
            else:
                seen = "; no tool span recorded it"
            t.markers.append(Marker("dangling_call", index, text + seen, [c.id]))
