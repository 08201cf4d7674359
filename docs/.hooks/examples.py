"""The Python examples of the docs pages and README.md: found here once, run by the tests
(tests/test_docs_examples.py) and cleaned of their test options by the site build (main.py).

A fence is an example when its info string is ``python``. Options go after it, in the form
pydantic's docs use: ```` ```python test="local-model" ````:

- ``test="local-model"``: the example talks to a hosted provider (it needs an API key); the
  tests run it against the real local model instead (``providerkit_nb.local``), and the page
  says so under the block.
- ``test="postgres"``: it needs a PostgreSQL server (the tests use PROVIDERKIT_PG_DSN).

A fence whose info string is ``output`` right after an example is what the example prints; the
tests compare it (``...`` stands for any text, whitespace runs count as one space) and the site
shows it as a block titled "Output".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

FENCE = re.compile(r"^(?P<indent> *)(?P<ticks>`{3,})(?P<info>[^`\n]*)$")
OPTION = re.compile(r'(\w+)="([^"]*)"')
MODES = frozenset({"", "local-model", "postgres"})


@dataclass
class Example:
    path: Path
    line: int  # 1-based line of the opening fence
    code: str
    options: dict[str, str] = field(default_factory=dict)
    output: str | None = None  # what the page shows it prints, if it shows that

    @property
    def mode(self) -> str:
        return self.options.get("test", "")

    def id(self, root: Path) -> str:
        return f"{self.path.relative_to(root).as_posix()}:{self.line}"


@dataclass
class _Fence:
    line: int
    info: str
    body: str
    end: int  # 1-based line of the closing fence


def _fences(text: str) -> list[_Fence]:
    lines = text.split("\n")
    out: list[_Fence] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        indent, ticks = m.group("indent"), m.group("ticks")
        j = i + 1
        while j < len(lines) and not re.match(rf"^ *{ticks}\s*$", lines[j]):
            j += 1
        body = "\n".join(line[len(indent):] if line.startswith(indent) else line for line in lines[i + 1 : j])
        out.append(_Fence(i + 1, m.group("info").strip(), body, j + 1))
        i = j + 1
    return out


def _between_is_blank(text_lines: list[str], after: int, before: int) -> bool:
    return all(not line.strip() for line in text_lines[after : before - 1])


def find_examples(path: Path) -> list[Example]:
    """The examples of one Markdown file, in order, each with the output shown after it."""
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    fences = _fences(text)
    found: list[Example] = []
    for k, fence in enumerate(fences):
        lang, _, rest = fence.info.partition(" ")
        if lang != "python":
            continue
        options = dict(OPTION.findall(rest))
        if options.get("test", "") not in MODES:
            raise ValueError(f"{path}:{fence.line}: unknown test option {options['test']!r}; use one of {sorted(MODES)}")
        output = None
        if k + 1 < len(fences):
            nxt = fences[k + 1]
            if nxt.info == "output" and _between_is_blank(lines, fence.end, nxt.line):
                output = nxt.body
        found.append(Example(path, fence.line, fence.body, options, output))
    return found


LOCAL_NOTE = (
    '!!! note "Needs an API key"\n'
    "    This example talks to a hosted provider, so it needs that provider's key. The docs'\n"
    "    tests run it against the real local model instead ([Start](START_LINK#a-real-model-no-key)).\n"
)


def render(markdown: str, start_link: str) -> str:
    """The page as the site shows it: test options dropped from fences, an ``output`` fence
    titled "Output", and a note under each example that needs a key."""
    lines = markdown.split("\n")
    out: list[str] = []
    in_fence: str | None = None
    pending_note = False
    for line in lines:
        m = FENCE.match(line)
        if in_fence is None and m is not None:
            indent, ticks, info = m.group("indent"), m.group("ticks"), m.group("info").strip()
            lang, _, rest = info.partition(" ")
            in_fence = ticks
            if lang == "python":
                options = dict(OPTION.findall(rest))
                pending_note = options.get("test") == "local-model"
                rest = OPTION.sub(lambda o: "" if o.group(1) == "test" else o.group(0), rest).strip()
                out.append(f"{indent}{ticks}python{(' ' + rest) if rest else ''}")
                continue
            if info == "output":
                out.append(f'{indent}{ticks}text title="Output"')
                continue
            out.append(line)
            continue
        if in_fence is not None and re.match(rf"^ *{in_fence}\s*$", line):
            in_fence = None
            out.append(line)
            if pending_note:
                out.append("")
                out.append(LOCAL_NOTE.replace("START_LINK", start_link))
                pending_note = False
            continue
        out.append(line)
    return "\n".join(out)
