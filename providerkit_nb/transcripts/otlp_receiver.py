"""``otlp_receiver()``: a small OTLP/HTTP endpoint a running agent's exporter can point at.

It takes ``POST /v1/traces`` and ``POST /v1/logs`` as JSON or protobuf (protobuf needs the
``otel`` extra: opentelemetry-proto, imported only when such a request arrives), keeps the spans
and GenAI log records of the last ``max_traces`` traces (older traces are dropped whole), and
hands them to the ``otel`` reader: ``pk.inspect(receiver)`` reads what it has. It binds to
127.0.0.1 unless told otherwise, refuses a body over ``max_body`` bytes (413) before reading it,
and caps the spans kept per trace, so a flood costs bounded memory.
"""

from __future__ import annotations

import gzip
import json
import threading
import zlib
from collections import OrderedDict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .otel import _hex_id

__all__ = ["OtlpReceiver", "otlp_receiver"]

_IDS = frozenset({"traceId", "spanId", "parentSpanId"})
_JSON = "application/json"
_PROTOBUF = "application/x-protobuf"
_UNTRACED = ""  # where log records without a trace id are kept (the reader joins them by history)


class _Trace:
    __slots__ = ("spans", "logs", "size")

    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        self.logs: list[dict[str, Any]] = []
        self.size = 0  # bytes of the request bodies its items came in (a share each)


class _Refused(Exception):
    def __init__(self, status: int, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.text = text


class OtlpReceiver:
    """What an OTLP exporter sent, trace by trace (the newest ``max_traces`` of them)."""

    def __init__(
        self,
        port: int = 4318,
        *,
        host: str = "127.0.0.1",
        max_traces: int = 100,
        max_spans_per_trace: int = 5000,
        max_body: int = 8 * 1024 * 1024,
        max_bytes: int = 64 * 1024 * 1024,
    ) -> None:
        self.max_traces = max_traces
        self.max_bytes = max_bytes
        self._size = 0
        self.max_spans_per_trace = max_spans_per_trace
        self.max_body = max_body
        self._traces: OrderedDict[str, _Trace] = OrderedDict()
        self._lock = threading.Condition()
        self.received = 0  # requests taken
        self.refused = 0  # requests refused (too big, not OTLP...)
        self.dropped_traces = 0
        self.dropped_spans = 0
        self.version = 0  # goes up with every request taken (a view waits on it)
        self._server = ThreadingHTTPServer((host, port), _handler(self))
        self._server.daemon_threads = True
        address = self._server.server_address
        self.host, self.port = str(address[0]), int(address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, name="otlp-receiver", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """The base URL to give an exporter (``OTEL_EXPORTER_OTLP_ENDPOINT``)."""
        return f"http://{self.host}:{self.port}"

    # ------------------------------------------------------------------ what it holds

    def traces(self) -> list[str]:
        """Trace ids held, oldest first."""
        with self._lock:
            return [t for t in self._traces if t != _UNTRACED]

    def span_count(self) -> int:
        with self._lock:
            return sum(len(t.spans) for t in self._traces.values())

    def otlp_requests(self) -> list[dict[str, Any]]:
        """What it holds as OTLP JSON requests (one for the spans, one for the log records)."""
        with self._lock:
            spans = [s for t in self._traces.values() for s in t.spans]
            logs = [r for t in self._traces.values() for r in t.logs]
        out: list[dict[str, Any]] = [{"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}]
        if logs:
            out.append({"resourceLogs": [{"scopeLogs": [{"logRecords": logs}]}]})
        return out

    def wait(self, spans: int = 1, timeout: float = 10.0) -> bool:
        """Block until at least ``spans`` spans are held (False if ``timeout`` passed first)."""
        with self._lock:
            return self._lock.wait_for(lambda: sum(len(t.spans) for t in self._traces.values()) >= spans, timeout)

    def wait_changed(self, since: int, timeout: float = 1.0) -> int:
        """Block until a request newer than ``since`` (a ``version``) arrived, or ``timeout``
        passed; the version then."""
        with self._lock:
            self._lock.wait_for(lambda: self.version != since, timeout)
            return self.version

    def clear(self) -> None:
        with self._lock:
            self._traces.clear()
            self._size = 0

    @property
    def held_bytes(self) -> int:
        """Bytes of request body behind what it holds (capped by ``max_bytes``)."""
        return self._size

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> OtlpReceiver:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"<OtlpReceiver {self.url}: {len(self._traces)} trace(s), {self.received} request(s)"
                + (f", {self.refused} refused" if self.refused else "") + ">")

    # ------------------------------------------------------------------ taking requests

    def _take(self, path: str, ctype: str, body: bytes) -> None:
        kind = "traces" if path.rstrip("/").endswith("/v1/traces") else "logs" if path.rstrip("/").endswith("/v1/logs") else None
        if kind is None:
            raise _Refused(404, f"no endpoint {path}; this receiver takes /v1/traces and /v1/logs")
        if ctype == _PROTOBUF:
            req = _from_protobuf(kind, body)
        elif ctype == _JSON:
            try:
                req = json.loads(body)
            except (ValueError, UnicodeDecodeError) as exc:
                raise _Refused(400, f"the body is not JSON ({exc})") from exc
        else:
            raise _Refused(415, f"unsupported content type {ctype or '(none)'}; send {_JSON} or {_PROTOBUF}")
        if not isinstance(req, dict):
            raise _Refused(400, "the body is not an OTLP export request object")
        if kind == "traces":
            self._add(req.get("resourceSpans"), "scopeSpans", "spans", True, len(body))
        else:
            self._add(req.get("resourceLogs"), "scopeLogs", "logRecords", False, len(body))

    def _add(self, resources: Any, scope_key: str, item_key: str, spans: bool, size: int) -> None:
        items = [x for r in _dicts(resources) for s in _dicts(r.get(scope_key)) for x in _dicts(s.get(item_key))]
        share = size // max(len(items), 1) + 1
        with self._lock:
            for x in items:
                trace = _hex_id(x.get("traceId"), 16)
                if trace is None:
                    if spans:
                        continue
                    trace = _UNTRACED  # a record of a process with no tracer: held all the same
                t = self._traces.get(trace)
                if t is None:
                    t = self._traces[trace] = _Trace()
                    while len(self._traces) > self.max_traces:
                        _, old = self._traces.popitem(last=False)
                        self._size -= old.size
                        self.dropped_traces += 1
                held = t.spans if spans else t.logs
                if len(held) >= self.max_spans_per_trace:
                    self.dropped_spans += 1
                    continue
                held.append(x)
                t.size += share
                self._size += share
            while self._size > self.max_bytes and len(self._traces) > 1:
                _, old = self._traces.popitem(last=False)
                self._size -= old.size
                self.dropped_traces += 1
            self.received += 1
            self.version += 1
            self._lock.notify_all()


def _dicts(v: Any) -> list[dict[str, Any]]:
    return [x for x in v if isinstance(x, dict)] if isinstance(v, list) else []


def _from_protobuf(kind: str, body: bytes) -> dict[str, Any]:
    try:
        from google.protobuf.json_format import MessageToDict
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )
    except ImportError as exc:
        raise _Refused(415, "protobuf OTLP needs the otel extra (pip install 'providerkit-nb[otel]'); "
                            "or set OTEL_EXPORTER_OTLP_PROTOCOL=http/json") from exc
    req: Any = ExportTraceServiceRequest() if kind == "traces" else ExportLogsServiceRequest()
    try:
        req.ParseFromString(body)
    except DecodeError as exc:
        raise _Refused(400, f"the body is not an OTLP protobuf {kind} request ({exc})") from exc
    parsed: dict[str, Any] = _hex_ids(MessageToDict(req, use_integers_for_enums=True))
    return parsed


def _hex_ids(obj: Any) -> Any:
    """Protobuf's JSON mapping writes ids in base64; OTLP JSON (and this receiver) in hex."""
    if isinstance(obj, dict):
        return {k: (_hex_id(v, 16 if k == "traceId" else 8) or v) if k in _IDS else _hex_ids(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_hex_ids(x) for x in obj]
    return obj


def _inflate(body: bytes, encoding: str, limit: int) -> bytes:
    if encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "deflate"):
        raise _Refused(415, f"unsupported content encoding {encoding}")
    d = zlib.decompressobj(wbits=31 if encoding == "gzip" else 15)
    try:
        out = d.decompress(body, limit + 1)
    except (zlib.error, gzip.BadGzipFile) as exc:
        raise _Refused(400, f"the body is not valid {encoding} ({exc})") from exc
    if len(out) > limit:
        raise _Refused(413, f"the body inflates past {limit} bytes; send smaller batches")
    return out


def _handler(receiver: OtlpReceiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # a notebook is no place for access logs
            pass

        def _answer(self, status: int, text: str = "") -> None:
            ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
            if status == 200:
                body = b"{}" if ctype != _PROTOBUF else b""
                out_type = _JSON if ctype != _PROTOBUF else _PROTOBUF
            else:
                body = json.dumps({"code": status, "message": text}).encode()
                out_type = _JSON
            self.send_response(status)
            self.send_header("Content-Type", out_type)
            self.send_header("Content-Length", str(len(body)))
            if status >= 400:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            try:
                length = int(self.headers.get("Content-Length") or -1)
            except ValueError:
                length = -1
            try:
                if length < 0:
                    raise _Refused(411, "a Content-Length is required")
                if length > receiver.max_body:
                    raise _Refused(413, f"the body has {length} bytes, over this receiver's limit of "
                                        f"{receiver.max_body}; send smaller batches or raise max_body")
                body = _inflate(self.rfile.read(length), (self.headers.get("Content-Encoding") or "").strip(),
                                receiver.max_body)
                ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
                receiver._take(self.path, ctype, body)
            except _Refused as r:
                receiver.refused += 1
                self.close_connection = True
                self._answer(r.status, r.text)
                return
            self._answer(200)

        def do_GET(self) -> None:
            self._answer(405, "this receiver takes POST /v1/traces and /v1/logs")

    return Handler


def otlp_receiver(port: int = 4318, *, host: str = "127.0.0.1", max_traces: int = 100,
                  max_spans_per_trace: int = 5000, max_body: int = 8 * 1024 * 1024,
                  max_bytes: int = 64 * 1024 * 1024) -> OtlpReceiver:
    """Start an OTLP/HTTP receiver (port 0: any free port; see ``.url``)."""
    return OtlpReceiver(port, host=host, max_traces=max_traces, max_spans_per_trace=max_spans_per_trace,
                        max_body=max_body, max_bytes=max_bytes)
