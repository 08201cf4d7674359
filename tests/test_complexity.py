"""No function in the package above cyclomatic complexity 25, as radon counts it.

A function past that is a decision table written as one long chain; split it by meaning (a
table of cases, one function per case). The only exceptions are whole modules that read a
foreign format: their branches follow someone else's schema, case for case, and a split would
scatter one record's reading over many functions. Each is listed with its reason; a listed
module with nothing over the limit any more must leave the list (the second test says so).

Read from the source (nothing is imported); closures and methods count as functions.
"""

from __future__ import annotations

from pathlib import Path

from radon.complexity import add_inner_blocks, cc_visit
from radon.visitors import Function

PACKAGE = "providerkit_nb"
SOURCE = Path(__file__).resolve().parent.parent / PACKAGE
LIMIT = 25

# module (path under the package) -> why its functions may go past the limit
EXEMPT_READERS: dict[str, str] = {
    "transcripts/claude_code.py": "reads Claude Code's session JSONL: one branch per record and block kind",
    "transcripts/langchain.py": "reads LangChain messages: one branch per message class and content block",
    "transcripts/pydantic_ai.py": "reads Pydantic AI's message history: one branch per part kind",
    "transcripts/llm_logs.py": "reads the llm tool's SQLite logs, current and legacy schemas",
    "transcripts/otel.py": "reads OpenTelemetry GenAI spans and events across the conventions' versions",
    "transcripts/vercel_ui.py": "reads the Vercel AI SDK's UI messages: one branch per part type",
}


def _over_limit() -> dict[str, list[str]]:
    """module -> ``"name (line N): complexity C"`` for each function over the limit."""
    found: dict[str, list[str]] = {}
    for path in sorted(SOURCE.rglob("*.py")):
        module = path.relative_to(SOURCE).as_posix()
        for block in add_inner_blocks(cc_visit(path.read_text(encoding="utf-8"))):
            if isinstance(block, Function) and block.complexity > LIMIT:
                found.setdefault(module, []).append(
                    f"{block.fullname} (line {block.lineno}): complexity {block.complexity}"
                )
    return found


def test_no_function_over_the_limit_outside_the_readers() -> None:
    over = {m: fs for m, fs in _over_limit().items() if m not in EXEMPT_READERS}
    lines = [f"{PACKAGE}/{m}: {f}" for m, fs in sorted(over.items()) for f in fs]
    assert not lines, (
        f"functions above cyclomatic complexity {LIMIT} (split each by meaning: a table of "
        "cases, one function per case):\n" + "\n".join(lines)
    )


def test_each_exempt_reader_still_needs_it() -> None:
    missing = [m for m in EXEMPT_READERS if not (SOURCE / m).is_file()]
    assert not missing, f"exempt modules that no longer exist (drop them from EXEMPT_READERS): {missing}"
    over = _over_limit()
    unneeded = [m for m in EXEMPT_READERS if m not in over]
    assert not unneeded, (
        f"exempt modules with no function above {LIMIT} any more (drop them from EXEMPT_READERS): "
        f"{unneeded}"
    )
