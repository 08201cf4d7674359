"""pk.inspect in a notebook: the headless Inspection with its views, frames and HTML report."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from ..core.repair import Repaired
from ..transcripts import inspection as _analysis

__all__ = ["Inspection", "inspect"]


@dataclass(repr=False)
class Inspection(_analysis.Findings):
    """An Inspection that shows itself: a HistoryView, DataFrames and the before/after report."""

    _view: Any = None

    @property
    def view(self) -> Any:
        if self._view is None:
            from .widgets import HistoryView

            self._view = HistoryView(self.messages, problems=self.problems, title=self.title, inspection=self)
        return self._view

    def problems_frame(self) -> Any:
        import pandas as pd

        rows = [p.to_dict() if hasattr(p, "to_dict") else dict(p) for p in self.problems]
        return pd.DataFrame(rows, columns=["rule", "index", "message", "provider_wording"])

    def markers_frame(self) -> Any:
        import pandas as pd

        return pd.DataFrame([m.to_dict() for m in self.markers], columns=["kind", "index", "text", "ids"])

    def history_frame(self) -> Any:
        from .frames import history_frame

        return history_frame(self.messages)

    def changes_frame(self) -> Any:
        from .frames import changes_frame

        return changes_frame(self.repaired or Repaired(list(self.messages)))

    def page(self) -> Any:
        """The viewer's Page of this inspection (findings and cards)."""
        from ..viewer import page_of

        return page_of(self, title=self.title)

    def report_html(self) -> str:
        """The report: one self-contained, escaped HTML page (findings, then every message)."""
        from ..viewer import report_html

        return report_html(self.page())

    def write_html(self, path: str | Path) -> Path:
        from ..viewer import write_html

        return write_html(self.page(), path)

    def _repr_html_(self) -> str:
        from ..viewer import page_of, static_html

        return static_html(page_of(self, title=self.title, max_chars=20_000), prefix=f"i{id(self) % 1_000_000}-")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The widget, plus static HTML and text a saved or exported notebook keeps."""
        bundle: dict[str, Any] = self.view._repr_mimebundle_(include, exclude)
        return bundle

    def _ipython_display_(self) -> None:
        """The view's two outputs (static cards, then the widget)."""
        self.view._ipython_display_()


def _is_conversation(source: Any) -> bool:
    """A Conversation, known by what inspecting one reads (the class sits above this layer)."""
    return all(hasattr(source, name) for name in ("store", "id", "approval", "reload", "send"))


def inspect(source: Any, **options: Any) -> Inspection:
    """Load a transcript, list what a provider would refuse in it, repair it; show it in a view.

    Takes what ``providerkit_nb.transcripts.inspection.examine`` takes (``format=``, ``thread=``,
    ``wire=``, ``is_read_only=``). A ``Conversation`` is inspected as its store knows it: its
    repair (with the call marks: calls waiting for approval, calls the Stop button landed in) is
    the one ``convo.interrupted`` and ``convo.view()`` show."""
    if _is_conversation(source):
        found = _analysis.inspect_conversation(source, wire=options.get("wire"))
    else:
        found = _analysis.examine(source, **options)
    return Inspection(**{f.name: getattr(found, f.name) for f in fields(found)})
