"""A [hosts] name of config.toml is an alias on the command line: ``NAME:PATH`` and ``ssh://NAME/PATH`` (no
user, no port) connect with the entry's user, host and port; ``NAME:`` is the entry's directory. Against a
real sshd; names in neither [hosts] nor ~/.ssh/config are still looked up (and unreachable)."""

import json
import os
import pwd
import subprocess
import sys

import remote_sshd

from sessionview.remote.address import aliased, parse

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONVO = [{"role": "user", "content": "list the files"}, {"role": "assistant", "content": "One file."},
         {"role": "user", "content": "thanks"}, {"role": "assistant", "content": "You are welcome."}]


def brute(messages):
    return "".join(json.dumps(m, separators=(",", ":")) + "\n" for m in messages).encode()


def config(sshd, tmp_path, extra=""):
    """[hosts] web1 as a plain address (user, 127.0.0.1, port): no ~/.ssh/config alias behind it."""
    user = pwd.getpwuid(os.getuid()).pw_name
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[hosts]\nweb1 = "ssh://{user}@127.0.0.1:{sshd.port}{sshd.sessions}"\n{extra}')
    return cfg


def sv(sshd, cfg, *args):
    env = {**os.environ, "PYTHONPATH": REPO, "HOME": str(sshd.home), "SESSIONVIEW_CONFIG": str(cfg)}
    r = subprocess.run([sys.executable, "-m", "sessionview", *map(str, args)], capture_output=True, env=env, timeout=120)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def test_a_hosts_name_takes_the_entrys_user_host_and_port_and_keeps_the_path():
    hosts = {"web1": "ssh://agent@127.0.0.1:2222/srv/agents/sessions", "gpu": "svtest:runs"}
    got = {t: str(aliased(parse(t, check_local=False), hosts)) for t in (
        "web1:/srv/s.jsonl", "ssh://web1/srv/s.jsonl", "web1:", "ssh://web1", "web1:rel.jsonl", "gpu:",
        "bob@web1:/x", "ssh://web1:22/x", "other:/x")}
    assert got == {
        "web1:/srv/s.jsonl": "ssh://agent@127.0.0.1:2222/srv/s.jsonl",
        "ssh://web1/srv/s.jsonl": "ssh://agent@127.0.0.1:2222/srv/s.jsonl",
        "web1:": "ssh://agent@127.0.0.1:2222/srv/agents/sessions",
        "ssh://web1": "ssh://agent@127.0.0.1:2222/srv/agents/sessions",
        "web1:rel.jsonl": "ssh://agent@127.0.0.1:2222/~/rel.jsonl",  # relative to the login's home, as given
        "gpu:": "svtest:runs",  # an entry that is itself an ~/.ssh/config alias
        "bob@web1:/x": "ssh://bob@web1/x",  # a user or a port given: not the alias, ssh resolves the name
        "ssh://web1:22/x": "ssh://web1:22/x",
        "other:/x": "ssh://other/x",
    }


def test_show_through_a_hosts_name_in_both_address_forms(sshd, tmp_path):
    path = sshd.sessions / "s.jsonl"
    path.write_bytes(brute(CONVO))
    cfg = config(sshd, tmp_path)
    code, local, _ = sv(sshd, cfg, "show", path)
    for address in (f"web1:{path}", f"ssh://web1{path}"):
        rcode, remote, err = sv(sshd, cfg, "show", address)
        assert (rcode, err) == (code, ""), address
        assert remote.split("\n", 1)[0].startswith(address)  # named as the user wrote it
        assert remote.split("\n", 1)[1] == local.split("\n", 1)[1]


def test_a_hosts_name_with_no_path_is_the_entrys_directory(sshd, tmp_path):
    (sshd.sessions / "a.jsonl").write_bytes(brute(CONVO[:1]))
    cfg = config(sshd, tmp_path)
    for address in ("web1:", "ssh://web1"):
        code, _, err = sv(sshd, cfg, "show", address)
        assert code == 2 and "not a regular file (a directory)" in err, (address, err)


def test_the_app_opens_a_hosts_names_directory(sshd, tmp_path, monkeypatch):
    from sessionview.cli.remote import parse as cli_parse
    from sessionview.ui.launch import open_remote

    (sshd.sessions / "a.jsonl").write_bytes(brute(CONVO[:1]))
    monkeypatch.setenv("SESSIONVIEW_CONFIG", str(config(sshd, tmp_path)))
    target = open_remote("web1:", cli_parse("web1:"))
    assert not isinstance(target, str), target
    try:
        assert target.is_dir and target.address.path == os.path.realpath(sshd.sessions)
        assert (target.address.host, target.address.port) == ("127.0.0.1", sshd.port)
    finally:
        target.hosts.close()


def test_an_edit_through_a_hosts_name_runs_on_the_entrys_host(sshd, tmp_path):
    path = sshd.sessions / "s.jsonl"
    path.write_bytes(brute(CONVO))
    cfg = config(sshd, tmp_path)
    code, _, err = sv(sshd, cfg, "edit", f"web1:{path}", "4", "--content", "edited via the alias")
    assert code == 0, err
    assert json.loads(path.read_bytes().split(b"\n")[3]) == {"role": "assistant", "content": "edited via the alias"}
    assert path.read_bytes().split(b"\n")[:3] == brute(CONVO).split(b"\n")[:3]


def test_ssh_config_aliases_still_work_and_unknown_names_are_looked_up(sshd, tmp_path):
    path = sshd.sessions / "s.jsonl"
    path.write_bytes(brute(CONVO))
    down = remote_sshd.free_port()
    cfg = config(sshd, tmp_path, f'down = "ssh://127.0.0.1:{down}/srv"\n')
    code, out, err = sv(sshd, cfg, "show", f"svtest:{path}")  # ~/.ssh/config, not [hosts]
    assert code == 0 and "You are welcome." in out, err
    code, _, err = sv(sshd, cfg, "show", "nohost-sv.invalid:/srv/s.jsonl")  # in neither
    assert code == 2 and err.startswith("sessionview: nohost-sv.invalid: unreachable ("), err
    code, _, err = sv(sshd, cfg, "show", "down:/srv/s.jsonl")  # the alias is named with where it led
    assert code == 2 and err.startswith(f"sessionview: down (127.0.0.1:{down}): unreachable ("), err
    assert len(err.strip().splitlines()) == 1
