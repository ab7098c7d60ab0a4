"""A file rewritten in place (Brute's SessionLog) while a write command reads or saves it: the command waits,
starts again from a fresh load, and never exits 2 or writes nonsense."""

import fcntl
import json
import os
import subprocess
import sys


from sessionview import cli
from sessionview.core.edit import plan as edits, writeback
from sessionview.core.doc.linescan import SourceChanged
from sessionview.core.errors import Conflict

from clihelpers import CONVO, line

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(REPO, "bench", "bench_brute_rewriter.py")

def rewrite_in_place(path, data):
    with open(path, "r+b") as f:  # same inode, like File.open(path, "w")
        f.truncate(0)
        f.write(data)


def test_a_read_that_hits_a_truncation_is_started_again(session, monkeypatch, capsys):
    real = edits.plan_delete
    calls = []

    def flaky(*a, **k):
        calls.append(1)
        if len(calls) == 1:
            raise SourceChanged("could only read 0 of 79 bytes at offset 0: the file changed")
        return real(*a, **k)

    monkeypatch.setattr(edits, "plan_delete", flaky)
    code = cli.main(["delete", str(session), "4"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert len(calls) == 2
    assert b"Two files." not in session.read_bytes()


def test_a_rewrite_during_the_plan_is_planned_again_on_the_new_content(session, tmp_path):
    # the editor plays Brute: the first time it runs, it rewrites the session in place (another record
    # changed, a turn appended); the edit must then land on the new content, not be refused
    marker = tmp_path / "marker"
    brute = b"".join(line(m) for m in [{"role": "user", "content": "list the files"}] + CONVO[1:]
                     + [{"role": "assistant", "content": "next turn"}])
    editor = tmp_path / "ed.py"
    editor.write_text(
        "import os, sys\n"
        f"marker, session, brute = {str(marker)!r}, {str(session)!r}, {brute!r}\n"
        "if not os.path.exists(marker):\n"
        "    open(marker, 'w').close()\n"
        "    with open(session, 'r+b') as f:\n"
        "        f.truncate(0); f.write(brute)\n"
        "text = open(sys.argv[1]).read().replace('Two files.', 'Three files.')\n"
        "open(sys.argv[1], 'w').write(text)\n"
    )
    r = subprocess.run([sys.executable, "-m", "sessionview", "edit", str(session), "4"], capture_output=True,
                       env={**os.environ, "EDITOR": f"{sys.executable} {editor}", "VISUAL": ""}, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = session.read_bytes().split(b"\n")
    assert lines[0] == b'{"role":"user","content":"list the files"}'  # the rewrite is kept
    assert lines[3] == b'{"role":"assistant","content":"Three files."}'  # and the edit is on it
    assert lines[5] == b'{"role":"assistant","content":"next turn"}'


def test_a_file_rewritten_under_every_try_is_refused_with_exit_1(session, tmp_path):
    editor = tmp_path / "ed.py"
    editor.write_text(
        "import sys, time\n"
        f"session = {str(session)!r}\n"
        "data = open(session, 'rb').read()\n"
        "with open(session, 'r+b') as f:\n"
        "    f.truncate(0); f.write(data + b'{\"role\":\"user\",\"content\":\"more\"}\\n')\n"
        "open(sys.argv[1], 'a').write(' ')\n"
    )
    r = subprocess.run([sys.executable, "-m", "sessionview", "edit", str(session), "1"], capture_output=True,
                       env={**os.environ, "EDITOR": f"{sys.executable} {editor}", "VISUAL": ""}, timeout=60)
    err = r.stderr.decode()
    assert r.returncode == 1, err
    assert "another process is rewriting the file" in err and "nothing was written" in err
    assert len(err.strip().splitlines()) == 1
    assert b'"content":"list files"' in session.read_bytes()


def test_a_re_plan_whose_records_changed_is_refused(session, monkeypatch, capsys):
    real = writeback.commit
    calls = []

    def conflicting(s, change, **k):
        calls.append(1)
        if len(calls) == 1:  # Brute rewrote the file during the save, with record 4 changed
            data = session.read_bytes().replace(b"Two files.", b"Two files, really.")
            rewrite_in_place(session, data)
            raise Conflict(f"conflict: {session} changed on disk during the save", str(session))
        return real(s, change, **k)

    monkeypatch.setattr(writeback, "commit", conflicting)
    code = cli.main(["delete", str(session), "4"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "no longer hold what they held" in err and "nothing was written" in err
    assert b"Two files, really." in session.read_bytes()


def test_a_conflict_during_the_save_is_retried_when_the_records_are_the_same(session, monkeypatch, capsys):
    real = writeback.commit
    calls = []

    def conflicting(s, change, **k):
        calls.append(1)
        if len(calls) == 1:  # Brute rewrote the file (a new first message, a turn appended)
            data = session.read_bytes().replace(b"list files", b"list all files") + line({"role": "user", "content": "go"})
            rewrite_in_place(session, data)
            raise Conflict(f"conflict: {session} changed on disk during the save", str(session))
        return real(s, change, **k)

    monkeypatch.setattr(writeback, "commit", conflicting)
    assert cli.main(["delete", str(session), "4"]) == 0, capsys.readouterr().err
    data = session.read_bytes()
    assert b"Two files." not in data and b"list all files" in data and data.endswith(b'"content":"go"}\n')


# -- a real rewriter ---------------------------------------------------------------------------------


def _valid_brute(data: bytes) -> bool:
    for ln in data.split(b"\n"):
        if not ln:
            continue
        obj = json.loads(ln)
        if not isinstance(obj, dict) or obj.get("role") not in ("user", "assistant", "tool"):
            return False
    return data.endswith(b"\n")


def test_write_commands_beside_a_real_in_place_rewriter(tmp_path):
    sys.path.insert(0, os.path.dirname(BENCH))
    try:
        import bench_brute_rewriter as bench
    finally:
        sys.path.pop(0)
    path = tmp_path / "session.jsonl"
    path.write_text("".join(m + "\n" for m in bench.seed_lines(80, 20)), encoding="utf-8")
    lock, stop, log = (str(path) + s for s in (".lock", ".stop", ".log"))
    env = {**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")}
    child = subprocess.Popen([sys.executable, BENCH, "--rewriter", str(path), lock, stop, log, "0.15", "20"], env=env)
    try:
        while not os.path.exists(log) or os.path.getsize(log) == 0:
            assert child.poll() is None
            os.sched_yield()
        cmds = [["edit", "3", "--content", "edited"], ["delete", "5:6"], ["compact", "7:9", "--summary", "s"],
                ["truncate", "--keep", "60"], ["edit", "2", "--json", '{"role":"assistant","content":"j"}'],
                ["delete", "10"], ["compact", "11:12"], ["truncate", "--keep", "50"]]
        for cmd in cmds:
            r = subprocess.run([sys.executable, "-m", "sessionview", cmd[0], str(path), *cmd[1:]],
                               capture_output=True, env=env, timeout=120)
            err = r.stderr.decode()
            assert r.returncode in (0, 1), (cmd, err)
            assert "Traceback" not in err and "internal error" not in err
            if r.returncode == 0:
                with open(lock, "a") as lk:  # a moment when the rewriter is not mid-write
                    fcntl.flock(lk, fcntl.LOCK_SH)
                    assert _valid_brute(path.read_bytes()), cmd
            else:
                assert "another process is rewriting" in err or "refused" in err, err
    finally:
        open(stop, "w").close()
        child.wait(timeout=60)
    journal = [json.loads(ln) for ln in open(log, encoding="utf-8")]
    assert not any(j.get("torn") for j in journal)
    assert journal[-1] == {"final": True}


def test_the_rewriter_bench_in_a_small_configuration_has_no_exit_2(tmp_path):
    out = tmp_path / "figures.json"
    r = subprocess.run([sys.executable, BENCH, "-n", "8", "--seed-lines", "60", "--pad", "10", "--think", "0.1",
                        "--dir", str(tmp_path), "--json", str(out)], capture_output=True, timeout=600,
                       env={**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")})
    figures = json.loads(out.read_text())
    assert figures["commands"] == 8
    assert figures["exit_2"] == [], figures["exit_2"]
    assert "2" not in figures["exit_codes"]
    assert figures["lost"] == 0 and figures["torn"] == 0 and figures["final_intact"] is True
    assert r.returncode == 0, r.stdout.decode() + r.stderr.decode()
