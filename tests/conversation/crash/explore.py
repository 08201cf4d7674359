"""The parent side of the crash explorer: number the points of one uncrashed run, then for each
chosen point k fork a child that dies at k, and check what it left.

Checks at each point (each failure is one violation, named with the point):

1. the store loads without raising;
2. every store write the child acknowledged is there: each saved row with its seq and the same
   bytes (the sha256 of the stored text is the hash the child was given), each call mark in the
   state acknowledged or one the child tried after it; the stored rows are a prefix of the
   uncrashed run's rows;
3. ``repair_history`` of the loaded history (and of its live window, from the newest summary
   on) passes every wire's validator, and repairing it again changes nothing;
4. ``resume()`` (or, when there is nothing to resume, one more ``send``) against the wire
   server sends requests that the wire's validator accepts (read back from the request body),
   and never runs again a tool that is not read-only and had started in the child, nor a call
   the person denied;
5. what the model reads for each call in those requests agrees with what the store knew of
   that call after the crash: its saved result if one was saved anywhere in the
   conversation's records (or the result of running or deciding it during the resume); the
   denial if it was denied; that it was stopped if it was; the read-only text only for a
   read-only tool; "may have partly run" only for a call that had started and has no result.
   The expectation comes from the records and marks the crash left and the child's own log (a
   text the resume saved for a call it neither ran nor decided is held to the same rules); the
   texts are recognised by phrases written here, not by the library's constants.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from providerkit_nb import validate_history
from providerkit_nb.core.compaction import active_history
from providerkit_nb.core.repair import repair_history
from providerkit_nb.transcripts.provider_dialects import convert

from . import scenario as sc
from .wires import WIRES, WireServer, provider_for, told

REPO = Path(__file__).resolve().parents[3]
DIALECT = {"openai_chat": "openai_chat", "openai_responses": "responses", "anthropic": "anthropic",
           "gemini": "gemini"}

# What the model reads in place of a result, recognised by phrases written here (the library's
# constants are not imported: the test must notice if their meaning changes).
PHRASES = (
    ("denied", "declined"),
    ("stopped", "stopped this call"),
    ("may_have_run", "may have partly run"),
    ("read_only", "changed nothing"),
    ("not_answered", "did not run"),
)
STARTED_MARKS = {"started", "lost", "stopped", "finished"}


def classify(text: str) -> str:
    low = text.lower()
    return next((kind for kind, phrase in PHRASES if phrase in low), "other")


class Forker:
    """The fork server (child.py): one interpreter, a forked child per run."""

    def __init__(self, workdir: Path) -> None:
        env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.conversation.crash.child"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True, env=env, cwd=REPO,
        )
        self.workdir = workdir

    def ask(self, **req: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"the fork server died (exit {self.proc.poll()})"
        return json.loads(line)

    def run(self, **req: Any) -> int:
        pid = self.ask(op="run", **req)["pid"]
        return int(self.ask(op="wait", pid=pid)["status"])

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(30)


@dataclass
class Point:
    n: int
    kind: str
    what: str

    def __str__(self) -> str:
        return f"#{self.n} {self.kind} {self.what}"


@dataclass
class Backend:
    """Where a combination's store lives: ``spec`` for the child, ``open()`` for the parent,
    ``settle()`` after a kill (PostgreSQL: wait until the server is done with the dead client)."""

    name: str
    spec: dict[str, Any]
    open: Callable[[], Any]
    settle: Callable[[], None] = lambda: None


@dataclass
class Log:
    lines: list[str]

    @property
    def crashed_at(self) -> str | None:
        return next((line[2:] for line in self.lines if line.startswith("K ")), None)

    @property
    def failed(self) -> str | None:
        return next((line[2:].replace("\\n", "\n") for line in self.lines if line.startswith("X ")), None)

    def saves(self) -> list[tuple[int, str]]:
        return [(int(p[2]), p[3]) for p in (line.split() for line in self.lines) if p[:2] == ["A", "save"]]

    def marks(self) -> list[tuple[str, str, str]]:
        """("T"|"A", call id, state) in the order the child wrote them."""
        return [(p[0], p[2], p[3]) for p in (line.split() for line in self.lines)
                if p[0] in ("T", "A") and p[1] == "mark"]

    def started(self) -> set[str]:
        return {sc.CALL_OF_TOOL[p[2]] for p in (line.split() for line in self.lines) if p[:2] == ["E", "start"]}

    def denied(self) -> set[str]:
        return {p[1] for p in (line.split() for line in self.lines) if p[0] == "D" and p[2] == "deny"}


def read_log(path: Path) -> Log:
    return Log(path.read_text().splitlines() if path.exists() else [])


@dataclass
class Report:
    combo: str
    points: int = 0  # points the uncrashed run has
    explored: int = 0
    violations: list[str] = field(default_factory=list)
    kinds: dict[str, int] = field(default_factory=dict)
    bad_points: int = 0  # points with at least one violation
    told_points: int = 0  # points where the resumed model was told something the store knew false

    def line(self) -> str:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.kinds.items()))
        return (f"{self.combo}: {self.explored} of {self.points} points explored ({kinds}); "
                f"{len(self.violations)} violations at {self.bad_points} points "
                f"({self.told_points} of them telling the model something false)")


class Explorer:
    def __init__(self, forker: Forker, server: WireServer, wire: str, backend: Backend, workdir: Path) -> None:
        self.forker = forker
        self.server = server
        self.wire = wire
        self.backend = backend
        self.workdir = workdir
        self.prefix = f"{wire}-{backend.name}"
        self.points: list[Point] = []
        self.reference: list[str] = []
        self.compaction = (0, 0)
        self.runs = 0

    def _child(self, cid: str, crash_at: int | None, listing: bool = False) -> tuple[int, Log]:
        log = self.workdir / f"{cid}.log"
        status = self.forker.run(wire=self.wire, store=self.backend.spec, cid=cid, crash_at=crash_at,
                                 listing=listing, log=str(log), root=f"{self.server.url}/{cid}")
        self.server.forget(cid)
        return status, read_log(log)

    def number(self) -> list[Point]:
        """Run the conversation once to its end, numbering every point."""
        cid = f"{self.prefix}-full"
        status, log = self._child(cid, None, listing=True)
        assert status == 0 and "DONE" in log.lines, f"{self.prefix}: the uncrashed run failed:\n{log.failed}"
        self.points = [Point(int(p[1]), p[2], p[3] if len(p) > 3 else "")
                       for p in (line.split(" ", 3) for line in log.lines if line.startswith("P "))]
        with self.backend.open() as store:
            rows = store.records(cid)
        self.reference = [r.hash for r in rows]
        # the compaction's rows: its summary, then the copies up to the copy of the question
        # asked just before it (the row before the summary)
        lo = next(i for i, r in enumerate(rows) if "[[sum]]" in r.json)
        hi = next(i for i in range(lo + 1, len(rows)) if rows[i].hash == rows[lo - 1].hash) + 1
        self.compaction = (lo, hi)
        return self.points

    def explore(self, chosen: list[int]) -> Report:
        report = Report(self.prefix, len(self.points))
        for k in chosen:
            p = self.points[k - 1]
            report.kinds[p.kind] = report.kinds.get(p.kind, 0) + 1
            found = self.check(k)
            report.violations += [f"{self.prefix} {p}: {v}" for v in found]
            report.bad_points += bool(found)
            report.told_points += any(v.startswith("request ") and " call " in v for v in found)
            report.explored += 1
        return report

    # ------------------------------------------------------------------ one point

    def check(self, k: int) -> list[str]:
        self.runs += 1
        cid = f"{self.prefix}-{k}-{self.runs}"  # a conversation of its own, whoever explored k before
        status, log = self._child(cid, k)
        self.backend.settle()
        expected = self.points[k - 1]
        if status != -9 or (log.crashed_at or "").rstrip() != f"{k} {expected.kind} {expected.what}".rstrip():
            return [f"the child did not die there (status {status}, died at {log.crashed_at!r}): {log.failed}"]
        found: list[str] = []
        store = self.backend.open()
        try:
            if self._stored(store, cid, log, found):
                self._resumed(store, cid, log, found)
        finally:
            store.close()
        return found

    def _stored(self, store: Any, cid: str, log: Log, found: list[str]) -> bool:
        """Checks 1 to 3; False when the store did not even load."""
        try:
            loaded = store.load(cid)
            records = store.records(cid)
            marks = store.call_marks(cid)
        except Exception as exc:  # noqa: BLE001 - any failure to load is the finding
            found.append(f"load raised {type(exc).__name__}: {exc}")
            return False
        by_seq = {r.seq: r for r in records}
        for seq, digest in log.saves():
            r = by_seq.get(seq)
            if r is None or r.hash != digest or hashlib.sha256(r.json.encode()).hexdigest() != digest:
                found.append(f"acknowledged save seq={seq} is missing or differs")
        if [r.hash for r in records] != self.reference[: len(records)]:
            found.append("the stored rows are not a prefix of the uncrashed run's")
        found += self._steps_in_part(records, marks)
        tried: dict[str, list[tuple[str, str]]] = {}
        for how, call, state in log.marks():
            tried.setdefault(call, []).append((how, state))
        for call, seq in tried.items():
            acked = [i for i, (how, _) in enumerate(seq) if how == "A"]
            if not acked:
                continue
            allowed = {state for _, state in seq[acked[-1]:]}
            got = marks.get(call)
            if got is None or got.state not in allowed:
                found.append(f"call {call}: mark {got and got.state!r}, acknowledged {seq[acked[-1]][1]!r}")
        for name, history in (("loaded", loaded), ("live", active_history(loaded))):
            rep = repair_history(history, is_read_only=lambda n: n in sc.READ_ONLY)
            for wire in WIRES:
                problems = validate_history(rep.messages, wire=wire)
                if problems:
                    found.append(f"repaired {name} history refused by {wire}: {problems[0]}")
            again = repair_history(rep.messages, is_read_only=lambda n: n in sc.READ_ONLY)
            if again.changes or again.messages != rep.messages:
                found.append(f"repairing the repaired {name} history changed it again")
        return True

    def _steps_in_part(self, records: list[Any], marks: dict[str, Any]) -> list[str]:
        """A step that several rows make up, seen in part: the compaction's summary without all
        the copies it carries; a decision (denied, finished, answered) without the result it
        gives; a call waiting for approval without the message that made it."""
        found = []
        n = len(records)
        lo, hi = self.compaction
        if lo < n < hi:
            found.append(f"the compaction is seen in part: {n - lo} of its {hi - lo} rows")
        messages = [json.loads(r.json) for r in records]
        answered = {m.get("tool_call_id") for m in messages if m.get("role") == "tool"}
        made = {c["id"] for m in messages for c in m.get("tool_calls") or ()}
        for call, mark in marks.items():
            if mark.state in ("denied", "finished", "answered") and call not in answered:
                found.append(f"call {call} is marked {mark.state} but its result is not stored")
            if mark.state == "asking" and call not in made:
                found.append(f"call {call} is marked asking but the message that made it is not stored")
        return found

    def _resumed(self, store: Any, cid: str, log: Log, found: list[str]) -> None:
        token = f"{cid}-resume"
        hooks = sc.Hooks()
        snaps: list[tuple[list[Any], list[str]]] = []
        crashed = (store.records(cid), store.call_marks(cid))  # what the child left, before resume

        def snapshot() -> None:
            snaps.append((store.records(cid), list(hooks.lines)))

        provider = sc.Counting(provider_for(self.wire, f"{self.server.url}/{token}"), hooks, on_open=snapshot)
        try:
            convo = sc.conversation(store, cid, provider, hooks, sc.workspace())
            convo.busy_wait = 10.0
            convo.resume()
            if not self.server.requests(token):
                convo.send(sc.PROBE)
        except Exception as exc:  # noqa: BLE001 - the finding
            found.append(f"resume raised {type(exc).__name__}: {exc}")
            return
        finally:
            requests = self.server.requests(token)
            self.server.forget(token)
        child_started, child_denied = log.started(), log.denied()
        parent = Log(hooks.lines)
        for call in sorted(parent.started()):
            name = next(t for t, c in sc.CALL_OF_TOOL.items() if c == call)
            if name not in sc.READ_ONLY and call in child_started:
                found.append(f"resume ran {name} ({call}) again: it had started before the crash")
            if call in child_denied:
                found.append(f"resume ran {name} ({call}), which the person had denied")
        for i, ((wire, body), (records, lines)) in enumerate(zip(requests, snaps, strict=True)):
            try:
                msgs = convert(DIALECT[wire], body)
            except (ValueError, KeyError, TypeError) as exc:
                found.append(f"request {i} does not read back as {wire}: {exc}")
                continue
            problems = validate_history(msgs, wire=wire)
            if problems:
                found.append(f"request {i} refused by the {wire} validator: {problems[0]}")
            calls, results = told(wire, body)
            before = Log(lines)
            # results the resume itself saved count only for the calls it ran or decided; any
            # other text it saved (a call it settled for the model) must follow the rules
            acted = before.started() | {p[1] for p in (x.split() for x in lines) if p[0] == "D"}
            kept = crashed[0] + [r for r in records if _result_of(r) in acted]
            for call, name in calls:
                problem = _told_problem(call, name, results.get(call), kept, crashed[1],
                                        started=child_started, denied=child_denied)
                if problem:
                    found.append(f"request {i}: {problem}")


def _result_of(record: Any) -> str | None:
    """The call id a stored row answers (None for a row that is not a tool result)."""
    m = json.loads(record.json)
    return m.get("tool_call_id") if m.get("role") == "tool" else None


def _told_problem(call: str, name: str, text: str | None, records: list[Any], marks: dict[str, Any],
                  *, started: set[str], denied: set[str]) -> str | None:
    """What is wrong with what the model reads for ``call`` (None when it agrees with the store)."""
    if text is None:
        return f"call {call} ({name}) has no result in the request"
    saved = []
    for r in records:
        m = json.loads(r.json)
        if m.get("role") == "tool" and m.get("tool_call_id") == call:
            c = m.get("content")
            saved.append(c if isinstance(c, str) else "".join(p.get("text", "") for p in c))
    mark = marks.get(call)
    state = mark.state if mark is not None else None
    got = classify(text)
    if saved:
        if text not in saved:
            return f"call {call} ({name}) has a saved result but the model reads {got}: {text[:80]!r}"
        return None
    if call in denied or state == "denied":
        want = "denied"
    elif state == "stopped":
        want = "stopped"
    elif name in sc.READ_ONLY:
        want = "read_only"
    elif call in started or state in STARTED_MARKS:
        want = "may_have_run"
    else:
        want = "not_answered"  # never started, no result, not denied: it must not be told it ran
    if got != want:
        return f"call {call} ({name}, mark {state}) should read as {want}, reads as {got}: {text[:80]!r}"
    return None


def choose(points: list[Point], budget: int | None, offset: int = 0) -> list[int]:
    """Every point (``budget`` None), or about ``budget`` of them spread evenly over the run and
    over every kind of point, shifted by ``offset`` so combinations cover different points."""
    n = len(points)
    if budget is None or budget >= n:
        return list(range(1, n + 1))
    chosen: set[int] = set()
    stride = n / budget
    start = (offset * 0.37) % stride
    i = start
    while i < n:
        chosen.add(int(i) + 1)
        i += stride
    by_kind: dict[str, list[int]] = {}
    for p in points:
        by_kind.setdefault(p.kind, []).append(p.n)
    for ns in by_kind.values():
        if not chosen & set(ns):
            chosen.add(ns[(offset * 7) % len(ns)])
    return sorted(chosen)


def wait_for(predicate: Callable[[], bool], limit: float = 10.0) -> None:
    deadline = time.monotonic() + limit
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.01)
