"""The terminal walkthrough behind ``make demo``: a conversation cut off mid-tool, repaired.

It loads a saved history in which the process died while two parallel tool calls were running
(only the read's result was saved), and a later turn reused a call id, left an empty
placeholder and saved a stray result. It shows what a provider would refuse, what repair
changes, and which calls never returned, as plain-text tables that fit 100 columns.
"""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ..core.messages import AssistantMessage, Message, ToolMessage, loads, text_of
from ..core.repair import Repaired, repair_history
from ..core.tools import ToolRegistry, tool
from ..core.validate import Problem, validate_history
from ..providers.base import Provider
from ..testing.simulate import announcing, block_until_killed, demo_tools, kill_when_tool_starts

if TYPE_CHECKING:
    pass

WIDTH = 100
EXAMPLE = "cut_off_conversation.json"


@tool(read_only=True)
def read_file(path: str) -> str:
    """Read a text file of the project.

    Args:
        path: the file, relative to the project root
    """
    return Path(path).read_text(encoding="utf-8")  # pragma: no cover - the demo never runs tools


@tool
def write_file(path: str, content: str) -> str:
    """Write a text file of the project (replacing it).

    Args:
        path: the file, relative to the project root
        content: the whole new text
    """
    Path(path).write_text(content, encoding="utf-8")  # pragma: no cover - the demo never runs tools
    return f"wrote {len(content.encode())} bytes to {path}"  # pragma: no cover


TOOLS = ToolRegistry([read_file, write_file])


def find_example(name: str = EXAMPLE) -> Path:
    """The example conversation, shipped as package data (so an installed wheel has it too)."""
    candidate = Path(__file__).resolve().parents[1] / "data" / name
    if not candidate.is_file():
        raise FileNotFoundError(f"{candidate} not found: reinstall providerkit_nb (it ships with the package)")
    return candidate


# --------------------------------------------------------------------------- plain-text tables


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _cut(text: str, width: int) -> str:
    text = _one_line(text)
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], *, wrap: int | None = None) -> str:
    """Columns sized to their content; the last column takes what is left of WIDTH and wraps
    (when ``wrap`` is set) or is cut with an ellipsis."""
    cells = [[("" if v is None else str(v)) for v in row] for row in rows]
    fixed = [max([len(h), *(len(_one_line(r[k])) for r in cells)]) for k, h in enumerate(headers[:-1])]
    fixed = [min(w, 24) for w in fixed]
    last = max(WIDTH - sum(fixed) - 2 * len(fixed), 20)
    lines = ["  ".join([*(h.ljust(w) for h, w in zip(headers[:-1], fixed, strict=True)), headers[-1]]).rstrip()]
    lines.append("  ".join([*("-" * w for w in fixed), "-" * min(last, max(len(headers[-1]), 8))]))
    for r in cells:
        left = [_cut(v, w).ljust(w) for v, w in zip(r[:-1], fixed, strict=True)]
        tail = _one_line(r[-1]) if r else ""
        parts = textwrap.wrap(tail, last) if wrap and tail else [_cut(tail, last)]
        lines.append("  ".join([*left, parts[0]]).rstrip())
        pad = " " * (sum(fixed) + 2 * len(fixed))
        lines.extend(pad + p for p in parts[1:wrap])
    return "\n".join(lines)


def _describe(m: Message) -> str:
    if isinstance(m, AssistantMessage):
        calls = ", ".join(f"{c.name}({c.id})" for c in m.tool_calls or [])
        text = repr(m.content) if not m.content.strip() else m.content
        return f"{text} -> {calls}" if calls else text
    if isinstance(m, ToolMessage):
        return f"[{m.tool_call_id}] {m.content}"
    return text_of(m)


def history_table(messages: Sequence[Message], marks: dict[int, str] | None = None) -> str:
    if not marks:
        return table(["#", "role", "content / calls"], [(i, m.role, _describe(m)) for i, m in enumerate(messages)])
    rows = [(i, marks.get(i, ""), m.role, _describe(m)) for i, m in enumerate(messages)]
    return table(["#", "", "role", "content / calls"], rows)


def problems_table(problems: Sequence[Problem]) -> str:
    if not problems:
        return "no problems: every provider accepts this history"
    return table(["msg", "rule", "what is wrong"], [(p.index, p.rule, p.message) for p in problems], wrap=3)


def interrupted_table(repaired: Repaired) -> str:
    if not repaired.interrupted:
        return "none"
    rows = [
        (r.id, r.original_id, r.name, "yes" if r.read_only else "no", r.message_index, r.arguments)
        for r in repaired.interrupted
    ]
    return table(["id sent", "original id", "tool", "read-only", "msg", "arguments"], rows)


def changes_table(repaired: Repaired) -> str:
    rows = [
        (c.kind, "-" if c.index_before is None else c.index_before, "-" if c.index_after is None else c.index_after, c.detail)
        for c in repaired.changes
    ]
    return table(["change", "before", "after", "detail"], rows, wrap=3)


def _marks(repaired: Repaired) -> dict[int, str]:
    out: dict[int, str] = {}
    for c in repaired.changes:
        if c.index_after is not None:
            out[c.index_after] = "+" if c.index_before is None else "*"
    return out


def _section(out: TextIO, title: str) -> None:
    out.write(f"\n== {title} " + "=" * max(WIDTH - len(title) - 4, 0) + "\n")


def run_walkthrough(path: str | Path | None = None, out: TextIO | None = None) -> int:
    """Print the saved-file walkthrough; returns 0 when the repaired history validates clean."""
    out = out or sys.stdout
    source = Path(path) if path is not None else find_example()
    history = loads(source.read_text(encoding="utf-8"))
    out.write("providerkit_nb: resume after a crash\n")
    out.write(f"Loaded {len(history)} messages from {source.name}. The process died while two parallel\n")
    out.write("calls ran; only the read's result was saved. A later turn reused an id, saved an empty\n")
    out.write("placeholder, and a stray result with no call.\n")

    _section(out, "saved history (as loaded)")
    out.write(history_table(history) + "\n")

    _section(out, "what a provider would refuse (validate_history)")
    out.write(problems_table(validate_history(history)) + "\n")

    repaired = repair_history(history, is_read_only=TOOLS.is_read_only)
    _section(out, "repaired history (+ added, * edited; those in full below)")
    out.write(history_table(repaired.messages, _marks(repaired)) + "\n\n")

    marks = _marks(repaired)
    for i in sorted(marks):
        m = repaired.messages[i]
        head = f"{i} {marks[i]} {m.role}" + (f" [{m.tool_call_id}]" if isinstance(m, ToolMessage) else "")
        body = _describe(m) if isinstance(m, AssistantMessage) else text_of(m)
        out.write(f"{head}:\n")
        for para in body.splitlines() or [""]:
            out.write(textwrap.fill(para, WIDTH, initial_indent="    ", subsequent_indent="    ") + "\n")

    _section(out, "calls that never returned (tell the user; check before re-running)")
    out.write(interrupted_table(repaired) + "\n")

    _section(out, "every change repair made")
    out.write(changes_table(repaired) + "\n")

    after = validate_history(repaired.messages)
    again = repair_history(repaired.messages, is_read_only=TOOLS.is_read_only)
    _section(out, "check")
    out.write(problems_table(after) + "\n")
    out.write(f"repairing the repaired history changes nothing: {not again.changes}\n")
    return 0 if not after and not again.changes else 1


# --------------------------------------------------------------------------- the live story

REPO = Path(__file__).resolve().parents[2]
# package data, so an installed wheel replays the story too (cassettes/README.md says how it was made)
STORY_CASSETTE = Path(__file__).resolve().parents[1] / "data" / "demo.yaml"
STORY_ID = "crash-demo"
STORY_QUESTION = "Read README.md and write a one-line summary to NOTES.md."
STORY_FILES = {"README.md": "# weather-cli\nA tiny command line that prints the weather. Requires Python 3.11."}


def _record_then_block(arguments: object) -> None:
    if os.environ.get("PK_RECORD_DEMO"):
        from ..testing import offline

        offline.stop()  # write what was recorded so far: SIGKILL comes next
    block_until_killed()


def _story_tools(slow_write: bool) -> ToolRegistry:
    tools, _ = demo_tools(dict(STORY_FILES), before_write=_record_then_block if slow_write else None)
    return tools


def _story_provider(local_url: str | None = None) -> tuple[Provider, str]:
    """The local model's server when ``local_url`` is given; else the real provider with a key;
    else the project's cassette, answered offline."""
    from ..providers.factory import openai
    from ..testing import offline

    if local_url:
        from ..local import MODEL_NAME, provider_for

        return provider_for(local_url), f"{MODEL_NAME}, local"
    live = bool(os.environ.get("OPENAI_API_KEY")) and os.environ.get("OPENAI_API_KEY") != offline.OFFLINE_KEY
    if not live:
        record = bool(os.environ.get("PK_RECORD_DEMO"))
        if not record and not STORY_CASSETTE.exists():
            raise SystemExit(f"no OPENAI_API_KEY set and no cassette at {STORY_CASSETTE}: set a key to run live")
        offline.replay(STORY_CASSETTE, record=record)
        if record:
            sys.path.insert(0, str(REPO / "scripts"))
            import notebook_replay  # type: ignore[import-not-found]  # a checkout's scripts/, recording only

            notebook_replay.use_constructed_model()
    return openai(model=os.environ.get("PK_DEMO_MODEL", "gpt-4o-mini")), "live" if live else "cassette"


# A 135M model does not pick tools by itself: on the local server the first call is forced to
# be write_file (the call that will be killed), and the resume forbids tools, so the model
# answers in words instead of looping on calls it cannot plan.
LOCAL_CHILD_OPTIONS: dict[str, object] = {"tool_choice": {"name": "write_file"}}
LOCAL_RESUME_OPTIONS: dict[str, object] = {"tool_choice": "none"}


def story_child(store_path: str, local_url: str | None = None) -> int:
    """The process that gets killed: it runs the conversation until write_file is running."""
    from ..conversation.facade import Conversation
    from ..store.sqlite import NotebookStore

    provider, _ = _story_provider(local_url)
    store = announcing(NotebookStore(store_path))
    convo = Conversation(store, STORY_ID, provider, _story_tools(slow_write=True),
                         system="You maintain a small project. Use the tools.", display=False,
                         options=LOCAL_CHILD_OPTIONS if local_url else None)
    convo.send(STORY_QUESTION)
    return 0


REPORT_TITLE = "providerkit_nb demo: killed mid-tool, then repaired (the history as stored, and as the resume sent it)"


def run_story(out: TextIO | None = None, workdir: str | Path = "demo-output", *, local: bool = False) -> int:
    """Crash a real conversation with SIGKILL mid-tool, then load, repair, resume and report.
    With ``local=True`` the model is the real one of the ``local`` extra, on a server this
    process starts (and stops)."""
    from ..local import LocalModelError
    from ..local import start as start_local

    out = out or sys.stdout
    if not local:
        return _run_story(out, Path(workdir), None)
    try:
        server = start_local()
    except LocalModelError as exc:
        out.write(f"{exc}\n")
        return 1
    with server:
        out.write(f"llama-cpp-python's server, pid {server.pid}, at {server.base_url}\n")
        return _run_story(out, Path(workdir), server.base_url)


def _run_story(out: TextIO, folder: Path, local_url: str | None) -> int:
    from ..conversation.facade import Conversation
    from ..store.sqlite import NotebookStore
    from ..viewer.report import write_report

    folder.mkdir(parents=True, exist_ok=True)
    store_path = folder / "demo.providerkit.sqlite"
    for leftover in folder.glob("demo.providerkit.sqlite*"):
        leftover.unlink()

    out.write("providerkit_nb: a conversation that survives kill -9\n")
    _section(out, "1. a child process runs the conversation; we SIGKILL it while write_file runs")
    argv = [sys.executable, "-m", "providerkit_nb", "demo", "--child", str(store_path)]
    if local_url:
        argv += ["--child-url", local_url]
    try:
        child = kill_when_tool_starts(argv, echo=lambda line: out.write(f"  child: {line}"))
    except RuntimeError as exc:
        out.write(f"{exc}\n")
        return 1
    out.write(f"  child killed (exit {child.returncode}) inside write_file\n")

    provider, mode = _story_provider(local_url)
    tools = _story_tools(slow_write=False)
    with NotebookStore(store_path) as store:
        before = store.load(STORY_ID)
        _section(out, "2. what the store kept (every message saved before the kill)")
        out.write(history_table(before) + "\n")
        _section(out, "3. what a provider would refuse if we sent it as it is")
        problems = validate_history(before, wire="openai_chat")
        out.write(problems_table(problems) + "\n")

        convo = Conversation(store, STORY_ID, provider, tools, display=False,
                             options=LOCAL_RESUME_OPTIONS if local_url else None)
        repaired = convo.repaired
        _section(out, "4. repaired: what the model is told (+ added)")
        out.write(history_table(repaired.messages, _marks(repaired)) + "\n")
        out.write(interrupted_table(repaired) + "\n")

        _section(out, f"5. resume ({mode}): the model reads the note and answers")
        convo.display = True
        turn = convo.resume()
        after = store.load(STORY_ID)
        final = convo.repair()
        report = write_report(folder / "report.html", before, repaired, problems, title=REPORT_TITLE)
        _section(out, "6. the conversation now")
        out.write(history_table(after) + "\n")
        ok = turn is not None and not validate_history(final.messages)
        out.write(f"\nsession id kept in the store: {store.session_id(STORY_ID)}\n")
        out.write(f"HTML report of the repair (the history as stored, and as the resume sent it):\n  {report.resolve()}\n")
    from ..testing import offline

    offline.stop()
    return 0 if ok else 1


def run_demo(out: TextIO | None = None, *, local: bool = False) -> int:
    """``make demo``: the live crash-and-resume story, then the saved-file walkthrough.
    ``local``: the story against the real model of the ``local`` extra."""
    code = run_story(out, local=local)
    (out or sys.stdout).write("\n\n")
    return code or run_walkthrough(out=out)
