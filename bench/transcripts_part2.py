"""Foreign transcripts, part 2: our importers against the frameworks' own readers of the same data.

- pydantic-ai: a long history (thinking with a signature, a call and its return per turn) as
  ``ModelMessagesTypeAdapter`` JSON. Ours: ``transcripts.load(..., format="pydantic_ai")``
  (parse and convert to canonical messages). Peer: ``ModelMessagesTypeAdapter.validate_json``
  (pydantic-core, in Rust), which builds pydantic-ai's own objects from the same bytes.
- LangGraph: one thread of a ``SqliteSaver`` file holding a long message list, written by the
  saver itself. Ours: ``transcripts.load(..., thread=...)`` (msgpack as data, convert). Peer:
  ``SqliteSaver.get_tuple`` (LangGraph's own read, which rebuilds the LangChain objects).

pydantic-ai is information; the LangGraph read has a target: at most 1.5x LangGraph's own
``get_tuple`` of the same checkpoint. Needs the ``interop`` extra. Run: ``python -m bench.transcripts_part2`` (``--turns N``).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from bench.harness import interleave, print_rows, row

LANGGRAPH_LIMIT = 1.5


def make_pydantic_ai(path: Path, turns: int) -> int:
    msgs: list[dict[str, Any]] = []
    for i in range(turns):
        msgs.append({"kind": "request", "parts": [{"part_kind": "user-prompt", "content": f"Step {i}: check it."}]})
        msgs.append({"kind": "response", "parts": [
            {"part_kind": "thinking", "content": "Think about the step. " * 10, "signature": "Eq" + "A" * 200,
             "provider_name": "anthropic"},
            {"part_kind": "text", "content": f"Running check {i}."},
            {"part_kind": "tool-call", "tool_name": "check", "args": {"step": i}, "tool_call_id": f"toolu_{i:08d}"},
        ], "provider_name": "anthropic", "model_name": "claude"})
        msgs.append({"kind": "request", "parts": [{"part_kind": "tool-return", "tool_name": "check",
                                                    "content": "output line " * 40, "tool_call_id": f"toolu_{i:08d}"}]})
    path.write_text(json.dumps(msgs))
    return len(msgs)


def make_langgraph(path: Path, turns: int) -> str:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langgraph.checkpoint.base import empty_checkpoint
    from langgraph.checkpoint.sqlite import SqliteSaver

    messages: list[Any] = []
    for i in range(turns):
        messages.append(HumanMessage(f"Step {i}: check it."))
        messages.append(AIMessage(
            content=[{"type": "thinking", "thinking": "Think about the step. " * 10, "signature": "Eq" + "A" * 200},
                     {"type": "text", "text": f"Running check {i}."}],
            tool_calls=[{"name": "check", "args": {"step": i}, "id": f"toolu_{i:08d}", "type": "tool_call"}],
            response_metadata={"model_provider": "anthropic"}))
        messages.append(ToolMessage("output line " * 40, tool_call_id=f"toolu_{i:08d}"))
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn)
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": messages}
    cp["channel_versions"] = {"messages": 1}
    saver.put({"configurable": {"thread_id": "bench", "checkpoint_ns": ""}}, cp, {"source": "loop", "step": 1}, {"messages": 1})
    conn.close()
    return "bench"


def run(turns: int = 3000, rounds: int = 5) -> list[dict[str, Any]]:
    from langgraph.checkpoint.sqlite import SqliteSaver
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    from providerkit_nb.transcripts import load

    rows = []
    with tempfile.TemporaryDirectory() as d:
        pa = Path(d) / "history.json"
        n = make_pydantic_ai(pa, turns)
        raw = pa.read_bytes()
        t = interleave({
            "ours": lambda: load(pa, format="pydantic_ai"),
            "peer": lambda: ModelMessagesTypeAdapter.validate_json(raw),
        }, rounds)
        rows.append(row(f"pydantic-ai JSON, {n} messages ({len(raw) / 1e6:.1f} MB): load vs validate_json",
                        t["ours"].wall, t["peer"].wall, note="info: canonical messages vs pydantic-ai's objects"))

        db = Path(d) / "lg.sqlite"
        thread = make_langgraph(db, turns)
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, check_same_thread=False)
        saver = SqliteSaver(conn)
        cfg: Any = {"configurable": {"thread_id": thread}}  # a RunnableConfig
        t = interleave({
            "ours": lambda: load(db, format="langgraph_sqlite", thread=thread),
            "peer": lambda: saver.get_tuple(cfg),
        }, rounds)
        conn.close()
        rows.append(row(f"LangGraph SqliteSaver thread, {3 * turns} messages: load vs get_tuple",
                        t["ours"].wall, t["peer"].wall, target=f"<= {LANGGRAPH_LIMIT}x get_tuple",
                        limit=LANGGRAPH_LIMIT, note="msgpack as data vs LangChain objects"))
    return rows


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--turns", type=int, default=3000)
    p.add_argument("--rounds", type=int, default=5)
    a = p.parse_args()
    print_rows(run(a.turns, a.rounds))


if __name__ == "__main__":
    main()
