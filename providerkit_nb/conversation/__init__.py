"""The synchronous facade: load, repair, stream, save, run tools, save again.

``Conversation`` here runs headless (a terminal, a worker process); the notebook layer's
``pk.Conversation`` extends it with live HTML, the approval widget and ``view()``.
"""

from .facade import Conversation

__all__ = ["Conversation"]
