"""Notebook views: widgets, DataFrames, live display, the approval widget.

pandas and ipywidgets are imported when a name here is first used, never by
``import providerkit_nb``."""

from ..core.lazy import lazy_exports

_NAMES = {
    "HistoryView": "providerkit_nb.notebook.widgets",
    "StoreBrowser": "providerkit_nb.notebook.widgets",
    "ApprovalWidget": "providerkit_nb.notebook.approval",
    "Inspection": "providerkit_nb.notebook.inspection",
    "inspect": "providerkit_nb.notebook.inspection",
    "history_frame": "providerkit_nb.notebook.frames",
    "changes_frame": "providerkit_nb.notebook.frames",
    "interrupted_frame": "providerkit_nb.notebook.frames",
    "turns_frame": "providerkit_nb.notebook.frames",
    "usage_frame": "providerkit_nb.notebook.frames",
    "gate_frame": "providerkit_nb.notebook.frames",
    "show_frame": "providerkit_nb.notebook.frames",
}
__all__ = sorted(_NAMES)
__getattr__, __dir__ = lazy_exports(__name__, _NAMES)
