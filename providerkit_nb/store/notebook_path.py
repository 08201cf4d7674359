"""Where the running notebook is, so that a store opened without a path lives beside it.

Read from the editor's variables, the kernel's environment, or a Jupyter server on 127.0.0.1;
nothing here imports Jupyter unless a kernel is already running.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from ..core.kernel import ipython_shell

__all__ = ["beside_notebook"]


def _from_jupyter_server(timeout: float = 0.5) -> Path | None:
    """Ask a Jupyter server on this machine which notebook owns this kernel (127.0.0.1 only)."""
    if "ipykernel" not in sys.modules:
        return None
    try:
        import glob
        import urllib.request

        from ipykernel.connect import get_connection_file
        from jupyter_core.paths import jupyter_runtime_dir

        kernel_id = Path(get_connection_file()).stem.removeprefix("kernel-")
        for info_file in sorted(glob.glob(os.path.join(jupyter_runtime_dir(), "jpserver-*.json"))):
            with open(info_file, encoding="utf-8") as f:
                info = json.load(f)
            if str(info.get("hostname", "localhost")) not in ("localhost", "127.0.0.1", "0.0.0.0", ""):
                continue
            base = "/" + str(info.get("base_url", "/")).strip("/")
            url = f"http://127.0.0.1:{int(info['port'])}{base.rstrip('/')}/api/sessions"
            req = urllib.request.Request(url, headers={"Authorization": f"token {info.get('token', '')}"})
            with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - loopback only
                sessions = json.load(resp)
            for s in sessions:
                if (s.get("kernel") or {}).get("id") == kernel_id and s.get("path"):
                    root = Path(info.get("root_dir") or info.get("notebook_dir") or ".")
                    found: Path = (root / s["path"]).resolve()
                    return found
    except Exception:
        return None
    return None


def beside_notebook(suffix: str) -> tuple[Path, str] | None:
    """(``<notebook name><suffix>`` next to the running notebook, how its path was found), or
    None outside a notebook or when its path cannot be found."""
    ns = getattr(ipython_shell(), "user_ns", None)
    vsc = ns.get("__vsc_ipynb_file__") if ns else None
    if isinstance(vsc, str) and vsc:
        nb, how = Path(vsc), "VS Code (__vsc_ipynb_file__)"
    elif os.environ.get("JPY_SESSION_NAME"):
        nb, how = Path(os.environ["JPY_SESSION_NAME"]), "JupyterLab (JPY_SESSION_NAME)"
        if not nb.is_absolute():  # relative to the server root; the kernel runs in its folder
            nb = Path.cwd() / nb.name
    else:
        found = _from_jupyter_server()
        if found is None:
            return None
        nb, how = found, "Jupyter server sessions API"
    return nb.parent / (nb.name.removesuffix(".ipynb") + suffix), how
