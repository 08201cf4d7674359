"""The notebooks' saved outputs: made by ``make notebooks``, checked by tests/notebook/test_saved_outputs.py.

``python scripts/notebook_outputs.py save [NAME...]`` executes each notebook in a real kernel from
the recordings (PK_NOTEBOOK_PROVIDER=recordings, so the answers are the same on every run and on
every machine, with or without the ``local`` extra) and writes it back with its outputs, so a
reader on GitHub sees what a run shows. ``check`` executes them again the same way and exits 1
when a saved output is no longer what a run shows.

What is compared (``comparable``): per code cell, the list of outputs, each as its output type
and, per MIME type, its text with the volatile parts masked: durations and other decimals, ids
(uuids, long hex and base-36 runs), temporary folders, process ids in the sentences that print
them, and widget model ids. Everything else must match exactly: which cells print, in what
order, what kind of output, and every word and count. Images and widget state are compared by
presence only (their bytes change with library versions that draw them).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
MODE = {"PK_NOTEBOOK_PROVIDER": "recordings"}
TIMEOUT = 300

_MASKS = [
    (re.compile(r"/(?:tmp|var/folders)/[\w./-]*"), "<tmp>"),
    (re.compile(re.escape(str(REPO))), "<repo>"),
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:<port>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    (re.compile(r"\b(?=[0-9a-z]*\d)(?=[0-9a-z]*[a-z])[0-9a-z]{10,}\b"), "<id>"),
    (re.compile(r"\b[vwbsi]\d+-"), "v<n>-"),  # the element ids of a view (one prefix per view drawn)
    (re.compile(r"\d+\.\d+"), "<num>"),
    (re.compile(r"\[(?:<num>,?\s*)+(?:\.\.\.)?\]?"), "[<nums>]"),  # a list of timings, cut to a width
    (re.compile(r"\b(\w+):\d{3,}\b"), r"\1:<n>"),  # host:pid of a worker, host:port
    (re.compile(r"\b(pid|server|process|port)([ =:]+)\d+"), r"\1\2<n>"),
]


def mask(text: str) -> str:
    for pattern, repl in _MASKS:
        text = pattern.sub(repl, text)
    return re.sub(r"[ \t]+", " ", text)  # column padding follows the masked numbers' widths


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def comparable(nb: Any) -> list[list[Any]]:
    """What must stay equal between the saved notebook and a fresh run (see the module doc)."""
    cells = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        outs: list[Any] = []
        for out in cell.get("outputs", []):
            kind = out["output_type"]
            if kind == "stream":
                text = mask(_text(out["text"]))
                if outs and outs[-1][:2] == [kind, out["name"]]:  # how a stream is cut into outputs varies
                    outs[-1][2] += text
                else:
                    outs.append([kind, out["name"], text])
            elif kind == "error":
                outs.append([kind, out["ename"], mask(out["evalue"])])
            else:
                data = {}
                for mime, value in sorted(out.get("data", {}).items()):
                    if mime == "text/plain" and "text/html" in out.get("data", {}):
                        data[mime] = "<present>"  # a table's text form wraps with its numbers' widths
                    elif mime.startswith("image/") or mime == "application/vnd.jupyter.widget-view+json":
                        data[mime] = "<present>"
                    else:
                        data[mime] = mask(value if isinstance(value, str) else _text(value)
                                          if isinstance(value, list) else json.dumps(value, sort_keys=True))
                outs.append([kind, data])
        cells.append(outs)
    return cells


def execute(path: Path) -> Any:
    """Run the notebook top to bottom in a real kernel, from the recordings, in its own folder."""
    import nbformat
    from nbconvert.preprocessors import ExecutePreprocessor

    nb = nbformat.read(path, as_version=4)
    saved = {k: os.environ.get(k) for k in MODE}
    os.environ.update(MODE)
    try:
        ExecutePreprocessor(timeout=TIMEOUT, kernel_name="python3").preprocess(nb, {"metadata": {"path": str(path.parent)}})
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return tidy(nb)


def tidy(nb: Any) -> Any:
    """Drop what only says when and where it ran: execution times, the kernel's widget state,
    this machine's folders (the repository's path and temporary folders)."""
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                out["text"] = _local_paths(out["text"])
            for mime, value in out.get("data", {}).items():
                if isinstance(value, str) and not mime.startswith("image/"):
                    out["data"][mime] = _local_paths(value)
    return nb


def _local_paths(text: str) -> str:
    return text.replace(str(REPO) + os.sep, "").replace(str(REPO), ".")


def notebooks(names: list[str]) -> list[Path]:
    paths = sorted(NOTEBOOKS.glob("*.ipynb"))
    if names:
        paths = [p for p in paths if p.stem in names or p.name in names]
    return paths


def main(argv: list[str]) -> int:
    import nbformat

    if not argv or argv[0] not in ("save", "check"):
        print(__doc__)
        return 2
    stale = []
    for path in notebooks(argv[1:]):
        fresh = execute(path)
        if argv[0] == "save":
            nbformat.write(fresh, path)
            print(f"saved {path.relative_to(REPO)}")
        elif comparable(fresh) != comparable(nbformat.read(path, as_version=4)):
            stale.append(path.name)
    if stale:
        print(f"saved outputs no longer match a run: {', '.join(stale)}; run `make notebooks`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
