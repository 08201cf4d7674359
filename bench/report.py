"""The HTML report of a 15,000-message session: what rendering prose as Markdown costs.

The report carries every row's card (built once, in Python), so its build time grows with the
prose the cards render. Two sessions of the same shape (a user request, a Bash call, its 60-line
output, an answer; as the browser test's long Claude Code session) are built into a report:

- plain answers (no Markdown marks: the parser is skipped, as for most of a coding session);
- answers in Markdown (a heading, a list with bold and code, a link, a fenced block), every one
  of them distinct, so nothing is served from the cache.

Ours is the Markdown session, the floor the plain one (what the report cost before Markdown).
Timed in CPU seconds, median of interleaved rounds. Target: the Markdown session within 4x of
the plain one (both well under the time a browser takes to open the file).

Run: ``python -m bench.report`` (``--rounds N``, ``--size N``).
"""

from __future__ import annotations

import gc
import statistics
import time
from typing import Any

from bench.harness import cli, row
from providerkit_nb.core.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
)


def make_session(size: int, markdown: bool) -> list[Message]:
    out: list[Message] = []
    k = 0
    while len(out) < size:
        k += 1
        cid = f"toolu_{k:06d}"
        out.append(UserMessage(f"step {k}: list the files of part {k}"))
        out.append(AssistantMessage("", tool_calls=[ToolCall(cid, "Bash", f'{{"command": "ls part{k}"}}')]))
        out.append(ToolMessage(cid, "Bash", "\n".join(f"part{k}/file{j}.txt" for j in range(60))))
        if markdown:
            text = (f"## Part {k}\n\nPart {k} has **60 files**:\n\n- the first is `part{k}/file0.txt`\n"
                    f"- see [the listing](https://example.com/{k})\n\n```sh\nls part{k}\n```")
        else:
            text = f"Part {k} has 60 files. The first is part{k} file0. See the listing at example.com."
        out.append(AssistantMessage(text))
    return out[:size]


def _report(messages: list[Message]) -> float:
    from providerkit_nb.viewer import build_page, report_html
    from providerkit_nb.viewer.markdown import render_markdown

    render_markdown.cache_clear()
    gc.collect()
    started = time.process_time()
    report_html(build_page(messages))
    return time.process_time() - started


def run(rounds: int = 3, size: int = 15_000) -> list[dict[str, Any]]:
    """Rows {name, ours, floor_or_peer, ratio, target, ok}."""
    plain, md = make_session(size, False), make_session(size, True)
    ours: list[float] = []
    floor: list[float] = []
    for r in range(rounds):
        pair = [(ours, md), (floor, plain)]
        for into, messages in pair if r % 2 == 0 else reversed(pair):
            into.append(_report(messages))
    n = f"{size // 1000}k"
    a, b = statistics.median(ours), statistics.median(floor)
    return [
        row(f"report build, {n} messages, Markdown answers vs plain", a, b, target="< 4x", limit=4, on="ratio"),
    ]


def main(argv: list[str] | None = None) -> int:
    return cli(run, "python -m bench.report", argv, rounds=3, size=15_000)


if __name__ == "__main__":
    raise SystemExit(main())
