#!/usr/bin/env python3
"""``sessionview show`` of this checkout prints the bytes another checkout prints (byte for byte, by SHA-256).

    python bench/show_identical.py --repo /tmp/main-copy                       # the 100 MB file, a damaged copy, the fixtures
    python bench/show_identical.py --repo /tmp/main-copy --files a.jsonl b.jsonl --no-fixtures

For each file it runs ``show FILE`` and ``show --json FILE`` under both checkouts; each small file (the fixtures)
also with every file treated as big (``SHOW_PAIR_FIRST = -1``: printed as it is read), which is the path of a big
file. The damaged copy is the 100 MB session with lines dropped, doubled, cut and spoiled (invalid JSON and UTF-8,
duplicate keys, a huge integer, NaN, control characters, CRLF, blank lines, an unterminated last line), written
under ``--tmp``. Exit status 1 when any output differs.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

RUN = r"""
import sys
from sessionview.cli import commands, main
if sys.argv[1] == "stream":
    commands.SHOW_PAIR_FIRST = -1
sys.exit(main(sys.argv[2:]))
"""

SPOILERS = [
    b"",
    b"{oops",
    b'{"role":"user","content":"a","content":"b"}',
    b'{"role":"assistant","content":"big \\u001b[31m red","tool_calls":[{"id":"x1","name":"shell","arguments":{"n":123456789012345678901234567890}}]}',
    b'{"role":"user","content":NaN}',
    b'{"role":"tool","tool_call_id":"call_00000001","content":"\\u202eevil\\u0007 \\u00ad\\ufeff"}',
    b'{"role":"user","content":"\xff\xfe not utf-8"}',
    b'{"role":"user","content":"crlf line"}\r',
    b'{"role":"assistant","content":null,"tool_calls":[{"id":"dup","name":"a"},{"id":"dup","name":"b","arguments":null}]}',
    b'{"role":"tool","tool_call_id":"dup","content":"[compacted:tool_results] gone"}',
    b'{"role":"assistant","content":"x","reasoning":"thinking: hard"}',
    b'{"role":"user","content":"x","timestamp":"2025-11-01T10:00:05.000Z"}',
    b"[1,2,3]",
]


def damaged(src: str, out: str, seed: int = 14) -> str:
    """``src`` with about one line in 50 dropped, doubled, cut or replaced by a spoiler (deterministic)."""
    rng = random.Random(seed)
    with open(src, "rb") as f, open(out, "wb") as w:
        for line in f:
            r = rng.random()
            if r < 0.005:
                continue  # dropped
            if r < 0.01:
                w.write(line)  # doubled
            elif r < 0.015:
                line = line[: rng.randrange(1, max(2, len(line) - 1))] + b"\n"  # cut
            elif r < 0.02:
                w.write(rng.choice(SPOILERS) + b"\n")
            w.write(line)
        w.write(b'{"role":"user","content":"unterminated')
    return out


def digest(repo: str, mode: str, args: list[str]) -> tuple[str, int, int]:
    """SHA-256 of stdout, its length and the exit status of ``show ARGS`` run from ``repo``."""
    env = dict(os.environ, PYTHONPATH=repo)
    p = subprocess.Popen([sys.executable, "-c", RUN, mode, "show", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd="/")
    assert p.stdout is not None
    h, n = hashlib.sha256(), 0
    while True:
        chunk = p.stdout.read(1 << 20)
        if not chunk:
            break
        h.update(chunk)
        n += len(chunk)
    return h.hexdigest(), n, p.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", required=True, help="the checkout to compare with (e.g. a copy of main)")
    ap.add_argument("--mine", default=REPO, help="this checkout (default: the one holding this script)")
    ap.add_argument("--data-dir", default=os.environ.get("SV_BENCH_DIR") or os.path.join(REPO, "bench", "data"))
    ap.add_argument("--tmp", default="/tmp/show-identical")
    ap.add_argument("--files", nargs="*", help="files instead of the 100 MB session and its damaged copy")
    ap.add_argument("--fixtures", default="/work/shared/reference/fixtures")
    ap.add_argument("--no-fixtures", action="store_true")
    a = ap.parse_args()
    files = a.files
    if files is None:
        os.makedirs(a.tmp, exist_ok=True)
        big = os.path.join(a.data_dir, "s100M-seed42.jsonl")
        files = [big, damaged(big, os.path.join(a.tmp, "s100M-damaged.jsonl"))]
    cases = [(f, "plain") for f in files]
    if not a.no_fixtures:
        for f in sorted(glob.glob(os.path.join(a.fixtures, "**", "*"), recursive=True)):
            if os.path.isfile(f):
                cases += [(f, "plain"), (f, "stream")]
    bad = 0
    for path, mode in cases:
        for extra in ([], ["--json"]):
            theirs = digest(a.repo, mode, [*extra, path])
            mine = digest(a.mine, mode, [*extra, path])
            same = theirs == mine
            bad += not same
            what = f"{'show ' + ' '.join(extra):12} {mode:6} {os.path.basename(path)}"
            print(f"{'same' if same else 'DIFFERENT':9} {what}: {mine[1]:,} bytes, exit {mine[2]}" + ("" if same else f" (theirs: {theirs[1]:,} bytes, exit {theirs[2]})"), flush=True)
    print(f"{len(cases) * 2 - bad} of {len(cases) * 2} outputs identical")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
