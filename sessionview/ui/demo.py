"""``sessionview demo``: the bundled sessions in a temporary directory, one of them written live."""

from __future__ import annotations

import os
import shutil
import tempfile
import time

LIVE_NAME = "brute-live.jsonl"


def prepare(directory: str, now: float | None = None) -> list[str]:
    """Copy the bundled example sessions into ``directory`` with staggered mtimes. Returns the copies."""
    from sessionview.demo import example_files

    now = time.time() if now is None else now
    out = []
    for i, src in enumerate(example_files()):
        dst = os.path.join(directory, os.path.basename(src))
        shutil.copyfile(src, dst)
        stamp = now - 600 * (i + 1)
        os.utime(dst, (stamp, stamp))
        out.append(dst)
    return out


def run_demo() -> int:
    """Open the app on a temporary copy of the examples while a simulated agent writes a Brute session."""
    from sessionview.demo.agent import SimulatedAgent
    from sessionview.ui.app import SessionViewApp
    from sessionview.ui.launch import _trust_the_terminal_size

    directory = tempfile.mkdtemp(prefix="sessionview-demo-")
    agent = None
    try:
        prepare(directory)
        agent = SimulatedAgent(os.path.join(directory, LIVE_NAME))
        agent.start()
        _trust_the_terminal_size()
        app = SessionViewApp(directory)
        result = app.run()
        return int(app.return_code or result or 0)
    finally:
        if agent is not None:
            agent.stop()
            agent.join(timeout=3)
        shutil.rmtree(directory, ignore_errors=True)
