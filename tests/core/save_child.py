"""Helper processes for the save tests. Run as ``python save_child.py MODE JSON``.

Modes:
  crash   load ``path``, save ``new`` (hex) over it, SIGKILL itself right after the ``crash_at``-th
          filesystem step of the save; prints ``DONE <steps>`` when the save finished first.
  fsize   set RLIMIT_FSIZE to ``limit`` and save ``new_size`` bytes (from a thread if ``thread``);
          prints the outcome as JSON.
  hold    open ``path`` for appending (``flock``: take flock(LOCK_EX) on it instead), print ``ready``,
          wait for stdin to close.
  save    load ``path``, save ``new`` (hex) over it and print the outcome as JSON; with ``pause_at`` print
          ``paused`` at the first step of that name and wait for a line on stdin; with ``crash_step``
          SIGKILL itself at the first step of that name.
  cmd     run commands from stdin, one a line, answering ``ok`` to each: ``open`` (O_APPEND, held),
          ``w HEX`` (write through the held fd), ``close``, ``a HEX`` (open by name, append, close).
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

from sessionview.core.store import fsio, save, steps as save_steps  # noqa: E402
from sessionview.core.store.stamp import stamp_document  # noqa: E402
from sessionview.core.doc.document import Document  # noqa: E402
from sessionview.core.errors import SaveError  # noqa: E402


def crash(cfg: dict) -> None:
    fsio.CHUNK = cfg.get("chunk", 64)  # small chunks: a crash point between every few bytes
    if cfg.get("no_link"):  # the state directory on another file system: the backup is copied
        from sessionview.core.store import backup_copy

        backup_copy.link = lambda *args: False
    new = bytes.fromhex(cfg["new"])
    doc = Document.load(cfg["path"])
    stamp = stamp_document(doc)
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

    save_steps.hook = hook
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
    stamp = stamp_document(doc)
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


def save_one(cfg: dict) -> None:
    if "new_file" in cfg:
        with open(cfg["new_file"], "rb") as f:
            new = f.read()
    else:
        new = bytes.fromhex(cfg["new"])
    doc = Document.load(cfg["path"])
    stamp = stamp_document(doc)

    def hook(name: str) -> None:
        if name == cfg.get("crash_step"):
            os.kill(os.getpid(), signal.SIGKILL)
        if name == cfg.get("pause_at"):
            cfg["pause_at"] = None
            print("paused", name, flush=True)
            sys.stdin.readline()

    save_steps.hook = hook
    out: dict = {}
    try:
        r = save.save(
            cfg["path"],
            lambda appended: [new, appended],
            stamp,
            root=cfg["root"],
            state_dir=cfg["state_dir"],
            settle_timeout=cfg.get("settle_timeout", save.SETTLE_TIMEOUT),
        )
        out = {"changed": r.changed, "warnings": list(r.warnings), "not_carried": r.not_carried_bytes}
    except SaveError as exc:
        out = {"error": type(exc).__name__, "message": str(exc), "exit_code": exc.exit_code}
    doc.close()
    print(json.dumps(out), flush=True)


def cmd(cfg: dict) -> None:
    fd = -1
    print("ready", flush=True)
    for line in sys.stdin:
        op, _, arg = line.strip().partition(" ")
        if op == "open":
            fd = os.open(cfg["path"], os.O_WRONLY | os.O_APPEND)
        elif op == "w":
            os.write(fd, bytes.fromhex(arg))
        elif op == "close":
            os.close(fd)
            fd = -1
        elif op == "a":
            afd = os.open(cfg["path"], os.O_WRONLY | os.O_APPEND)
            os.write(afd, bytes.fromhex(arg))
            os.close(afd)
        print("ok", flush=True)


def writer(cfg: dict) -> None:
    path, stop, rate = cfg["path"], cfg["stop"], cfg.get("rate", 1000)
    period = 1.0 / rate
    n = 0
    nxt = time.monotonic()
    while True:
        if cfg.get("split"):  # each line in two writes through one open file, a pause between them
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            os.write(fd, b"w%07d-" % n)
            time.sleep(cfg["split"])
            os.write(fd, b"end\n")
            os.close(fd)
        else:
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
    modes = {"crash": crash, "fsize": fsize, "hold": hold, "writer": writer, "save": save_one, "cmd": cmd}
    modes[mode](cfg)
