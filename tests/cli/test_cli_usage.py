"""The command line's usage corners: positionals after options, queries that start with '-', messages."""

from __future__ import annotations

import pytest
from clihelpers import line

from sessionview.cli import main


def run(capsys, *argv) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def two(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_bytes(line({"role": "user", "content": "the lockfile is stale"}))
    b.write_bytes(line({"role": "user", "content": "another lockfile here"}))
    return a, b


def test_a_list_of_paths_may_come_after_options(capsys, two):
    a, b = two
    code, out, err = run(capsys, "search", "lockfile", "--limit", "1", str(a))
    assert code == 0 and out.count(":#1 user") == 1 and str(a) in out, err
    code, out, err = run(capsys, "search", "lockfile", str(a), "--json", str(b))
    assert code == 0 and str(a) in out and str(b) in out, err
    code, out, err = run(capsys, "check", str(a), "-q", str(b))
    assert code == 0 and err == ""


def test_other_stray_arguments_are_an_error_in_the_commands_own_usage(capsys, two):
    a, _ = two
    code, _, err = run(capsys, "edit", str(a), "1", "--content", "x", "stray")
    assert code == 2 and "usage: sessionview edit" in err and "unrecognized arguments: stray" in err
    code, _, err = run(capsys, "search", "lockfile", "--limit", "1", "--bogus")
    assert code == 2 and "usage: sessionview search" in err and "unrecognized arguments: --bogus" in err
    assert a.read_bytes() == line({"role": "user", "content": "the lockfile is stale"})


def test_a_query_that_starts_with_a_dash_is_told_to_go_after_double_dash(capsys):
    code, _, err = run(capsys, "search", "-lockfile")
    assert code == 2 and "sessionview search -- -lockfile" in err and "PATH" not in err.splitlines()[-1]
    code, _, err = run(capsys, "search")
    assert code == 2 and err.splitlines()[-1].endswith("the following arguments are required: QUERY")


def test_on_host_with_a_local_path_is_refused_and_starts_nothing(capsys, tmp_path, monkeypatch):
    import sessionview.ui.launch

    started = []
    monkeypatch.setattr(sessionview.ui.launch, "run", lambda *a, **kw: started.append(a) or 0)
    for argv in (["--on-host", str(tmp_path)], [str(tmp_path), "--on-host"], ["--on-host"]):
        code, _, err = run(capsys, *argv)
        assert code == 2 and "--on-host needs a remote address (ssh://host/path or host:path)" in err
        assert len(err.strip().splitlines()) == 1
    assert started == []


def test_search_help_describes_the_ranking_as_the_readme_does(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit):
        main(["search", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert ("best first: the most recently changed session first, and its newest records first (for a prefix* or "
            "--substring term, whole-word matches go ahead)") in text
    assert "ranks highest" not in text and "| jq -r .path" in text


def test_hosts_without_a_hosts_table_names_the_file_it_read_escaped(capsys, tmp_path, monkeypatch):
    conf = tmp_path / "odd\x1bname.toml"
    conf.write_text("backups_keep = 3\n")
    monkeypatch.setenv("SESSIONVIEW_CONFIG", str(conf))
    code, _, err = run(capsys, "hosts")
    assert code == 2 and f"no [hosts] in {tmp_path}/odd\\x1bname.toml: add name" in err and "\x1b" not in err
    code, _, err = run(capsys, "hosts", "web1")
    assert code == 2 and f"not in [hosts] of {tmp_path}/odd\\x1bname.toml: web1" in err
    monkeypatch.setenv("SESSIONVIEW_CONFIG", str(tmp_path / "missing.toml"))
    code, _, err = run(capsys, "hosts")
    assert code == 2 and f"no [hosts] in {tmp_path}/missing.toml (no such file)" in err
