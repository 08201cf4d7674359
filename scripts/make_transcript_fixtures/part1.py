"""Make the part-1 transcript fixtures with the real libraries (offline, no API key).

    python scripts/make_transcript_fixtures/part1.py          # Agents SDK session databases
    node scripts/make_transcript_fixtures/part1_vercel.mjs OUT_DIR   # Vercel AI SDK UIMessages
                                                               # (run from a folder where `ai` is installed)

Outputs go to tests/transcripts/fixtures/ and are committed; the versions that wrote them are
recorded in tests/transcripts/fixtures/VERSIONS.json. Claude Code and Codex files are not made
here: the tests read real public samples in place (../shared/transcripts/upstream/).

The Agents SDK databases are written by ``agents.SQLiteSession.add_items``, the SDK's own write
path (what ``Runner`` calls after each step, and what an app that persists
``result.to_input_list()`` itself calls): one database with a complete session and a broken
one (a function_call whose output never came, and an output whose call is missing, as in
openai/openai-agents-python#4615 and #4827), and one with custom table names.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from importlib.metadata import version
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[2] / "tests" / "transcripts" / "fixtures"

USER: dict[str, Any] = {"role": "user", "content": "What is the weather in Paris, and the time in Tokyo?"}
REASONING: dict[str, Any] = {
    "type": "reasoning",
    "id": "rs_0001",
    "summary": [{"type": "summary_text", "text": "Two lookups, they can run in parallel."}],
    "encrypted_content": "gAAAAB-fixture-encrypted-reasoning",
}


def call(n: int, name: str, args: dict[str, str]) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_000{n}",
        "call_id": f"call_{name}_{n}",
        "name": name,
        "arguments": json.dumps(args),
        "status": "completed",
    }


def output(call_id: str, text: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def answer(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "id": "msg_0001",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


COMPLETE = [
    USER,
    REASONING,
    call(1, "get_weather", {"city": "Paris"}),
    call(2, "get_time", {"city": "Tokyo"}),
    output("call_get_weather_1", "18 C, clear"),
    output("call_get_time_2", "21:04"),
    answer("Paris: 18 C and clear. Tokyo: 21:04."),
]

# The process died after the approved get_weather ran but before its output was saved; the
# next turn saved an output for a call the session never stored (call_lookup_9).
BROKEN = [
    USER,
    REASONING,
    call(1, "get_weather", {"city": "Paris"}),
    {"role": "user", "content": "Still there?"},
    output("call_lookup_9", "found 3 rows"),
    answer("Sorry, where were we?"),
]


async def write(
    path: Path,
    sessions: dict[str, list[dict[str, Any]]],
    sessions_table: str = "agent_sessions",
    messages_table: str = "agent_messages",
) -> None:
    from agents import SQLiteSession

    path.unlink(missing_ok=True)
    for session_id, items in sessions.items():
        session = SQLiteSession(session_id, path, sessions_table=sessions_table, messages_table=messages_table)
        await session.add_items(items)  # type: ignore[arg-type]
        assert await session.get_items() == items, "the SDK changed the items it stores"
        session.close()
    with sqlite3.connect(path) as conn:  # fold any WAL back in so one file holds everything
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")


def _jsonl(path: Path, lines: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines), encoding="utf-8")


def claude_code_session() -> list[dict[str, Any]]:
    """A constructed Claude Code session (CLI 2.1-style lines) whose process died mid-tool: two
    parallel Bash calls, only the first result written. The real captures the tests read are
    in ../shared/transcripts/upstream/claude-code/; this one is small enough to ship."""
    sid = "0b6c7d2e-1111-4c1e-9a7e-5e55105e55a0"
    base = {"sessionId": sid, "version": "2.1.38", "cwd": "/home/user/project", "gitBranch": "main",
            "isSidechain": False, "userType": "external"}
    n = iter(range(1, 100))

    def line(kind: str, parent: str | None, **extra: object) -> dict[str, Any]:
        uuid = f"00000000-0000-4000-8000-{next(n):012d}"
        return {"type": kind, "uuid": uuid, "parentUuid": parent, "timestamp": "2026-02-01T10:00:00Z", **base, **extra}

    def assistant(parent: str | None, block: dict[str, Any]) -> dict[str, Any]:
        msg = {"id": "msg_01Fixture", "type": "message", "role": "assistant", "model": "claude-opus-4-6",
               "content": [block], "stop_reason": None}
        return line("assistant", parent, message=msg, requestId="req_fixture")

    out: list[dict[str, Any]] = [{"type": "file-history-snapshot", "messageId": "m0", "snapshot": {}}]
    u = line("user", None, message={"role": "user", "content": "Run the tests and the linter."})
    out.append(u)
    a1 = assistant(u["uuid"], {"type": "thinking", "thinking": "Run both at once.", "signature": "EqFixtureSig=="})
    a2 = assistant(a1["uuid"], {"type": "text", "text": "Running both."})
    a3 = assistant(a2["uuid"], {"type": "tool_use", "id": "toolu_01Tests", "name": "Bash",
                                "input": {"command": "pytest -q"}})
    prog = line("progress", a3["uuid"], data={"type": "bash_progress", "output": "..."})
    a4 = assistant(prog["uuid"], {"type": "tool_use", "id": "toolu_02Lint", "name": "Bash",
                                  "input": {"command": "ruff check ."}})
    r1 = line("user", a3["uuid"], message={"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_01Tests", "content": "42 passed", "is_error": False}]},
        toolUseResult={"stdout": "42 passed"})
    # ... and the process was killed before the linter's result line was written.
    out += [a1, a2, a3, prog, a4, r1]
    return out


def codex_rollout() -> list[dict[str, Any]]:
    """A constructed Codex rollout (0.144-style records) of a turn the user aborted while a
    shell call ran: the function_call has no output, then a ``turn_aborted`` event, then the
    next turn. The real samples the tests read are in ../shared/transcripts/upstream/codex/."""
    sid = "019b1c2d-2222-7abc-8def-c0dec0dec0de"

    def rec(kind: str, payload: dict[str, Any], sec: int) -> dict[str, Any]:
        return {"timestamp": f"2026-02-01T10:00:{sec:02d}.000Z", "type": kind, "payload": payload}

    return [
        rec("session_meta", {"id": sid, "timestamp": "2026-02-01T10:00:00.000Z", "cwd": "/home/user/project",
                             "originator": "codex_cli_rs", "cli_version": "0.144.1", "source": "cli",
                             "model_provider": "openai"}, 0),
        rec("turn_context", {"cwd": "/home/user/project", "model": "gpt-5-codex", "approval_policy": "on-request",
                             "sandbox_policy": {"type": "workspace-write"}}, 1),
        rec("event_msg", {"type": "task_started", "turn_id": "1"}, 2),
        rec("response_item", {"type": "message", "role": "user",
                               "content": [{"type": "input_text", "text": "Run the slow test suite."}]}, 2),
        rec("event_msg", {"type": "user_message", "message": "Run the slow test suite."}, 2),
        rec("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Run pytest."}],
                               "encrypted_content": "gAAAAB-fixture-encrypted"}, 3),
        rec("response_item", {"type": "function_call", "name": "shell", "call_id": "call_slow_1",
                               "arguments": json.dumps({"command": ["pytest", "-m", "slow"]})}, 4),
        rec("event_msg", {"type": "exec_command_begin", "call_id": "call_slow_1"}, 4),
        rec("event_msg", {"type": "turn_aborted", "turn_id": "1", "reason": "interrupted"}, 9),
        rec("response_item", {"type": "message", "role": "user",
                               "content": [{"type": "input_text", "text": "Skip that; just run the unit tests."}]}, 10),
        rec("response_item", {"type": "function_call", "name": "shell", "call_id": "call_unit_2",
                               "arguments": json.dumps({"command": ["pytest", "-q"]})}, 11),
        rec("response_item", {"type": "function_call_output", "call_id": "call_unit_2",
                               "output": "120 passed in 3.1s"}, 14),
        rec("response_item", {"type": "message", "role": "assistant",
                               "content": [{"type": "output_text", "text": "All 120 unit tests pass."}]}, 15),
        rec("event_msg", {"type": "task_complete", "turn_id": "2"}, 15),
    ]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    asyncio.run(write(OUT / "openai_agents_sessions.db", {"weather-complete": COMPLETE, "weather-broken": BROKEN}))
    asyncio.run(
        write(
            OUT / "openai_agents_custom_tables.db",
            {"only-session": BROKEN},
            sessions_table="chat_sessions",
            messages_table="chat_items",
        )
    )
    _jsonl(OUT / "claude_code_killed_mid_tool.jsonl", claude_code_session())
    _jsonl(OUT / "codex_turn_aborted.jsonl", codex_rollout())
    versions_path = OUT / "VERSIONS.json"
    versions = json.loads(versions_path.read_text()) if versions_path.exists() else {}
    for name, what in (("claude_code_killed_mid_tool.jsonl", "Claude Code CLI 2.1.38"),
                       ("codex_turn_aborted.jsonl", "Codex CLI 0.144.1")):
        versions[name] = {
            "written_by": f"constructed (no tool run) in the line format of {what}, after the facts "
                          "in the format reference; real captures are read in place by the tests",
            "script": "scripts/make_transcript_fixtures/part1.py",
        }
    versions["openai_agents_sessions.db"] = versions["openai_agents_custom_tables.db"] = {
        "written_by": f"openai-agents {version('openai-agents')} SQLiteSession.add_items",
        "script": "scripts/make_transcript_fixtures/part1.py",
    }
    versions_path.write_text(json.dumps(versions, indent=2, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
