"""An export streams: a 50 MB session exports with a few MB of memory, not the file's size."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    """
    import json, os, resource, sys
    from sessionview.core import export
    from sessionview.core.session import open_session

    path, fmt = sys.argv[1], sys.argv[2]
    def peak():
        # the peak RSS in KiB of this program. getrusage's ru_maxrss survives exec, so a child of a big
        # pytest starts at its parent's peak; VmHWM belongs to the new address space
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    before = peak()
    session = open_session(path, digest=False)
    with open(os.devnull, "w", encoding="utf-8") as out:
        n = export.write(session, fmt, out)
    after = peak()
    with open(path, encoding="utf-8") as f:  # the control: what holding the file costs
        held = f.read()
    control = peak()
    print(json.dumps({"messages": n, "growth_kib": after - before, "held_kib": control - after, "chars": len(held)}))
    """
)


@pytest.fixture(scope="module")
def big_session(tmp_path_factory):
    p = tmp_path_factory.mktemp("big") / "big.jsonl"
    chunk = "lorem ipsum dolor sit amet <b> ``` " * 300  # ~10 KB
    with open(p, "w", encoding="utf-8") as f:
        i = 0
        while f.tell() < 50 * 1024 * 1024:
            i += 1
            cid = f"tc_{i}"
            f.write('{"role":"assistant","content":"step %d","tool_calls":[{"id":"%s","name":"shell","arguments":{"command":"%s"}}]}\n' % (i, cid, chunk))
            f.write('{"role":"tool","content":"%s","tool_call_id":"%s"}\n' % (chunk, cid))
    return str(p)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux's /proc/self/status (VmHWM)")
@pytest.mark.parametrize("fmt", ["md", "html"])
def test_export_of_a_50_mb_session_stays_in_bounded_memory(big_session, fmt):
    import json

    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    r = subprocess.run([sys.executable, "-c", CHILD, big_session, fmt], capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["messages"] > 4000
    # holding the file (50 MB of text, more as parsed objects) or the output would exceed this by far
    bound = 40 * 1024  # KiB
    assert got["held_kib"] > bound, got  # the measurement sees a file held whole
    assert got["growth_kib"] < bound, got
