"""Helper processes for the save tests. Run as ``python save_child.py MODE JSON``.

Modes:
  crash   load ``path``, save ``new`` (hex) over it, SIGKILL itself right after the ``crash_at``-th
          filesystem step of the save; prints ``DONE <steps>`` when the save finished first.
  fsize   set RLIMIT_FSIZE to ``limit`` and save ``new_size`` bytes (from a thread if ``thread``);
          prints the outcome as JSON.
  hold    open ``path`` for appending (``flock``: take flock(LOCK_EX) on it instead), print ``ready``,
          wait for stdin to close.
  writer  append ``w%07d\\n`` lines to ``path`` about ``rate`` times a second, opening and closing the
          file for each line, until ``stop`` exists; prints the number of lines written.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from sessionview.core.store import save  # noqa: E402
from sessionview.core.doc.document import Document  # noqa: E402
from sessionview.core.errors import SaveError  # noqa: E402


def crash(cfg: dict) -> None:
    save.CHUNK = cfg.get("chunk", 64)  # small chunks: a crash point between every few bytes
    new = bytes.fromhex(cfg["new"])
    doc = Document.load(cfg["path"])
    stamp = save.stamp_document(doc)
    count = 0
    steps: list[str] = []

    def hook(name: str) -> None:
        nonlocal count
        count += 1
        steps.append(name)
        if count == cfg["crash_at"]:
            sys.stdout.write(f"CRASH {name}\n")
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)

    save._crash_hook = hook
    pieces = [new[i : i + 50] for i in range(0, len(new), 50)]
    save.save(
        cfg["path"],
        lambda appended: [*pieces, appended],
        stamp,
        root=cfg["root"],
        state_dir=cfg["state_dir"],
        lock_path=cfg.get("lock_path"),
    )
    print("DONE", count, " ".join(steps))


def fsize(cfg: dict) -> None:
    import resource

    doc = Document.load(cfg["path"])
    stamp = save.stamp_document(doc)
    new = b"x" * (cfg["new_size"] - 1) + b"\n"
    # CPython ignores SIGXFSZ at startup; an embedding program may not: be the hard case
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (cfg["limit"], hard))
    out: dict = {}

    def run() -> None:
        try:
            r = save.save(cfg["path"], lambda a: [new, a], stamp, root=cfg["root"], state_dir=cfg["state_dir"])
            out["result"] = r.changed
        except SaveError as exc:
            out["error"] = type(exc).__name__
            out["message"] = str(exc)
            out["exit_code"] = exc.exit_code
        except BaseException as exc:  # pragma: no cover - reported to the test
            out["error"] = repr(exc)

    if cfg.get("thread"):
        t = threading.Thread(target=run)
        t.start()
        t.join()
    else:
        run()
    out["sigxfsz"] = int(signal.getsignal(signal.SIGXFSZ))
    print(json.dumps(out))


def hold(cfg: dict) -> None:
    if cfg.get("flock"):
        fd = os.open(cfg["path"], os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
    else:
        fd = os.open(cfg["path"], os.O_WRONLY | os.O_APPEND)
    print("ready", flush=True)
    sys.stdin.read()
    os.close(fd)


def writer(cfg: dict) -> None:
    path, stop, rate = cfg["path"], cfg["stop"], cfg.get("rate", 1000)
    period = 1.0 / rate
    n = 0
    nxt = time.monotonic()
    while True:
        with open(path, "ab") as f:
            f.write(b"w%07d\n" % n)
        n += 1
        if n == 1:
            print("ready", flush=True)
        if os.path.exists(stop):
            break
        nxt += period
        delay = nxt - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    print(n, flush=True)


if __name__ == "__main__":
    mode, cfg = sys.argv[1], json.loads(sys.argv[2])
    {"crash": crash, "fsize": fsize, "hold": hold, "writer": writer}[mode](cfg)
