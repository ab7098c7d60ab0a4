#!/usr/bin/env python3
"""Remote sessions over loopback SSH against local figures: the first screen and the follow latency.

Starts a private sshd on 127.0.0.1 (the tests' fixture, ``tests/remote/remote_sshd.py``: throwaway host and
user keys, the client's HOME in a temp dir), then for each session size measures:

* **connect**: SSH connection, login and SFTP start;
* **first screen**: the last 50 records, opened end first (``open_tail`` locally, the SFTP version
  ``sessionview.remote.sessions.open_tail`` remotely: only the last 256 lines are indexed) and viewed;
  also the SFTP requests and bytes it took;
* **whole index**: ``open_session`` (every line offset, through range reads) against ``Document.load``;
* **follow latency**: a line appended by the test at t0, until the follower reports it (``Appended``),
  polled every 10 ms (the mechanism) and at the app's pace (``remote.follow.POLL_INTERVAL``, what a person
  sees). Local: ``Follower(path)``; remote: ``remote_follower``.

```sh
python bench/bench_remote.py                      # 10M and 100M sessions, 30 appends each
python bench/bench_remote.py --sizes 10M --appends 50 --json out.json
```

Session files come from ``../shared/bench/gen_session.py`` when it is there (bench/data or $SV_BENCH_DIR),
otherwise from a simple built-in generator. Stdlib only, besides the project (and asyncssh).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
GEN = os.path.join(os.path.dirname(REPO), "shared", "bench", "gen_session.py")
sys.path[:0] = [REPO, os.path.join(REPO, "tests", "remote")]


def size_bytes(label: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(label[:-1]) * units[label[-1].upper()]) if label[-1].upper() in units else int(label)


def ensure_file(data_dir: str, label: str) -> str:
    path = os.path.join(data_dir, f"remote-s{label}.jsonl")
    if os.path.exists(path):
        return path
    os.makedirs(data_dir, exist_ok=True)
    if os.path.exists(GEN):
        subprocess.run([sys.executable, GEN, "--bytes", label, "--seed", "42", "--out", path], check=True)
        return path
    target = size_bytes(label)
    with open(path, "wb") as f:
        n = 0
        while f.tell() < target:
            role = "user" if n % 2 else "assistant"
            f.write(json.dumps({"role": role, "content": f"message {n} " + "x" * (200 + n % 3000)}).encode() + b"\n")
            n += 1
    return path


def timed(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


def first_screen_local(path: str):
    from sessionview.core.doc.document import Document
    from sessionview.core.session import JsonlSession
    from sessionview.core.tail_open import open_tail

    t = open_tail(path, 256)
    try:
        s = JsonlSession(Document(t.source, path=path))
        views = [s.view(n) for n in range(max(1, len(s) - 49), len(s) + 1)]
        return len(views)
    finally:
        t.close()


def first_screen_remote(access, path: str):
    from sessionview.remote.sessions import open_tail

    opened, s, _end, _size, _whole = open_tail(access, path, 256)
    try:
        views = [s.view(n) for n in range(max(1, len(s) - 49), len(s) + 1)]
        return len(views), opened.reads, opened.bytes_read
    finally:
        opened.close()


def follow_latency(make_follower, path: str, appends: int, interval: float) -> list[float]:
    """Append, and poll every ``interval`` as the app does: the line lands at a random phase of the poll
    period (seeded), so the latency is that wait plus the poll(s) that find it."""
    rng = random.Random(42)
    follower = make_follower(path, os.path.getsize(path))
    lats = []
    try:
        for i in range(appends):
            follower.poll()
            with open(path, "ab") as f:
                t0 = time.perf_counter()
                f.write(json.dumps({"role": "user", "content": f"bench append {i}"}).encode() + b"\n")
            time.sleep(rng.uniform(0, interval))  # where in the poll period the line landed
            while True:
                events = follower.poll()
                if any(type(e).__name__ == "Appended" for e in events):
                    lats.append(time.perf_counter() - t0)
                    break
                time.sleep(interval)
    finally:
        follower.close()
    return lats


def describe(xs: list[float]) -> dict:
    xs = sorted(xs)
    return {"median_ms": statistics.median(xs) * 1e3, "p90_ms": xs[int(len(xs) * 0.9) - 1] * 1e3, "max_ms": xs[-1] * 1e3}


def measure(access, path: str, label: str, tmp: str, args: argparse.Namespace) -> dict:
    from sessionview.core.tail import Follower
    from sessionview.remote.follow import POLL_INTERVAL, remote_follower
    from sessionview.remote.sessions import open_session

    row: dict = {"bytes": os.path.getsize(path)}
    local_s, _ = timed(lambda: first_screen_local(path), args.repeat)
    remote_s, (n, reads, nbytes) = timed(lambda: first_screen_remote(access, path), args.repeat)
    row["first_screen"] = {"local_ms": local_s * 1e3, "remote_ms": remote_s * 1e3, "records": n,
                           "sftp_reads": reads, "sftp_bytes": nbytes}

    from sessionview.core.doc.document import Document

    def whole_local():
        d = Document.load(path, digest=False)
        d.close()

    def whole_remote():
        s = open_session(access, path)
        s.close()

    wl, _ = timed(whole_local, 1)
    wr, _ = timed(whole_remote, 1)
    row["whole_index"] = {"local_s": wl, "remote_s": wr}
    live = os.path.join(tmp, f"live-{label}.jsonl")
    with open(path, "rb") as src, open(live, "wb") as dst:
        dst.write(src.read(min(os.path.getsize(path), 1 << 20)).rsplit(b"\n", 1)[0] + b"\n")
    local_f = lambda p, off: Follower(p, offset=off)
    remote_f = lambda p, off: remote_follower(access, p, off)
    row["follow"] = {
        "local_10ms": describe(follow_latency(local_f, live, args.appends, 0.01)),
        "remote_10ms": describe(follow_latency(remote_f, live, args.appends, 0.01)),
        "local_app_pace": describe(follow_latency(local_f, live, args.appends, POLL_INTERVAL)),
        "remote_app_pace": describe(follow_latency(remote_f, live, args.appends, POLL_INTERVAL)),
    }
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10M,100M")
    ap.add_argument("--appends", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--data-dir", default=os.environ.get("SV_BENCH_DIR") or os.path.join(HERE, "data"))
    ap.add_argument("--json", metavar="PATH")
    args = ap.parse_args()

    import remote_sshd

    from sessionview.remote.address import Address
    from sessionview.remote.connection import Connection
    from sessionview.remote.sftp import SftpAccess

    figures: dict = {"sizes": {}}
    with tempfile.TemporaryDirectory(prefix="sv-bench-remote-") as tmp:
        srv = remote_sshd.start(pathlib.Path(tmp) / "sshd")
        os.environ["HOME"] = str(srv.home)
        os.environ.pop("SSH_AUTH_SOCK", None)
        try:
            connect_s, conn = timed(lambda: Connection(Address("svtest", "")).open(), 1)
            figures["connect_ms"] = connect_s * 1e3
            access = SftpAccess(conn)
            for label in args.sizes.split(","):
                path = ensure_file(args.data_dir, label)
                row = measure(access, path, label, tmp, args)
                figures["sizes"][label] = row
                print(json.dumps({label: row}, indent=1), flush=True)
            conn.close()
        finally:
            srv.stop()
    figures["connect_ms"] = round(figures["connect_ms"], 1)
    print(f"connect + login + SFTP: {figures['connect_ms']} ms")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1)


if __name__ == "__main__":
    main()
