"""watch_traces(receiver): a notebook view of the runs an OTLP receiver holds, redrawn as spans arrive.

A background thread waits on the receiver (no polling of the network: it wakes when a request is
taken) and redraws one row per run: its trace, messages, markers and whether a provider would
take it as is. Everything from the trace is escaped.
"""

from __future__ import annotations

import html
import threading
from typing import Any

from ..transcripts import MultipleThreads, load
from ..transcripts.inspection import inspect_transcript

__all__ = ["TraceWatch", "watch_traces"]


class TraceWatch:
    """The live table; ``stop()`` ends its thread (the receiver keeps running)."""

    def __init__(self, receiver: Any, *, wait: float = 0.5) -> None:
        import ipywidgets as w

        self.receiver = receiver
        self.widget = w.HTML()
        self._wait = wait
        self._stop = threading.Event()
        self._seen = -1
        self.refresh()
        self._thread = threading.Thread(target=self._loop, name="trace-watch", daemon=True)
        self._thread.start()

    def rows(self) -> list[dict[str, Any]]:
        """One dict per run the receiver holds (newest last)."""
        try:
            load(self.receiver, format="otel")
            threads: list[str | None] = [None]
        except MultipleThreads as exc:
            threads = list(exc.threads)
        except ValueError:  # nothing yet, or nothing readable yet
            return []
        out = []
        for th in threads:
            try:
                report = inspect_transcript(load(self.receiver, format="otel", thread=th))
            except ValueError as exc:
                out.append({"thread": th or "", "messages": 0, "markers": [], "valid": False, "error": str(exc)})
                continue
            out.append({"thread": report.thread or "", "messages": len(report.messages),
                        "markers": [m.kind for m in report.markers], "valid": report.valid, "error": ""})
        return out

    def refresh(self) -> None:
        self._seen = self.receiver.version
        rows = self.rows()
        cells = "".join(
            f"<tr><td><code>{html.escape(r['thread'])}</code></td><td>{r['messages']}</td>"
            f"<td>{html.escape(', '.join(r['markers']) or '-')}</td>"
            f"<td>{'yes' if r['valid'] else 'no'}</td><td>{html.escape(r['error'])}</td></tr>"
            for r in rows
        )
        head = html.escape(repr(self.receiver))
        self.widget.value = (
            f"<b>{head}</b><table><tr><th>run</th><th>messages</th><th>markers</th><th>valid</th><th></th></tr>"
            f"{cells}</table>"
        )

    def _loop(self) -> None:
        while not self._stop.is_set():
            v = self.receiver.wait_changed(self._seen, self._wait)
            if v != self._seen and not self._stop.is_set():
                self.refresh()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


def watch_traces(receiver: Any) -> TraceWatch:
    """A live view of ``receiver`` (an ``OtlpReceiver``): one row per agent run, redrawn as
    its spans arrive."""
    return TraceWatch(receiver)
