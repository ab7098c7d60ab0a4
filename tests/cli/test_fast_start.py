"""``sessionview COMMAND ...`` builds only that command's parser: its help, errors and parsing are the same as the
whole parser's."""

from __future__ import annotations

import argparse

import pytest

from sessionview.cli import main
from sessionview.cli.parser import COMMANDS, build_parser


def _sub(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices[name]


def test_the_fast_path_knows_every_command_in_the_help_order():
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert list(action.choices) == list(COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_one_commands_parser_prints_the_same_help(name, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "100")
    whole = _sub(build_parser(), name).format_help()
    assert _sub(build_parser(name), name).format_help() == whole
    with pytest.raises(SystemExit) as exc:
        main([name, "--help"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == whole


@pytest.mark.parametrize("argv", [
    ["search"], ["search", "x", "--bogus"], ["search", "x", "--limit", "nope"], ["edit", "f"], ["show"],
    ["prune", "--max-bytes", "zz"], ["search", "x", "--since", "yesterday"], ["export"],
])
def test_one_commands_parser_reports_the_same_errors(argv, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "100")
    results = []
    for parser in (build_parser(), build_parser(argv[0])):
        with pytest.raises(SystemExit) as exc:
            parser.parse_args(argv)
        results.append((exc.value.code, capsys.readouterr()))
    assert results[0] == results[1] and results[0][0] == 2 and "error:" in results[0][1].err


def test_one_commands_parser_parses_the_same(tmp_path):
    argv = ["search", "deploy", str(tmp_path), "--role", "tool", "--limit", "3", "--since", "2d", "--json"]
    whole, one = vars(build_parser().parse_args(argv)), vars(build_parser("search").parse_args(argv))
    assert whole.keys() == one.keys() and whole.pop("since") == pytest.approx(one.pop("since"), abs=5)
    assert whole == one and whole["func"].__name__ == "cmd_search"


def test_the_whole_help_is_unchanged(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert out == build_parser().format_help()
    assert all(f"    {name}" in out for name in COMMANDS)


@pytest.mark.parametrize("argv", [["{f}"], ["--read-only", "{f}"], []])
def test_the_app_builds_no_commands_parser(argv, tmp_path, monkeypatch):
    """``sessionview [PATH]`` (the app) parses its arguments with the app's own parser alone."""
    import sessionview.cli as cli
    import sessionview.ui.launch as launch

    p = tmp_path / "s.jsonl"
    p.write_text('{"role":"user","content":"hi"}\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli, "build_parser", lambda *a: pytest.fail("a command's parser was built"))
    ran = []
    monkeypatch.setattr(launch, "run", lambda path, read_only=False: ran.append((path, read_only)) or 0)
    assert main([a.replace("{f}", str(p)) for a in argv]) == 0
    assert ran == [(str(p) if argv else ".", "--read-only" in argv)]


def _modules_after(argv: list[str], cwd) -> set[str]:
    import json
    import subprocess
    import sys

    code = ("import json, sys\nfrom sessionview.cli import main\nmain(sys.argv[1:])\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('sessionview.'))))")
    out = subprocess.run([sys.executable, "-c", code, *argv], cwd=cwd, capture_output=True, text=True, check=False)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_a_record_range_with_a_colon_imports_no_remote_module(tmp_path):
    f = tmp_path / "s.jsonl"
    f.write_text('{"role":"system","content":"s"}\n{"role":"user","content":"a"}\n{"role":"assistant","content":"b"}\n')
    assert "sessionview.cli.remote" not in _modules_after(["delete", str(f), "2:3", "--dry-run"], tmp_path)


def test_a_file_named_host_colon_path_is_still_routed_as_remote(tmp_path):
    # not a local file: the remote module decides (its connection fails, which is beside the point here)
    assert "sessionview.cli.remote" in _modules_after(["delete", "nohost-sv-test:s.jsonl", "2:3", "--dry-run"], tmp_path)


def test_a_save_the_stat_proves_imports_no_thread_pool(tmp_path):
    """A file at rest (its ctime settled) is proven unchanged by its stat: the save hashes nothing in the
    background, so it neither imports ``concurrent.futures`` (and ``logging`` with it) nor starts a pool."""
    import json
    import os
    import subprocess
    import sys

    f = tmp_path / "s.jsonl"
    f.write_text('{"role":"user","content":"a"}\n{"role":"assistant","content":"b"}\n')
    os.utime(f, (1, 1))  # not "modified just now"; its ctime counts as settled below (SETTLE_NS in the past)
    code = ("import json, sys\nfrom sessionview.core.store import proof\nproof.SETTLE_NS = -10**9\n"
            "from sessionview.cli import main\nrc = main(sys.argv[1:])\n"
            "print(json.dumps([rc, 'concurrent.futures' in sys.modules]))")
    env = {**os.environ, "SESSIONVIEW_STATE_DIR": str(tmp_path / "state")}
    out = subprocess.run([sys.executable, "-c", code, "edit", str(f), "2", "--content", "c"],
                         cwd=tmp_path, capture_output=True, text=True, env=env, check=False)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [0, False], out.stderr
    assert f.read_text() == '{"role":"user","content":"a"}\n{"role":"assistant","content":"c"}\n'
