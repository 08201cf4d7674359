"""The synchronous facade: load, repair, stream, save, run tools, save again; many at once.

One ``Conversation`` serves a notebook (live HTML, the approval widget, ``view()``) and a
terminal or worker process (text, a prompt on stdin) alike.
"""

from ..core.lazy import claim_home
from .approval import DENIED_TEXT, ApprovalError, SettleError
from .facade import Conversation
from .many import ConversationMaker, resume_many, send_many

__all__ = ["DENIED_TEXT", "ApprovalError", "Conversation", "ConversationMaker", "SettleError", "resume_many", "send_many"]

claim_home(globals(), __all__, within=__name__)
