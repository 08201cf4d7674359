"""The robustness tests replay the same recordings as tests/providers, through its loader."""

from __future__ import annotations

import sys
from pathlib import Path

_PROVIDERS = str(Path(__file__).resolve().parents[1] / "providers")
if _PROVIDERS not in sys.path:
    sys.path.append(_PROVIDERS)  # cassette_loader: one reader of the recordings for every test
