# Runs in every kernel started with IPYTHONDIR pointing at this folder (`make test` does that).
# With no OPENAI_API_KEY set, the notebooks' requests are answered from the project's own
# cassette (cassettes/notebooks.yaml, constructed: see cassettes/README.md); with a key set,
# nothing happens here and the notebooks talk to the real provider.
import os as _os

if not _os.environ.get("OPENAI_API_KEY") or _os.environ.get("PK_RECORD_NOTEBOOKS"):
    import atexit as _atexit
    import sys as _sys
    from pathlib import Path as _Path

    _repo = _Path(_os.environ["IPYTHONDIR"]).resolve().parents[1]
    _sys.path.insert(0, str(_repo / "scripts"))
    import notebook_replay as _replay

    _replay.install(_repo, record=bool(_os.environ.get("PK_RECORD_NOTEBOOKS")))
    _atexit.register(_replay.uninstall)
