"""A stand-in for the TUI that speaks textual's web-driver protocol, for fast and exact serve tests.

It prints the ``__GANGLION__`` prelude, sends its argv as one data packet, echoes every stdin packet
back as data, and exits on the ``quit`` meta packet or at the end of stdin, like textual's WebDriver.

    fake_app.py [--stubborn]   --stubborn: ignore ``quit`` and SIGTERM (only SIGKILL stops it)
"""

import json
import signal
import sys


def packet(kind: bytes, payload: bytes) -> bytes:
    return kind + len(payload).to_bytes(4, "big") + payload


def main() -> int:
    stubborn = "--stubborn" in sys.argv
    if stubborn:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    out = sys.stdout.buffer
    inp = sys.stdin.buffer
    out.write(b"__GANGLION__\n")
    out.write(packet(b"D", json.dumps({"argv": sys.argv}).encode()))
    out.flush()
    while True:
        head = inp.read(5)
        if len(head) < 5:
            break
        size = int.from_bytes(head[1:], "big")
        payload = inp.read(size)
        if head[:1] == b"M":
            meta = json.loads(payload)
            if meta.get("type") == "quit" and not stubborn:
                out.write(packet(b"M", json.dumps({"type": "exit"}).encode()))
                out.flush()
                return 0
        else:
            out.write(packet(b"D", b"echo:" + payload))
            out.flush()
    if stubborn:
        signal.pause()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
