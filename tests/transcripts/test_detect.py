"""Detection never confuses a fixture file with another format (the loose dialects tried last
are left out: order puts them after every specific format)."""

from __future__ import annotations

import pytest

from providerkit_nb.transcripts import FORMATS, detect, format_module
from providerkit_nb.transcripts.base import Source

from .conftest import FIXTURES

EXPECTED = {
    "pydantic_ai_complete.json": "pydantic_ai",
    "pydantic_ai_tool_raised.json": "pydantic_ai",
    "pydantic_ai_ctrl_c.json": "pydantic_ai",
    "pydantic_ai_retry.json": "pydantic_ai",
    "pydantic_ai_retry_legacy.json": "pydantic_ai",
    "langchain_messages_to_dict.json": "langchain",
    "langchain_dumpd.json": "langchain",
    "langchain_legacy_additional_kwargs.json": "langchain",
    "langgraph.sqlite": "langgraph_sqlite",
    "langgraph_died.sqlite": "langgraph_sqlite",
    "llm_logs_0.36.db": "llm_logs",
    "llm_logs_0.31.db": "llm_logs",
    "claude_code_killed_mid_tool.jsonl": "claude_code",
    "codex_turn_aborted.jsonl": "codex",
    "openai_agents_sessions.db": "openai_agents",
    "openai_agents_custom_tables.db": "openai_agents",
    "vercel_ui_approval.json": "vercel_ui",
    "vercel_ui_complete.json": "vercel_ui",
    "vercel_ui_interrupted.json": "vercel_ui",
    "vercel_ui_tool_error.json": "vercel_ui",
}
LOOSE = {"responses", "anthropic", "gemini", "openai_chat", "canonical"}


def test_every_fixture_is_listed() -> None:
    on_disk = {p.name for p in FIXTURES.iterdir() if p.is_file() and p.name != "VERSIONS.json"}
    assert on_disk == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_only_its_own_format_claims_it(name: str) -> None:
    path = FIXTURES / name
    claims = {f for f in FORMATS if f not in LOOSE and format_module(f).detect(Source(path), f)}
    assert claims == {EXPECTED[name]}
    assert detect(path) == EXPECTED[name]
