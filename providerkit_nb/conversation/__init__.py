"""The synchronous facade: load, repair, stream, save, run tools, save again; many at once.

``Conversation`` here runs headless (a terminal, a worker process); the notebook layer's
``pk.Conversation`` extends it with live HTML, the approval widget and ``view()``.
"""

from .approval import DENIED_TEXT, ApprovalError, SettleError
from .facade import Conversation
from .many import ConversationMaker, resume_many, send_many

__all__ = ["DENIED_TEXT", "ApprovalError", "Conversation", "ConversationMaker", "SettleError", "resume_many", "send_many"]
