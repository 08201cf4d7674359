# Used only by `make notebooks-cassette` (IPYTHONDIR points here, PK_RECORD_NOTEBOOKS=1): the
# notebooks' requests are answered by the constructed stand-in of scripts/notebook_replay.py and
# recorded into cassettes/notebooks.yaml. The notebooks themselves need no profile: they pick the
# local model or these recordings on their own (providerkit_nb.local.offline_provider).
import os as _os

if _os.environ.get("PK_RECORD_NOTEBOOKS"):
    import atexit as _atexit
    import sys as _sys
    from pathlib import Path as _Path

    _repo = _Path(_os.environ["IPYTHONDIR"]).resolve().parents[1]
    _sys.path.insert(0, str(_repo / "scripts"))
    import notebook_replay as _replay

    _replay.install(_repo, record=True)
    _atexit.register(_replay.uninstall)
