"""The ``inspect`` and ``repair`` commands: a transcript of any supported format in, a report
(or a repaired canonical JSONL file) out.

Exit status: 0 when the transcript is valid, 1 when it has problems (``repair`` still writes
the repaired file), 2 on a usage error, an unreadable source (one line naming the file) or a
source that holds several threads when none was picked (they are listed).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["inspect_command", "repair_command", "repair_session_command"]

VALID, PROBLEMS, USAGE = 0, 1, 2


def _inspect(source: str, format: str | None, thread: str | None, wire: str | None) -> Any:
    """The Inspection, or an exit status after saying on stderr why there is none."""
    from ..transcripts import TranscriptError
    from ..transcripts.inspection import examine as inspect

    try:
        report = inspect(source, format=format, thread=thread, wire=wire)
    except TranscriptError as exc:
        return _fail(str(exc))
    except ValueError as exc:  # an unknown wire name, a validator refusing the input
        return _fail(f"{source}: {exc}")
    if report.needs_thread:
        _fail(f"{source} holds {len(report.threads)} threads; pick one with --thread:")
        for t in report.threads:
            print(f"  {t}", file=sys.stderr)
        return USAGE
    return report


def _fail(reason: str) -> int:
    print(f"providerkit-nb: {' '.join(reason.split())}", file=sys.stderr)
    return USAGE


def inspect_command(
    source: str,
    *,
    format: str | None = None,
    thread: str | None = None,
    wire: str | None = None,
    as_json: bool = False,
    html: str | None = None,
) -> int:
    report = _inspect(source, format, thread, wire)
    if isinstance(report, int):
        return report
    if html:
        if _same_file(html, source):
            return _fail(f"{html}: --html would overwrite the transcript; pick another file")
        from ..viewer import page_of, write_html

        write_html(page_of(report, title=report.title), html)
    if as_json:
        print(json.dumps(report.to_json(), ensure_ascii=False))
    else:
        print(report)
        changes = report.repaired.changes if report.repaired is not None else []
        print(f"  repair: {len(changes)} change(s)" + (f"; report written to {html}" if html else ""))
    return VALID if report.valid else PROBLEMS


def repair_command(
    source: str, out: str, *, format: str | None = None, thread: str | None = None, to: str = "canonical"
) -> int:
    if to == "cline":  # a new Cline session (a folder), beside the source's, never over it
        found = _inspect(source, format, thread, None)
        return found if isinstance(found, int) else _repair_to_cline(found, source, out)
    if _same_file(out, source):
        return _fail(f"{out}: repair never writes in place; pick another output file")
    report = _inspect(source, format, thread, None)
    if isinstance(report, int):
        return report
    from ..store.jsonl import write_jsonl

    target = Path(out)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    try:
        if to == "canonical":
            write_jsonl(tmp, report.repaired.messages, conversation_id=report.thread or Path(source).stem or "default")
        else:  # the framework's own JSON; calls waiting for a person stay unanswered
            from ..transcripts.export import export

            tmp.write_text(json.dumps(export(report, to), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        return _fail(f"{out}: cannot write ({exc.strerror or exc})")
    changes = len(report.repaired.changes)
    print(
        f"{source}: {report.format}, {len(report.messages)} messages, {len(report.problems)} problem(s); "
        f"wrote {len(report.repaired.messages)} messages to {out} ({changes} change(s))"
    )
    return VALID if report.valid else PROBLEMS


def _repair_to_cline(report: Any, source: str, out: str) -> int:
    from ..transcripts import TranscriptError
    from ..transcripts.cline_write import write_session

    try:
        folder = write_session(report, out)
    except (ValueError, OSError) as exc:  # TranscriptError is a ValueError
        if isinstance(exc, OSError) and not isinstance(exc, TranscriptError):
            return _fail(f"{out}: cannot write ({exc.strerror or exc})")
        return _fail(f"{out}: {exc}")
    print(
        f"{source}: {report.format}, {len(report.messages)} messages, {len(report.problems)} problem(s); "
        f"wrote {len(report.repaired.messages)} messages as the new Cline session {folder.name} in {folder} "
        f"({len(report.repaired.changes)} change(s)); resume it with: cline --id {folder.name}"
    )
    return VALID if report.valid else PROBLEMS


def _same_file(a: str, b: str) -> bool:
    pa, pb = Path(a), Path(b)
    try:
        if pa.exists() and pb.exists():
            return pa.samefile(pb)
    except OSError:
        pass
    return pa.resolve() == pb.resolve()


def repair_session_command(
    source: str, to: str, *, format: str | None = None, thread: str | None = None, read_only: list[str] | None = None
) -> int:
    """Write the repaired session back as a new session of the coding agent ``to`` (never in place)."""
    report = _inspect(source, format, thread, None)
    if isinstance(report, int):
        return report
    from ..transcripts import TranscriptError
    from ..transcripts.writeback import write_session

    try:
        written = write_session(report, to, read_only=[t.strip() for t in read_only if t.strip()] if read_only is not None else None)
    except (TranscriptError, ValueError) as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"{source}: cannot write the new session ({exc.strerror or exc})")
    print(
        f"{source}: {report.format}, {len(report.messages)} messages, {len(report.problems)} problem(s), "
        f"{len(report.abandoned)} call(s) its own resume abandoned; wrote session {written.session_id} "
        f"to {written.path}, answering {len(written.answered)} call(s): {', '.join(written.answered) or 'none'}; "
        f"resume it with: {written.resume_command}"
    )
    return VALID if report.valid else PROBLEMS
