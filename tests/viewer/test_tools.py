"""Per-tool layouts of a call card: edits as diffs, reads with line numbers, commands, to-do lists.

The calls are literals in the shapes the coding agents write (Claude Code, Codex, OpenCode, Gemini
CLI, Cline; see ../shared/reference/transcript-formats.md), rendered through ``build_page`` as every
view renders them. Expected HTML is pinned here as literals, never produced by the code under test.
A session the Claude Code CLI itself wrote (``coding_agents/claude_code/edits.jsonl``) checks the
same layouts on its real records, with the expectations read from that file.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

import providerkit_nb as pk
from providerkit_nb.core.messages import ensure_messages
from providerkit_nb.viewer import build_page


def _card(name: str, arguments: Any, result: str | None = "ok", *, max_chars: int | None = None) -> str:
    """The card of one assistant message making one call (answered with ``result``)."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    msgs: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": name, "arguments": args}]},
    ]
    if result is not None:
        msgs.append({"role": "tool", "tool_call_id": "c1", "name": name, "content": result})
    return build_page(ensure_messages(msgs), max_chars=max_chars).rows[1].before_html


def _plain(card: str) -> str:
    """The card with code colouring taken out of its numbered lines (the lines' text as the
    uncoloured layout writes it), for tests about numbering, not colour."""
    def line(m: re.Match[str]) -> str:  # the text escaped as the uncoloured layout escapes it
        return f"{m.group(1)}{html.escape(html.unescape(m.group(2)))}</li>"

    def one(m: re.Match[str]) -> str:
        body = re.sub(r'<span class="[a-z0-9]+">|</span>', "", m.group(2))
        return m.group(1).replace(" pk-hl", "") + re.sub(r"(<li[^>]*>)(.*?)</li>", line, body) + "</ol>"
    return re.sub(r'(<ol class="pk-code pk-num pk-hl"[^>]*>)(.*?)</ol>', one, card, flags=re.S)


def _head(card: str) -> str:
    m = re.search(r'<div class="pk-callhead">(.*?)</div>', card)
    assert m is not None
    return m.group(1)


GENERIC_ARGS = '<div class="pk-lbl">arguments</div><pre class="pk-code">'  # today's card, kept for unknown tools
RAW = '<summary>arguments as written: <span class="pk-n">'


# --------------------------------------------------------------------------- edits


def test_a_claude_code_edit_is_a_diff_with_the_path_and_counts_in_its_head() -> None:
    card = _card("Edit", {
        "file_path": "/home/u/app/lib/view.ex",
        "old_string": "  def render(x) do\n    x\n  end",
        "new_string": "  def render(x) do\n    x |> wrap()\n  end",
    }, "The file /home/u/app/lib/view.ex has been updated successfully.")
    head = _head(card)
    assert '<code class="pk-gist pk-path">/home/u/app/lib/view.ex</code>' in head
    assert '<span class="pk-plus">+1</span> <span class="pk-minus">\u22121</span>' in head
    assert (
        '<pre class="pk-code pk-diff"><span>   def render(x) do</span>'
        '<del>-    x</del>'
        '<ins>+    x |&gt; wrap()</ins>'
        '<span>   end</span></pre>'
    ) in card
    assert RAW in card and "&quot;old_string&quot;" in card  # the raw arguments, one click away
    assert GENERIC_ARGS not in card
    assert "has been updated successfully." in card  # the result as it was


def test_replace_all_says_so_and_a_multiedit_shows_each_edit() -> None:
    card = _card("Edit", {"file_path": "a.py", "old_string": "foo", "new_string": "bar", "replace_all": True})
    assert '<span class="pk-badge">every occurrence</span>' in _head(card)
    card = _card("MultiEdit", {"file_path": "a.py", "edits": [
        {"old_string": "a = 1", "new_string": "a = 2"},
        {"old_string": "b = 1\nc = 1", "new_string": "c = 1", "replace_all": False}]})
    assert (
        '<em>@@ edit 1 of 2</em><del>-a = 1</del>'
        '<ins>+a = 2</ins><em>@@ edit 2 of 2</em>'
        '<del>-b = 1</del><span> c = 1</span>'
    ) in card
    assert '<span class="pk-plus">+1</span> <span class="pk-minus">\u22122</span>' in _head(card)


def test_a_long_edit_folds_and_shows_hunks_without_the_snippet_line_numbers() -> None:
    old = "\n".join(f"line {k}" for k in range(60))
    new = old.replace("line 5\n", "line five\n").replace("line 50\n", "line fifty\n")
    card = _card("Edit", {"file_path": "b.txt", "old_string": old, "new_string": new})
    # two hunks far apart: the second starts with a plain marker, not "@@ -48,7 +48,7 @@"
    assert '<em>@@ \u22ef</em>' in card
    assert "@@ -" not in card
    assert '<ins>+line fifty</ins>' in card
    # 17 lines: shown open (the diff is the point of the card)
    assert '<details class="pk-fold" open><summary>diff: <span class="pk-n">17 lines' in card


def test_the_edit_tools_of_opencode_gemini_cli_and_cline() -> None:
    opencode = _card("edit", {"filePath": "/p/a.ts", "oldString": "let a = 1", "newString": "const a = 1", "replaceAll": False})
    assert '<del>-let a = 1</del><ins>+const a = 1</ins>' in opencode
    assert '<code class="pk-gist pk-path">/p/a.ts</code>' in opencode
    gemini = _card("replace", {"file_path": "/p/b.py", "old_string": "x = 1", "new_string": "x = 2", "expected_replacements": 1})
    assert '<del>-x = 1</del><ins>+x = 2</ins>' in gemini
    # Cline: SEARCH/REPLACE blocks, in both spellings of the markers
    cline = _card("replace_in_file", {"path": "src/c.js", "diff": (
        "------- SEARCH\nconst a = 1;\n=======\nconst a = 2;\n+++++++ REPLACE\n"
        "<<<<<<< SEARCH\nlet b;\n=======\nlet b = 0;\n>>>>>>> REPLACE"
    )})
    assert (
        '<em>@@ edit 1 of 2</em><del>-const a = 1;</del>'
        '<ins>+const a = 2;</ins><em>@@ edit 2 of 2</em>'
        '<del>-let b;</del><ins>+let b = 0;</ins>'
    ) in cline
    assert '<code class="pk-gist pk-path">src/c.js</code>' in cline


def test_a_whole_file_written_shows_its_lines_numbered_and_its_count() -> None:
    for name, args in [
        ("Write", {"file_path": "/p/new.md", "content": "# Title\n\nbody\n"}),  # Claude Code
        ("write", {"filePath": "/p/new.md", "content": "# Title\n\nbody\n"}),  # OpenCode
        ("write_file", {"file_path": "/p/new.md", "content": "# Title\n\nbody\n"}),  # Gemini CLI
        ("write_to_file", {"path": "/p/new.md", "content": "# Title\n\nbody\n"}),  # Cline
    ]:
        card = _plain(_card(name, args))
        assert '<span class="pk-what">write whole file</span> <code class="pk-gist pk-path">/p/new.md</code>' in card, name
        assert '<span class="pk-plus">3 line(s)</span>' in card, name
        assert (
            '<ol class="pk-code pk-num" start="1"><li># Title</li><li></li><li>body</li></ol>'
        ) in card, name  # the final newline ends line 3; no empty line 4


def test_codex_apply_patch_as_a_custom_tool_call_and_run_by_a_shell_call() -> None:
    # the custom tool call: the patch is the raw input (the upstream rollout's shape)
    card = _card("apply_patch", "*** Begin Patch\n*** Add File: gamma.txt\n+synthetic\n*** End Patch", "Done!")
    assert (
        '<strong>*** Begin Patch</strong><strong>*** Add File: gamma.txt</strong>'
        '<ins>+synthetic</ins><strong>*** End Patch</strong>'
    ) in card
    assert '<code class="pk-gist pk-path">new gamma.txt</code>' in _head(card)
    # a shell call whose argv runs apply_patch; its output carries the exit code in metadata
    patch = "*** Begin Patch\n*** Update File: src/a.py\n@@ def f():\n-    return 1\n+    return 2\n*** End Patch\n"
    out = json.dumps({"output": "Success. Updated the following files:\nM src/a.py\n",
                      "metadata": {"exit_code": 0, "duration_seconds": 0.0}})
    card = _card("shell", {"command": ["apply_patch", patch], "workdir": "/w"}, out)
    assert (
        '<em>@@ def f():</em><del>-    return 1</del>'
        '<ins>+    return 2</ins>'
    ) in card
    assert '<code class="pk-gist pk-path">edit src/a.py</code>' in _head(card)
    assert '<span class="pk-badge pk-exit">exit 0</span>' in card
    # apply_patch as a function call (JSON "input") and OpenCode's patch tool ("patchText")
    for name, key in [("apply_patch", "input"), ("patch", "patchText")]:
        card = _card(name, {key: patch}, "Success.")
        assert '<del>-    return 1</del><ins>+    return 2</ins>' in card, name
        assert '<pre class="pk-code">Success.</pre>' in card, name  # not run by a shell: the plain result
    # and in a heredoc of exec_command
    card = _card("exec_command", {"cmd": "apply_patch <<'EOF'\n" + patch + "EOF"}, "Exit code: 0\nOutput:\nDone")
    assert '<ins>+    return 2</ins>' in card


# --------------------------------------------------------------------------- reads


def test_a_claude_code_read_is_numbered_in_a_gutter_with_its_range() -> None:
    result = "   135\u2192defp a do\n   136\u2192  :ok\n   137\u2192end\n\n<system-reminder>\nMalware check.\n</system-reminder>\n"
    card = _plain(_card("Read", {"file_path": "/p/lib/a.ex", "offset": 135, "limit": 3}, result))
    head = _head(card)
    assert '<span class="pk-what">read</span> <code class="pk-gist pk-path">/p/lib/a.ex</code>' in head
    assert '<span class="pk-lbl">offset 135, limit 3</span>' in head
    assert (
        '<div class="pk-lbl">lines 135\u2013137</div><ol class="pk-code pk-num" start="135">'
        '<li>defp a do</li><li>  :ok</li><li>end</li></ol>'
    ) in card
    # what the agent appended after the lines is kept, as text
    assert '<pre class="pk-code">&lt;system-reminder&gt;\nMalware check.\n&lt;/system-reminder&gt;</pre>' in card
    assert "\u2192" not in card.split("arguments as written")[-1]  # the arrows became the gutter


def test_numbers_that_skip_keep_their_own_values() -> None:
    card = _card("Read", {"file_path": "a.txt"}, "     1\u2192a\n     2\u2192b\n     9\u2192c")
    assert '<ol class="pk-code pk-num" start="1"><li value="1">a</li><li value="2">b</li><li value="9">c</li></ol>' in card


def test_the_reads_of_opencode_gemini_cli_and_cline() -> None:
    opencode = _plain(_card("read", {"filePath": "/p/a.ts"}, "<file>\n00001| import x\n00002| x()\n\n(End of file - total 2 lines)\n</file>"))
    assert '<ol class="pk-code pk-num" start="1"><li>import x</li><li>x()</li></ol>' in opencode
    assert "&lt;file&gt;" in opencode and "(End of file - total 2 lines)" in opencode
    # Gemini CLI returns the text as it is; its offset counts lines from 0
    gemini = _plain(_card("read_file", {"absolute_path": "/p/b.py", "offset": 10, "limit": 2}, "a = 1\nb = 2"))
    assert '<ol class="pk-code pk-num" start="11"><li>a = 1</li><li>b = 2</li></ol>' in gemini
    cline = _plain(_card("read_file", {"path": "src/c.js"}, "const c = 3;"))
    assert '<ol class="pk-code pk-num" start="1"><li>const c = 3;</li></ol>' in cline
    truncated = _plain(_card("read_file", {"absolute_path": "/p/big.py", "offset": 100, "limit": 2}, (
        "IMPORTANT: The file content has been truncated.\nStatus: Showing lines 101-102 of 900 total lines.\n"
        "--- FILE CONTENT (truncated) ---\nx = 1\ny = 2")))
    assert (
        '<pre class="pk-code">IMPORTANT: The file content has been truncated.\nStatus: Showing lines 101-102 of 900 '
        'total lines.\n--- FILE CONTENT (truncated) ---</pre><div class="pk-lbl">content</div>'
        '<ol class="pk-code pk-num" start="101"><li>x = 1</li><li>y = 2</li></ol>'
    ) in truncated
    # a plain file whose text has a numbered-looking line further down is numbered from the offset
    plain = _card("read_file", {"path": "notes.txt"}, "intro\n\nsee\nbelow\nlast\n2024: a year")
    assert '<ol class="pk-code pk-num" start="1"><li>intro</li><li></li><li>see</li>' in plain
    error = _card("read_file", {"path": "nope.js"}, "Error reading file: not found")
    assert "pk-num" not in error and "Error reading file: not found" in error


# --------------------------------------------------------------------------- commands


def test_commands_are_a_shell_line_and_a_terminal_block_with_the_exit_code() -> None:
    card = _card("Bash", {"command": "mix test 2>&1 | tail -3", "description": "Run the tests"}, "Exit code 1\n3 tests, 1 failure")
    assert '<span class="pk-what">Run the tests</span>' in _head(card)
    assert '<pre class="pk-code pk-cmd"><span class="pk-ps">$ </span>mix test 2&gt;&amp;1 | tail -3</pre>' in card
    assert '<span class="pk-badge pk-exit pk-bad">exit 1</span>' in card
    assert '<pre class="pk-code pk-term">Exit code 1\n3 tests, 1 failure</pre>' in card
    codex = _card("exec_command", {"cmd": "ls", "workdir": "/w"},
                  "Chunk ID: 7f\nWall time: 0.0 seconds\nProcess exited with code 0\nOutput:\na.txt")
    assert '<div class="pk-lbl">in <code>/w</code></div><pre class="pk-code pk-cmd"><span class="pk-ps">$ </span>ls</pre>' in codex
    assert '<span class="pk-badge pk-exit">exit 0</span>' in codex
    argv = _card("shell", {"command": ["bash", "-lc", "rg -n foo"]}, "a.py:1:foo")
    assert '<span class="pk-ps">$ </span>rg -n foo</pre>' in argv
    for name, args in [
        ("run_shell_command", {"command": "npm test", "description": "tests", "directory": "web"}),  # Gemini CLI
        ("execute_command", {"command": "npm test", "requires_approval": False}),  # Cline
        ("bash", {"command": "npm test", "description": "tests"}),  # OpenCode
    ]:
        assert '<span class="pk-ps">$ </span>npm test</pre>' in _card(name, args), name
    # a long script folds behind its line count; an output without an exit code gets no badge
    script = "\n".join(f"echo {k}" for k in range(20))
    card = _card("Bash", {"command": script}, "0\n1")
    assert '<summary>$ command: <span class="pk-n">20 lines' in card
    assert "pk-exit" not in card


# --------------------------------------------------------------------------- to-do lists


def test_todowrite_is_a_checklist() -> None:
    card = _card("TodoWrite", {"todos": [
        {"content": "Read the spec", "status": "completed", "activeForm": "Reading the spec"},
        {"content": "Write the parser", "status": "in_progress", "activeForm": "Writing the parser"},
        {"content": "Ship", "status": "pending", "activeForm": "Shipping"}]},
        "Todos have been modified successfully.")
    assert '<span class="pk-lbl">1 of 3 done</span>' in _head(card)
    assert (
        '<ul class="pk-todos"><li class="pk-todo pk-todo-completed"><span class="pk-tick" title="completed">\u2611</span> '
        'Read the spec <span class="pk-lbl">completed</span></li><li class="pk-todo pk-todo-in_progress">'
        '<span class="pk-tick" title="in_progress">\u25d0</span> Write the parser <span class="pk-lbl">in progress</span></li>'
        '<li class="pk-todo pk-todo-pending"><span class="pk-tick" title="pending">\u2610</span> Ship '
        '<span class="pk-lbl">pending</span></li></ul>'
    ) in card


# --------------------------------------------------------------------------- the generic card stays


def test_unknown_tools_and_search_tools_keep_the_generic_card() -> None:
    card = _card("mcp__synthetic__lookup", {"query": "fixture"})
    assert GENERIC_ARGS in card and '<code class="pk-gist">fixture</code>' in _head(card)
    card = _card("Grep", {"pattern": "TODO", "path": "src"})
    assert GENERIC_ARGS in card and '<code class="pk-gist">TODO</code>' in _head(card)


@pytest.mark.parametrize("name,arguments", [
    ("Edit", "not json at all"),
    ("Edit", "[1, 2]"),
    ("Edit", {"file_path": "a", "old_string": 1, "new_string": "x"}),
    ("Edit", {"file_path": "a"}),
    ("MultiEdit", {"file_path": "a", "edits": "nope"}),
    ("MultiEdit", {"file_path": "a", "edits": [{"old_string": "x"}]}),
    ("Write", {"file_path": "a", "content": None}),
    ("Read", {"file_path": 7}),
    ("Bash", {"command": {"x": 1}}),
    ("shell", {"command": [1, 2]}),
    ("TodoWrite", {"todos": [{"content": None}]}),
    ("TodoWrite", {"todos": ["x"]}),
    ("replace_in_file", {"path": "a", "diff": "no markers here"}),
    ("Edit", "[" * 100_000),  # nested past what the JSON parser takes
])
def test_odd_arguments_fall_back_to_the_generic_card(name: str, arguments: Any) -> None:
    card = _card(name, arguments)
    assert GENERIC_ARGS in card or '<summary>arguments: <span class="pk-n">' in card
    assert RAW not in card


def test_a_huge_edit_is_not_diffed_and_a_huge_write_folds_and_is_cut() -> None:
    old = "\n".join(f"row {k}" for k in range(100_000))
    card = _card("Edit", {"file_path": "big.txt", "old_string": old, "new_string": old + "\nrow end"}, max_chars=50_000)
    assert '<summary>arguments: <span class="pk-n">' in card  # the generic card, cut like any long text
    assert "cut here:" in card and "<ins>" not in card
    card = _card("Write", {"file_path": "big.txt", "content": old}, max_chars=50_000)
    assert '<summary>content: <span class="pk-n">100000 lines' in card
    assert "cut here:" in card
    assert len(card) < 400_000


def test_transcript_text_is_escaped_in_every_layout() -> None:
    evil = "<script>alert(1)</script>"
    cards = [
        _card("Edit", {"file_path": f"/p/{evil}.py", "old_string": f"a {evil}", "new_string": f"b {evil}"}, evil),
        _card("Write", {"file_path": evil, "content": evil}),
        _card("apply_patch", f"*** Begin Patch\n*** Add File: {evil}\n+{evil}\n*** End Patch", evil),
        _card("Read", {"file_path": evil}, f"     1\u2192{evil}\n{evil}"),
        _card("Bash", {"command": f"echo '{evil}'", "description": evil}, f"Exit code 2\n{evil}"),
        _card("TodoWrite", {"todos": [{"content": evil, "status": evil}]}),
        _card("replace_in_file", {"path": evil, "diff": f"------- SEARCH\n{evil}\n=======\nx\n+++++++ REPLACE"}),
    ]
    for card in cards:
        assert "<script" not in card
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in card
    assert '<ins>+b &lt;script&gt;alert(1)&lt;/script&gt;</ins>' in cards[0]
    assert '<span class="pk-ps">$ </span>echo &#x27;&lt;script&gt;alert(1)&lt;/script&gt;&#x27;</pre>' in cards[4]


def test_search_still_finds_the_words_of_the_arguments() -> None:
    msgs = ensure_messages([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "Edit", "arguments": json.dumps(
            {"file_path": "/p/Zebra.py", "old_string": "quokka = 1", "new_string": "wombat = 2"})}]},
        {"role": "tool", "tool_call_id": "c1", "name": "Edit", "content": "ok"},
    ])
    text = build_page(msgs).rows[1].text
    assert "zebra.py" in text and "quokka" in text and "wombat" in text


def test_a_result_repair_added_keeps_the_generic_block() -> None:
    """The note repair sends for a lost read is not the file: it is not numbered as its lines."""
    msgs = ensure_messages([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "r1", "name": "read_file", "arguments": json.dumps({"path": "a.txt"})}]},
        {"role": "user", "content": "and then?"},
    ])
    page = build_page(msgs, pk.repair_history(msgs), pk.validate_history(msgs))
    sent = page.rows[1].after_html
    assert '<span class="pk-what">read</span>' in sent
    assert "pk-num" not in sent
    assert '<pre class="pk-code">This call was interrupted before it returned.' in sent


# --------------------------------------------------------------------------- real sessions


EDITS = Path(__file__).resolve().parents[1] / "transcripts" / "fixtures" / "coding_agents" / "claude_code" / "edits.jsonl"


def _calls_and_results(src: Path) -> tuple[list[dict[str, Any]], dict[str, tuple[str, Any]]]:
    """The tool_use blocks of a Claude Code session in order, and per call id the result text and
    the ``toolUseResult`` the CLI recorded next to it, read from the file itself."""
    calls: list[dict[str, Any]] = []
    results: dict[str, tuple[str, Any]] = {}
    for line in src.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        content = (rec.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use":
                calls.append(block)
            elif block.get("type") == "tool_result":
                results[block["tool_use_id"]] = (block["content"], rec.get("toolUseResult"))
    return calls, results


def test_a_real_claude_code_session_shows_its_read_edit_write_and_bash() -> None:
    """``edits.jsonl`` was written by the Claude Code CLI itself (see VERSIONS.json), run to its end
    against the scripted local model: Read, Edit, Write, Bash. Every expectation is read from it."""
    calls, results = _calls_and_results(EDITS)
    by_name = {c["name"]: c for c in calls}
    assert [c["name"] for c in calls] == ["Read", "Edit", "Write", "Bash"]
    page = pk.inspect(EDITS).page()

    def card(call: dict[str, Any]) -> str:
        mark = f'call <code>{call["name"]}</code> <span class="pk-id">{call["id"]}</span>'
        found = [r.before_html for r in page.rows if mark in r.before_html]
        assert len(found) == 1, call["name"]
        return _plain(found[0])

    # Edit: each removed line as a deletion, each added one as an insertion, the counts in the head
    edit = by_name["Edit"]
    old, new = edit["input"]["old_string"].splitlines(), edit["input"]["new_string"].splitlines()
    gone, came = [x for x in old if x not in new], [x for x in new if x not in old]
    assert gone and came
    html_edit = card(edit)
    for x in gone:
        assert f"<del>-{html.escape(x)}</del>" in html_edit
    for x in came:
        assert f"<ins>+{html.escape(x)}</ins>" in html_edit
    assert (f'<span class="pk-plus">+{len(came)}</span> <span class="pk-minus">\u2212{len(gone)}</span>'
            in html_edit)
    assert f'<code class="pk-gist pk-path">{html.escape(edit["input"]["file_path"])}</code>' in html_edit
    text, recorded = results[edit["id"]]
    assert (recorded["oldString"], recorded["newString"]) == (edit["input"]["old_string"], edit["input"]["new_string"])
    assert f'<pre class="pk-code">{html.escape(text)}</pre>' in html_edit  # the CLI's own result

    # Write: the content numbered, its line count in the head
    write = by_name["Write"]
    lines = write["input"]["content"].splitlines()
    html_write = card(write)
    assert f'<span class="pk-plus">{len(lines)} line(s)</span>' in html_write
    assert ('<ol class="pk-code pk-num" start="1">' + "".join(f"<li>{html.escape(x)}</li>" for x in lines)
            + "</ol>") in html_write
    text, recorded = results[write["id"]]
    assert recorded["type"] == "create" and recorded["content"] == write["input"]["content"]
    assert f'<pre class="pk-code">{html.escape(text)}</pre>' in html_write

    # Read: the numbers of the result Claude Code wrote (this version writes "N<tab>", older ones
    # "N\u2192") become the gutter, each line's text in order
    read = by_name["Read"]
    text, recorded = results[read["id"]]
    rows = [re.match(r" *(\d+)(?:\t|\u2192)(.*)\Z", x) for x in text.split("\n")]
    numbered = [(int(m.group(1)), m.group(2)) for m in rows if m]
    assert len(numbered) == recorded["file"]["numLines"] > 20
    assert numbered[0][0] == recorded["file"]["startLine"]
    html_read = card(read)
    assert (f'<ol class="pk-code pk-num" start="{numbered[0][0]}">'
            + "".join(f"<li>{html.escape(x)}</li>" for _, x in numbered) + "</ol>") in html_read
    assert f'lines {numbered[0][0]}\u2013{numbered[-1][0]}' in html_read
    assert "\t" not in html_read.split("arguments as written")[-1]  # no raw numbers left in the result

    # Bash: the command as a shell line, the output the CLI recorded as a terminal block
    bash = by_name["Bash"]
    text, recorded = results[bash["id"]]
    html_bash = card(bash)
    assert f'<span class="pk-ps">$ </span>{html.escape(bash["input"]["command"])}</pre>' in html_bash
    assert recorded["stdout"] == text and not recorded["stderr"]
    assert f'<pre class="pk-code pk-term">{html.escape(recorded["stdout"])}</pre>' in html_bash


@pytest.mark.upstream
def test_a_real_claude_code_read_and_bash_and_a_real_codex_patch(upstream_transcripts_dir: Path) -> None:
    src = upstream_transcripts_dir / "claude-code" / "tool_heavy.jsonl"
    raw = src.read_text(encoding="utf-8")
    assert '"content":"     1\u2192import \\"phoenix_html\\"' in raw  # the file's own numbered Read result
    assert '"command":"tail -5 /tmp/claude-1000/' in raw
    page = pk.inspect(src).page()
    cards = _plain("".join(r.before_html for r in page.rows))
    assert '<ol class="pk-code pk-num" start="1"><li>import &quot;phoenix_html&quot;</li>' in cards
    assert '<span class="pk-ps">$ </span>tail -5 /tmp/claude-1000/' in cards
    codex = sorted((upstream_transcripts_dir / "codex").glob("rollout-2026-*.jsonl"))[0]
    assert "*** Add File: gamma.txt\\n+synthetic" in codex.read_text(encoding="utf-8")
    cards = "".join(r.before_html for r in pk.inspect(codex).page().rows)
    assert '<strong>*** Add File: gamma.txt</strong><ins>+synthetic</ins>' in cards
    assert '<span class="pk-ps">$ </span>find . -maxdepth 1 -type f</pre>' in cards


def test_code_read_or_written_is_coloured_for_its_language_and_stays_escaped() -> None:
    read = _card("Read", {"file_path": "/p/app.py"},
                 "     1\u2192def f(x):\n     2\u2192    return '<script>alert(1)</script>'  # hi\n")
    assert '<ol class="pk-code pk-num pk-hl" start="1">' in read
    assert '<li><span class="k">def</span><span class="w"> </span><span class="nf">f</span>' in read
    assert "<script>" not in read and "&lt;script&gt;alert(1)&lt;/script&gt;" in read
    assert '<span class="c1"># hi</span></li>' in read
    write = _card("Write", {"file_path": "NOTES.md", "content": "# Notes\n\nplain <b>text</b>\n"})
    assert '<ol class="pk-code pk-num pk-hl" start="1">' in write and "<b>text" not in write
    # a file name pygments does not know, or none: the lines as they are
    plain = _card("Read", {"file_path": "/p/data.unknownext"}, "     1\u2192def f(x):\n")
    assert '<ol class="pk-code pk-num" start="1"><li>def f(x):</li></ol>' in plain


def test_a_page_colours_code_up_to_its_budget_and_shows_the_rest_plain(monkeypatch: pytest.MonkeyPatch) -> None:
    from providerkit_nb.viewer import tools

    monkeypatch.setattr(tools, "PAGE_CODE_CHARS", 40)  # room for the first read (26 characters) only
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for k in (1, 2):
        msgs += [
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": f"c{k}", "name": "Read", "arguments": json.dumps({"file_path": f"/p/m{k}.py"})}]},
            {"role": "tool", "tool_call_id": f"c{k}", "name": "Read",
             "content": "     1\u2192def f(x):\n     2\u2192    return x + 1\n"},
        ]
    page = build_page(ensure_messages(msgs))
    first, second = page.rows[1].before_html, page.rows[3].before_html
    assert '<ol class="pk-code pk-num pk-hl" start="1">' in first
    assert '<ol class="pk-code pk-num" start="1"><li>def f(x):</li><li>    return x + 1</li></ol>' in second
