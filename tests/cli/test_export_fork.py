"""sessionview export and fork, and the timestamp of show --json."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

from sessionview.core.littleghost import LittleGhostSession

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures")


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "sessionview", *args], capture_output=True, timeout=120, cwd=cwd)


# -- show --json timestamp ----------------------------------------------------------------------------


def test_show_json_carries_an_iso_timestamp_or_null():
    r = run("show", "--json", os.path.join(FIX, "codex-rollout.jsonl"))
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert rows[0]["timestamp"] == "2025-10-29T01:00:00.000Z"
    assert all(isinstance(row["timestamp"], str) for row in rows)
    r = run("show", "--json", os.path.join(FIX, "brute-session.jsonl"))
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert rows and all("timestamp" in row and row["timestamp"] is None for row in rows)


# -- export -------------------------------------------------------------------------------------------


def test_export_markdown_to_stdout_and_html_to_a_file(tmp_path):
    src = os.path.join(FIX, "claude-code.jsonl")
    r = run("export", src, "--to", "md")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(b"# ") and b"2025-11-01T10:00:05.000Z" in r.stdout
    out = tmp_path / "t.html"
    r = run("export", src, "-o", str(out), "2:5")  # the format from the extension, the range after -o
    assert r.returncode == 0, r.stderr
    assert r.stdout == b""  # stdout carries only data
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "records 2 to 5" in page
    assert 'id="m2"' in page and 'id="m6"' not in page


def test_export_needs_a_format_and_never_writes_over_the_session(tmp_path):
    p = tmp_path / "s.jsonl"
    data = open(os.path.join(FIX, "brute-session.jsonl"), "rb").read()
    p.write_bytes(data)
    r = run("export", str(p))
    assert r.returncode == 2 and b"--to md or --to html" in r.stderr
    r = run("export", str(p), "--to", "md", "-o", str(p))
    assert r.returncode == 1 and b"is the session itself" in r.stderr
    assert p.read_bytes() == data
    r = run("export", str(p), "--to", "md", "9:99")
    assert r.returncode == 2 and b"past the end" in r.stderr


# -- fork ---------------------------------------------------------------------------------------------

ODD = (b"\xef\xbb\xbf" + b'{"role":"user","content":"caf\\u00e9"}\r\n' + b"{not json}\n"
       + b'{"role":"assistant","content":"n","x":123456789012345678901234567890}\r\n'
       + b'{"role":"user","content":"later"}\n' + b'{"role":"assistant","content":"par')


def test_fork_copies_records_1_to_n_byte_for_byte_next_to_the_original(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(ODD)
    os.chmod(p, 0o640)
    r = run("fork", str(p), "3")
    assert r.returncode == 0, r.stderr
    first = tmp_path / "s.fork-3.jsonl"
    assert r.stdout.decode().strip() == str(first)
    assert first.read_bytes() == ODD[: ODD.index(b'{"role":"user","content":"later"}')]
    assert stat.S_IMODE(first.stat().st_mode) == 0o640
    assert p.read_bytes() == ODD  # the original is untouched
    r = run("fork", str(p), "3")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "s.fork-3-2.jsonl").read_bytes() == first.read_bytes()
    r = run("fork", str(p), "5")  # the partial last line is kept as it is
    assert (tmp_path / "s.fork-5.jsonl").read_bytes() == ODD
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".")]  # no temp file left


def test_fork_never_overwrites(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(ODD)
    taken = tmp_path / "taken.jsonl"
    taken.write_bytes(b"mine\n")
    r = run("fork", str(p), "2", "-o", str(taken))
    assert r.returncode == 1 and b"already exists" in r.stderr
    assert taken.read_bytes() == b"mine\n"
    target = tmp_path / "elsewhere.txt"
    target.write_bytes(b"keep\n")
    (tmp_path / "link.jsonl").symlink_to(target)  # not even through a symlink
    r = run("fork", str(p), "2", "-o", str(tmp_path / "link.jsonl"))
    assert r.returncode == 1
    assert target.read_bytes() == b"keep\n"
    r = run("fork", str(p), "9")
    assert r.returncode == 2 and b"outside 1:5" in r.stderr
    assert sorted(os.listdir(tmp_path)) == ["elsewhere.txt", "link.jsonl", "s.jsonl", "taken.jsonl"]


def test_fork_warns_when_it_cuts_a_tool_call_from_its_result(tmp_path):
    p = tmp_path / "b.jsonl"
    p.write_bytes(open(os.path.join(FIX, "brute-session.jsonl"), "rb").read())
    r = run("fork", str(p), "2", "-o", str(tmp_path / "new.jsonl"))
    assert r.returncode == 0, r.stderr
    assert b"tool call tc_01 (#2) has no result in the fork" in r.stderr


def test_fork_of_a_littleghost_document_recomputes_its_digest(tmp_path):
    p = tmp_path / "doc.json"
    p.write_bytes(open(os.path.join(FIX, "littleghost-filesystem-snapshot.json"), "rb").read())
    orig = LittleGhostSession.load(p)
    r = run("fork", str(p), "3")
    assert r.returncode == 0, r.stderr
    new = LittleGhostSession.load(tmp_path / "doc.fork-3.json")
    assert new.digest_ok is True and new.digest != orig.digest
    assert new.message_values == orig.message_values[:3]
    assert (new.state, new.metadata, new.actor_digest) == (orig.state, orig.metadata, orig.actor_digest)


def test_fork_refuses_a_littleghost_document_it_cannot_write_exactly(tmp_path):
    doc = json.loads(open(os.path.join(FIX, "littleghost-filesystem-snapshot.json"), "rb").read())
    p = tmp_path / "pretty.json"
    p.write_text(json.dumps(doc, indent=2))  # not what LittleGhost writes: read-only
    assert LittleGhostSession.load(p).read_only_reason
    r = run("fork", str(p), "1")
    assert r.returncode == 1 and b"cannot fork this document" in r.stderr
    assert os.listdir(tmp_path) == ["pretty.json"]


def test_show_prints_each_record_time_where_the_format_has_one():
    out = run("show", os.path.join(FIX, "claude-code.jsonl")).stdout.decode()
    assert "#5 user  @ 2025-11-01T10:00:05.000Z" in out
    out = run("show", os.path.join(FIX, "brute-session.jsonl")).stdout.decode()
    assert " @ " not in out
