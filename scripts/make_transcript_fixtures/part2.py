"""Make the part-2 transcript fixtures with the real libraries (offline, no API key).

    python scripts/make_transcript_fixtures/part2.py [OUT_DIR] [--llm031 PYTHON]

Writes into tests/transcripts/fixtures/ by default:

- pydantic-ai (``FunctionModel`` + ``capture_run_messages``): a complete run with signed thinking,
  a run whose tool raised mid-batch (``state: interrupted``), one stopped by Ctrl-C while a tool
  ran, a run with a ``ModelRetry``, and the
  same retry written the 1.x way (``retry-prompt`` parts, as older dumps hold them);
- LangChain: ``messages_to_dict`` and ``dumpd`` of a history with thinking blocks and a dangling call,
  and an older dump whose calls sit only in ``additional_kwargs.tool_calls``;
- LangGraph on ``SqliteSaver``: one database with three threads (a tool raised, an ``interrupt()``
  waiting for a human, a healthy finished thread) and one whose process died mid-tool;
- simonw/llm ``logs.db`` with the ``echo`` model: the 0.32+ message store (the llm installed here)
  and, given ``--llm031`` (a Python with llm 0.31.1 + llm-echo 0.4, e.g. a throwaway venv outside
  the repository), the older tables; a tool thread and a thread whose prompts borrow fragments.

``VERSIONS.json`` records which library versions wrote them. Timestamps and UUIDs differ per run;
tests derive their expectations from the files, never from a previous run.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE.parent.parent / "tests" / "transcripts" / "fixtures"

SIGNATURE = "EqQBCkYIBxgCKkD" + "x" * 40  # an opaque Anthropic-style signature


# --------------------------------------------------------------------------- pydantic-ai


def pydantic_ai(out: Path) -> None:
    from pydantic_ai import Agent, ModelRetry, capture_run_messages
    from pydantic_ai.messages import (
        ModelMessage,
        ModelMessagesTypeAdapter,
        ModelResponse,
        TextPart,
        ThinkingPart,
        ToolCallPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def model(calls: list[tuple[str, dict[str, Any], str]]) -> FunctionModel:
        def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            if len(messages) == 1:
                return ModelResponse(
                    parts=[
                        ThinkingPart("I should look both up.", signature=SIGNATURE, provider_name="anthropic"),
                        *[ToolCallPart(name, args, tool_call_id=cid) for name, args, cid in calls],
                    ],
                    model_name="function-model",
                )
            last = messages[-1]
            retried = any(getattr(p, "outcome", "") == "retried" or p.part_kind == "retry-prompt" for p in last.parts)
            if retried:
                return ModelResponse(parts=[ToolCallPart("lookup", {"q": "tokyo"}, tool_call_id="call_3")])
            return ModelResponse(parts=[TextPart("Paris has 2.1 million people; Tokyo 14 million.")])

        return FunctionModel(fn)

    def agent_for(calls: list[tuple[str, dict[str, Any], str]], fail: str | None, retry: bool) -> Agent[None, str]:
        agent: Agent[None, str] = Agent(model(calls), system_prompt="You answer with numbers.")

        @agent.tool_plain
        def lookup(q: str) -> str:
            """Read-only search."""
            if retry and q == "tokio":
                raise ModelRetry("No such city; check the spelling.")
            return f"{q}: population known"

        @agent.tool_plain
        def write_note(text: str) -> str:
            """Writes a note (has effects)."""
            if fail == "write_note":
                raise RuntimeError("disk full")
            if fail == "ctrl-c":
                raise KeyboardInterrupt  # the user stopped the run while the tool ran
            return "written"

        return agent

    def run(name: str, calls: list[tuple[str, dict[str, Any], str]], fail: str | None = None, retry: bool = False) -> None:
        agent = agent_for(calls, fail, retry)
        with capture_run_messages() as msgs:
            try:
                agent.run_sync("How many people live in Paris and Tokyo?")
            except (RuntimeError, KeyboardInterrupt):
                pass
        (out / name).write_bytes(ModelMessagesTypeAdapter.dump_json(msgs, indent=1))

    run("pydantic_ai_complete.json", [("lookup", {"q": "paris"}, "call_1"), ("lookup", {"q": "tokyo"}, "call_2")])
    run(
        "pydantic_ai_tool_raised.json",
        [("lookup", {"q": "paris"}, "call_1"), ("write_note", {"text": "paris"}, "call_2")],
        fail="write_note",
    )
    run(
        "pydantic_ai_ctrl_c.json",
        [("write_note", {"text": "a"}, "call_1"), ("lookup", {"q": "paris"}, "call_2")],
        fail="ctrl-c",
    )
    run("pydantic_ai_retry.json", [("lookup", {"q": "tokio"}, "call_1")], retry=True)
    # The same retry as a 1.x dump holds it: the retried tool-return was a retry-prompt part.
    data = json.loads((out / "pydantic_ai_retry.json").read_text())
    for msg in data:
        for part in msg["parts"]:
            if part.get("part_kind") == "tool-return" and part.get("outcome") == "retried":
                content = part["content"]
                part.clear()
                part.update(
                    part_kind="retry-prompt",
                    content=content if isinstance(content, str) else json.dumps(content),
                    tool_name="lookup",
                    tool_call_id="call_1",
                    timestamp=msg["timestamp"],
                )
        for key in ("state", "conversation_id"):
            msg.pop(key, None)
    (out / "pydantic_ai_retry_legacy.json").write_text(json.dumps(data, indent=1))


# --------------------------------------------------------------------------- LangChain


def _lc_history() -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    return [
        SystemMessage("You answer with numbers."),
        HumanMessage("How many people live in Paris and Tokyo?"),
        AIMessage(
            content=[
                {"type": "thinking", "thinking": "Look both up.", "signature": SIGNATURE},
                {"type": "text", "text": "Looking up."},
            ],
            tool_calls=[
                {"name": "lookup", "args": {"q": "paris"}, "id": "toolu_01", "type": "tool_call"},
                {"name": "write_note", "args": {"text": "x"}, "id": "toolu_02", "type": "tool_call"},
            ],
            response_metadata={"model_provider": "anthropic"},
            id="msg_01",
        ),
        ToolMessage("paris: 2.1M", tool_call_id="toolu_01", name="lookup"),
        # toolu_02 never answered; then an orphan result whose call is gone
        HumanMessage("Go on."),
        ToolMessage("stale", tool_call_id="toolu_99", name="lookup", status="error"),
    ]


def langchain(out: Path) -> None:
    from langchain_core.load import dumpd
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, messages_to_dict

    hist = _lc_history()
    (out / "langchain_messages_to_dict.json").write_text(json.dumps(messages_to_dict(hist), indent=1))
    (out / "langchain_dumpd.json").write_text(json.dumps([dumpd(m) for m in hist], indent=1))
    # An older dump: OpenAI-shaped calls only in additional_kwargs (pre-0.2 messages_to_dict).
    old = [
        HumanMessage("weather?"),
        AIMessage(
            content="",
            additional_kwargs={
                "tool_calls": [
                    {"id": "call_a", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Oslo"}'}},
                    {"id": "call_b", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Rome"}'}},
                ]
            },
        ),
        ToolMessage("Oslo: 3C", tool_call_id="call_a"),
    ]
    dumped = messages_to_dict(old)
    for d in dumped:
        d["data"].pop("tool_calls", None)
        d["data"].pop("invalid_tool_calls", None)
    (out / "langchain_legacy_additional_kwargs.json").write_text(json.dumps(dumped, indent=1))


# --------------------------------------------------------------------------- LangGraph


def build_graph(checkpointer: Any) -> Any:
    """The graph of the fixtures (also used by the PostgresSaver test): a hand-written agent node
    whose first turn asks two tools; ``write_note`` raises for the text "fail"; the tool
    ``ask_human`` calls ``interrupt()``."""
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition
    from langgraph.types import interrupt

    @tool
    def lookup(q: str) -> str:
        """Read-only search."""
        return f"{q}: 2.1M"

    @tool
    def write_note(text: str) -> str:
        """Writes a note."""
        if text == "fail":
            raise RuntimeError("disk full")
        if text == "die":
            raise KeyboardInterrupt  # what a killed process leaves: no write at all
        return "written"

    @tool
    def ask_human(question: str) -> str:
        """Asks a person to approve."""
        return str(interrupt({"question": question}))

    def agent(state: MessagesState) -> dict[str, Any]:
        msgs = state["messages"]
        if any(getattr(m, "type", "") == "tool" for m in msgs):
            return {"messages": [AIMessage("Done.", id=f"ai_done_{len(msgs)}")]}
        prompt = str(msgs[-1].content)
        second = {"name": "write_note", "args": {"text": prompt}, "id": "call_2", "type": "tool_call"}
        if prompt == "approve":
            second = {"name": "ask_human", "args": {"question": "send it?"}, "id": "call_2", "type": "tool_call"}
        return {
            "messages": [
                AIMessage(
                    content=[
                        {"type": "thinking", "thinking": "Two tools.", "signature": SIGNATURE},
                        {"type": "text", "text": "Working."},
                    ],
                    tool_calls=[{"name": "lookup", "args": {"q": "paris"}, "id": "call_1", "type": "tool_call"}, second],
                    response_metadata={"model_provider": "anthropic"},
                    id=f"ai_{len(msgs)}",
                )
            ]
        }

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode([lookup, write_note, ask_human], handle_tool_errors=False))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=checkpointer)


def run_threads(graph: Any, threads: dict[str, str]) -> None:
    """Run each thread with its prompt, swallowing what the failing tool raises."""
    for thread, prompt in threads.items():
        cfg = {"configurable": {"thread_id": thread}}
        try:
            graph.invoke({"messages": [("user", prompt)]}, cfg)
        except (RuntimeError, KeyboardInterrupt):
            pass


LANGGRAPH_THREADS = {"tool-raised": "fail", "waiting-human": "approve", "healthy": "ok"}


def langgraph_sqlite(out: Path) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    for name, threads in (
        ("langgraph.sqlite", LANGGRAPH_THREADS),
        ("langgraph_died.sqlite", {"died": "die"}),
    ):
        path = out / name
        path.unlink(missing_ok=True)
        conn = sqlite3.connect(path, check_same_thread=False)
        saver = SqliteSaver(conn)
        run_threads(build_graph(saver), threads)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.commit()
        # SqliteSaver leaves the file in WAL mode; a committed fixture in rollback-journal mode
        # opens read-only without SQLite creating -wal/-shm files next to it.
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.close()
        for extra in ("-wal", "-shm"):
            Path(f"{path}{extra}").unlink(missing_ok=True)


# --------------------------------------------------------------------------- simonw/llm

LLM_PROMPT = json.dumps(
    {"prompt": "hi", "tool_calls": [{"name": "llm_version"}, {"name": "llm_time"}]}
)


def llm_logs(out: Path, python: str, name: str, *, thinking: bool) -> None:
    """Two threads: tools (two calls, two results) then a follow-up in the same conversation;
    and one whose prompt and system prompt borrow fragments (stored by reference)."""
    with tempfile.TemporaryDirectory() as d:
        env = {**os.environ, "LLM_USER_PATH": d}
        cli = [python, "-m", "llm"]
        doc, rules = Path(d) / "doc.txt", Path(d) / "rules.txt"
        doc.write_text("The shared document: Paris has 2.1 million people.")
        rules.write_text("Answer in one line.")
        first = [*cli, "-m", "echo", LLM_PROMPT, "-T", "llm_version", "-T", "llm_time"]
        if thinking:
            first += ["-o", "thinking", "1"]
        for cmd in (
            first,
            [*cli, "-m", "echo", "-c", json.dumps({"prompt": "thanks"})],
            [*cli, "-m", "echo", "-f", str(doc), "--sf", str(rules), "summarise"],
        ):
            subprocess.run(cmd, env=env, check=True, capture_output=True)
        db = Path(d) / "logs.db"
        conn = sqlite3.connect(db)
        # llm records where a fragment was read from: keep the file name, not this machine's path
        conn.execute("UPDATE fragments SET source = replace(source, ?, '')", (f"{d}/",))
        conn.commit()
        conn.execute("VACUUM")
        conn.close()
        shutil.copy(db, out / name)


def _pkg_version(python: str, pkg: str) -> str:
    return subprocess.run(
        [python, "-c", f"from importlib.metadata import version; print(version({pkg!r}))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()


def main(argv: list[str]) -> None:
    args = list(argv)
    llm031 = None
    if "--llm031" in args:
        i = args.index("--llm031")
        llm031 = args[i + 1]
        del args[i : i + 2]
    out = Path(args[0]) if args else DEFAULT_OUT
    out.mkdir(parents=True, exist_ok=True)
    pydantic_ai(out)
    langchain(out)
    langgraph_sqlite(out)
    llm_logs(out, sys.executable, "llm_logs_0.36.db", thinking=True)
    versions = {
        "pydantic-ai-slim": version("pydantic-ai-slim"),
        "langchain-core": version("langchain-core"),
        "langgraph": version("langgraph"),
        "langgraph-checkpoint": version("langgraph-checkpoint"),
        "langgraph-checkpoint-sqlite": version("langgraph-checkpoint-sqlite"),
        "llm_logs_0.36.db": {"llm": version("llm"), "llm-echo": version("llm-echo")},
    }
    if llm031:
        llm_logs(out, llm031, "llm_logs_0.31.db", thinking=False)  # llm-echo 0.4 has no thinking option
        versions["llm_logs_0.31.db"] = {"llm": _pkg_version(llm031, "llm"), "llm-echo": _pkg_version(llm031, "llm-echo")}
    # One VERSIONS.json for every transcript fixture: keep what the other scripts recorded there.
    versions_path = out / "VERSIONS.json"
    known = json.loads(versions_path.read_text()) if versions_path.exists() else {}
    known.update(versions)
    versions_path.write_text(json.dumps(known, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
