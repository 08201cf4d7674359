"""Damaged part-2 sources: every outcome is messages (that repair, validate and export take) or
this library's TranscriptError naming the source, never a raw KeyError/TypeError/AttributeError."""

from __future__ import annotations

import copy
import json
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from providerkit_nb import validate_history
from providerkit_nb.core.repair import repair_history
from providerkit_nb.transcripts import TranscriptError, load
from providerkit_nb.transcripts.base import Source
from providerkit_nb.transcripts.export import EXPORT_FORMATS, export

from .conftest import FIXTURES

JSON_FILES = {
    "pydantic_ai": ["pydantic_ai_complete.json", "pydantic_ai_tool_raised.json", "pydantic_ai_retry_legacy.json"],
    "langchain": ["langchain_messages_to_dict.json", "langchain_dumpd.json", "langchain_legacy_additional_kwargs.json"],
}
ODD = [None, 0, 1.5, True, "", "x", [], {}, [1], {"a": None}]


def _paths(node: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [at]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*at, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*at, i))
    return out


def _mutate(data: Any, rng: random.Random) -> Any:
    data = copy.deepcopy(data)
    path = rng.choice(_paths(data)[1:])
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    if rng.random() < 0.3 and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = copy.deepcopy(rng.choice(ODD))
    return data


@pytest.mark.parametrize("fmt", sorted(JSON_FILES))
def test_mutated_json_loads_or_raises_transcript_error(fmt: str) -> None:
    rng = random.Random(20261203)
    tried = 0
    for name in JSON_FILES[fmt]:
        original = json.loads((FIXTURES / name).read_text())
        for _ in range(150):
            data = _mutate(original, rng)
            try:
                t = load(Source(data), format=fmt)
            except TranscriptError:
                tried += 1
                continue
            # what loads can be checked, repaired and handed back without a raw error
            r = repair_history(t.messages, pending=t.pending_approval)
            validate_history(r.messages, t.wire)
            for target in EXPORT_FORMATS:
                export(r, target)
            tried += 1
    assert tried == 450


@pytest.mark.parametrize(
    ("name", "sql", "thread"),
    [
        ("langgraph.sqlite", "DROP TABLE writes", "healthy"),
        ("langgraph.sqlite", "UPDATE writes SET value = x'ff00' WHERE channel = '__error__'", "tool-raised"),
        ("langgraph.sqlite", "UPDATE writes SET type = 'pickle' WHERE channel = '__interrupt__'", "waiting-human"),
        ("llm_logs_0.36.db", "DELETE FROM messages WHERE role = 'user'", None),
        ("llm_logs_0.36.db", "UPDATE parts SET payload = '[1'", None),
        ("llm_logs_0.31.db", "DROP TABLE tool_calls", None),
        ("llm_logs_0.31.db", "UPDATE responses SET prompt = NULL, response = NULL", None),
    ],
)
def test_damaged_databases(name: str, sql: str, thread: str | None, fixture_copy: Any) -> None:
    db: Path = fixture_copy(name)
    conn = sqlite3.connect(db)
    conn.execute(sql)
    conn.commit()
    if thread is None:
        thread = str(conn.execute(
            "SELECT id FROM threads ORDER BY datetime_utc LIMIT 1" if "0.36" in name
            else "SELECT conversation_id FROM responses ORDER BY datetime_utc LIMIT 1"
        ).fetchone()[0])
    conn.close()
    try:
        t = load(db, thread=thread)
    except TranscriptError as exc:
        assert str(db) in str(exc)
    else:
        assert t.messages is not None
