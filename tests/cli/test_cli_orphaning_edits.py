"""The CLI warns about an edit that makes a result answer no call, and about emptying a session; refusals
carry the CLI's own advice (``--force``, the range as ``N:M``, ``--keep N``), phrased from the core's flags."""

import os
import subprocess
import sys


def run(*args):
    return subprocess.run([sys.executable, "-m", "sessionview", *map(str, args)], capture_output=True, env=dict(os.environ), timeout=60)


def test_role_tool_without_a_call_id_is_written_with_a_warning(session):
    r = run("edit", session, "4", "--json", '{"role":"tool","content":"Two files."}')
    assert r.returncode == 0, r.stderr
    err = r.stderr.decode()
    assert "warning:" in err and "#4 becomes a tool result that names no tool call (no tool_call_id)" in err
    assert session.read_bytes().splitlines()[3] == b'{"role":"tool","content":"Two files."}'


def test_an_edit_that_keeps_the_call_id_has_no_such_warning(session):
    r = run("edit", session, "3", "--content", "a\nb\nc")
    assert r.returncode == 0, r.stderr
    assert b"names no tool call" not in r.stderr


def test_emptying_a_session_is_refused_then_warned(session):
    before = session.read_bytes()
    r = run("truncate", session, "--keep", "0")
    assert r.returncode == 1 and session.read_bytes() == before
    assert "would empty the session (all 5 records removed). Use --force to do it anyway" in r.stderr.decode()
    r = run("truncate", session, "--keep", "0", "--force")
    assert r.returncode == 0, r.stderr
    assert "warning:" in r.stderr.decode() and "this empties the session: all 5 records are removed" in r.stderr.decode()
    assert session.read_bytes() == b""


def test_deleting_every_record_warns(session):
    r = run("delete", session, "1:5", "--dry-run")
    assert r.returncode == 0 and b"this empties the session" in r.stderr


def test_a_truncation_refusal_names_the_keep_that_would_pass(session):
    r = run("truncate", session, "--keep", "2")
    assert r.returncode == 1
    assert "the nearest valid point is --keep 1. Use --force to do it anyway" in r.stderr.decode()
