"""Make the OpenTelemetry GenAI trace fixtures with the real instrumentations (offline, no key).

    python otel.py drive FIXTURES_DIR --v2 PY --openllmetry PY --openinference PY [--only RUN,RUN]

writes FIXTURES_DIR/otel/<run>/traces.jsonl (and logs.jsonl) and adds each run to
FIXTURES_DIR/VERSIONS.json under ``otel/<run>``; ``--only`` makes the runs named (then only the
venvs those runs use are needed).

Each PY is the Python of a throwaway venv outside the repository (their pins clash):

- ``--v2``: openai, opentelemetry-sdk, opentelemetry-exporter-otlp-proto-http,
  opentelemetry-instrumentation-openai-v2 and opentelemetry-util-genai==1.1b0;
- ``--openllmetry``: the same SDK and exporter with opentelemetry-instrumentation-openai;
- ``--openinference``: the same with openinference-instrumentation-openai.

The driver serves a fake OpenAI chat-completions endpoint on 127.0.0.1 (first answer: a call to
``get_weather``; once a tool result is in the request: a text answer) and an OTLP/HTTP endpoint
that decodes what the real ``OTLPSpanExporter`` / ``OTLPLogExporter`` send (protobuf) and writes
each request as one line of OTLP JSON, as the Collector's file exporter does (hex ids, enums as
numbers). Each agent runs in its own process (``agent`` below) and exports span by span
(``SimpleSpanProcessor``), so a SIGKILL loses only what had not ended. Two runs are killed with
SIGKILL: one while its tool runs (the tool span never ends), one right after the tool span ended
(the tool ran, the model never saw the result).

The ``logs_only`` runs export log records and no spans (a LoggerProvider with the OTLP log
exporter; a TracerProvider without any exporter, so the records still carry the trace and span
ids of the calls they describe), with the content in both (``SPAN_AND_EVENT``): one
``gen_ai.client.inference.operation.details`` record per model call. Two processes write to one
file: one runs to its end, one is killed while its tool runs (its last record asks for a tool no
later record answers). The ``logs_untraced`` runs set no tracer provider at all: their records
carry no trace or span id.

The agent and tool spans of the openai-v2 runs come from opentelemetry-util-genai's handler;
OpenLLMetry and OpenInference make only the model spans, so there the agent and tool spans are
opened with the plain tracer API and the conventions' attribute names.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


# --------------------------------------------------------------------------- driver


def _hexify(obj: Any) -> Any:
    """OTLP JSON writes trace and span ids as hex, where protobuf JSON writes base64."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str):
                out[k] = base64.b64decode(v).hex()
            else:
                out[k] = _hexify(v)
        return out
    if isinstance(obj, list):
        return [_hexify(x) for x in obj]
    return obj


class _Sink:
    def __init__(self) -> None:
        self.target: Path | None = None
        self.lock = threading.Lock()

    def write(self, kind: str, line: str) -> None:
        with self.lock:
            assert self.target is not None
            name = "traces.jsonl" if kind == "traces" else "logs.jsonl"
            with open(self.target / name, "a", encoding="utf-8") as f:
                f.write(line + "\n")


def _servers(sink: _Sink) -> tuple[ThreadingHTTPServer, ThreadingHTTPServer]:
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    calls = {"n": 0}

    class Model(BaseHTTPRequestHandler):
        def log_message(self, *a: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            calls["n"] += 1
            n = calls["n"]
            answered = any(m.get("role") == "tool" for m in body["messages"])
            if answered:
                msg: dict[str, Any] = {"role": "assistant", "content": "It is rainy in Paris, 12 degrees."}
                finish = "stop"
            else:
                msg = {"role": "assistant", "content": None, "tool_calls": [{
                    "id": f"call_weather_{n}", "type": "function",
                    "function": {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})},
                }]}
                finish = "tool_calls"
            out = json.dumps({
                "id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1764800000 + n,
                "model": body.get("model", "gpt-4o-mini"),
                "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                "usage": {"prompt_tokens": 20 + n, "completion_tokens": 7, "total_tokens": 27 + n},
            }).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

    class Otlp(BaseHTTPRequestHandler):
        def log_message(self, *a: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers["Content-Length"]))
            if self.path.endswith("/v1/traces"):
                req: Any = ExportTraceServiceRequest()
                kind = "traces"
            else:
                req = ExportLogsServiceRequest()
                kind = "logs"
            req.ParseFromString(raw)
            d = _hexify(MessageToDict(req, use_integers_for_enums=True))
            sink.write(kind, json.dumps(d, ensure_ascii=False, separators=(",", ":")))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

    model = ThreadingHTTPServer(("127.0.0.1", 0), Model)
    otlp = ThreadingHTTPServer(("127.0.0.1", 0), Otlp)
    for s in (model, otlp):
        threading.Thread(target=s.serve_forever, daemon=True).start()
    return model, otlp


def drive(fixtures: Path, pythons: dict[str, str], only: set[str] | None = None) -> None:
    out = fixtures / "otel"
    out.mkdir(parents=True, exist_ok=True)
    sink = _Sink()
    model, otlp = _servers(sink)
    base = f"http://127.0.0.1:{model.server_address[1]}/v1"
    endpoint = f"http://127.0.0.1:{otlp.server_address[1]}"
    versions: dict[str, Any] = {}
    runs = [
        ("openai_v2_latest", "v2", "latest", None),
        ("openai_v2_events", "v2", "events", None),
        ("openai_v2_killed_mid_tool", "v2", "latest", "mid_tool"),
        ("openai_v2_killed_after_tool", "v2", "latest", "after_tool"),
        ("openllmetry", "openllmetry", "openllmetry", None),
        ("openinference", "openinference", "openinference", None),
        # two processes writing to one file each (a run to its end, then one killed mid-tool)
        ("openai_v2_logs_only", "v2", "logs_only", None),
        ("openai_v2_logs_only", "v2", "logs_only", "mid_tool"),
        ("openai_v2_logs_untraced", "v2", "logs_untraced", None),
        ("openai_v2_logs_untraced", "v2", "logs_untraced", "mid_tool"),
    ]
    started: set[str] = set()
    for name, py_key, flavor, kill in runs:
        if only is not None and name not in only:
            continue
        target = out / name
        target.mkdir(exist_ok=True)
        if name not in started:  # a folder's later runs add to what its first one wrote
            started.add(name)
            for f in target.glob("*.jsonl"):
                f.unlink()
        sink.target = target
        marker = target / ".tool-running"
        env = {**os.environ, "OPENAI_API_KEY": "sk-test-not-a-key", "OPENAI_BASE_URL": base,
               "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "FIXTURE_KILL": kill or "",
               "FIXTURE_MARKER": str(marker), "OTEL_SERVICE_NAME": f"fixture-{name}"}
        if flavor in ("latest", "logs_only", "logs_untraced"):
            env["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
            env["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_AND_EVENT"
        elif flavor == "events":  # content only in the log records, none on the spans
            env["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
            env["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "EVENT_ONLY"
        elif flavor == "openinference":
            env["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
        cmd = [pythons[py_key], __file__, "agent", flavor]
        proc = subprocess.Popen(cmd, env=env)
        if kill == "mid_tool":
            deadline = time.time() + 60
            while not marker.exists() and time.time() < deadline and proc.poll() is None:
                time.sleep(0.05)
            time.sleep(0.3)
            proc.send_signal(signal.SIGKILL)
        rc = proc.wait(timeout=120)
        if marker.exists():
            marker.unlink()
        expected = -signal.SIGKILL if kill else 0
        if rc != expected:
            raise SystemExit(f"{name}: agent exited {rc}, expected {expected}")
        time.sleep(0.2)
        info = subprocess.run([pythons[py_key], __file__, "versions", flavor], capture_output=True, text=True, check=True)
        how = {"killed": kill, "flavor": flavor,
               "env": {k: env[k] for k in ("OTEL_SEMCONV_STABILITY_OPT_IN",
                                           "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT") if k in env}}
        earlier = versions.get(f"otel/{name}")
        if earlier is not None:  # one more process of the same file: its runs in order
            runs_of = earlier["how"] if isinstance(earlier["how"], list) else [earlier["how"]]
            earlier["how"] = [*runs_of, how]
            continue
        versions[f"otel/{name}"] = {
            "script": "scripts/make_transcript_fixtures/otel.py",
            "written_by": json.loads(info.stdout),
            "how": how,
        }
    model.shutdown()
    otlp.shutdown()
    known_path = fixtures / "VERSIONS.json"
    known = json.loads(known_path.read_text(encoding="utf-8")) if known_path.exists() else {}
    known.update(versions)
    known_path.write_text(json.dumps(dict(sorted(known.items())), indent=2) + "\n", encoding="utf-8")


# --------------------------------------------------------------------------- agent (in its venv)


def _versions(flavor: str) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    names = ["openai", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
    names += {
        "latest": ["opentelemetry-instrumentation-openai-v2", "opentelemetry-util-genai"],
        "events": ["opentelemetry-instrumentation-openai-v2", "opentelemetry-util-genai"],
        "logs_only": ["opentelemetry-instrumentation-openai-v2", "opentelemetry-util-genai"],
        "logs_untraced": ["opentelemetry-instrumentation-openai-v2", "opentelemetry-util-genai"],
        "openllmetry": ["opentelemetry-instrumentation-openai"],
        "openinference": ["openinference-instrumentation-openai"],
    }[flavor]
    out = {"python": sys.version.split()[0]}
    for n in names:
        try:
            out[n] = version(n)
        except PackageNotFoundError:
            out[n] = "(not installed)"
    return out


def agent(flavor: str) -> None:
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider()
    if flavor not in ("logs_only", "logs_untraced"):  # logs_only: spans get ids (the records carry them) but go nowhere
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
    if flavor != "logs_untraced":  # untraced: no tracer provider at all, so the records carry no ids
        trace.set_tracer_provider(provider)
    if flavor in ("latest", "events", "logs_only", "logs_untraced"):
        from opentelemetry._logs import set_logger_provider
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor

        logs = LoggerProvider()
        logs.add_log_record_processor(SimpleLogRecordProcessor(OTLPLogExporter()))
        set_logger_provider(logs)
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        OpenAIInstrumentor().instrument()
    elif flavor == "openllmetry":
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor as LlmetryInstrumentor

        LlmetryInstrumentor().instrument()
    else:
        from openinference.instrumentation.openai import OpenAIInstrumentor as OiInstrumentor

        OiInstrumentor().instrument()

    import openai

    client = openai.OpenAI()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You answer weather questions with the get_weather tool."},
        {"role": "user", "content": "What is the weather in Paris?"},
    ]
    kill = os.environ.get("FIXTURE_KILL", "")

    def run_tool(call: Any) -> str:
        if kill == "mid_tool":
            Path(os.environ["FIXTURE_MARKER"]).write_text("running")
            time.sleep(60)  # killed here
        return json.dumps({"city": "Paris", "sky": "rainy", "celsius": 12})

    def loop(tool_span: Any) -> None:
        for _ in range(4):
            r = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=[TOOL])  # type: ignore[arg-type]
            msg = r.choices[0].message
            messages.append(msg.model_dump(exclude_none=True))
            if not msg.tool_calls:
                return
            for call in msg.tool_calls:
                result = tool_span(call)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
            if kill == "after_tool":
                os.kill(os.getpid(), signal.SIGKILL)

    if flavor in ("latest", "events", "logs_only", "logs_untraced"):
        from opentelemetry.util.genai.handler import get_telemetry_handler

        handler = get_telemetry_handler()

        def util_tool(call: Any) -> str:
            with handler.tool(call.function.name, tool_call_id=call.id, tool_type="function") as inv:
                inv.arguments = json.loads(call.function.arguments)
                result = run_tool(call)
                inv.tool_result = result
            return result

        with handler.invoke_local_agent(request_model="gpt-4o-mini", agent_name="weather_agent"):
            loop(util_tool)
    else:
        tracer = trace.get_tracer("fixture-agent")

        def plain_tool(call: Any) -> str:
            with tracer.start_as_current_span(f"execute_tool {call.function.name}") as span:
                span.set_attribute("gen_ai.operation.name", "execute_tool")
                span.set_attribute("gen_ai.tool.name", call.function.name)
                span.set_attribute("gen_ai.tool.call.id", call.id)
                span.set_attribute("gen_ai.tool.call.arguments", call.function.arguments)
                result = run_tool(call)
                span.set_attribute("gen_ai.tool.call.result", result)
            return result

        with tracer.start_as_current_span("invoke_agent weather_agent") as span:
            span.set_attribute("gen_ai.operation.name", "invoke_agent")
            span.set_attribute("gen_ai.agent.name", "weather_agent")
            loop(plain_tool)
    provider.force_flush()


if __name__ == "__main__":
    if sys.argv[1] == "agent":
        agent(sys.argv[2])
    elif sys.argv[1] == "versions":
        print(json.dumps(_versions(sys.argv[2])))
    elif sys.argv[1] == "drive":
        args = sys.argv[3:]
        opts = dict(zip(args[::2], args[1::2], strict=False))
        pythons = {k: opts[f"--{k}"] for k in ("v2", "openllmetry", "openinference") if f"--{k}" in opts}
        drive(Path(sys.argv[2]), pythons, set(opts["--only"].split(",")) if "--only" in opts else None)
    else:
        raise SystemExit(__doc__)
