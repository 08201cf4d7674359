"""The contenders of ``bench/store_peers.py``: each store recorded through its own public API.

One class per store, all with the same four steps: ``open`` (what the library does before its
first read or write of an existing file; timed twice in a fresh process, the second time after
a ``close``, as a re-run cell or a worker's next task opens it again), ``record`` (one message of the conversation, durable
when it returns), ``load`` (the whole conversation back as the library's own objects) and
``close``. Each runs in a worker process of its own (``python -m bench.store_peers_kinds``), so
a load or an open is measured in a fresh process, and no library's imports, threads or caches
leak into another's figures. The recording workers run side by side in lockstep (``serve``):
the parent asks each in turn for the next message, so all see the same disk and CPU weather.

The conversation is a growing agent loop of four messages (user, assistant with a tool call,
the tool result, the answer), 0.2 to 2.4 KB of text each, the same for every contender and
converted to each library's own message shape.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import sys
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import providerkit_nb as pk
from providerkit_nb.core.messages import dump_message

__all__ = ["KINDS", "conversation", "worker_command"]

CID = "bench-conversation"
WORDS = "the file lists tools für Übersicht data rows notebook kernel café cache".split()


def conversation(n: int, seed: int = 7) -> list[pk.Message]:
    """``n`` messages of an agent loop: user, assistant with a call, tool result, answer."""
    rnd = random.Random(seed)

    def text(lo: int, hi: int) -> str:
        size, s = rnd.randint(lo, hi), ""
        while len(s) < size:
            s += rnd.choice(WORDS) + " "
        return s[:size]

    out: list[pk.Message] = []
    i = 0
    while len(out) < n:
        i += 1
        call = pk.ToolCall(f"call_{i}", "read_file", json.dumps({"path": f"src/m{i}.py"}))
        out += [
            pk.UserMessage(text(100, 400)),
            pk.AssistantMessage(text(200, 600), tool_calls=[call]),
            pk.ToolMessage(call.id, call.name, text(1500, 2400)),
            pk.AssistantMessage(text(300, 900)),
        ]
    return out[:n]


def _text(m: pk.Message) -> str:
    content = m.content
    assert isinstance(content, str)
    return content


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "?"


class Kind:
    """One store. ``per_record`` is how many messages one durable write carries."""

    label = ""
    dists: tuple[str, ...] = ()
    durability = ""
    per_record = 1

    def __init__(self, target: str) -> None:
        self.target = target  # a file path, or a DSN + schema for PostgreSQL

    def versions(self) -> dict[str, str]:
        return {d: _version(d) for d in self.dists}

    def prepare(self) -> None:
        """Imports and whatever is not the store's own work (never timed)."""

    def open(self) -> None:
        raise NotImplementedError

    def record(self, i: int, msgs: list[pk.Message]) -> None:
        """Record message ``i`` (for a two-message record, ``i`` is its first)."""
        raise NotImplementedError

    def load(self) -> int:
        raise NotImplementedError

    def close(self) -> None:
        pass


# --------------------------------------------------------------------------- ours


class OursSqlite(Kind):
    dists = ("providerkit_nb",)

    def __init__(self, target: str, synchronous: str) -> None:
        super().__init__(target)
        self.synchronous = synchronous
        self.durability = f"WAL {synchronous}"
        self.label = f"ours, WAL {synchronous}"

    def prepare(self) -> None:
        from providerkit_nb.store.sqlite import NotebookStore

        self.cls = NotebookStore

    def open(self) -> None:
        self.store = self.cls(self.target, synchronous=self.synchronous)

    def record(self, i: int, msgs: list[pk.Message]) -> None:
        self.store.save(CID, msgs[i])

    def load(self) -> int:
        return len(self.store.load(CID))

    def close(self) -> None:
        self.store.close()


class OursPostgres(Kind):
    label = "ours, PostgresStore"
    dists = ("providerkit_nb", "psycopg")
    durability = "server default (synchronous_commit=on)"

    def prepare(self) -> None:
        import psycopg  # noqa: F401 - the driver's import is not the open's work (as for the peers)

        from providerkit_nb.store.postgres import PostgresStore

        self.cls = PostgresStore
        self.dsn, self.schema = self.target.split("|")

    def open(self) -> None:
        self.store = self.cls(self.dsn, schema=self.schema)

    def record(self, i: int, msgs: list[pk.Message]) -> None:
        self.store.save(CID, msgs[i])

    def load(self) -> int:
        return len(self.store.load(CID))

    def close(self) -> None:
        self.store.close()


# --------------------------------------------------------------------------- openai-agents


def _agents_items(m: pk.Message) -> list[dict[str, Any]]:
    """One message as Responses-API input items, the shape SQLiteSession keeps."""
    if isinstance(m, pk.UserMessage):
        return [{"role": "user", "content": _text(m)}]
    if isinstance(m, pk.ToolMessage):
        return [{"type": "function_call_output", "call_id": m.tool_call_id, "output": _text(m)}]
    assert isinstance(m, pk.AssistantMessage)
    items: list[dict[str, Any]] = [{
        "type": "message", "role": "assistant", "status": "completed", "id": f"msg_{id(m)}",
        "content": [{"type": "output_text", "text": _text(m), "annotations": []}],
    }]
    for c in m.tool_calls or []:
        items.append({"type": "function_call", "call_id": c.id, "name": c.name,
                      "arguments": c.arguments})
    return items


class AgentsSession(Kind):
    label = "openai-agents SQLiteSession"
    dists = ("openai-agents",)
    durability = "WAL FULL"

    def prepare(self) -> None:
        import asyncio

        from agents import SQLiteSession

        self.cls = SQLiteSession
        self.loop = asyncio.new_event_loop()

    def open(self) -> None:
        self.session = self.cls(CID, self.target)

    def record(self, i: int, msgs: list[pk.Message]) -> None:
        items: Any = _agents_items(msgs[i])
        self.loop.run_until_complete(self.session.add_items(items))

    def load(self) -> int:
        items = self.loop.run_until_complete(self.session.get_items())
        # items back to messages: a function_call item belongs to the assistant item before it
        return sum(1 for it in items if it.get("type") != "function_call")

    def close(self) -> None:
        self.session.close()  # the event loop stays: the store may be opened again (load_run)


# --------------------------------------------------------------------------- simonw/llm


class LlmLogs(Kind):
    """llm's conversation log: one ``Response.log_to_db`` per exchange (prompt + reply), the
    model being llm-echo, which replies with the text and tool calls it is given."""

    label = "simonw/llm logs"
    dists = ("llm", "llm-echo", "sqlite-utils")
    durability = "DELETE FULL"
    per_record = 2

    def prepare(self) -> None:
        import llm
        import sqlite_utils
        from llm.migrations import migrate

        self.llm, self.sqlite_utils = llm, sqlite_utils
        self.migrate: Any = migrate
        self.model = llm.get_model("echo")
        self.conv = self.model.conversation()
        self.last: Any = None

    def open(self) -> None:
        self.db = self.sqlite_utils.Database(self.target)
        self.migrate(self.db)

    def record(self, i: int, msgs: list[pk.Message]) -> None:
        """Message i is a user message (i % 4 == 0) or a tool result (i % 4 == 2); i + 1 is the
        model's reply. Only ``log_to_db`` is timed by the caller; the reply is made in
        ``respond``."""
        self.last.log_to_db(self.db)

    def respond(self, i: int, msgs: list[pk.Message]) -> None:
        llm, m, reply = self.llm, msgs[i], msgs[i + 1]
        assert isinstance(reply, pk.AssistantMessage)
        body: dict[str, Any] = {"raw": _text(reply)}
        if reply.tool_calls:
            body["tool_calls"] = [{"name": c.name, "arguments": json.loads(c.arguments)}
                                  for c in reply.tool_calls or []]
        if isinstance(m, pk.UserMessage):
            body["prompt"] = _text(m)
            response = self.conv.prompt(json.dumps(body))
        else:
            assert isinstance(m, pk.ToolMessage)
            result = llm.ToolResult(name=m.name or "", output=_text(m), tool_call_id=m.tool_call_id)
            response = self.conv.prompt(json.dumps(body), tool_results=[result])
        response.text()
        self.last = response

    def load(self) -> int:
        from llm.cli import load_conversation

        conv = load_conversation(None, database=self.target)  # the latest, as ``llm -c`` does
        assert conv is not None
        roles = [m.role for m in conv.loaded_messages or []]
        # after a tool result, echo needs a prompt carrying its reply: that user message is ours
        return sum(1 for j, r in enumerate(roles) if not (r == "user" and j and roles[j - 1] == "tool"))

    def close(self) -> None:
        self.db.close()


# --------------------------------------------------------------------------- LangGraph


def _lc_message(m: pk.Message) -> Any:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    if isinstance(m, pk.UserMessage):
        return HumanMessage(_text(m))
    if isinstance(m, pk.ToolMessage):
        return ToolMessage(_text(m), tool_call_id=m.tool_call_id, name=m.name)
    assert isinstance(m, pk.AssistantMessage)
    calls = [{"name": c.name, "args": json.loads(c.arguments), "id": c.id} for c in m.tool_calls or []]
    return AIMessage(_text(m), tool_calls=calls)


def _graph(saver: Any) -> Any:
    """The smallest MessagesState graph: the input is added by the state's reducer and one
    node records it; every invoke checkpoints the state."""
    from langgraph.graph import END, START, MessagesState, StateGraph

    g = StateGraph(MessagesState)
    g.add_node("record", lambda state: {"messages": []})
    g.add_edge(START, "record")
    g.add_edge("record", END)
    return g.compile(checkpointer=saver)


class LangGraphSqlite(Kind):
    label = "LangGraph MessagesState + SqliteSaver"
    dists: tuple[str, ...] = ("langgraph", "langgraph-checkpoint-sqlite")
    conn: Any
    saver: Any
    durability = "WAL FULL"

    def prepare(self) -> None:
        from langgraph.checkpoint.sqlite import SqliteSaver

        self.cls = SqliteSaver
        self.cfg = {"configurable": {"thread_id": CID}}
        self.lc = [_lc_message(m) for m in conversation(4)]  # imports langchain_core

    def open(self) -> None:
        self.conn = sqlite3.connect(self.target, check_same_thread=False)
        self.saver = self.cls(self.conn)
        self.saver.setup()

    def record(self, i: int, msgs: list[pk.Message]) -> None:
        self.app.invoke({"messages": [self.pending]}, self.cfg)

    def respond(self, i: int, msgs: list[pk.Message]) -> None:
        if not hasattr(self, "app"):
            self.app = _graph(self.saver)
        self.pending = _lc_message(msgs[i])  # the message object the caller already has

    def ready(self) -> None:
        self.app = _graph(self.saver)  # building the graph is not the store's work

    def load(self) -> int:
        return len(self.app.get_state(self.cfg).values["messages"])

    def close(self) -> None:
        self.conn.close()


class LangGraphPostgres(LangGraphSqlite):
    label = "LangGraph PostgresSaver"
    dists: tuple[str, ...] = ("langgraph", "langgraph-checkpoint-postgres", "psycopg")
    durability = "server default (synchronous_commit=on)"

    def prepare(self) -> None:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row

        self.psycopg, self.dict_row, self.pcls = psycopg, dict_row, PostgresSaver
        self.cfg = {"configurable": {"thread_id": CID}}
        self.lc = [_lc_message(m) for m in conversation(4)]
        self.dsn, self.schema = self.target.split("|")

    def open(self) -> None:
        # the connection LangGraph's docs give (autocommit, dict rows), in our own schema
        self.conn = self.psycopg.connect(self.dsn, autocommit=True, prepare_threshold=0,
                                         row_factory=self.dict_row,
                                         options=f"-c search_path={self.schema}")
        self.saver = self.pcls(self.conn)
        self.saver.setup()


class BarePgInsert(Kind):
    """The floor on PostgreSQL: the canonical encoding and one autocommit INSERT."""

    label = "bare INSERT (encode + INSERT)"
    dists = ("psycopg",)
    durability = "server default (synchronous_commit=on)"

    def prepare(self) -> None:
        import psycopg

        self.psycopg = psycopg
        self.dsn, self.schema = self.target.split("|")

    def open(self) -> None:
        self.conn = self.psycopg.connect(self.dsn, autocommit=True,
                                         options=f"-c search_path={self.schema}")
        self.conn.execute("CREATE TABLE IF NOT EXISTS floor (id BIGSERIAL PRIMARY KEY, body TEXT NOT NULL)")

    def record(self, i: int, msgs: list[pk.Message]) -> None:
        self.conn.execute("INSERT INTO floor (body) VALUES (%s)", (dump_message(msgs[i]),))

    def load(self) -> int:
        rows = self.conn.execute("SELECT body FROM floor ORDER BY id").fetchall()
        return len([json.loads(b) for (b,) in rows])

    def close(self) -> None:
        self.conn.close()


KINDS: dict[str, Callable[[str], Kind]] = {
    "ours-normal": lambda t: OursSqlite(t, "NORMAL"),
    "ours-full": lambda t: OursSqlite(t, "FULL"),
    "agents": AgentsSession,
    "llm": LlmLogs,
    "langgraph": LangGraphSqlite,
    "ours-pg": OursPostgres,
    "langgraph-pg": LangGraphPostgres,
    "bare-pg": BarePgInsert,
}


# --------------------------------------------------------------------------- the worker


def serve(kind: Kind, n: int) -> None:
    """Lockstep recording: opens a new store, says ``ready``, then for each index read from
    stdin records that message and writes the seconds it took (a record of two messages
    counts half its time for each), so the parent can interleave the contenders message by
    message and a noisy neighbour (another process's fsyncs) hits all of them alike. On ``-1``
    closes and writes the file size and the versions as JSON."""
    msgs = conversation(n + 1)
    kind.prepare()
    kind.open()
    respond = getattr(kind, "respond", None)
    clock = time.perf_counter
    out, half = sys.stdout, 0.0
    out.write("ready\n")
    out.flush()
    for line in sys.stdin:
        i = int(line)
        if i < 0:
            break
        if kind.per_record == 2 and i % 2 == 1:
            dt = half  # recorded with message i - 1
        else:
            if respond is not None:
                respond(i, msgs)  # the peer's own reply or message object, not timed
            t0 = clock()
            kind.record(i, msgs)
            dt = half = (clock() - t0) / kind.per_record
        out.write(f"{dt!r}\n")
        out.flush()
    kind.close()
    path = Path(kind.target)
    size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*")) if path.exists() else None
    out.write(json.dumps({"size": size, "versions": kind.versions()}) + "\n")
    out.flush()


def load_run(kind: Kind, n: int) -> dict[str, Any]:
    """In this fresh process: open the existing store, then load it; each call timed alone."""
    kind.prepare()
    t0 = time.perf_counter()
    kind.open()
    opened = time.perf_counter() - t0
    kind.close()
    t0 = time.perf_counter()  # opened again in the same process (a re-run cell, a worker's next task)
    kind.open()
    reopened = time.perf_counter() - t0
    ready = getattr(kind, "ready", None)
    if ready is not None:
        ready()
    t0 = time.perf_counter()
    got = kind.load()
    loaded = time.perf_counter() - t0
    kind.close()
    if got != n:
        raise SystemExit(f"{kind.label}: loaded {got} messages, expected {n}")
    return {"open": opened, "reopen": reopened, "load": loaded}


def worker_command(kind: str, step: str, target: str, n: int) -> list[str]:
    return [sys.executable, "-m", "bench.store_peers_kinds", kind, step, target, str(n)]


def main(argv: list[str]) -> int:
    name, step, target, n = argv[0], argv[1], argv[2], int(argv[3])
    kind = KINDS[name](target)
    if step == "serve":
        serve(kind, n)
    else:
        os.write(1, json.dumps(load_run(kind, n)).encode())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
