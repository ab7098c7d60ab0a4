import subprocess
import sys

from sessionview.core.store.stable import wait_stable


def test_a_quiet_file_is_stable(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"{}\n")
    assert wait_stable(p, quiet=0.02, timeout=2.0) is True


def test_a_missing_file_is_not_stable(tmp_path):
    assert wait_stable(tmp_path / "nope", quiet=0.02, timeout=0.5) is False


def test_a_file_rewritten_in_a_loop_is_not_stable_before_the_timeout(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"{}\n")
    code = (
        "import sys, time\n"
        "p = sys.argv[1]; i = 0\n"
        "print('go', flush=True)\n"
        "while True:\n"
        "    i += 1\n"
        "    with open(p, 'w') as f: f.write('{}\\n' * (1 + i % 7))\n"
        "    time.sleep(0.002)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code, str(p)], stdout=subprocess.PIPE)
    try:
        assert child.stdout.readline() == b"go\n"
        assert wait_stable(p, quiet=0.3, timeout=0.6) is False
    finally:
        child.kill()
        child.wait()
    assert wait_stable(p, quiet=0.02, timeout=2.0) is True
