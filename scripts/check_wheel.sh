#!/usr/bin/env bash
# What a user outside this repository gets: build the sdist and the wheel, install the wheel
# (no -e, with the notebook extra) into a throwaway venv, and from an unrelated folder check
# the version, py.typed and the package data, then run the demo to the end.
# Usage: scripts/check_wheel.sh [python used to build, default .venv/bin/python]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_PY=${1:-.venv/bin/python}
BASE_PY=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$BUILD_PY" -m build --outdir "$work/dist" . >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
sdist=$(ls "$work"/dist/*.tar.gz)
wheel=$(ls "$work"/dist/*.whl)
echo "built $(basename "$sdist") and $(basename "$wheel")"

"$BASE_PY" -m venv "$work/venv"
# pip's own cache is kept (no --no-cache-dir), so a second run installs in seconds
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "${wheel}[notebook]"

mkdir "$work/elsewhere"
cd "$work/elsewhere"
expected=$(basename "$wheel" | cut -d- -f2)
env -u PYTHONPATH -u OPENAI_API_KEY "$work/venv/bin/python" - "$expected" <<'PY'
import importlib.metadata as md
import sys
from pathlib import Path

import providerkit_nb as pk

where = Path(pk.__file__).resolve().parent
assert "site-packages" in where.parts, f"imported from {where}, not from the installed wheel"
assert pk.__version__ == sys.argv[1] == md.version("providerkit_nb"), (pk.__version__, sys.argv[1])
for name in ("py.typed", "data/demo.yaml", "data/cut_off_conversation.json"):
    assert (where / name).is_file(), f"the wheel does not ship {name}"
print(f"providerkit_nb {pk.__version__} from {where}: py.typed and package data present")
PY
env -u PYTHONPATH -u OPENAI_API_KEY timeout 300 "$work/venv/bin/python" -m providerkit_nb demo >"$work/demo.log" 2>&1 \
  || { tail -40 "$work/demo.log"; echo "the installed wheel's demo failed"; exit 1; }
test -f demo-output/report.html || { echo "the demo wrote no demo-output/report.html"; exit 1; }
echo "the installed wheel's demo ran to the end from $(pwd)"
