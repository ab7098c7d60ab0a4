"""Helper processes for the index tests. Run as ``python index_child.py MODE JSON``.

Modes:
  steps    change ``path`` one step per line read from stdin, answering ``ok`` after each:
           ``append K`` (K lines, each written and flushed alone), ``rewrite K`` (Brute's end of turn: truncate
           in place, then write the old content and K new lines), ``half`` (truncate and write back only the
           first half of the content: a rewrite caught in the middle), ``finish`` (write the rest after
           ``half``, plus 1 new line), ``compact`` (rewrite with fewer lines and a marker), ``replace`` (a new
           file renamed over the path).
  run      an appender (``kind`` append) or a Brute-style rewriter (``kind`` rewrite) changing ``path``
           ``count`` times, then print ``done``.
  index    index ``paths`` with the index at ``index`` until ``stop`` exists; then print the number of
           records in the index as JSON.
"""

from __future__ import annotations

import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def line(k: int, who: str = "user") -> bytes:
    return json.dumps({"role": who, "content": f"line {k} marker{k} from {who}"}).encode() + b"\n"


def _rewrite(path: str, data: bytes, chunks: int = 3) -> None:
    with open(path, "r+b") as f:
        f.truncate(0)
        step = max(1, len(data) // chunks)
        for i in range(0, len(data), step):
            f.write(data[i : i + step])
            f.flush()


def steps(cfg: dict) -> None:
    path = cfg["path"]
    k = cfg.get("start", 1000)
    held = b""
    for cmd in sys.stdin:
        word, *rest = cmd.split()
        count = int(rest[0]) if rest else 1
        if word == "append":
            for _ in range(count):
                with open(path, "ab") as f:
                    f.write(line(k))
                k += 1
        elif word == "rewrite":
            old = open(path, "rb").read()
            new = b"".join(line(k + i, "assistant") for i in range(count))
            k += count
            _rewrite(path, old + new)
        elif word == "half":
            held = open(path, "rb").read()
            with open(path, "r+b") as f:
                f.truncate(0)
                f.write(held[: len(held) // 2])
        elif word == "finish":
            with open(path, "r+b") as f:
                f.seek(len(held) // 2)
                f.write(held[len(held) // 2 :] + line(k))
            k += 1
        elif word == "compact":
            old = open(path, "rb").read().splitlines(keepends=True)
            marker = json.dumps({"role": "user", "content": "[compacted:summary] the story so far"}).encode() + b"\n"
            _rewrite(path, old[0] + marker + b"".join(old[-2:]))
        elif word == "replace":
            tmp = path + ".tmp"
            with open(tmp, "wb") as f:
                f.write(line(k, "assistant") + line(k + 1))
            k += 2
            os.replace(tmp, path)
        sys.stdout.write("ok\n")
        sys.stdout.flush()


def run(cfg: dict) -> None:
    path = cfg["path"]
    for i in range(cfg["count"]):
        if cfg["kind"] == "append":
            with open(path, "ab") as f:
                f.write(line(10000 + i))
        else:
            old = open(path, "rb").read()
            _rewrite(path, old + line(20000 + i, "assistant"))
        time.sleep(cfg.get("pause", 0.002))
    sys.stdout.write("done\n")
    sys.stdout.flush()


def index(cfg: dict) -> None:
    from sessionview.core.index.indexer import Indexer
    from sessionview.core.index.sqlite import SqliteBackend

    backend = SqliteBackend(cfg["index"])
    indexer = Indexer(backend, batch=cfg.get("batch", 4096))
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        stop = os.path.exists(cfg["stop"])
        indexer.update(cfg["paths"])
        if stop:
            break
    sys.stdout.write(json.dumps(backend.count_docs()) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    {"steps": steps, "run": run, "index": index}[sys.argv[1]](json.loads(sys.argv[2]))
