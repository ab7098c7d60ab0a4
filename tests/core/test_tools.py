"""What a tool call is (core/view/tools.py): found by name and argument shape, on the calls of the fixture
sessions (tests/fixtures and tests/fixtures/real), and what a result says (exit code, error, wrapper)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from sessionview.core.doc.model import Kind, ToolCall, ToolResult, View
from sessionview.core.session import open_session
from sessionview.core.view import tools as T

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def call_in(path: str, name: str, n: int | None = None) -> ToolCall:
    """The first call named ``name`` in the fixture ``path`` (in record ``n`` if given)."""
    session = open_session(str(FIXTURES / path))
    for i in [n] if n else range(1, len(session) + 1):
        for call in session.view(i).tool_calls:
            if call.name == name:
                return call
    raise AssertionError(f"no {name} call in {path}")


@pytest.mark.parametrize(
    "path, name, command",
    [
        ("brute-session.jsonl", "shell", "ls -la"),
        ("claude-code.jsonl", "Bash", "pytest -q"),
        ("codex-legacy.jsonl", "local_shell", "ls -1"),  # ["ls", "-1"] as words
        ("codex-rollout.jsonl", "shell", "wc -l 'café.txt'"),  # words joined as a shell would quote them
        ("pi-agent.jsonl", "bash", "ls src"),
        ("real/gemini/agent-sessions-jsonl_v040.jsonl", "run_shell_command", "ls -F"),
        ("real/codex/agent-sessions-schema-catalog.jsonl", "shell", "ls"),  # arguments as a JSON string in a string
    ],
)
def test_commands_of_every_format(path, name, command):
    r = T.classify(call_in(path, name))
    assert isinstance(r, T.CommandCall) and r.command == command


def test_a_command_keeps_its_description_and_a_bash_lc_script_is_the_script():
    r = T.classify(call_in("claude-code.jsonl", "Bash"))
    assert isinstance(r, T.CommandCall) and r.description == "Run tests"
    r = T.classify(ToolCall("c", "shell", {"command": ["bash", "-lc", "cd /x && make\nmake test"], "workdir": "/x"}))
    assert r == T.CommandCall("cd /x && make\nmake test", "/x", None)
    r = T.classify(ToolCall("c", "exec_command", {"cmd": "git status"}))
    assert r == T.CommandCall("git status")


def test_claude_code_write_is_a_file_write_with_its_content():
    r = T.classify(call_in("real/claude-code/simonw-sample_session.jsonl", "Write"))
    assert r == T.FileWrite("/project/hello.py", "def hello():\n    return 'Hello, World!'\n")


def test_brute_write_and_patch_by_argument_shape():
    w = T.classify(ToolCall("a", "write", {"file_path": "lib/x.rb", "content": "a\nb\n"}))
    assert w == T.FileWrite("lib/x.rb", "a\nb\n")
    p = T.classify(ToolCall("b", "patch", {"file_path": "lib/x.rb", "old_string": "a\nb\n", "new_string": "a\nc\n"}))
    assert isinstance(p, T.FileEdit) and p.path == "lib/x.rb" and (p.added, p.removed) == (1, 1)
    assert [(d.kind, d.text) for d in p.diff] == [("hunk", "@@ -1,2 +1,2 @@"), ("ctx", " a"), ("del", "-b"), ("add", "+c")]


def test_claude_code_edit_and_multiedit_are_unified_diffs():
    e = T.classify(call_in("real/claude-code/daaain-representative_messages.jsonl", "Edit"))
    assert isinstance(e, T.FileEdit) and e.path == "/tmp/decorator_example.py"
    assert e.diff[0].kind == "hunk" and all(d.kind == "add" for d in e.diff[1:]) and e.added == len(e.diff) - 1
    m = T.classify(call_in("real/claude-code/daaain-edge_cases.jsonl", "MultiEdit"))
    assert isinstance(m, T.FileEdit) and m.path == "/tmp/complex_example.py" and m.added == 27
    two = T.classify(ToolCall("m", "MultiEdit", {"file_path": "f.py", "edits": [{"old_string": "x = 1", "new_string": "x = 2"}, {"old_string": "y", "new_string": "z"}]}))
    assert isinstance(two, T.FileEdit) and [d.text for d in two.diff if d.kind == "note"] == ["edit 1 of 2", "edit 2 of 2"]
    assert (two.added, two.removed) == (2, 2)


def test_pi_and_anthropic_edits_with_their_own_key_names():
    pi = T.classify(ToolCall("e", "edit", {"path": "a.ts", "oldText": "let a = 1;", "newText": "const a = 1;"}))
    assert isinstance(pi, T.FileEdit) and [d.text for d in pi.diff][1:] == ["-let a = 1;", "+const a = 1;"]
    an = T.classify(call_in("anthropic-messages.jsonl", "edit_file"))
    assert isinstance(an, T.FileEdit) and an.path == "config.yaml" and [d.text for d in an.diff][1:] == ["-8080", "+9090"]


def test_codex_apply_patch_is_shown_as_the_diff_it_is():
    r = T.classify(call_in("codex-legacy.jsonl", "apply_patch"))
    assert isinstance(r, T.FileEdit) and r.path == "c.txt"
    assert [(d.kind, d.text) for d in r.diff] == [("file", "add c.txt"), ("add", "+salut")]
    body = "*** Begin Patch\n*** Update File: a.py\n@@ def f():\n-    return 1\n+    return 2\n*** Update File: b.py\n@@\n-x\n+y\n*** End Patch"
    r = T.classify(ToolCall("p", "shell", {"command": ["apply_patch", body]}))
    assert isinstance(r, T.FileEdit) and r.path == "" and (r.added, r.removed) == (2, 2)
    assert [d.text for d in r.diff if d.kind == "file"] == ["update a.py", "update b.py"]
    r = T.classify(ToolCall("p", "exec_command", {"cmd": "apply_patch <<'EOF'\n" + body + "\nEOF"}))
    assert isinstance(r, T.FileEdit) and r.added == 2


@pytest.mark.parametrize(
    "path, name, file, start",
    [
        ("brute-session.jsonl", "fs_read", "README.md", None),
        ("real/claude-code/cass-agent-test123.jsonl", "Read", "/test/file.rs", None),
        ("real/pi/v1-header-no-model-compaction.excerpt.jsonl", "read", "/Users/badlogic/workspaces/pi-mono/packages/coding-agent/src/core/sdk.ts", 510),
        ("anthropic-messages.jsonl", "read_file", "config.yaml", None),
    ],
)
def test_reads(path, name, file, start):
    r = T.classify(call_in(path, name))
    assert isinstance(r, T.FileRead) and r.path == file and r.start == start


def test_todowrite_is_a_checklist():
    r = T.classify(call_in("real/claude-code/daaain-edge_cases.jsonl", "TodoWrite"))
    assert isinstance(r, T.Todo)
    assert r.items[1] == T.TodoItem("in_progress", "Implement core functionality")
    plan = T.classify(ToolCall("u", "update_plan", {"plan": [{"step": "read", "status": "completed"}, {"step": "fix", "status": "pending"}]}))
    assert plan == T.Todo((T.TodoItem("completed", "read"), T.TodoItem("pending", "fix")))


def test_unknown_tools_are_json_with_multiline_strings_as_blocks():
    r = T.classify(call_in("openai-chat.jsonl", "get_weather"))
    assert isinstance(r, T.Generic) and [line.text for line in r.lines] == ["{", '"city": "São Paulo",', '"units": "metric"', "}"]
    g = T.classify(ToolCall("g", "Task", {"prompt": "Find it.\nThen \"say\" where.", "n": 2}))
    assert isinstance(g, T.Generic)
    assert [(line.text, line.block) for line in g.lines] == [
        ("{", False),
        ('"prompt": ⏎', False),
        ("Find it.", True),
        ('Then "say" where.', True),  # the text itself: no quotes escaped, no \n
        ('"n": 2', False),
        ("}", False),
    ]
    # a name that looks like a known tool but arguments that do not: generic, nothing lost
    odd = T.classify(ToolCall("o", "Write", {"where": "x"}))
    assert isinstance(odd, T.Generic) and any('"where": "x"' in line.text for line in odd.lines)


def test_generic_lines_are_capped_and_counted():
    g = T.generic({"text": "\n".join(str(i) for i in range(100))}, cap=10)
    assert len(g.lines) == 10 and g.more > 0
    deep: object = 1
    for _ in range(5000):
        deep = [deep]
    lines = T.classify(ToolCall("d", "x", {"a": deep})).lines  # no RecursionError
    assert any("nested too deeply" in line.text for line in lines) and len(lines) < 200


def test_results_exit_codes_and_errors():
    cmd = dict(command=True)
    assert T.result_info(ToolResult("a", "out\n[exit code: 2]"), **cmd) == T.ResultInfo("out", True, 2)  # Brute shell
    assert T.result_info(ToolResult("a", "fine"), **cmd) == T.ResultInfo("fine", False, None)
    assert T.result_info(ToolResult("a", "x\n\nCommand exited with code 1", is_error=True), **cmd) == T.ResultInfo("x", True, 1)  # pi
    assert T.result_info(ToolResult("a", "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nhello"), **cmd) == T.ResultInfo("hello", False, 0)  # Codex
    codex_exec = "Chunk ID: 4f1a\nWall time: 0.05 seconds\nProcess exited with code 2\nOriginal token count: 3\nOutput:\nno such file"
    assert T.result_info(ToolResult("a", codex_exec), **cmd) == T.ResultInfo("no such file", True, 2)
    assert T.result_info(ToolResult("a", "Exit code 1\nboom", is_error=True), **cmd) == T.ResultInfo("boom", True, 1)  # Claude Code Bash
    gem = T.result_info(ToolResult("a", "Command: ls /x\nOutput: ls: /x: No such file\nExit Code: 1\nSignal: 0"), **cmd)
    assert gem.exit_code == 1 and gem.error and "Exit Code: 1" in gem.text  # Gemini: the text is kept whole
    wrapped = T.result_info(ToolResult("a", "<tool_use_error>File does not exist.</tool_use_error>"))
    assert wrapped == T.ResultInfo("File does not exist.", True, None)
    assert T.result_info(ToolResult("a", "boom", is_error=True)).error
    # a read's text is not searched for exit codes
    assert T.result_info(ToolResult("a", "[exit code: 3]")) == T.ResultInfo("[exit code: 3]", False, None)


def _searched_from_the_start(text: str) -> tuple[re.Pattern[str], int, int, str] | None:
    """What ``result_info`` found before ``_exit_code``: each pattern searched over the whole text."""
    for pattern in T._EXIT_PATTERNS:
        found = pattern.search(text)
        if found:
            return pattern, found.start(), found.end(), found.group(1)
    return None


_PIECES = ["\n", "\n\n", " ", "\\n", "x", "7", "-3", "]", "[exit code: ", "Command exited with code ", "Exit code",
           "Exit code: ", "Error: ", "Process exited with code ", "Wall time: 1s\n", "Exit Code: ", "Output:\n"]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14))
def test_the_exit_code_found_by_literal_is_the_one_a_whole_search_finds(pieces):
    """``_exit_code`` skips texts without a pattern's literal and starts the end-anchored searches at their
    literal's last occurrence: it finds exactly the match (pattern, span, code) of a search from the start."""
    text = "".join(pieces)
    found = T._exit_code(text)
    want = _searched_from_the_start(text)
    assert (None if found is None else (found.re, found.start(), found.end(), found.group(1))) == want


def test_error_results_in_the_fixtures():
    session = open_session(str(FIXTURES / "claude-code.jsonl"))
    errors = [i for i in range(1, len(session) + 1) for r in session.view(i).tool_results if T.is_error_result(r)]
    assert errors == [5]
    session = open_session(str(FIXTURES / "real/gemini/agent-sessions-large.json"))
    codes = [T.result_info(r, command=True).exit_code for i in range(1, len(session) + 1) for r in session.view(i).tool_results]
    assert 0 in codes and 1 in codes


def test_housekeeping_records_are_quiet_and_errors_are_not():
    def meta(label: str) -> View:
        return View(1, Kind.META, label=label)

    for label in ("file-history-snapshot", "queue-operation", "turn_context", "event_msg:token_count", "session_meta"):
        assert T.is_housekeeping(meta(label))
    for label in ("system:api_error", "event_msg:error", "system:api_refusal", "event_msg:turn_aborted"):
        assert not T.is_housekeeping(meta(label))
    assert not T.is_housekeeping(View(1, Kind.MESSAGE, role="user", text="hi"))
    session = open_session(str(FIXTURES / "claude-code.jsonl"))
    assert T.is_housekeeping(session.view(11))  # file-history-snapshot
    session = open_session(str(FIXTURES / "codex-rollout.jsonl"))
    assert T.is_housekeeping(session.view(5))  # turn_context


def test_numbered_lines_of_a_read():
    claude = T.numbered_lines("     1\tfirst\n     2\tsecond\n")
    assert (claude.first, claude.lines, claude.rest) == (1, ["first", "second"], [])
    arrow = T.numbered_lines("    12→a\n    13→b\n    14→c\n\n(Showing lines 12-14 of 90)")
    assert (arrow.first, arrow.lines, arrow.rest) == (12, ["a", "b", "c"], ["", "(Showing lines 12-14 of 90)"])
    plain = T.numbered_lines("a\nb", start=510)  # pi: no numbers in the text, the call says where it starts
    assert (plain.first, plain.lines) == (510, ["a", "b"])


def test_a_huge_edit_is_not_compared_line_by_line():
    old = "x\n" * (T.DIFF_CAP // 2)
    r = T.file_edit("big", [(old, old + "y\n")])
    assert r.diff[0].kind == "note" and r.added == T.DIFF_CAP // 2 + 1
