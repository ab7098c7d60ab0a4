"""The write commands load only what a save needs: no process runner, pickler or random module is imported
just to edit, delete, truncate or compact (each costs interpreter start time on every command)."""

from __future__ import annotations

import subprocess
import sys

from sessionview.core.doc.pairing import CallLedger
from sessionview.core.session_base import RecordFacts

CODE = """
import sys
import sessionview.cli
import sessionview.core.ops
from sessionview.core.store import save, tmpfiles
from sessionview.core.edit import summary, idscan, integrity
print(" ".join(m for m in ("subprocess", "pickle", "secrets", "random") if m in sys.modules))
"""


def test_write_path_imports_no_subprocess_pickle_or_secrets() -> None:
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_summarizer_still_runs_its_command() -> None:
    from sessionview.core.edit.summary import run_summarizer

    assert run_summarizer("cat >/dev/null; echo hi", [b"{}"]).text == "hi"


def test_held_blocks_still_pickle_and_replay() -> None:
    held = RecordFacts(direct=False)
    held.BLOCK = 2  # seal blocks as they fill, and the last one at replay
    held.tools(1, (("c1", "Bash"),), ())
    held.user(2)
    held.tools(3, (), ("c1",))
    direct = RecordFacts()
    direct.tools(1, (("c1", "Bash"),), ())
    direct.user(2)
    direct.tools(3, (), ("c1",))
    ledger = CallLedger()
    held.replay(ledger)
    assert held.blocks == []
    assert direct.ledger is not None
    assert vars(ledger) == vars(direct.ledger)
