"""A real browser: JupyterLab on 127.0.0.1, Debian's Chromium driven by Playwright.

It opens the crash-and-resume notebook, runs every cell, clicks Repair in the HistoryView,
waits for the repaired rows and saves a screenshot under ``test-output/``. Without Chromium the
test skips locally with the reason; under CI (CI=true) a missing browser is a failure, since
``.ci/run`` installs it.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
OUTPUT = REPO / "test-output"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def _require_browser() -> None:
    missing = []
    if not Path(CHROMIUM).exists():
        missing.append("chromium (apt-get install chromium)")
    for mod in ("playwright", "jupyterlab"):
        try:
            __import__(mod)
        except ImportError:
            missing.append(f"{mod} (pip install {mod})")
    if missing:
        reason = "real-browser test needs " + ", ".join(missing)
        if os.environ.get("CI") == "true":
            pytest.fail(reason + "; .ci/run should have installed it")
        pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    _require_browser()
    root = tmp_path / "nb"
    root.mkdir()
    # a copy, so autosave never writes outputs into the repository's notebooks
    shutil.copy(REPO / "notebooks" / "02-crash-and-resume.ipynb", root)
    config = tmp_path / "jupyter-config"
    (config / "labconfig").mkdir(parents=True)
    (config / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}})
    )
    port = _free_port()
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config), IPYTHONDIR=str(tmp_path / "ipython"))
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
            f"--port={port}", f"--ServerApp.root_dir={root}", "--IdentityProvider.token=",
            "--ServerApp.password=", "--LabApp.expose_app_in_browser=True",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("JupyterLab did not start") from None
                time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()



def _open_notebook(p: Any, tmp_path: Path, lab: str, name: str) -> tuple[Any, Any]:
    """Debian's Chromium (headless, no background networking) with the notebook open and its
    kernel connected."""
    ctx = p.chromium.launch_persistent_context(
        str(tmp_path / "profile"),
        executable_path=CHROMIUM,
        headless=True,
        args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
        ],
        viewport={"width": 1400, "height": 1000},
    )
    page = ctx.new_page()
    page.goto(f"{lab}/lab/tree/{name}")
    page.wait_for_function(
        "window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel?.connectionStatus === 'connected'",
        timeout=120_000,
    )
    return ctx, page


def test_repair_in_jupyterlab(lab, tmp_path):
    from playwright.sync_api import sync_playwright

    OUTPUT.mkdir(exist_ok=True)
    shot = OUTPUT / "crash-and-resume-repaired.png"
    with sync_playwright() as p:
        ctx, page = _open_notebook(p, tmp_path, lab, "02-crash-and-resume.ipynb")
        try:
            page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
            repair = page.locator(".widget-button", has_text="Repair")
            repair.wait_for(timeout=120_000)
            repair.scroll_into_view_if_needed()
            repair.click()
            status = page.locator(".widget-label", has_text="repaired:")
            status.first.wait_for(timeout=60_000)
            # the cards: a badge per kind of change on the rows repair touched
            badges = page.locator(".pk-view .pk-card .pk-badge[class*='pk-k-'] >> visible=true")
            badges.first.wait_for(timeout=60_000)
            kinds = sorted({
                c[len("pk-k-"):] for i in range(badges.count())
                for c in (badges.nth(i).get_attribute("class") or "").split() if c.startswith("pk-k-")
            })
            # the buttons at the top of the picture, the tables and the highlighted row under them
            repair.evaluate("el => el.scrollIntoView({block: 'start'})")
            page.wait_for_timeout(300)
            page.screenshot(path=str(shot), full_page=False)
        finally:
            ctx.close()
    assert kinds == ["added_interrupted_result"], kinds
    assert shot.exists() and shot.stat().st_size > 10_000


LONG = 10_000


def _long_history_store(path: Path) -> None:
    """A 10,000-message agent history with breaks every so often, saved as a notebook's store."""
    import providerkit_nb as pk

    msgs: list[pk.Message] = [pk.SystemMessage("You are a careful coding agent.")]
    turn = 0
    while len(msgs) < LONG:
        turn += 1
        msgs.append(pk.UserMessage(f"Step {turn}: fix module_{turn}.py"))
        calls = [pk.ToolCall(f"call_{turn}_{i}", "read_file", f'{{"path": "m{turn}_{i}.py"}}') for i in range(2)]
        msgs.append(pk.AssistantMessage("Let me look.", tool_calls=calls))
        broken = turn % 25 == 0  # the process died before the second result was saved
        for c in calls[: 1 if broken else 2]:
            msgs.append(pk.ToolMessage(c.id, c.name, f"contents of {c.id}"))
        msgs.append(pk.AssistantMessage(f"Fixed step {turn}."))
    with pk.NotebookStore(path) as store:
        for m in msgs[:LONG]:
            store.save("long", m)


def _notebook(path: Path) -> None:
    import nbformat

    cells = [
        # 0: set up
        "import providerkit_nb as pk\n"
        "import providerkit_nb.notebook.widgets  # pandas and ipywidgets: once per kernel, not per view\n"
        "from providerkit_nb import simulate\n"
        "store = pk.NotebookStore('long.providerkit.sqlite')\n"
        "def write_file(args):\n"
        "    return 'wrote ' + args['path']\n"
        "tools = pk.ToolRegistry([pk.define_tool('write_file', 'Write a file.', {'type': 'object', "
        "'properties': {'path': {'type': 'string'}}, 'required': ['path']}, write_file)])",
        # 1: the long history (timed: run to painted)
        "import time\n"
        "t0 = time.perf_counter(); history = store.load('long'); t1 = time.perf_counter()\n"
        "view = pk.HistoryView(history, is_read_only=lambda name: name == 'read_file', title='long')\n"
        "print(f'KERNEL load={t1 - t0:.3f} build={time.perf_counter() - t1:.3f}')\n"
        "view",
        # 2: a call that waits for the Approve click
        "provider = simulate.ScriptedProvider([simulate.call_turn([('write_file', {'path': 'b.txt'})]), "
        "simulate.text_turn('done')])\n"
        "convo = pk.Conversation(store, 'approve-me', provider, tools, display=False, approve='ask')\n"
        "turn = convo.send('Write b.txt')\n"
        "print('RESULT:', [m.content for m in store.load('approve-me') if m.role == 'tool'], turn.message.content)",
    ]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))


# Not awaited: the command resolves only when the cell finishes, and the approval cell waits for
# a click that comes after this returns.
_RUN_CELL = """(i) => {
  const panel = window.jupyterapp.shell.currentWidget;
  panel.content.activeCellIndex = i;
  window.jupyterapp.commands.execute('notebook:run-cell');
  return true;
}"""


def test_long_history_and_approve_in_jupyterlab(lab, tmp_path):
    """A 10,000-message history: time from running the cell to the table painted, and Repair
    (measured and reported, not asserted: the limits live in bench/views.py); then a call that
    waits for approval, approved by clicking the widget's Approve button."""
    from playwright.sync_api import sync_playwright

    root = tmp_path / "nb"
    _long_history_store(root / "long.providerkit.sqlite")
    _notebook(root / "long-and-approve.ipynb")
    OUTPUT.mkdir(exist_ok=True)
    shot = OUTPUT / "long-history-repaired.png"
    shot_approval = OUTPUT / "approval-widget.png"
    timings: dict[str, float] = {}
    with sync_playwright() as p:
        ctx, page = _open_notebook(p, tmp_path, lab, "long-and-approve.ipynb")
        try:
            page.evaluate(_RUN_CELL, 0)
            page.wait_for_function(
                "window.jupyterapp.shell.currentWidget.content.widgets[0].model.executionCount !== null",
                timeout=120_000,
            )
            started = time.monotonic()
            page.evaluate(_RUN_CELL, 1)
            before_rows = page.locator(".pk-view .pk-row >> visible=true")
            before_rows.first.wait_for(timeout=120_000)
            timings["run to table painted"] = time.monotonic() - started
            painted = before_rows.count()
            kernel = page.locator(".jp-OutputArea-output", has_text="KERNEL load=").inner_text()
            for part in kernel.split()[1:]:  # where the time went, as the kernel measured it
                key, value = part.split("=")
                timings[f"of which in the kernel: {key}"] = float(value)

            repair = page.locator(".widget-button", has_text="Repair")
            repair.scroll_into_view_if_needed()
            started = time.monotonic()
            repair.click()
            page.locator(".widget-label", has_text="repaired:").first.wait_for(timeout=60_000)
            changed = page.locator(".pk-view .pk-card .pk-badge[class*='pk-k-'] >> visible=true")
            changed.first.wait_for(timeout=60_000)
            timings["Repair click to repaired rows"] = time.monotonic() - started
            kinds = sorted({
                c[len("pk-k-"):] for i in range(changed.count())
                for c in (changed.nth(i).get_attribute("class") or "").split() if c.startswith("pk-k-")
            })
            repair.evaluate("el => el.scrollIntoView({block: 'start'})")
            page.wait_for_timeout(300)
            page.screenshot(path=str(shot), full_page=False)

            page.evaluate(_RUN_CELL, 2)
            approve = page.locator(".pk-approval .widget-button", has_text="Approve")
            approve.wait_for(timeout=60_000)
            approve.scroll_into_view_if_needed()
            page.screenshot(path=str(shot_approval), full_page=False)
            approve.click()
            result = page.locator(".jp-OutputArea-output", has_text="RESULT:")
            result.wait_for(timeout=60_000)
            printed = result.inner_text()
        finally:
            ctx.close()
    print("\nlong history in Chromium: " + ", ".join(f"{k} {v:.2f} s" for k, v in timings.items()))
    (OUTPUT / "long-history-timings.json").write_text(json.dumps(timings, indent=2))
    assert 0 < painted <= 2 * 100 + 50  # one page of rows, not 10,000
    assert kinds == ["added_interrupted_result"], kinds
    assert "wrote b.txt" in printed and "done" in printed
    assert shot.exists() and shot.stat().st_size > 10_000


def test_a_finding_link_in_the_widget_scrolls_to_its_card(lab, tmp_path):
    """The inspection of a Claude Code session (its WebSearch result cut out) shown in JupyterLab:
    the static cards (hidden where the widget renders) and the widget are in one document, yet
    no id occurs twice, and the widget's link to the lost call lands on the widget's own card."""
    import nbformat
    from playwright.sync_api import sync_playwright

    src = REPO.parent / "shared" / "transcripts" / "upstream" / "claude-code" / "tool_heavy.jsonl"
    if not src.exists():
        pytest.skip("the upstream transcripts are not next to the checkout")
    lines = src.read_text().splitlines(keepends=True)
    victim = next(b["id"] for x in lines for b in (json.loads(x).get("message") or {}).get("content") or []
                  if isinstance(b, dict) and b.get("name") == "WebSearch")
    root = tmp_path / "nb"
    (root / "session.jsonl").write_text("".join(x for x in lines if f'"tool_use_id":"{victim}"' not in x.replace(" ", "")))
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import providerkit_nb as pk\nins = pk.inspect('session.jsonl')\nins")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(root / "inspect.ipynb"))
    OUTPUT.mkdir(exist_ok=True)
    with sync_playwright() as p:
        ctx, page = _open_notebook(p, tmp_path, lab, "inspect.ipynb")
        try:
            page.evaluate(_RUN_CELL, 0)
            link = page.locator(".widget-html .pk-findings li.pk-fk-lost_call a[href*='-m-'] >> visible=true").first
            link.wait_for(timeout=120_000)
            ids = page.evaluate("() => [...document.querySelectorAll('.pk-view [id]')].map(e => e.id)")
            target = link.get_attribute("href")[1:]
            page.evaluate("() => document.querySelector('.jp-WindowedPanel-outer, .jp-Notebook').scrollTo(0, 0)")
            link.click()
            page.wait_for_timeout(500)
            landed = page.evaluate("""(id) => { const e = document.getElementById(id); const r = e.getBoundingClientRect();
                return {visible: r.bottom > 0 && r.top < window.innerHeight, widget: !!e.closest('.widget-html')}; }""",
                                   target)
            page.screenshot(path=str(OUTPUT / "jupyterlab-finding-link.png"), full_page=False)
            # the widget's search marks every match and steps through them
            box = page.locator(".widget-text input[placeholder^='search text']")
            box.fill("xterm")
            box.press("Enter")
            marks = page.locator(".widget-html mark.pk-mark")
            marks.first.wait_for(timeout=30_000)
            step = page.locator(".widget-button", has_text="match \u25bc")
            step.click()
            step.click()
            page.locator(".widget-label", has_text="match 2 of").wait_for(timeout=30_000)
            current = page.locator(".widget-html mark.pk-mark.pk-cur")
            current.scroll_into_view_if_needed()
            said = (current.count(), current.first.inner_text().lower(), marks.count())
            page.screenshot(path=str(OUTPUT / "jupyterlab-widget-search.png"), full_page=False)
        finally:
            ctx.close()
    assert ids and len(ids) == len(set(ids)), [i for i in ids if ids.count(i) > 1][:5]
    assert landed == {"visible": True, "widget": True}
    assert said[0] == 1 and said[1] == "xterm" and said[2] > 3
