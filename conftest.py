"""Root conftest: loaded for every collected path, notebooks included."""

import os
from pathlib import Path

# Kernels started by nbmake read this IPython profile. Without OPENAI_API_KEY its startup file
# answers the notebooks from cassettes/notebooks.yaml (see scripts/notebook_replay.py); with a
# key set the notebooks talk to the real provider.
os.environ["IPYTHONDIR"] = str(Path(__file__).resolve().parent / "notebooks" / "offline")
