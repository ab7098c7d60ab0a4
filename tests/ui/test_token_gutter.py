"""The transcript's gutter carries a token bar on each record's first line: a big record stands out at a
glance (▁ under 100 tokens … █ from 20k), and the rest of its lines keep the plain role bar."""

from __future__ import annotations

import json

from sessionview.ui.app import SessionViewApp
from sessionview.ui.screens.session import SessionScreen
from sessionview.ui.widgets.entries import token_bar
from uihelpers import SIZE, all_text, fixed_clock, wait_for


def test_token_bar_steps():
    assert [token_bar(n) for n in (0, 99, 100, 999, 1_000, 4_999, 19_999, 20_000, 10**9)] == list("▁▁▂▃▄▅▇██")


async def test_the_gutter_shows_each_records_tokens_on_its_first_line(tmp_path):
    p = tmp_path / "s.jsonl"
    rows = [
        {"role": "user", "content": "small question"},
        {"role": "assistant", "content": "a small answer"},
        {"role": "assistant", "content": "word " * 12_000},  # ~15k tokens
    ]
    p.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in rows))
    app = SessionViewApp(p, clock=fixed_clock, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.model is not None)
        await pilot.press("g")
        await pilot.pause()
        lines = all_text(app).splitlines()
        header = {n: next(line for line in lines if f"#{n} ·" in line) for n in (2, 3)}
        # the cursor sits on #1; #2 (small) and #3 (big) show their bars right after the role bar
        assert header[2].startswith("▎▁"), header[2]
        assert header[3].startswith("▎▇"), header[3]
        body = lines[lines.index(header[3]) + 1]
        assert body.startswith("▎ word"), body  # only the first line carries the bar
