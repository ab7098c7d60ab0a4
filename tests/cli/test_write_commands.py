import json
import os
import subprocess
import sys



def run(*args, env=None, cwd=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "sessionview", *map(str, args)], capture_output=True, env=e, cwd=cwd, timeout=60)


def test_dry_run_prints_a_diff_and_writes_nothing(session):
    before = session.read_bytes()
    r = run("delete", session, "4", "--dry-run")
    assert r.returncode == 0
    assert '-{"role":"assistant","content":"Two files."}' in r.stdout.decode()
    assert session.read_bytes() == before


def test_edit_content_writes_brutes_line_and_keeps_a_backup(session, tmp_path):
    before = session.read_bytes()
    r = run("edit", session, "4", "--content", "Three files.")
    assert r.returncode == 0, r.stderr
    lines = session.read_bytes().split(b"\n")
    assert lines[3] == b'{"role":"assistant","content":"Three files."}'
    assert lines[:3] == before.split(b"\n")[:3]
    hist = run("history", session)
    assert hist.returncode == 0 and "bytes" in hist.stdout.decode()
    dry = run("undo", session, "--dry-run")
    assert dry.returncode == 0 and '+{"role":"assistant","content":"Two files."}' in dry.stdout.decode()
    assert b"Three files." in session.read_bytes()  # a dry run writes nothing
    assert run("undo", session).returncode == 0
    assert session.read_bytes() == before
    # the undo kept a backup too: a second undo undoes the first
    assert run("undo", session).returncode == 0
    assert session.read_bytes().split(b"\n")[3] == b'{"role":"assistant","content":"Three files."}'


def test_edit_json_and_editor(session, tmp_path):
    r = run("edit", session, "1", "--json", '{"role":"user","content":"hi"}')
    assert r.returncode == 0, r.stderr
    assert session.read_bytes().startswith(b'{"role":"user","content":"hi"}\n')
    editor = tmp_path / "ed.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/\"hi\"/\"from the editor\"/' \"$1\"\n")
    editor.chmod(0o755)
    r = run("edit", session, "1", env={"EDITOR": str(editor), "VISUAL": ""})
    assert r.returncode == 0, r.stderr
    assert session.read_bytes().startswith(b'{"role":"user","content":"from the editor"}\n')
    bad = tmp_path / "bad.sh"
    bad.write_text("#!/bin/sh\necho '{\"role\":' > \"$1\"\n")
    bad.chmod(0o755)
    before = session.read_bytes()
    r = run("edit", session, "1", env={"EDITOR": str(bad), "VISUAL": ""})
    assert r.returncode == 2 and "invalid JSON" in r.stderr.decode()
    assert session.read_bytes() == before


def test_integrity_refusal_is_exit_1_with_ids_and_force_overrides(session):
    before = session.read_bytes()
    r = run("delete", session, "3")
    assert r.returncode == 1
    err = r.stderr.decode()
    assert "c1" in err and "dangling" in err and "2:3" in err
    assert session.read_bytes() == before
    assert run("delete", session, "3", "--force").returncode == 0
    assert session.read_bytes().count(b"\n") == 4


def test_truncate_and_compact(session):
    assert run("truncate", session, "--keep", "4").returncode == 0
    assert session.read_bytes().count(b"\n") == 4
    r = run("compact", session, "1:3", "--summary", "listed files")
    assert r.returncode == 0, r.stderr
    assert session.read_bytes().split(b"\n")[0] == b'{"role":"user","content":"[compacted:summary] listed files"}'


def test_compact_with_the_builtin_digest(session):
    assert run("compact", session, "1:4").returncode == 0
    first = json.loads(session.read_bytes().split(b"\n")[0])
    assert first["content"].startswith("[compacted:summary] Compacted 4 records")
    assert "shell ×1: command=ls" in first["content"]


def test_summarizer_output_failure_and_timeout(session):
    r = run("compact", session, "1:4", "--summarizer", "wc -l | tr -d ' '")
    assert r.returncode == 0, r.stderr
    assert session.read_bytes().split(b"\n")[0] == b'{"role":"user","content":"[compacted:summary] 4"}'
    before = session.read_bytes()
    r = run("compact", session, "1:2", "--summarizer", "exit 7")
    assert r.returncode == 1 and "status 7" in r.stderr.decode()
    r = run("compact", session, "1:2", "--summarizer", "sleep 20", "--timeout", "0.5")
    assert r.returncode == 1 and "timeout" in r.stderr.decode()
    assert session.read_bytes() == before


def test_symlink_outside_root_is_refused_and_hard_links_too(tmp_path, session):
    inner = tmp_path / "inner"
    inner.mkdir()
    link = inner / "link.jsonl"
    link.symlink_to(session)  # the target is outside inner/, the root for the CLI
    r = run("edit", link, "1", "--content", "x")
    assert r.returncode == 1 and "outside" in r.stderr.decode()
    ok_link = tmp_path / "ok.jsonl"
    ok_link.symlink_to(session.name)
    assert run("edit", ok_link, "1", "--content", "via link").returncode == 0
    assert ok_link.is_symlink() and b"via link" in session.read_bytes()
    hard = tmp_path / "hard.jsonl"
    os.link(session, hard)
    r = run("edit", session, "1", "--content", "y")
    assert r.returncode == 1 and "link" in r.stderr.decode()


def test_errors_are_one_line_without_traceback(session):
    r = run("edit", session, "99", "--content", "x")
    assert r.returncode == 2
    assert len(r.stderr.decode().strip().splitlines()) == 1 and "Traceback" not in r.stderr.decode()


LG = os.path.join(os.path.dirname(__file__), "..", "fixtures", "littleghost-filesystem-snapshot.json")


def test_littleghost_edit_rewrites_the_document_with_a_valid_digest_and_mode_0600(tmp_path):
    from sessionview.core.littleghost import LittleGhostSession, compute_digest

    doc = tmp_path / "1f1abec9.json"
    doc.write_bytes(open(LG, "rb").read())
    doc.chmod(0o600)
    dry = run("edit", doc, "1", "--content", "Wie spät ist es in Bern?", "--dry-run")
    assert dry.returncode == 0 and "digest recomputed" in dry.stdout.decode() and "Bern" in dry.stdout.decode()
    r = run("edit", doc, "1", "--content", "Wie spät ist es in Bern?")
    assert r.returncode == 0, r.stderr
    s = LittleGhostSession.load(doc)
    assert s.digest_ok is True and s.read_only_reason is None
    assert s.message_values[0]["content"] == [{"type": "text", "text": "Wie spät ist es in Bern?"}]
    assert s.digest == compute_digest(s.document)
    assert not s.raw.endswith(b"\n")
    assert (doc.stat().st_mode & 0o777) == 0o600
    assert (tmp_path / "1f1abec9.lock").exists()
    assert run("check", doc).returncode == 0


def test_littleghost_document_that_does_not_round_trip_is_read_only(tmp_path):
    doc = tmp_path / "x.json"
    doc.write_bytes(open(LG, "rb").read().replace(b'"version":1,', b'"version": 1,'))
    before = doc.read_bytes()
    r = run("edit", doc, "1", "--content", "x")
    assert r.returncode == 1 and "read-only" in r.stderr.decode()
    assert doc.read_bytes() == before
