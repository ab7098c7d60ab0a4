"""``sessionview drop-result FILE N[:M]``: the dry run, the write with its backup, undo, and refusals."""

import os
import subprocess
import sys

from clihelpers import line

MARKER = b"[compacted:tool_results] Result dropped to free context. Call shell again if you still need it."


def run(*args):
    return subprocess.run([sys.executable, "-m", "sessionview", *map(str, args)], capture_output=True, env=dict(os.environ), timeout=60)


def test_drop_result_dry_run_write_and_undo(session):
    before = session.read_bytes()
    dry = run("drop-result", session, "3", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert b'-{"role":"tool","content":"a\\nb","tool_call_id":"c1"}' in dry.stdout
    assert session.read_bytes() == before
    r = run("drop-result", session, "3")
    assert r.returncode == 0, r.stderr
    assert b"drop the tool result of #3: written" in r.stderr
    old, new = before.split(b"\n"), session.read_bytes().split(b"\n")
    assert new[2] == b'{"role":"tool","content":"' + MARKER + b'","tool_call_id":"c1"}'
    assert [x for i, x in enumerate(new) if i != 2] == [x for i, x in enumerate(old) if i != 2]
    assert run("undo", session).returncode == 0
    assert session.read_bytes() == before


def test_drop_result_over_a_range(session):
    r = run("drop-result", session, "1:5")
    assert r.returncode == 0, r.stderr
    assert MARKER in session.read_bytes()
    assert session.read_bytes().startswith(line({"role": "user", "content": "list files"}))


def test_drop_result_refusals(session):
    before = session.read_bytes()
    none = run("drop-result", session, "1")
    assert none.returncode == 1 and b"nothing to drop in #1: no tool result there" in none.stderr
    assert run("drop-result", session, "3").returncode == 0
    again = run("drop-result", session, "3")
    assert again.returncode == 1 and b"already dropped" in again.stderr
    bad = run("drop-result", session, "9")
    assert bad.returncode == 2
    assert session.read_bytes() != before  # only the one drop was written
