import json
import os
import subprocess
import sys

import pytest

from sessionview.cli import main

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures")


def run(*args, input=None, env=None):
    return subprocess.run(
        [sys.executable, "-m", "sessionview", *args], capture_output=True, input=input, env=env, timeout=60
    )


def test_show_prints_blocks_with_line_numbers_roles_tool_calls_and_results():
    r = run("show", os.path.join(FIX, "brute-session.jsonl"))
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert "#1 user" in out
    assert "-> tool call shell [tc_01] -> result #3" in out
    assert '"command": "ls -la"' in out  # pretty-printed arguments
    assert "<- result of tc_01 shell from #2" in out
    assert "compaction: summary" in out and "compaction: sliding_window" in out


def test_show_marks_invalid_records_with_their_problem():
    out = run("show", os.path.join(FIX, "bad", "invalid-json.jsonl")).stdout.decode()
    assert "#2 !! invalid JSON: Expecting property name" in out
    assert "{\"role\":\"user\", oops}" in out
    assert "#4 assistant" in out  # line numbers count the blank line


def test_show_never_sends_control_characters_to_the_terminal():
    r = run("show", os.path.join(FIX, "bad", "hostile.jsonl"))
    assert r.returncode == 0
    assert b"\x1b" not in r.stdout and b"\x07" not in r.stdout
    assert "\u202e".encode() not in r.stdout
    out = r.stdout.decode()
    assert "\\x1b]52;c;ZXZpbA==\\x07" in out and "\\u202e" in out
    assert "[@click=app.quit]x[/]" in out


def test_show_json_prints_one_normalised_object_per_record():
    r = run("show", "--json", os.path.join(FIX, "brute-session.jsonl"))
    rows = [json.loads(line) for line in r.stdout.decode().splitlines()]
    assert len(rows) == 11
    assert rows[1]["tool_calls"][0] == {"id": "tc_01", "name": "shell", "arguments": {"command": "ls -la"}}
    assert rows[2]["tool_results"][0]["call_id"] == "tc_01"
    assert [r["n"] for r in rows] == list(range(1, 12))


def test_show_json_is_terminal_safe_and_valid_for_hostile_and_odd_input():
    for name in ("hostile.jsonl", "bigint.jsonl", "nan.jsonl", "invalid-utf8.jsonl"):
        r = run("show", "--json", os.path.join(FIX, "bad", name))
        assert r.returncode == 0, (name, r.stderr)
        assert b"\x1b" not in r.stdout and "\u202e".encode() not in r.stdout
        for line in r.stdout.decode().splitlines():
            json.loads(line)
    big = json.loads(run("show", "--json", os.path.join(FIX, "bad", "bigint.jsonl")).stdout.decode().splitlines()[0])
    assert big["tool_calls"][0]["arguments"]["n"] == 123456789012345678901234567890


@pytest.mark.parametrize(
    "name, words",
    [
        ("invalid-json.jsonl", ["2: invalid JSON"]),
        ("invalid-utf8.jsonl", ["2: not UTF-8"]),
        ("duplicate-keys.jsonl", ["1: duplicate keys"]),
        ("partial.jsonl", ["2: partial"]),
        ("nan.jsonl", ["1: schema warning"]),
        ("schema.jsonl", ["1: schema warning", "2: schema warning", "3: schema warning"]),
        ("dangling.jsonl", ["1: dangling tool call [c2]", "3: orphan tool result [zz]", "1: duplicate tool call id [c1]"]),
    ],
)
def test_check_reports_each_problem_with_its_line_and_exits_1(name, words):
    r = run("check", os.path.join(FIX, "bad", name))
    out = r.stdout.decode()
    assert r.returncode == 1, out
    for w in words:
        assert w in out


def test_check_clean_files_exit_0():
    files = [os.path.join(FIX, n) for n in ("brute-session.jsonl",)] + [
        os.path.join(FIX, "bad", n) for n in ("crlf.jsonl", "bom.jsonl", "no-final-newline.jsonl", "u2028.jsonl", "exponent.jsonl", "bigint.jsonl")
    ]
    r = run("check", *files)
    assert r.returncode == 0, r.stdout.decode() + r.stderr.decode()
    assert r.stdout.decode().count(": ok (") == len(files)


def test_check_too_deep_and_oversized(tmp_path):
    deep = tmp_path / "deep.jsonl"
    deep.write_bytes(b'{"role":"user","content":"x"}\n' + b"[" * 100_000 + b"]" * 100_000 + b"\n")
    big = tmp_path / "big.jsonl"
    with open(big, "wb") as f:
        f.write(b'{"role":"tool","tool_call_id":"t","content":"')
        f.write(b"z" * (50 * 1024 * 1024))
        f.write(b'"}\n')
    r = run("check", str(deep), str(big))
    out = r.stdout.decode()
    assert r.returncode == 1
    assert "deep.jsonl:2: too deep" in out
    assert "big.jsonl:1: oversized" in out


def test_check_a_directory_or_fifo_is_exit_2_with_one_line(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target, word in ((tmp_path, "a directory"), (fifo, "a FIFO")):
        r = run("check", str(target))
        assert r.returncode == 2
        err = r.stderr.decode().strip().splitlines()
        assert len(err) == 1 and word in err[0] and "Traceback" not in r.stderr.decode()


def test_missing_file_is_one_line_exit_2(tmp_path):
    r = run("show", str(tmp_path / "nope.jsonl"))
    assert r.returncode == 2
    assert r.stderr.decode().strip() == f"sessionview: {tmp_path / 'nope.jsonl'}: no such file"


def test_usage_error_exit_2():
    assert run("check").returncode == 2
    assert run("show", "--bogus", "x").returncode == 2


def test_help_teaches_every_command():
    out = run("--help").stdout.decode()
    for cmd in ("show", "check", "demo"):
        assert f"sessionview {cmd}" in out


def test_main_in_process_returns_codes(capsys):
    assert main(["check", os.path.join(FIX, "brute-session.jsonl")]) == 0
    assert main(["check", os.path.join(FIX, "bad", "invalid-json.jsonl")]) == 1


# -- show: streaming, ranges, subagents and injected lines ---------------------------------------------

REAL = os.path.join(FIX, "real")


def test_show_prints_the_header_without_a_count_and_the_count_at_the_end():
    r = run("show", os.path.join(FIX, "brute-session.jsonl"))
    lines = r.stdout.decode().splitlines()
    assert "records" not in lines[0]
    assert lines[2].startswith("#1 ")
    assert lines[-1].endswith(" records") and lines[-1].split()[0].isdigit()


def test_show_streams_a_big_file_without_pairing_it_first(tmp_path, monkeypatch, capsys):
    from sessionview.cli import commands
    from sessionview.core.session_base import Session

    p = tmp_path / "big.jsonl"
    p.write_bytes(open(os.path.join(FIX, "brute-session.jsonl"), "rb").read())
    monkeypatch.setattr(commands, "SHOW_PAIR_FIRST", 10)

    def no_whole_pass(self):
        raise AssertionError("show paired the whole file before printing")

    monkeypatch.setattr(Session, "pairing", no_whole_pass)
    assert main(["show", str(p)]) == 0
    out = capsys.readouterr().out
    assert "<- result of tc_01 shell from #2" in out  # a result still names its call
    assert "-> tool call shell [tc_01]" in out and "(no result)" not in out


def test_show_range_and_last():
    path = os.path.join(FIX, "brute-session.jsonl")
    out = run("show", path, "2:3").stdout.decode()
    assert "#2 " in out and "#3 " in out and "#1 " not in out and "#4 " not in out
    assert out.rstrip().endswith("records") and "#2–#3 of" in out
    total = int(run("show", path).stdout.decode().splitlines()[-1].split()[0])
    last = run("show", "--last", "1", path).stdout.decode()
    assert f"#{total} " in last and f"#{total - 1} " not in last
    bad = run("show", path, "3:2")
    assert bad.returncode != 0 and b"range" in bad.stderr


def test_show_json_merges_streamed_blocks_as_show_and_the_app_do():
    r = run("show", "--json", os.path.join(FIX, "claude-code.jsonl"))
    rows = [json.loads(line) for line in r.stdout.decode().splitlines()]
    text = run("show", os.path.join(FIX, "claude-code.jsonl")).stdout.decode()
    merged = [row for row in rows if len(row.get("numbers", [])) > 1]
    assert merged, "the fixture streams one message over several lines"
    for row in merged:
        assert f"#{row['n']} (lines {row['numbers'][0]}–{row['numbers'][-1]})" in text


def test_show_labels_subagent_lines_under_their_task_call_and_injected_lines():
    out = run("show", os.path.join(REAL, "claude-code", "daaain-sidechain_integrated.jsonl")).stdout.decode()
    assert "  | #5 user  [subagent e1c84ba5 · Task call toolu_01JA2mLseQCAW3MdwPE4qWEk]" in out
    assert "\n#1 assistant  @ 2025-11-19T22:53:34.908Z\n" in out  # the main chain is not indented
    out = run("show", os.path.join(REAL, "claude-code", "daaain-edge_cases.jsonl")).stdout.decode()
    assert "[injected]" in out


def test_show_names_the_subagent_files_of_a_session_and_the_parent_of_a_subagent_file():
    main_file = os.path.join(REAL, "claude-code", "agent-sessions-subagent-project", "0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f.jsonl")
    out = run("show", main_file).stdout.decode()
    assert "subagent file: " in out and "agent-a0ad4f44468bdf20d.jsonl" in out
    sub = os.path.join(main_file[:-6], "subagents", "agent-a0ad4f44468bdf20d.jsonl")
    out = run("show", sub).stdout.decode()
    assert f"subagent a0ad4f44468bdf20d of: {os.path.abspath(main_file)}" in out


# -- check: no messages, binary files, grouped problems -------------------------------------------------


@pytest.mark.parametrize("content", [b"[1,2,3]\n", b'{"not":"a session"}\n', b'{\n  "not": "a session"\n}\n'])
def test_check_reports_a_file_with_no_messages_of_a_known_format(tmp_path, content):
    p = tmp_path / "x.jsonl"
    p.write_bytes(content)
    r = run("check", str(p))
    assert r.returncode == 1
    assert b"no messages of a known format" in r.stdout and b": ok" not in r.stdout
    assert b"invalid JSON" not in r.stdout


def test_check_reports_binary_garbage_once_as_a_binary_file(tmp_path):
    import random

    rng = random.Random(7)
    p = tmp_path / "x.jsonl"
    p.write_bytes(bytes(rng.randrange(256) for _ in range(20000)))
    out = run("check", str(p)).stdout.decode().splitlines()
    assert [line.split(": ")[1] for line in out[:-1]] == ["binary file"]


def test_check_groups_many_problems_of_one_kind_and_all_lists_them(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_bytes(b'{"role":"user","content":"hi"}\n' + b"{broken\n" * 50)
    out = run("check", str(p)).stdout.decode().splitlines()
    import re

    assert sum(bool(re.search(r":\d+: invalid JSON: ", line)) for line in out) == 20
    assert any("invalid JSON: 30 more like these (50 in all; --all lists every one)" in line for line in out)
    every = run("check", "--all", str(p)).stdout.decode().splitlines()
    assert sum(bool(re.search(r":\d+: invalid JSON: ", line)) for line in every) == 50
