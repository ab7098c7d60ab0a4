"""The CLI with remote addresses, against a real sshd: show/check over SFTP, writes through the host's own
sessionview (quoting, a conflict, exit status and messages unchanged), read-only without it, host keys."""

import json
import os
import pwd
import subprocess
import sys
import uuid


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CONVO = [
    {"role": "user", "content": "list the files"},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "name": "shell", "arguments": {"command": "ls"}}]},
    {"role": "tool", "content": "a.txt", "tool_call_id": "c1"},
    {"role": "assistant", "content": "One file."},
    {"role": "user", "content": "thanks"},
]


def brute(messages):
    return "".join(json.dumps(m, separators=(",", ":"), ensure_ascii=False) + "\n" for m in messages).encode()


def sv(*args, home=None, stdin=None, cwd=None):
    env = {**os.environ, "PYTHONPATH": REPO}
    if home is not None:
        env["HOME"] = str(home)
    r = subprocess.run([sys.executable, "-m", "sessionview", *map(str, args)], capture_output=True, env=env,
                       input=stdin, timeout=120, cwd=cwd)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def test_show_over_ssh_prints_what_a_local_show_prints(sshd):
    path = sshd.sessions / "s.jsonl"
    path.write_bytes(brute(CONVO))
    code, local, _ = sv("show", path)
    for address in (f"ssh://svtest{path}", f"svtest:{path}", f"ssh://127.0.0.1:{sshd.port}{path}"):
        rcode, remote, err = sv("show", address, home=sshd.home)
        assert (rcode, err) == (code, ""), address
        assert remote.split("\n", 1)[1] == local.split("\n", 1)[1]  # all but the header, which names the address
        assert remote.split("\n", 1)[0].startswith(address)


def test_a_local_file_whose_name_has_a_colon_stays_local(sshd, tmp_path):
    (tmp_path / "svtest:s.jsonl").write_bytes(brute(CONVO[:1]))
    code, out, err = sv("show", "svtest:s.jsonl", home=sshd.home, cwd=tmp_path)
    assert code == 0 and "list the files" in out, err


def test_check_over_ssh_reports_the_same_problems(sshd):
    path = sshd.sessions / "bad.jsonl"
    path.write_bytes(brute(CONVO[:2]) + b"{not json\n")
    code, local, _ = sv("check", path)
    rcode, remote, err = sv("check", f"svtest:{path}", home=sshd.home)
    assert code == rcode == 1 and err == ""
    assert remote.replace(f"svtest:{path}", "P") == local.replace(str(path), "P")


def test_a_remote_directory_or_missing_file_fails_in_one_line(sshd):
    code, _, err = sv("show", f"svtest:{sshd.sessions}/nope.jsonl", home=sshd.home)
    assert code == 2 and err.strip().endswith("no such file") and len(err.strip().splitlines()) == 1
    code, _, err = sv("show", f"svtest:{sshd.sessions}", home=sshd.home)
    assert code == 2 and "not a regular file (a directory)" in err


def tricky_dir(sshd):
    canary = f"pwned-{uuid.uuid4().hex[:8]}"
    d = sshd.sessions / f"it's a \"test\" $(touch {canary}) `touch {canary}` ; touch {canary}"
    d.mkdir()
    return d, canary


def assert_no_canary(sshd, canary):
    for where in (pwd.getpwuid(os.getuid()).pw_dir, sshd.sessions, sshd.home, os.getcwd()):
        assert not os.path.exists(os.path.join(where, canary)), where


def test_an_edit_runs_on_the_host_with_safe_quoting(sshd):
    d, canary = tricky_dir(sshd)
    path = d / "s $(x).jsonl"
    path.write_bytes(brute(CONVO))
    text = "it's \"done\" $(touch " + canary + ")"
    code, out, err = sv("edit", f"svtest:{path}", "4", "--content", text, home=sshd.home)
    assert code == 0, err
    assert json.loads(path.read_bytes().split(b"\n")[3]) == {"role": "assistant", "content": text}
    assert str(path) in err and "Traceback" not in err
    assert_no_canary(sshd, canary)
    # the host kept the backup, in its own state directory
    code, out, err = sv("history", f"ssh://svtest{path}", home=sshd.home)
    assert code == 0 and str(sshd.remote_state) in out


def test_a_content_file_is_read_here_and_sent(sshd, tmp_path):
    path = sshd.sessions / "s.jsonl"
    path.write_bytes(brute(CONVO))
    local = tmp_path / "answer.txt"
    local.write_text("from a local file")
    code, _, err = sv("edit", f"svtest:{path}", "4", "--content-file", local, home=sshd.home)
    assert code == 0, err
    assert json.loads(path.read_bytes().split(b"\n")[3])["content"] == "from a local file"


def test_a_refusal_on_the_host_comes_back_unchanged(sshd, tmp_path):
    path = sshd.sessions / "s.jsonl"
    path.write_bytes(brute(CONVO))
    twin = tmp_path / "s.jsonl"
    twin.write_bytes(brute(CONVO))
    local = sv("delete", twin, "3")
    remote = sv("delete", f"svtest:{path}", "3", home=sshd.home)
    assert local[0] == remote[0] == 1
    assert remote[2].replace(str(path), "P") == local[2].replace(str(twin), "P")
    assert path.read_bytes() == brute(CONVO)


def test_a_conflict_on_the_host_is_refused_and_comes_back_unchanged(sshd, tmp_path):
    """The summarizer (run on the host, after the load) rewrites the session with other content."""
    d, canary = tricky_dir(sshd)
    path = d / "s.jsonl"
    other = brute([{"role": "user", "content": "someone else's session"}] * 6)
    rewriter = tmp_path / "rewrite.py"
    rewriter.write_text(f"import sys\nsys.stdin.read()\nopen(sys.argv[1], 'wb').write({other!r})\nprint('summary')\n")

    def run(target, address):
        target.write_bytes(brute(CONVO))
        cmd = f"{sys.executable} {rewriter} '{target}'" if "'" not in str(target) else None
        if cmd is None:
            import shlex

            cmd = f"{sys.executable} {rewriter} {shlex.quote(str(target))}"
        return sv("compact", address, "1:4", "--summarizer", cmd, home=sshd.home)

    twin = tmp_path / "twin.jsonl"
    local = run(twin, twin)
    remote = run(path, f"svtest:{path}")
    assert local[0] == remote[0] == 1, (local, remote)
    assert "Traceback" not in remote[2]
    assert remote[2].replace(str(path), "P") == local[2].replace(str(twin), "P")
    assert path.read_bytes() == other  # the other process's content is left alone
    assert_no_canary(sshd, canary)


def test_without_sessionview_on_the_host_remote_sessions_are_read_only(sshd):
    path = sshd.sessions / "s.jsonl"
    path.write_bytes(brute(CONVO))
    code, out, err = sv("show", f"svtest-nosv:{path}", home=sshd.home)
    assert code == 0 and "One file." in out
    code, out, err = sv("edit", f"svtest-nosv:{path}", "4", "--content", "x", home=sshd.home)
    assert code == 1 and out == ""
    assert "read-only" in err and "sessionview is not installed" in err and len(err.strip().splitlines()) == 1
    assert path.read_bytes() == brute(CONVO)


def test_an_unknown_host_key_is_refused(sshd, tmp_path):
    path = sshd.sessions / "s.jsonl"
    path.write_bytes(brute(CONVO))
    kh = sshd.home / ".ssh" / "known_hosts"
    saved = kh.read_text()
    try:
        kh.write_text("")
        code, out, err = sv("show", f"svtest:{path}", home=sshd.home)
        assert code == 2 and out == "" and "Traceback" not in err
        assert "host key verification failed" in err and "not in known_hosts" in err
        code, _, err = sv("edit", f"svtest:{path}", "4", "--content", "x", home=sshd.home)
        assert code == 2 and "not in known_hosts" in err
        # a changed key: known_hosts holds another key for the host
        other = tmp_path / "other_key"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
        kh.write_text(f"[127.0.0.1]:{sshd.port} {(tmp_path / 'other_key.pub').read_text().strip()}\n")
        code, _, err = sv("show", f"svtest:{path}", home=sshd.home)
        assert code == 2 and "does not match known_hosts" in err
    finally:
        kh.write_text(saved)
    assert path.read_bytes() == brute(CONVO)


def test_export_reads_over_sftp_and_writes_here(sshd, tmp_path):
    path = sshd.sessions / "s.jsonl"
    path.write_bytes(brute(CONVO))
    out = tmp_path / "run.md"
    code, _, err = sv("export", f"svtest:{path}", "--to", "md", "-o", out, home=sshd.home)
    assert code == 0, err
    local = tmp_path / "local.md"
    assert sv("export", path, "--to", "md", "-o", local)[0] == 0
    remote_md, local_md = out.read_text(), local.read_text()
    assert remote_md.split("\n", 1)[0].startswith("# svtest:")  # the title names the address (Markdown-escaped)
    assert remote_md.split("\n", 1)[1] == local_md.split("\n", 1)[1]
    assert not (sshd.sessions / "run.md").exists()


def test_stdin_content_is_passed_to_the_host(sshd):
    path = sshd.sessions / "s.jsonl"
    path.write_bytes(brute(CONVO))
    code, _, err = sv("edit", f"svtest:{path}", "4", "--content-file", "-", home=sshd.home, stdin="from stdin ✓".encode())
    assert code == 0, err
    assert json.loads(path.read_bytes().split(b"\n")[3])["content"] == "from stdin ✓"


def test_the_app_on_the_host_is_refused_on_a_host_without_sessionview_in_one_line(sshd):
    code, out, err = sv("--on-host", f"svtest-nosv:{sshd.sessions}", home=sshd.home)
    assert code == 1 and "sessionview is not installed there" in err and len(err.strip().splitlines()) == 1


def test_the_app_over_ssh_never_prompts_and_checks_host_keys():
    from sessionview.remote.terminal import ssh_argv
    from sessionview.remote.address import parse

    argv = ssh_argv(parse("ssh://me@h:2222/srv/a b"), "sessionview '/srv/a b'")
    assert argv[:6] == ["ssh", "-t", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes"]
    assert argv[-7:] == ["-p", "2222", "-l", "me", "h", "--", "sessionview '/srv/a b'"]


def test_check_takes_local_and_remote_files_together(sshd, tmp_path):
    remote = sshd.sessions / "r.jsonl"
    remote.write_bytes(brute(CONVO))
    local = tmp_path / "l.jsonl"
    local.write_bytes(brute(CONVO[:2]))
    code, out, err = sv("check", local, f"svtest:{remote}", f"svtest:{sshd.sessions}/gone.jsonl", home=sshd.home)
    assert code == 2 and err.strip().endswith("gone.jsonl: no such file")
    assert f"{local}:2: dangling tool call" in out
    assert f"svtest:{remote}: ok (Brute JSONL, 5 records)" in out


def test_search_of_a_remote_directory_runs_on_the_host_over_its_own_index(sshd):
    d = sshd.sessions / "dir with space"
    d.mkdir()
    (d / "s.jsonl").write_bytes(brute(CONVO + [{"role": "user", "content": "the zanzibar deploy failed"}]))
    code, out, err = sv("search", "zanzibar", f"svtest:{d}", "--json", home=sshd.home)
    assert code == 0, err
    hit = json.loads(out.splitlines()[0])
    assert hit["path"] == str(d / "s.jsonl") and hit["n"] == 6  # the host's own path and record
    assert (sshd.remote_state / "index.sqlite").exists()  # the host's index, not one here
    code, out, err = sv("search", "--limit", "1", "nowhere-to-be-found", f"ssh://svtest{d}", home=sshd.home)
    assert (code, out) == (1, "")
    code, out, err = sv("search", "zanzibar", f"svtest-nosv:{d}", home=sshd.home)
    assert code == 2 and "not installed there" in err and err.count("\n") == 1
    code, out, err = sv("search", "zanzibar", f"svtest:{d}", str(d), home=sshd.home)
    assert code == 2 and "one remote directory or file at a time" in err
