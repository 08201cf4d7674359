"""``providerkit-nb inspect`` / ``repair --to`` on part-2 sources, through a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.transcripts.conftest import FIXTURES, REPO


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "providerkit_nb", *args], capture_output=True, text=True,
                          cwd=REPO, timeout=60)


def test_waiting_for_a_human_exits_0_and_lists_the_calls() -> None:
    out = cli("inspect", str(FIXTURES / "langgraph.sqlite"), "--thread", "waiting-human", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["pending_approval"] == ["call_1", "call_2"]
    assert report["problems"] == [] and report["interrupted"] == [] and report["changes"] == []


def test_tool_raised_exits_1() -> None:
    out = cli("inspect", str(FIXTURES / "langgraph.sqlite"), "--thread", "tool-raised", "--json")
    assert out.returncode == 1
    assert [i["id"] for i in json.loads(out.stdout)["interrupted"]] == ["call_1", "call_2"]


@pytest.mark.parametrize("to", ["pydantic_ai", "langchain", "responses"])
def test_repair_to_a_framework_never_answers_pending_calls(to: str, tmp_path: Path) -> None:
    target = tmp_path / f"out-{to}.json"
    out = cli("repair", str(FIXTURES / "langgraph.sqlite"), "--thread", "waiting-human", "-o", str(target), "--to", to)
    assert out.returncode == 0, out.stderr
    text = target.read_text()
    data = json.loads(text)
    assert isinstance(data, list) and data
    for cid in ("call_1", "call_2"):
        assert text.count(f'"{cid}"') == 1  # the call only, no result


@pytest.mark.parametrize("to", ["pydantic_ai", "langchain", "responses"])
def test_repair_to_writes_the_interrupted_results(to: str, tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    out = cli("repair", str(FIXTURES / "pydantic_ai_tool_raised.json"), "-o", str(target), "--to", to)
    assert out.returncode == 1, out.stderr  # it had a problem; the repaired file is written
    src = json.loads((FIXTURES / "pydantic_ai_tool_raised.json").read_text())
    returned = {p["tool_call_id"] for m in src for p in m["parts"] if p["part_kind"] == "tool-return"}
    dangling = [p["tool_call_id"] for m in src for p in m["parts"] if p["part_kind"] == "tool-call"
                and p["tool_call_id"] not in returned]
    text = target.read_text()
    for cid in dangling:
        assert text.count(f'"{cid}"') == 2  # the call and its added result


def test_repair_to_never_writes_in_place(tmp_path: Path) -> None:
    src = tmp_path / "h.json"
    src.write_bytes((FIXTURES / "pydantic_ai_tool_raised.json").read_bytes())
    before = src.read_bytes()
    out = cli("repair", str(src), "-o", str(src), "--to", "langchain")
    assert out.returncode == 2 and src.read_bytes() == before


def test_export_of_a_multi_thread_inspection_says_to_pick_one() -> None:
    import providerkit_nb as pk

    report = pk.inspect(FIXTURES / "langgraph.sqlite")
    assert report.needs_thread
    with pytest.raises(ValueError, match="3 threads"):
        pk.export(report, "langchain")
