"""The docs site: built strict from the repository (as ``make docs`` does), then read as built.

The build runs once per session into a temporary folder. What is checked is the built site, not
the lists the build wrote it from: every name of ``pk.__all__`` (and of each public home) has its
entry, every notebook has its page with its saved outputs, no page or asset loads anything from
the internet, llms.txt is there, the README's sections each have a home, and the strict setting
fails a build on a broken link, a missing anchor or a name that does not exist.
"""

from __future__ import annotations

import html
import importlib
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

import providerkit_nb as pk
from tests.conftest import REPO, unavailable

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def _mkdocs(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    try:
        import mkdocs  # noqa: F401
        import mkdocstrings  # noqa: F401
    except ImportError:
        unavailable("the docs site needs the docs extra: pip install -e '.[docs]' (make test installs it)")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
    )


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = _mkdocs("--site-dir", str(out))
    assert done.returncode == 0, f"make docs failed (strict):\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    return out


class _Anchors(HTMLParser):
    """The ids and the in-site link targets of a page, read as HTML (a docstring that quotes
    ``id="`` or ``href="#`` in its text is text, not markup)."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for key, value in attrs:
            if key == "id" and value:
                self.ids.add(value)
            elif key == "href" and value and "#" in value and "://" not in value:
                page, _, anchor = value.partition("#")
                if anchor:
                    self.links.append((page, anchor))


def _anchors(page: Path) -> _Anchors:
    parser = _Anchors()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def _ids(page: Path) -> set[str]:
    return _anchors(page).ids


# --------------------------------------------------------------------------- the reference


def test_every_name_in_pk_all_has_its_reference_entry(site: Path) -> None:
    ids = _ids(site / "reference" / "pk.html")
    missing = [name for name in pk.__all__ if f"providerkit_nb.{name}" not in ids]
    assert not missing, f"pk names without an entry on reference/pk.html: {missing}"
    assert len(pk.__all__) >= 40


def test_every_name_of_each_public_home_is_documented_or_linked_to_its_entry(site: Path) -> None:
    """A home's page documents each of its names, or says where it is documented (a name pk or
    another home also exports is documented once); every link of that list resolves."""
    pages = {p.stem: p for p in (site / "reference").glob("*.html")}
    all_ids = {i for p in pages.values() for i in _ids(p)}
    homes = [stem for stem in pages if stem not in ("index", "pk", "cli", "error-kinds", "message-json")]
    assert {"messages", "errors", "store", "notebook", "testing.simulate"} <= set(homes)
    for stem in homes:
        module = importlib.import_module(f"providerkit_nb.{stem}")
        text = pages[stem].read_text(encoding="utf-8")
        for name in module.__all__:
            here = f"providerkit_nb.{stem}.{name}"
            documented = here in all_ids or any(i.endswith(f".{name}") and i in _ids(pages[stem]) for i in all_ids)
            linked = f"<code>{here}</code>" in text
            assert documented or linked, f"{here} has no entry on reference/{stem}.html"
        for target in _anchors(pages[stem]).links:
            page = (pages[stem].parent / target[0]) if target[0] else pages[stem]
            assert target[1] in _ids(page.resolve()), f"reference/{stem}.html links to a missing {target}"


def test_the_command_line_page_shows_each_command_from_the_parser(site: Path) -> None:
    text = html.unescape((site / "reference" / "cli.html").read_text(encoding="utf-8"))
    for command in ("demo", "replay", "inspect", "repair"):
        assert f"usage: providerkit-nb {command}" in text
    assert "--html OUT" in text and "--to {canonical," in text


def test_the_error_kinds_page_says_what_fixes_each_kind(site: Path) -> None:
    text = html.unescape(re.sub(r"<[^>]+>", "", (site / "reference" / "error-kinds.html").read_text(encoding="utf-8")))
    for kind in pk.ErrorKind:
        row = re.search(rf"^{kind.value}\s*\n(.+)$", text, re.MULTILINE)
        assert row is not None and len(row.group(1)) > 20, f"no row saying what fixes {kind.value!r}"
    assert re.search(r"^rate\s*\n.*\n429\n", text, re.MULTILINE), "429 is not listed under rate"


def test_the_message_json_page_shows_each_role_in_the_canonical_encoding(site: Path) -> None:
    text = html.unescape(re.sub(r"<[^>]+>", "", (site / "reference" / "message-json.html").read_text(encoding="utf-8")))
    lines = [line for line in text.splitlines() if line.startswith('{"')]
    roles = set()
    for line in lines:
        data = json.loads(line)
        assert line == json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        roles.add(data["role"])
    assert roles == {"system", "user", "assistant", "tool"}


# --------------------------------------------------------------------------- the lessons


def _outputs(nb: Path) -> list[dict]:
    return [o for cell in json.loads(nb.read_text(encoding="utf-8"))["cells"] for o in cell.get("outputs", [])]


def _text_of(page: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[nb.stem for nb in NOTEBOOKS])
def test_every_notebook_has_a_page_with_its_saved_outputs(site: Path, nb: Path) -> None:
    page = site / "lessons" / f"{nb.stem}.html"
    assert page.is_file(), f"no lesson page for {nb.name}"
    shown = " ".join(_text_of(page).split())
    streams = [o for o in _outputs(nb) if o["output_type"] == "stream"]
    assert streams, f"{nb.name} has no printed output to look for"
    for out in streams:
        for line in "".join(out["text"]).splitlines():
            if line.strip():
                assert " ".join(line.split()) in shown, f"{nb.name}: printed line not on its page: {line!r}"


def test_a_saved_widget_shows_its_static_view_without_a_kernel_or_a_widget_manager(site: Path) -> None:
    """The views save their cards as HTML next to the widget; the page shows those and does not
    try to load the widget manager (which comes from a CDN)."""
    seen = 0
    for nb in NOTEBOOKS:
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        page = (site / "lessons" / f"{nb.stem}.html").read_text(encoding="utf-8")
        assert "application/vnd.jupyter.widget-state+json" not in page
        for cell in cells:
            outs = cell.get("outputs", [])
            if not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outs):
                continue
            static = [o["data"]["text/html"] for o in outs if "text/html" in o.get("data", {})]
            assert static, f"{nb.name}: a widget output without a static HTML copy beside it"
            words = re.findall(r"[A-Za-z][A-Za-z ]{12,}", re.sub(r"<[^>]+>", " ", html.unescape("".join(static[0]))))
            assert words and words[0].strip() in html.unescape(page), f"{nb.name}: the static view is not on the page"
            seen += 1
    assert seen >= 3


# --------------------------------------------------------------------------- offline

# What a browser would fetch: script and image sources, stylesheets and icons, CSS imports and
# url(), and the URLs a script hands to fetch / import / importScripts / Worker / XHR.
_LOADS = [
    re.compile(r"<(?:script|img|iframe|source|audio|video|embed|track|input)\b[^>]*?\bsrc\s*=\s*[\"']?([^\"'\s>]+)", re.I),
    re.compile(r"\bsrcset\s*=\s*[\"']([^\"']+)", re.I),
    re.compile(r"<link\b(?=[^>]*\brel\s*=\s*[\"']?(?:stylesheet|preload|modulepreload|icon|shortcut icon|prefetch|manifest))[^>]*\bhref\s*=\s*[\"']?([^\"'\s>]+)", re.I),
    re.compile(r"@import\s+(?:url\()?\s*[\"']?([^\"')\s;]+)", re.I),
    re.compile(r"url\(\s*[\"']?([^\"')\s]+)", re.I),
    re.compile(r"\b(?:fetch|import|importScripts|Worker|SharedWorker|open)\(\s*(?:\"GET\"\s*,\s*)?[\"'`]([^\"'`]+)", re.I),
]
_REMOTE = re.compile(r"^(?:https?:)?//", re.I)


def remote_loads(text: str) -> list[str]:
    found: list[str] = []
    for pattern in _LOADS:
        for m in pattern.finditer(text):
            for url in m.group(1).split(","):
                url = url.strip().split(" ")[0]
                if _REMOTE.match(url):
                    found.append(url)
    return found


def test_the_scanner_sees_each_kind_of_remote_load() -> None:
    page = (
        '<script src="https://cdn.example/x.js"></script><link rel="stylesheet" href="//fonts.example/a.css">'
        '<img src="http://img.example/p.png"><style>@import "https://x.example/y.css"; b{background:url(https://z.example/i.png)}</style>'
        '<script>fetch("https://api.example/v1");import("https://esm.example/m.js")</script>'
        '<a href="https://example.org/">a link is not a load</a><img src="../local.png"><svg xmlns="http://www.w3.org/2000/svg"></svg>'
    )
    assert remote_loads(page) == [
        "https://cdn.example/x.js", "http://img.example/p.png", "//fonts.example/a.css",
        "https://x.example/y.css", "https://z.example/i.png", "https://api.example/v1", "https://esm.example/m.js",
    ]


def test_no_built_page_or_asset_loads_anything_from_the_internet(site: Path) -> None:
    offenders: dict[str, list[str]] = {}
    scanned = 0
    for path in site.rglob("*"):
        if path.suffix not in (".html", ".css", ".js", ".mjs", ".svg", ".xml") or path.name.startswith("sitemap"):
            continue
        scanned += 1
        found = remote_loads(path.read_text(encoding="utf-8", errors="replace"))
        if found:
            offenders[str(path.relative_to(site))] = sorted(set(found))
    assert scanned > 40
    assert not offenders, f"the built site loads from the internet: {offenders}"


def test_no_page_uses_web_fonts_or_analytics(site: Path) -> None:
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "fonts.googleapis" not in text and "fonts.gstatic" not in text, page
        assert "googletagmanager" not in text and "gtag(" not in text, page


# --------------------------------------------------------------------------- llms.txt


def test_llms_txt_lists_the_pages_and_llms_full_holds_them(site: Path) -> None:
    index = (site / "llms.txt").read_text(encoding="utf-8")
    full = (site / "llms-full.txt").read_text(encoding="utf-8")
    for page in ("start.md", "concepts/repair.md", "howto/mcp.md", "reference/pk.md"):
        assert f"({page})" in index, page
    assert "INTERRUPTED_MAY_HAVE_RUN" in full and "dangling_call" in full
    assert len(full) > 50_000


# --------------------------------------------------------------------------- the README's sections

# Each section of README.md as it was before it moved into the site (main, before the docs
# issue), and the page (and anchor) where its content lives now.
README_SECTIONS = {
    "providerkit_nb": "index.html",
    "In a notebook": "start.html#the-first-conversation",
    "One surface": "start.html#one-surface",
    "The person at the notebook decides": "howto/stop-and-approval.html#the-person-at-the-notebook-decides",
    "Seeing what broke: the report, the view and a saved notebook": "howto/viewer.html",
    "Compared with claude-code-log and Inspect AI's viewer": "howto/viewer.html#compared-with-claude-code-log-and-inspect-ais-viewer",
    "MCP tools": "howto/mcp.html",
    "The notebooks": "lessons/index.html",
    "Run it on a real model, offline": "start.html#a-real-model-no-key",
    "What it does not do": "concepts/not-our-job.html",
    "Providers and wires": "howto/providers.html",
    "A server on your machine, or another compatible server": "howto/providers.html#a-server-on-your-machine-or-another-compatible-server",
    "Structured output, usage and cost, context, backup models": "howto/structured-output.html",
    "Stores": "howto/stores.html",
    "Compared with": "howto/stores.html#compared-with",
    "Many conversations, many workers": "howto/many.html",
    "Bad input: garbled responses and damaged files": "howto/bad-input.html",
    "Transcripts of agent tools: Claude Code, Codex, OpenCode, Gemini CLI, Agents SDK, Vercel AI SDK": "howto/coding-agents.html",
    "Transcripts of agent frameworks: pydantic-ai, LangChain, LangGraph, llm": "howto/frameworks.html",
    "Traces and Cline": "howto/traces.html",
    "Dependencies, and why": "development.html#dependencies-and-why",
    "Tests": "development.html#tests",
    "Benchmarks": "benchmarks.html",
    "Layout": "development.html#layout",
}
# Parts of a section that went to a page of their own.
README_PARTS = {
    "Stop while streaming, inside a tool, during an approval": "howto/stop-and-approval.html#stop",
    "settle": "howto/settle.html",
    "usage and cost": "howto/usage-and-cost.html",
    "context overflow and compaction": "howto/compaction.html",
    "backup models and small options": "howto/providers.html#resilience",
    "Cline": "howto/coding-agents.html#cline",
    "the guide's loop": "concepts/crash-and-resume.html#save-as-it-happens",
}


@pytest.mark.parametrize("where", [*README_SECTIONS.values(), *README_PARTS.values()])
def test_every_readme_section_has_a_home_in_the_site(site: Path, where: str) -> None:
    page, _, anchor = where.partition("#")
    assert (site / page).is_file(), f"{page} is not in the site"
    if anchor:
        assert anchor in _ids(site / page), f"{page} has no anchor #{anchor}"


# --------------------------------------------------------------------------- strict


def test_the_strict_build_fails_on_a_broken_link_a_missing_anchor_and_an_unknown_name(tmp_path: Path) -> None:
    """The site's own settings (strict, validation, mkdocstrings' cross-references) on one page
    with three mistakes: each is named, and the build fails."""
    import yaml

    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\n## Here\n\nSee [the start](index.md#here).\n", encoding="utf-8")
    (docs / "other.md").write_text(
        "# Other\n\n[gone](missing.md), [no anchor](index.md#nowhere), "
        "[no name][providerkit_nb.NoSuchName], [a name][providerkit_nb.repair_history]\n\n"
        "::: providerkit_nb.repair_history\n",
        encoding="utf-8",
    )
    config.update(docs_dir=str(docs), site_dir=str(tmp_path / "site"), nav=["index.md", "other.md"])
    config.pop("hooks")
    config["plugins"] = [p for p in config["plugins"] if not (isinstance(p, dict) and {"mkdocs-jupyter", "llmstxt"} & set(p))]
    for plugin in config["plugins"]:
        if isinstance(plugin, dict) and "mkdocstrings" in plugin:
            plugin["mkdocstrings"]["handlers"]["python"]["paths"] = [str(REPO)]
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    done = _mkdocs("-f", str(tmp_path / "mkdocs.yml"), cwd=tmp_path)
    said = done.stdout + done.stderr
    assert done.returncode != 0
    assert "missing.md" in said
    assert "does not contain an anchor '#nowhere'" in said
    assert "Could not find cross-reference target 'providerkit_nb.NoSuchName'" in said
    assert "providerkit_nb.repair_history'" not in said  # the name that exists resolved


def test_every_relative_link_of_the_readme_points_at_a_file() -> None:
    """README.md is read on the forge, outside the site: its links into docs/ must resolve."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [link for link in links if not re.match(r"^[a-z]+:", link)]
    assert local
    missing = [link for link in local if not (REPO / link).exists()]
    assert not missing, f"README.md links to files that do not exist: {missing}"
