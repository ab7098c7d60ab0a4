"""``sessionview edit FILE N --json ...`` on a Brute session writes what Brute itself would write."""

import os
import subprocess
import sys



def run(*args):
    return subprocess.run([sys.executable, "-m", "sessionview", *map(str, args)], capture_output=True, env=dict(os.environ), timeout=60)


def record(path, n):
    return path.read_bytes().split(b"\n")[n - 1]


def test_json_edit_is_normalised_as_brute_writes_it(session):
    r = run(
        "edit", session, "4", "--json",
        '{"reasoning":{"blocks":[{"signature":"s","type":"redacted","text":null}]},"content":"Two files.","role":"assistant"}',
    )
    assert r.returncode == 0, r.stderr
    assert record(session, 4) == b'{"role":"assistant","content":"Two files.","reasoning":{"blocks":[{"type":"encrypted","signature":"s"}]}}'
    r = run("edit", session, "5", "--json", '{"role":"user","content":"thanks","reasoning":"I was thinking"}')
    assert r.returncode == 0, r.stderr
    assert record(session, 5) == b'{"role":"user","content":"thanks","reasoning":{"blocks":[{"type":"text","text":"I was thinking"}]}}'
    r = run("edit", session, "2", "--json", '{"role":"assistant","content":"","tool_calls":[{"name":"shell","id":"c1"}]}')
    assert r.returncode == 0, r.stderr
    assert record(session, 2) == b'{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"shell","arguments":{}}]}'
    assert run("check", session).returncode == 0


def test_json_edit_brute_would_raise_on_is_refused_and_nothing_is_written(session):
    before = session.read_bytes()
    for text, reason in [
        ('{"role":"assistant","content":"x","reasoning":{"blocks":[{"type":"text","text":"t","foo":1}]}}', "unknown key `foo` in reasoning block 1"),
        ('{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"shell","arguments":"ls"}]}', "`arguments` in tool call 1 is a string"),
        ('{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"shell","function":{}}]}', "unknown key `function` in tool call 1"),
        ('{"content":"x"}', "missing `role`"),
        ('{"role":"assistant","reasoning":7}', "reasoning is a number"),
    ]:
        r = run("edit", session, "4", "--json", text)
        assert r.returncode == 2, (text, r.stderr)
        assert f"Brute would reject this message: {reason}" in r.stderr.decode(), r.stderr
        assert session.read_bytes() == before


def test_json_edit_with_content_brute_accepts_is_written_as_it_is(session):
    r = run("edit", session, "4", "--json", '{"role":"assistant","content":5}')
    assert r.returncode == 0, r.stderr
    assert record(session, 4) == b'{"role":"assistant","content":5}'


def test_role_system_is_refused_unless_forced(session):
    before = session.read_bytes()
    r = run("edit", session, "5", "--json", '{"role":"system","content":"be brief"}')
    assert r.returncode == 1
    assert "SessionLog drops system messages" in r.stderr.decode() and "--force" in r.stderr.decode()
    assert session.read_bytes() == before
    r = run("edit", session, "5", "--json", '{"role":"system","content":"be brief"}', "--force")
    assert r.returncode == 0, r.stderr
    assert record(session, 5) == b'{"role":"system","content":"be brief"}'


def test_check_reports_each_line_brute_could_not_load(session):
    with session.open("ab") as f:
        f.write(b'{"role":"assistant","content":"","reasoning":{"blocks":[{"type":"text","text":"t","foo":1}]}}\n')
        f.write(b'{"role":"assistant","content":"","tool_calls":[{"id":"c9","name":"f","arguments":{},"extra":1}]}\n')
        f.write(b'{"role":"tool","content":"ok","tool_call_id":"c9"}\n')
    r = run("check", session)
    out = r.stdout.decode()
    assert r.returncode == 1
    assert ":6: schema warning: Brute would refuse this line: unknown key `foo` in reasoning block 1 (ArgumentError: unknown keyword: :foo)" in out
    assert ":7: schema warning: Brute would refuse this line: unknown key `extra` in tool call 1" in out


def test_a_value_brute_accepts_but_a_provider_rejects_is_written_with_a_warning(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(b'{"role":"user","content":"hi"}\n{"role":"assistant","content":"yo"}\n')
    r = subprocess.run([sys.executable, "-m", "sessionview", "edit", str(p), "2", "--json", '{"role":"assistant","content":5}'],
                       capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert b"provider is likely to reject" in r.stderr
    assert p.read_bytes().splitlines()[1] == b'{"role":"assistant","content":5}'
