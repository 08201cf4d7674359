"""Which IPython shell runs this code, if any: read from ``sys.modules``, so asking never
imports IPython (a script or a worker process stays without it)."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["ipython_shell", "in_kernel"]


def ipython_shell() -> Any | None:
    """The running IPython shell (a terminal IPython or a kernel's), or None."""
    module = sys.modules.get("IPython")
    if module is None:
        return None
    try:
        return module.get_ipython()
    except Exception:  # an IPython half torn down at exit
        return None


def in_kernel() -> bool:
    """True in a Jupyter kernel (a notebook, JupyterLab, VS Code), where HTML and widgets show."""
    return getattr(ipython_shell(), "kernel", None) is not None
