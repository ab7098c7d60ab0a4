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
