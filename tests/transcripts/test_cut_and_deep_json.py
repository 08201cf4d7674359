"""JSON read from outside that is nested too deeply or cut short: this library's own error
naming the file (never a RecursionError), and for a file cut short, what is whole of it with
the cut as a finding. The cut files are made here from a real pydantic-ai transcript."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import providerkit_nb as pk
from providerkit_nb.messages import MessageFormatError, loads
from providerkit_nb.store import read_jsonl
from providerkit_nb.transcripts import TranscriptError, TranscriptTruncated, load

from .conftest import FIXTURES

REPO = Path(__file__).resolve().parents[2]
PYDANTIC_AI = FIXTURES / "pydantic_ai_complete.json"
DEPTH = 5000


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "providerkit_nb", *map(str, args)],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )


def element_ends(text: str) -> list[int]:
    """Where each top-level element of a JSON array ends (the test's own reading)."""
    dec = json.JSONDecoder()
    i = text.index("[") + 1
    ends = []
    while True:
        while text[i] in " \t\r\n,":
            i += 1
        if text[i] == "]":
            return ends
        _, i = dec.raw_decode(text, i)
        ends.append(i)


# --------------------------------------------------------------------------- nested too deeply


@pytest.mark.parametrize("shape", ["array", "messages"])
def test_a_5000_deep_json_file_is_a_clear_error_naming_the_file_in_the_cli(tmp_path: Path, shape: str) -> None:
    path = tmp_path / "deep.json"
    inner = "[" * DEPTH + "]" * DEPTH
    path.write_text(inner if shape == "array" else f'[{{"role": "user", "content": {inner}}}]')
    r = run("inspect", path)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and "RecursionError" not in r.stderr
    assert str(path) in r.stderr and "nested too deeply" in r.stderr
    with pytest.raises(TranscriptError, match="nested too deeply"):
        load(path)
    with pytest.raises(TranscriptError, match="nested too deeply"):
        load(path, format="pydantic_ai")


def test_a_too_deep_line_in_a_jsonl_store_file_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    good = json.dumps({"role": "user", "content": "hi"})
    path.write_text(good + "\n" + '{"role": "user", "content": ' + "[" * DEPTH + "]" * DEPTH + "}\n" + good + "\n")
    with pytest.raises(ValueError, match="line 2") as ei:
        read_jsonl(path)
    assert str(path) in str(ei.value) and not isinstance(ei.value, RecursionError)


def test_canonical_loads_of_a_too_deep_document_is_a_message_format_error() -> None:
    with pytest.raises(MessageFormatError, match="nested too deeply"):
        loads("[" * DEPTH + "]" * DEPTH)


# --------------------------------------------------------------------------- cut short


@pytest.mark.parametrize("fraction", [0.35, 0.7, 0.95])
def test_a_cut_pydantic_ai_file_is_inspected_up_to_its_last_whole_element(tmp_path: Path, fraction: float) -> None:
    text = PYDANTIC_AI.read_text(encoding="utf-8")
    at = int(len(text) * fraction)
    path = tmp_path / "run.json"
    path.write_text(text[:at], encoding="utf-8")
    whole = sum(1 for end in element_ends(text) if end < at and "," in text[end:at])
    assert 0 < whole < len(json.loads(text))  # the cut goes through an element, some are whole
    expected = pk.inspect(json.loads(text)[:whole], format="pydantic_ai").messages
    line = text[:at].rstrip().count("\n") + 1

    for fmt in (None, "pydantic_ai"):
        with pytest.raises(TranscriptTruncated) as ei:
            load(path, format=fmt)
        said = str(ei.value)
        assert str(path) in said and "truncated" in said and f"line {line}," in said
        assert "pydantic_ai" in said and ei.value.format == "pydantic_ai"

        found = pk.inspect(path, format=fmt)
        assert found.format == "pydantic_ai"
        assert [m.to_dict() for m in found.messages] == [m.to_dict() for m in expected]
        cuts = [p for p in found.problems if p.rule == "source.truncated"]
        assert len(cuts) == 1 and f"line {line}," in cuts[0].message
        assert f"{whole} complete top-level element(s)" in cuts[0].message

    r = run("inspect", path)
    assert r.returncode == 1, r.stderr
    assert "source.truncated" in r.stdout and f"line {line}," in r.stdout and "pydantic_ai" in r.stdout
    r = run("inspect", "--format", "pydantic_ai", "--json", path)
    assert r.returncode == 1, r.stderr
    out = json.loads(r.stdout)
    assert out["format"] == "pydantic_ai" and out["messages"] == len(expected)
    assert [p["rule"] for p in out["problems"] if p["rule"] == "source.truncated"] == ["source.truncated"]


def test_a_file_cut_before_its_first_whole_element_says_truncated_and_where(tmp_path: Path) -> None:
    text = PYDANTIC_AI.read_text(encoding="utf-8")
    path = tmp_path / "run.json"
    path.write_text(text[:200], encoding="utf-8")
    with pytest.raises(TranscriptTruncated) as ei:
        load(path)
    assert ei.value.transcript is None and "truncated" in str(ei.value) and "line " in str(ei.value)
    r = run("inspect", "--format", "pydantic_ai", path)
    assert r.returncode == 2 and "truncated" in r.stderr and "expected a JSON list" not in r.stderr
