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

With ``--app``, the same two figures for the app itself (headless, Textual's ``run_test``), on the local file
and on ``svtest:PATH`` read over SFTP (``sessionview.ui.launch.open_remote``, then the app):

* **app first screen**: from the start (for the remote one: connect, login, SFTP start included) until the
  session screen has its model and has drawn it (the last page);
* **app follow latency**: a line appended at t0 until the app's model has it (the next frame draws it),
  the app's own follower and pace (local: every 15 ms; remote: ``POLL_INTERVAL``).

```sh
python bench/bench_remote.py                      # 10M and 100M sessions, 30 appends each
python bench/bench_remote.py --sizes 10M --appends 50 --json out.json
python bench/bench_remote.py --app --file /work/benchdata/s100M-seed42.jsonl --appends 20
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


# -- the app itself ------------------------------------------------------------------------------------
def app_first_screen(path: str, remote: bool) -> float:
    """Seconds from the start until the session screen has drawn its model (the last page)."""
    import asyncio

    from sessionview.remote.address import parse
    from sessionview.ui.app import SessionViewApp
    from sessionview.ui.launch import open_remote
    from sessionview.ui.screens.session import SessionScreen

    async def run() -> float:
        t0 = time.perf_counter()
        if remote:
            target = open_remote("bench", parse(f"svtest:{path}", check_local=False))
            assert not isinstance(target, str), target
            app = SessionViewApp(".", remote=target)
        else:
            app = SessionViewApp(path)
        async with app.run_test(size=(120, 40)) as pilot:
            while not (isinstance(app.screen, SessionScreen) and app.screen.model is not None):
                await pilot.pause(0.002)
            await pilot.pause()  # the frame that draws it
            took = time.perf_counter() - t0
            await app.action_quit()
        if remote:
            target.hosts.close()
        return took

    return asyncio.run(run())


def app_follow(path: str, remote: bool, appends: int) -> list[float]:
    """Latencies of lines appended to ``path`` until the app's model has them."""
    import asyncio

    from sessionview.remote.address import parse
    from sessionview.remote.follow import POLL_INTERVAL
    from sessionview.ui.app import SessionViewApp
    from sessionview.ui.launch import open_remote
    from sessionview.ui.screens.session import SessionScreen

    rng = random.Random(42)

    async def run() -> list[float]:
        if remote:
            target = open_remote("bench", parse(f"svtest:{path}", check_local=False))
            assert not isinstance(target, str), target
            app = SessionViewApp(".", remote=target)
        else:
            app = SessionViewApp(path)
        lats = []
        async with app.run_test(size=(120, 40)) as pilot:
            while not (isinstance(app.screen, SessionScreen) and app.screen.model is not None and app.screen.model.indexed):
                await pilot.pause(0.01)
            screen = app.screen
            await pilot.pause(0.5)  # the follower is polling
            for i in range(appends):
                before = len(screen.model)
                await asyncio.sleep(rng.uniform(0, POLL_INTERVAL))  # a random phase of the poll period
                with open(path, "ab") as f:
                    t0 = time.perf_counter()
                    f.write(json.dumps({"role": "user", "content": f"app append {i}"}).encode() + b"\n")
                while len(screen.model) == before:
                    await pilot.pause(0.002)
                lats.append(time.perf_counter() - t0)
            await app.action_quit()
        if remote:
            target.hosts.close()
        return lats

    return asyncio.run(run())


def app_baseline(tmp: str) -> float:
    """Seconds from the start until the app shows an empty local directory: Textual's own start."""
    import asyncio

    from sessionview.ui.app import SessionViewApp
    from sessionview.ui.screens.browser import BrowserScreen

    empty = os.path.join(tmp, "empty")
    os.makedirs(empty, exist_ok=True)

    async def run() -> float:
        t0 = time.perf_counter()
        app = SessionViewApp(empty, watch=False)
        async with app.run_test(size=(120, 40)) as pilot:
            while not (isinstance(app.screen, BrowserScreen) and app.screen.loaded):
                await pilot.pause(0.002)
            await pilot.pause()
            took = time.perf_counter() - t0
            await app.action_quit()
        return took

    return asyncio.run(run())


def measure_app(path: str, label: str, tmp: str, args: argparse.Namespace) -> dict:
    row: dict = {"bytes": os.path.getsize(path)}
    row["app_start_ms"] = statistics.median(app_baseline(tmp) for _ in range(args.repeat)) * 1e3
    local = [app_first_screen(path, False) for _ in range(args.repeat)]
    remote = [app_first_screen(path, True) for _ in range(args.repeat)]
    row["app_first_screen"] = {"local_ms": statistics.median(local) * 1e3, "remote_ms": statistics.median(remote) * 1e3,
                               "local_all_ms": [round(x * 1e3) for x in local], "remote_all_ms": [round(x * 1e3) for x in remote]}
    live = os.path.join(tmp, f"app-live-{label}.jsonl")
    with open(path, "rb") as src, open(live, "wb") as dst:
        dst.write(src.read(min(os.path.getsize(path), 1 << 20)).rsplit(b"\n", 1)[0] + b"\n")
    row["app_follow"] = {"local": describe(app_follow(live, False, args.appends)),
                         "remote": describe(app_follow(live, True, args.appends))}
    row["load_1min"] = os.getloadavg()[0]
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10M,100M")
    ap.add_argument("--appends", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--data-dir", default=os.environ.get("SV_BENCH_DIR") or os.path.join(HERE, "data"))
    ap.add_argument("--json", metavar="PATH")
    ap.add_argument("--app", action="store_true", help="measure the app itself (first screen, follow), local and over SFTP")
    ap.add_argument("--file", action="append", default=[], help="a session file to measure (read only; instead of --sizes)")
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
            files = [(os.path.basename(f), f) for f in args.file] or [(label, ensure_file(args.data_dir, label))
                                                                       for label in args.sizes.split(",")]
            for label, path in files:
                row = measure_app(path, label, tmp, args) if args.app else measure(access, path, label, tmp, args)
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
