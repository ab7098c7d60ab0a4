"""`sessionview prune` and the retention line of `sessionview history`."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def run(*args, env=None, cwd=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "sessionview", *map(str, args)], capture_output=True, env=e,
                          cwd=cwd, timeout=60)


@pytest.fixture
def session(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(b'{"role":"user","content":"hi"}\n{"role":"assistant","content":"yes"}\n')
    for i in range(4):
        r = run("edit", p, "2", "--content", f"v{i}", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    return p


def bak_files(tmp_path_root):
    root = os.environ["SESSIONVIEW_STATE_DIR"]
    return sorted(os.path.join(d, n) for d, _, ns in os.walk(root) for n in ns if n.endswith(".bak"))


def test_history_shows_the_policy_and_the_bytes_used(session):
    r = run("history", session)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    assert len(lines) == 5
    used = sum(os.path.getsize(p) for p in bak_files(session))
    assert lines[-1] == f"keeping the last 20 backups per file, 2.0 GiB in all; {used:,} bytes used"


def test_history_reports_a_bad_config_value(session, tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('backups_max_bytes = "two gigs"\n')
    r = run("history", session, env={"SESSIONVIEW_CONFIG": str(cfg)})
    assert r.returncode == 2
    assert "config.toml: backups_max_bytes must be" in r.stderr.decode() and r.stderr.decode().count("\n") == 1


def test_prune_dry_run_then_prune_status_on_stderr(session):
    before = bak_files(session)
    assert len(before) == 4
    r = run("prune", "--keep", "1", "--dry-run")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode().splitlines()
    assert len(out) == 3 and all(line.startswith("would remove") for line in out)
    assert r.stderr.decode().startswith("sessionview: would prune 3 backups, freeing ")
    assert bak_files(session) == before
    r = run("prune", session, "--keep", "1")
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.decode().splitlines()) == 3
    err = r.stderr.decode()
    assert err.startswith("sessionview: pruned 3 backups, freed ") and "keeping the last backup per file, 2.0 GiB in all" in err
    assert bak_files(session) == before[-1:]  # the newest


def test_prune_max_bytes_keeps_the_newest(session):
    r = run("prune", "--max-bytes", "0")
    assert r.returncode == 0, r.stderr
    assert len(bak_files(session)) == 1


def test_prune_refuses_a_bad_size_and_keep(session):
    r = run("prune", "--max-bytes", "2 GiBs")
    assert r.returncode == 2 and "SIZE must be" in r.stderr.decode()
    r = run("prune", "--keep", "0")
    assert r.returncode == 2 and "at least 1" in r.stderr.decode()
    assert len(bak_files(session)) == 4


def test_prune_lists_unmerged_files_and_never_removes_them(session):
    from sessionview.core.store import backups

    kept = backups.write_unmerged(os.path.realpath(session), b"late bytes\n")
    r = run("prune", "--keep", "1", "--max-bytes", "0")
    assert r.returncode == 0, r.stderr
    assert os.path.exists(kept)
    assert any(line.startswith("unmerged") and kept in line for line in r.stdout.decode().splitlines())
    h = run("history", session).stdout.decode()
    assert kept in h and "unmerged bytes: never pruned" in h


def test_prune_help_has_examples():
    r = run("prune", "--help")
    assert r.returncode == 0
    text = r.stdout.decode()
    assert "examples:" in text and "sessionview prune --dry-run" in text and "--max-bytes SIZE" in text
    assert "sessionview prune" in run("--help").stdout.decode()
