"""The app's transcript marks pi branches and branch points in the row."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from sessionview.ui.app import SessionViewApp

from uihelpers import SIZE, fixed_clock
from test_session import entry_text, opened

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from test_pi_branches import branched_lines  # noqa: E402


async def test_rows_show_the_branch_and_the_branch_point(tmp_path):
    path = tmp_path / "branched.jsonl"
    path.write_bytes(b"".join(json.dumps(v, separators=(",", ":")).encode() + b"\n" for v in branched_lines()))
    app = SessionViewApp(path, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        assert "⑂ branch point: 2 branches" in entry_text(screen, 3)
        assert "⑂ branch 1/2 from #3" in entry_text(screen, 5)
        assert "⑂ branch 2/2 from #3 · branch point: 2 branches" in entry_text(screen, 7)
        assert "⑂" not in entry_text(screen, 2)
