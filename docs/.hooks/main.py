"""The site's build steps that MkDocs has no setting for (mkdocs.yml lists this file under hooks).

- the reference pages are written from the code (reference.py) and put in the nav;
- the six notebooks of notebooks/ become the Lessons pages, rendered by mkdocs-jupyter from
  their saved outputs (never executed);
- example fences lose their test options (examples.py) and an ``output`` fence is titled;
- the lesson pages lose the scripts nbconvert adds that load from a CDN (MathJax, mermaid): the
  built site loads nothing from the internet (tests/test_docs_site.py scans it).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

sys.path.insert(0, str(Path(__file__).parent))

import examples  # noqa: E402
import reference  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
REFERENCE_NAV = "Reference"
LESSONS_NAV = "Lessons"

_homes: list[reference.Home] = []


def _lesson_title(path: Path) -> str:
    import json

    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            for line in "".join(cell.get("source", [])).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return path.stem


def _lessons() -> list[Path]:
    return sorted(NOTEBOOKS.glob("*.ipynb"))


def on_config(config: Any) -> Any:
    """Fill the Reference and Lessons sections of the nav from what is in the repository."""
    global _homes
    sys.path.insert(0, str(ROOT))
    _homes = reference.homes(ROOT)
    ref_nav: list[Any] = [{"Overview": "reference/index.md"}]
    ref_nav += [{home.title: home.page} for home in _homes]
    ref_nav += [
        {"Command line": "reference/cli.md"},
        {"Error kinds": "reference/error-kinds.md"},
        {"Message JSON": "reference/message-json.md"},
    ]
    lessons_nav: list[Any] = [{"Overview": "lessons/index.md"}]
    lessons_nav += [{_lesson_title(p): f"lessons/{p.name}"} for p in _lessons()]
    for entry in config["nav"]:
        if isinstance(entry, dict) and REFERENCE_NAV in entry:
            entry[REFERENCE_NAV] = ref_nav
        if isinstance(entry, dict) and LESSONS_NAV in entry:
            entry[LESSONS_NAV] = lessons_nav
    return config


@event_priority(100)  # before mkdocs-jupyter wraps the .ipynb files
def on_files(files: Files, config: Any) -> Files:
    generated = reference.home_pages(ROOT, _homes)
    generated["reference/index.md"] = reference.reference_index(_homes)
    generated["reference/cli.md"] = reference.cli_page()
    generated["reference/error-kinds.md"] = reference.errors_page(ROOT)
    generated["reference/message-json.md"] = reference.messages_page()
    for path, text in generated.items():
        files.append(File.generated(config, path, content=text))
    # mkdocs-jupyter reads a notebook from its File's src_dir, so the lessons are copied under
    # one (a generated File's own path is lost when the plugin wraps it).
    lessons_src = ROOT / ".cache" / "docs-lessons"
    shutil.rmtree(lessons_src, ignore_errors=True)
    (lessons_src / "lessons").mkdir(parents=True)
    for nb in _lessons():
        shutil.copy2(nb, lessons_src / "lessons" / nb.name)
        files.append(File(f"lessons/{nb.name}", str(lessons_src), config["site_dir"], config["use_directory_urls"]))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    start = os.path.relpath("start.md", os.path.dirname(page.file.src_uri) or ".")
    return examples.render(markdown, start)


# nbconvert's HTML template brings MathJax and mermaid from a CDN (the notebooks use neither);
# mkdocs-jupyter leaves MathJax's tag with an empty src.
_SCRIPT = re.compile(r"<script\b[^>]*>.*?</script>", re.DOTALL | re.IGNORECASE)
_REMOTE = re.compile(r"\bsrc\s*=\s*(?:[\"']?(?:https?:)?//|\"\s*\"|'\s*')", re.IGNORECASE)
_CDN_SCRIPT = re.compile(r"MathJax|mermaid|cdnjs|unpkg|jsdelivr|require\.js", re.IGNORECASE)


def _drop_remote_scripts(html: str) -> str:
    def keep(m: re.Match[str]) -> str:
        tag = m.group(0)
        head = tag[: tag.find(">") + 1]
        if _REMOTE.search(head) or _CDN_SCRIPT.search(tag):
            return ""
        return tag

    html = _SCRIPT.sub(keep, html)
    return re.sub(r"<!--\s*(?:Load mathjax|MathJax configuration|End of mathjax configuration)\s*-->", "", html)


def on_page_content(html: str, page: Any, config: Any, files: Files) -> str:
    if page.file.src_uri.endswith(".ipynb"):
        return _drop_remote_scripts(html)
    return html
