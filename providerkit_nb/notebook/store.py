"""``providerkit_nb.store.NotebookStore``, named here too for code written before 1.0.

There is one NotebookStore: opened without a path, it lives beside the running notebook.
"""

from ..store.sqlite import NotebookStore, default_path

__all__ = ["NotebookStore", "notebook_store_path"]

notebook_store_path = default_path
