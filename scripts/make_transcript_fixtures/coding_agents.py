"""Make broken coding-agent sessions with the real CLIs, offline, and what each one's own resume did.

    python scripts/make_transcript_fixtures/coding_agents.py [claude_code codex opencode gemini_cli edits]

Each CLI (installed from the npm registry into ``.cache/agent-clis/``, see ``install()``) runs in
a throwaway home against the scripted model of ``tests/transcripts/agent_servers.py`` on
127.0.0.1, which asks for ``sleep 30; echo done > marker``. Once the call has been sent the CLI's
whole process group gets SIGKILL while the command runs. The session it left is copied to
``tests/transcripts/fixtures/coding_agents/<tool>/killed...``; then the CLI's own resume runs
once (the model now only answers in text) and the session after it is copied next to it, with
the request body the resume sent (``...resume_request.json``). Versions go to VERSIONS.json.

``subagents`` makes ``claude_code/subagents_killed.jsonl`` and its sub-agents' files (in
``subagents_killed/subagents/``, as Claude Code lays them out beside a session): the model hands
the work to a sub-agent (an Agent call), which runs ``ls`` and hands part of it to a second
sub-agent, which reads ``app.py`` and runs ``sleep 30; ...``; the CLI's process group gets SIGKILL
while that runs, so a call is left open at each of the three levels (``SUBAGENT_SCRIPTS``).

``edits`` makes ``claude_code/edits.jsonl`` instead: a whole session, run to its end, in which the
scripted model reads a small ``app.py``, edits it, writes ``NOTES.md`` and runs ``cat NOTES.md``
(``EDIT_SCRIPT``), so the viewer's per-tool layouts meet Claude Code's own records of those calls.

The same functions (``Agent``, ``run_killed``, ``resume``) drive the real-CLI tests.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.transcripts.agent_servers import ScriptedServer  # noqa: E402

CACHE = ROOT / ".cache" / "agent-clis"
OUT = ROOT / "tests" / "transcripts" / "fixtures" / "coding_agents"
PACKAGES = {
    "claude_code": "@anthropic-ai/claude-code",
    "codex": "@openai/codex",
    "opencode": "opencode-ai",
    "gemini_cli": "@google/gemini-cli",
}
BINARIES = {"claude_code": "claude", "codex": "codex", "opencode": "opencode", "gemini_cli": "gemini"}
PROMPT = "Write the marker file"
RESUME_PROMPT = "Continue"


def install(tools: list[str] | None = None) -> Path:
    """npm install the CLIs into the cache (once; a second call finds them there)."""
    tools = tools or list(PACKAGES)
    missing = [PACKAGES[t] for t in tools if not (CACHE / "node_modules" / ".bin" / BINARIES[t]).exists()]
    if missing:
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", *missing],
                       check=True, stdout=subprocess.DEVNULL)
    return CACHE / "node_modules" / ".bin"


def version(tool: str) -> str:
    pkg = CACHE / "node_modules" / PACKAGES[tool] / "package.json"
    return str(json.loads(pkg.read_text())["version"])


@dataclass
class Agent:
    """One CLI in its own throwaway home: how to run it, resume it and find its session."""

    tool: str
    root: Path
    allowed_tools: str = "Bash"  # Claude Code's --allowedTools

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def project(self) -> Path:
        return self.root / "project"

    def prepare(self, url: str) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        self.project.mkdir(parents=True, exist_ok=True)
        if self.tool == "codex":
            (self.home / ".codex").mkdir(exist_ok=True)
            (self.home / ".codex" / "config.toml").write_text(
                'model = "gpt-scripted"\nmodel_provider = "local"\napproval_policy = "never"\n'
                'sandbox_mode = "danger-full-access"\n\n[model_providers.local]\nname = "local"\n'
                f'base_url = "{url}/v1"\nwire_api = "responses"\nenv_key = "LOCAL_API_KEY"\n'
            )
        elif self.tool == "opencode":
            (self.project / "opencode.json").write_text(json.dumps({
                "$schema": "https://opencode.ai/config.json",
                "provider": {"local": {
                    "npm": "@ai-sdk/openai-compatible", "name": "Local",
                    "options": {"baseURL": f"{url}/v1", "apiKey": "local-fake-key"},
                    "models": {"scripted": {"name": "scripted", "tool_call": True}}}},
                "model": "local/scripted", "small_model": "local/scripted",
                "permission": {"bash": "allow", "edit": "allow"}, "autoupdate": False, "share": "disabled",
            }, indent=1))
        elif self.tool == "gemini_cli":
            (self.home / ".gemini").mkdir(exist_ok=True)
            (self.home / ".gemini" / "settings.json").write_text(json.dumps({
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "general": {"disableAutoUpdate": True}, "privacy": {"usageStatisticsEnabled": False},
                "telemetry": {"enabled": False},
            }, indent=1))

    def env(self, url: str) -> dict[str, str]:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home), "LANG": "C.UTF-8",
               "TERM": "dumb", "NO_COLOR": "1"}
        if self.tool == "claude_code":
            env.update(ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="sk-ant-local-fake-key",
                       CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1")
        elif self.tool == "codex":
            env.update(CODEX_HOME=str(self.home / ".codex"), LOCAL_API_KEY="local-fake-key")
        elif self.tool == "opencode":
            # It looks its plugin up in the npm registry on start; a closed local port keeps the run
            # offline (it goes on without the lookup).
            env.update(OPENCODE_DISABLE_AUTOUPDATE="1", OPENCODE_DISABLE_SHARE="1",
                       npm_config_registry="http://127.0.0.1:9/", NPM_CONFIG_REGISTRY="http://127.0.0.1:9/",
                       npm_config_fetch_retries="0", npm_config_offline="true")
        elif self.tool == "gemini_cli":
            env.update(GOOGLE_GEMINI_BASE_URL=url, GEMINI_API_KEY="local-fake-key",
                       GEMINI_CLI_TRUST_WORKSPACE="true")
        return env

    def command(self, bin_dir: Path, prompt: str, session: str | None = None) -> list[str]:
        b = str(bin_dir / BINARIES[self.tool])
        if self.tool == "claude_code":
            return [b, "-p", *(["--resume", session] if session else []), prompt, "--allowedTools", self.allowed_tools]
        if self.tool == "codex":
            if session:
                return [b, "exec", "resume", "--skip-git-repo-check", session, prompt]
            return [b, "exec", "--skip-git-repo-check", prompt]
        if self.tool == "opencode":
            return [b, "run", *(["--session", session] if session else []), prompt]
        return [b, *(["--resume", session] if session else []), "--approval-mode", "yolo", "-p", prompt]

    def session_files(self) -> list[Path]:
        """Where each tool keeps its sessions."""
        if self.tool == "claude_code":
            return sorted((self.home / ".claude" / "projects").rglob("*.jsonl"))
        if self.tool == "codex":
            return sorted((self.home / ".codex" / "sessions").rglob("rollout-*.jsonl"))
        if self.tool == "opencode":
            return [p for p in [self.home / ".local" / "share" / "opencode" / "opencode.db"] if p.exists()]
        return sorted((self.home / ".gemini" / "tmp").rglob("session-*.json*"))

    def session_id(self) -> str:
        """The id the tool's resume takes."""
        if self.tool == "opencode":
            import sqlite3

            db = self.session_files()[0]
            with sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True) as c:
                return str(c.execute("select id from session order by time_created desc limit 1").fetchone()[0])
        f = self.session_files()[-1]
        if self.tool == "codex":
            return str(json.loads(f.open().readline())["payload"]["id"])
        if self.tool == "gemini_cli":
            return "latest"
        return f.stem


def run_killed(agent: Agent, bin_dir: Path, server: ScriptedServer, *, after: float = 4.0,
               timeout: float = 120.0) -> subprocess.Popen[bytes]:
    """Run the CLI until the model has asked for the command, let it run ``after`` seconds, then
    SIGKILL the whole process group (a wrapper's native child must not survive)."""
    agent.prepare(server.url)
    log = open(agent.root / f"{agent.tool}.log", "wb")
    p = subprocess.Popen(agent.command(bin_dir, PROMPT), cwd=agent.project, env=agent.env(server.url),
                         stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    t0 = time.monotonic()
    while not server.calls_sent and p.poll() is None and time.monotonic() - t0 < timeout:
        time.sleep(0.2)
    if not server.calls_sent:
        _kill(p)
        raise RuntimeError(f"{agent.tool} never asked for the command; see {log.name}: "
                           + (agent.root / f"{agent.tool}.log").read_text(errors="replace")[-2000:])
    time.sleep(after)
    _kill(p)
    log.close()
    return p


def _kill(p: subprocess.Popen[Any]) -> None:
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # the group is gone already
    p.wait()


def resume(agent: Agent, bin_dir: Path, server: ScriptedServer, session: str, *,
           prompt: str = RESUME_PROMPT, timeout: float = 180.0) -> subprocess.CompletedProcess[str]:
    """The CLI's own resume of ``session``, once, to its end."""
    agent.prepare(server.url)  # the config names the server's port
    p = subprocess.Popen(agent.command(bin_dir, prompt, session), cwd=agent.project, env=agent.env(server.url),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(p)
        out, err = p.communicate()
        raise RuntimeError(f"{agent.tool} resume did not finish in {timeout:.0f} s: {err[-2000:]}") from None
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def model_requests(server: ScriptedServer) -> list[dict[str, Any]]:
    """The conversation requests (not titles, token counts...)."""
    keys = ("messages", "input", "contents")
    return [r for r in server.requests if any(k in r["body"] for k in keys)]


def _copy_session(agent: Agent, dest: Path, stem: str) -> list[str]:
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    files = agent.session_files()
    for k, f in enumerate(files):
        if agent.tool == "opencode":
            import sqlite3

            target = dest / f"{stem}.db"
            target.unlink(missing_ok=True)
            with sqlite3.connect(f"{f.resolve().as_uri()}?mode=ro", uri=True) as src, sqlite3.connect(target) as dst:
                src.backup(dst)  # one file, the WAL folded in
            with sqlite3.connect(target) as dst:
                dst.execute("pragma journal_mode=delete")
                dst.execute("vacuum")
            written.append(target.name)
        else:
            # a tool that starts a new file on resume (Gemini CLI may) gets one fixture per file
            target = dest / f"{stem}{'' if k == len(files) - 1 else f'-{k + 1}'}{''.join(f.suffixes[-1:])}"
            shutil.copyfile(f, target)
            written.append(target.name)
    return written


NEUTRAL_ROOT = "/home/user/work"  # what the fixtures show instead of the throwaway folder they ran in


def scrub(dest: Path, work: Path) -> None:
    """Replace the throwaway folder's path in every written file (JSON text and SQLite text
    columns alike) by ``NEUTRAL_ROOT``, so the fixtures carry no path of the machine that made them."""
    import sqlite3

    old = str(work.resolve())
    for f in dest.iterdir():
        if f.suffix == ".db":
            with sqlite3.connect(f) as c:
                for (table,) in c.execute("select name from sqlite_master where type='table'").fetchall():
                    for col in [r[1] for r in c.execute(f'pragma table_info("{table}")') if r[2].lower() == "text"]:
                        c.execute(f'update "{table}" set "{col}" = replace("{col}", ?, ?) where "{col}" like ?',
                                  (old, NEUTRAL_ROOT, f"%{old}%"))
            with sqlite3.connect(f) as c:
                c.execute("vacuum")
        else:
            text = f.read_text(encoding="utf-8")
            f.write_text(text.replace(old, NEUTRAL_ROOT).replace(json.dumps(old)[1:-1], NEUTRAL_ROOT), encoding="utf-8")


def make(tool: str, bin_dir: Path, work: Path) -> dict[str, Any]:
    agent = Agent(tool, work / tool)
    shutil.rmtree(agent.root, ignore_errors=True)
    dest = OUT / tool
    shutil.rmtree(dest, ignore_errors=True)
    with ScriptedServer() as server:
        run_killed(agent, bin_dir, server)
        killed = _copy_session(agent, dest, "killed_mid_tool")
    session = agent.session_id()
    with ScriptedServer(tools=False) as server:
        done = resume(agent, bin_dir, server, session)
        after = _copy_session(agent, dest, "after_own_resume")
        sent = model_requests(server)
    (dest / "resume_request.json").write_text(
        json.dumps(sent[-1]["body"] if sent else None, indent=1, ensure_ascii=False) + "\n")
    scrub(dest, work)
    return {"tool": tool, "version": version(tool), "killed": killed, "after_own_resume": after,
            "resume_exit": done.returncode, "resume_requests": len(sent)}


APP_PY = """\"\"\"A tiny shop: prices, a cart and its total.\"\"\"

from dataclasses import dataclass, field

TAX_RATE = 0.2


@dataclass
class Item:
    name: str
    price: float
    quantity: int = 1


@dataclass
class Cart:
    items: list[Item] = field(default_factory=list)

    def add(self, item: Item) -> None:
        self.items.append(item)

    def subtotal(self) -> float:
        total = 0
        for item in self.items:
            total = total + item.price
        return total

    def total(self) -> float:
        return self.subtotal() * (1 + TAX_RATE)


if __name__ == "__main__":
    cart = Cart()
    cart.add(Item("tea", 3.5, 2))
    print(f"total: {cart.total():.2f}")
"""
EDIT_OLD = """        total = 0
        for item in self.items:
            total = total + item.price
        return total"""
EDIT_NEW = """        # the quantity counts: two teas cost twice one
        return sum(item.price * item.quantity for item in self.items)"""
NOTES_MD = """# Notes

- `Cart.subtotal` now multiplies each price by its quantity.
- Tax stays at 20 %, applied once in `Cart.total`.
- Next: a test for an empty cart.
"""
EDIT_PROMPT = "Fix the subtotal in app.py so quantities count, then note what changed in NOTES.md"


def edit_script(project: Path) -> list[tuple[str, dict[str, Any]]]:
    """Read -> Edit -> Write -> Bash, with the absolute paths Claude Code's file tools take."""
    app, notes = str(project / "app.py"), str(project / "NOTES.md")
    return [
        ("Read", {"file_path": app}),
        ("Edit", {"file_path": app, "old_string": EDIT_OLD, "new_string": EDIT_NEW}),
        ("Write", {"file_path": notes, "content": NOTES_MD}),
        ("Bash", {"command": "cat NOTES.md", "description": "Show the notes"}),
    ]


def run_edits(bin_dir: Path, root: Path, *, timeout: float = 180.0) -> Agent:
    """Claude Code, run to its end in ``root``, reading, editing and writing files and running a
    command as ``edit_script`` says; raises unless it made the four calls and the edit landed."""
    agent = Agent("claude_code", root, allowed_tools="Read,Edit,Write,Bash")
    shutil.rmtree(agent.root, ignore_errors=True)
    agent.project.mkdir(parents=True)
    (agent.project / "app.py").write_text(APP_PY)
    script = edit_script(agent.project)
    with ScriptedServer(script=script) as server:
        agent.prepare(server.url)
        done = subprocess.run(agent.command(bin_dir, EDIT_PROMPT), cwd=agent.project, env=agent.env(server.url),
                              capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=timeout)
        sent = [c["name"] for c in server.calls_sent]
    if done.returncode != 0 or sent != [name for name, _ in script]:
        raise RuntimeError(f"claude_code edits: exit {done.returncode}, calls {sent}: {done.stderr[-2000:]}")
    if (agent.project / "app.py").read_text() != APP_PY.replace(EDIT_OLD, EDIT_NEW):
        raise RuntimeError("claude_code edits: app.py was not edited as scripted")
    return agent


def make_edits(bin_dir: Path, work: Path) -> dict[str, Any]:
    """``claude_code/edits.jsonl``: the session ``run_edits`` left, scrubbed."""
    agent = run_edits(bin_dir, work / "claude_code_edits")
    files = agent.session_files()
    dest = OUT / "claude_code"
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:  # scrub works on a folder: only this file goes through it
        shutil.copyfile(files[-1], Path(tmp) / "edits.jsonl")
        scrub(Path(tmp), work)
        shutil.copyfile(Path(tmp) / "edits.jsonl", dest / "edits.jsonl")
    return {"tool": "claude_code", "version": version("claude_code"), "edits": ["edits.jsonl"], "killed": [],
            "after_own_resume": []}


SUB_PROMPT = "Look at the project with a helper"
SUB_A = "List the files with ls, then ask a second helper to read app.py"
SUB_B = "Read app.py, then wait for the marker"


def subagent_scripts(project: Path) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """The main conversation's script and each sub-agent's, keyed by the prompt each starts with."""
    return {
        SUB_PROMPT: [("Agent", {"description": "Survey the project", "prompt": SUB_A, "subagent_type": "general-purpose"})],
        SUB_A: [("Bash", {"command": "ls", "description": "List the files"}),
                ("Agent", {"description": "Read app.py", "prompt": SUB_B, "subagent_type": "general-purpose"})],
        SUB_B: [("Read", {"file_path": str(project / "app.py")}),
                ("Bash", {"command": COMMAND_SLEEP, "description": "Wait, then write the marker file"})],
    }


COMMAND_SLEEP = "sleep 30; echo done > marker"


def run_subagents(bin_dir: Path, root: Path, *, after: float = 3.0, timeout: float = 180.0) -> Agent:
    """Claude Code with two nested sub-agents (``subagent_scripts``), killed while the inner one's
    command runs; raises unless the three levels made their calls."""
    agent = Agent("claude_code", root, allowed_tools="Agent,Task,Bash,Read")
    shutil.rmtree(agent.root, ignore_errors=True)
    agent.project.mkdir(parents=True)
    (agent.project / "app.py").write_text(APP_PY)
    with ScriptedServer(by_prompt=subagent_scripts(agent.project)) as server:
        agent.prepare(server.url)
        log = open(agent.root / "claude_code.log", "wb")
        p = subprocess.Popen(agent.command(bin_dir, SUB_PROMPT), cwd=agent.project, env=agent.env(server.url),
                             stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        t0 = time.monotonic()
        while p.poll() is None and time.monotonic() - t0 < timeout and not any(
                c["name"] == "Bash" for c in server.calls_sent[2:]):
            time.sleep(0.2)
        time.sleep(after)
        _kill(p)
        log.close()
        sent = [c["name"] for c in server.calls_sent]
    if sent != ["Agent", "Bash", "Agent", "Read", "Bash"]:
        raise RuntimeError(f"claude_code sub-agents: calls {sent}; see {log.name}")
    return agent


def make_subagents(bin_dir: Path, work: Path) -> dict[str, Any]:
    """``claude_code/subagents_killed.jsonl`` and ``claude_code/subagents_killed/subagents/*``, scrubbed."""
    agent = run_subagents(bin_dir, work / "claude_code_subagents")
    main = [f for f in agent.session_files() if f.parent.name != "subagents"]
    assert len(main) == 1, main
    dest = OUT / "claude_code"
    shutil.rmtree(dest / "subagents_killed", ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        flat = Path(tmp)
        shutil.copyfile(main[0], flat / "subagents_killed.jsonl")
        subs = sorted(main[0].with_suffix("").joinpath("subagents").iterdir())
        for f in subs:
            shutil.copyfile(f, flat / f.name)
        scrub(flat, work)
        shutil.copyfile(flat / "subagents_killed.jsonl", dest / "subagents_killed.jsonl")
        (dest / "subagents_killed" / "subagents").mkdir(parents=True)
        for f in subs:
            shutil.copyfile(flat / f.name, dest / "subagents_killed" / "subagents" / f.name)
    return {"tool": "claude_code", "version": version("claude_code"), "subagents": ["subagents_killed.jsonl"],
            "killed": [], "after_own_resume": []}


def record_versions(results: list[dict[str, Any]]) -> None:
    path = ROOT / "tests" / "transcripts" / "fixtures" / "VERSIONS.json"
    versions = json.loads(path.read_text())
    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    for r in results:
        for name in r.get("subagents", []):
            versions[f"coding_agents/{r['tool']}/{name}"] = {
                "script": "scripts/make_transcript_fixtures/coding_agents.py subagents",
                "written_by": f"npm {PACKAGES[r['tool']]} {r['version']} (node {node}) against the scripted "
                              "local model; the model hands the work to a sub-agent (Agent), which runs ls and hands "
                              "part of it to a second sub-agent, which reads app.py and runs sleep 30: SIGKILL while "
                              "that runs; the sub-agents' files are in subagents_killed/subagents/ as the CLI wrote them",
                "made": time.strftime("%Y-%m-%d", time.gmtime()),
            }
        if r.get("subagents"):
            continue
        for name in r.get("edits", []):
            versions[f"coding_agents/{r['tool']}/{name}"] = {
                "script": "scripts/make_transcript_fixtures/coding_agents.py edits",
                "written_by": f"npm {PACKAGES[r['tool']]} {r['version']} (node {node}) against the scripted "
                              "local model; a whole session run to its end: Read app.py, Edit it, Write NOTES.md, "
                              "Bash cat NOTES.md, then the model's Done.",
                "made": time.strftime("%Y-%m-%d", time.gmtime()),
            }
        if r.get("edits"):
            continue
        for name in r["killed"] + r["after_own_resume"] + ["resume_request.json"]:
            what = "killed with SIGKILL mid-tool" if name in r["killed"] else "after the CLI's own resume"
            if name == "resume_request.json":
                what = "the request body the CLI's own resume sent"
            versions[f"coding_agents/{r['tool']}/{name}"] = {
                "script": "scripts/make_transcript_fixtures/coding_agents.py",
                "written_by": f"npm {PACKAGES[r['tool']]} {r['version']} (node {node}) against the scripted "
                              f"local model; {what}",
            }
    path.write_text(json.dumps(dict(sorted(versions.items())), indent=2) + "\n")


def main(argv: list[str]) -> int:
    tools = argv or list(PACKAGES)
    bin_dir = install(sorted({"claude_code" if t in ("edits", "subagents") else t for t in tools}))
    results = []
    keep = os.environ.get("AGENT_FIXTURES_WORK")  # keep the homes to look at, else a temporary folder
    with tempfile.TemporaryDirectory(prefix="agent-fixtures-") as work:
        for tool in tools:
            maker = {"edits": make_edits, "subagents": make_subagents}.get(tool)
            r = maker(bin_dir, Path(keep or work)) if maker else make(tool, bin_dir, Path(keep or work))
            print(json.dumps(r))
            results.append(r)
    record_versions(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

