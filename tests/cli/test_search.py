"""``sessionview index`` and ``sessionview search``: exit codes, output, filters, hostile text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from clihelpers import line

from sessionview.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def sessions(tmp_path, session):
    d = tmp_path / "sessions"
    d.mkdir()
    (d / "a.jsonl").write_bytes(session.read_bytes())
    (d / "b.jsonl").write_bytes(line({"role": "user", "content": "deploy with deploy.sh"}) + line({"role": "assistant", "content": "listed the files"}))
    return d


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_search_exits_0_with_hits_1_without_2_on_an_error(capsys, sessions):
    assert run(capsys, "search", "files", str(sessions))[0] == 0
    assert run(capsys, "search", "nothingmatchesthis", str(sessions))[0] == 1
    code, _, err = run(capsys, "search", "files", str(sessions / "missing"))
    assert code == 2 and "no such file" in err
    code, _, err = run(capsys, "search", "--", "-onlyexcluded", str(sessions))
    assert code == 2 and "search:" in err


def test_search_brings_the_index_current_first(capsys, sessions):
    assert run(capsys, "search", "walrus", str(sessions))[0] == 1
    with open(sessions / "a.jsonl", "ab") as f:
        f.write(line({"role": "user", "content": "a walrus appears"}))
    code, out, _ = run(capsys, "search", "walrus", str(sessions), "--json")
    assert code == 0 and [json.loads(x)["n"] for x in out.splitlines()] == [6]
    (sessions / "a.jsonl").unlink()
    assert run(capsys, "search", "walrus")[0] == 1  # no PATH: every indexed session, the deleted one gone


def test_json_has_one_hit_per_line_with_its_fields(capsys, sessions):
    code, out, _ = run(capsys, "search", "ls", str(sessions), "--json")
    (hit,) = [json.loads(x) for x in out.splitlines()]
    assert code == 0
    assert {k: hit[k] for k in ("path", "n", "role", "tool", "timestamp")} == {
        "path": str(sessions / "a.jsonl"), "n": 2, "role": "assistant", "tool": "shell", "timestamp": None}
    assert "ls" in hit["snippet"] and hit["marks"] == ["ls"] and hit["format"] == "brute"


def test_filters_and_limit(capsys, sessions):
    out = run(capsys, "search", "files", str(sessions), "--json")[1]
    assert len(out.splitlines()) == 3
    out = run(capsys, "search", "files", str(sessions), "--json", "--role", "user")[1]
    assert [json.loads(x)["n"] for x in out.splitlines()] == [1]
    assert len(run(capsys, "search", "files", str(sessions), "--limit", "1")[1].splitlines()) == 2  # head + snippet
    assert run(capsys, "search", "a", str(sessions), "--tool", "shell", "--json")[0] == 0
    assert run(capsys, "search", "files", str(sessions), "--format", "codex")[0] == 1
    assert run(capsys, "search", "files", str(sessions), "--since", "1d")[0] == 0
    assert run(capsys, "search", "files", str(sessions), "--until", "2001-01-01")[0] == 1
    with pytest.raises(SystemExit) as exc:
        main(["search", "files", "--since", "yesterday-ish"])
    assert exc.value.code == 2 and "not a date" in capsys.readouterr().err


def test_a_hostile_snippet_is_printed_escaped(capsys, tmp_path):
    p = tmp_path / "evil.jsonl"
    p.write_bytes(line({"role": "user", "content": "pwned \x1b]52;c;aGk=\x07 \x1b[2J \u202egnp.exe \r\n end"}))
    code, out, _ = run(capsys, "search", "pwned", str(p))
    assert code == 0
    assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out and "\r" not in out
    assert "\\x1b]52" in out and "\\u202e" in out
    code, out, _ = run(capsys, "search", "pwned", str(p), "--json")
    assert "\x1b" not in out and json.loads(out)["snippet"].startswith("pwned \x1b]52")  # JSON escapes it


def test_index_reports_and_a_corrupt_index_is_rebuilt_with_a_message(capsys, sessions, monkeypatch, tmp_path):
    index = tmp_path / "idx.sqlite"
    monkeypatch.setenv("SESSIONVIEW_INDEX", str(index))
    code, out, err = run(capsys, "index", str(sessions))
    assert code == 0 and out == "" and "2 indexed" in err and str(index) in err
    index.write_bytes(b"garbage" * 1000)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(str(index) + suffix):
            os.unlink(str(index) + suffix)
    code, out, err = run(capsys, "search", "files", str(sessions))
    assert code == 0 and "started a new one" in err and "Traceback" not in err


def test_substring_search_builds_its_index_once(capsys, sessions):
    code, out, err = run(capsys, "search", "--substring", "isted th", str(sessions), "--json")
    assert code == 0 and "substring index" in err
    assert "index current: 2 indexed" in err  # the rebuild ends with the summary a build prints
    assert [json.loads(x)["n"] for x in out.splitlines()] == [2]
    code, out, err = run(capsys, "search", "--substring", "eploy.s", str(sessions))
    assert code == 0 and "substring index" not in err
    assert "index current" not in err


def test_a_cold_cli_prints_hits_and_exit_codes(tmp_path, sessions):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "sessionview"]
    assert subprocess.run([*cmd, "index", str(sessions), "-q"], env=env).returncode == 0
    r = subprocess.run([*cmd, "search", "deploy", str(sessions)], env=env, capture_output=True, text=True)
    assert r.returncode == 0 and "b.jsonl:#1 user" in r.stdout
    r = subprocess.run([*cmd, "search", "zzzz", str(sessions)], env=env, capture_output=True, text=True)
    assert r.returncode == 1 and r.stdout == ""
    r = subprocess.run([*cmd, "search", "deploy", str(tmp_path / "nope")], env=env, capture_output=True, text=True)
    assert r.returncode == 2 and "no such file" in r.stderr


def test_search_does_not_import_the_ui(tmp_path):
    code = "import sys; from sessionview.cli import main; main(['search', 'x', %r]); print(any(m.startswith(('textual', 'rich')) for m in sys.modules))"
    r = subprocess.run([sys.executable, "-c", code % str(tmp_path)], env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True)
    assert r.stdout.strip().endswith("False")
