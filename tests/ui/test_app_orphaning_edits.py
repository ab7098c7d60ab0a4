"""Edits that orphan a result or empty the session warn in the app: a role set to tool without a tool_call_id
(its preview says so), and a truncation that keeps no record (refused first, then done anyway after a preview
that says the session is emptied)."""

from __future__ import annotations

import os
from pathlib import Path

from sessionview.ui.dialogs.confirm import PreviewScreen, RefusalScreen
from uihelpers import SIZE
from edithelpers import flat, make_app, modal, opened, saved, select


async def test_a_role_set_to_tool_without_a_call_id_is_warned_in_the_preview(brute: Path):
    app = make_app(brute)
    app.external_editor = lambda text: '{"role":"tool","content":"hello"}'  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 1)
        await pilot.press("E")
        pv = await modal(pilot, PreviewScreen)
        warning = str(pv.query_one("#preview-warning").render())
        assert "names no tool call" in warning and "orphan" in warning, warning
        await pilot.press("n")


async def test_truncating_to_no_record_is_refused_then_done_anyway_with_a_warning(tmp_path: Path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(
        b'{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"shell","arguments":{}}]}\n'
        b'{"role":"tool","content":"ok","tool_call_id":"c1"}\n'
        b'{"role":"user","content":"thanks"}\n'
    )
    os.utime(p, (1_700_000_000, 1_700_000_000))  # not live: no live-session question first
    app = make_app(p)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 1)
        await pilot.press("t")  # truncate after the call: its result would be gone
        await modal(pilot, RefusalScreen)
        assert "empty the session instead" in flat(app)
        await pilot.press("w")
        await modal(pilot, RefusalScreen, "the emptying refusal")
        text = flat(app)
        assert "would empty the session (all 3 records removed)" in text and "--" not in text
        await pilot.press("f")
        pv = await modal(pilot, PreviewScreen)
        warning = str(pv.query_one("#preview-warning").render())
        assert "this empties the session: all 3 records are removed" in warning, warning
        await pilot.press("y")
        await saved(pilot, screen, "truncate after #0")
    assert p.read_bytes() == b""
