"""An overview of the run in the app: where a session opens, the prompt list (P), the outline (T) with
subagents opened inline or in their own screen and back."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from textual.widgets import OptionList, Tree

from sessionview.core.session import open_session
from sessionview.core.view.outline import is_prompt
from sessionview.ui.app import SessionViewApp
from sessionview.ui.screens.outline import OutlineScreen
from sessionview.ui.screens.prompts import PromptsScreen
from sessionview.ui.screens.session import SessionScreen

from uihelpers import FIXTURES, NOW, SIZE, after_workers, fixed_clock, place, wait_for

REAL = FIXTURES / "real" / "claude-code"
PROJECT = REAL / "agent-sessions-subagent-project"
MAIN = "0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f"


def make_app(path: Path, **kw) -> SessionViewApp:
    return SessionViewApp(path, clock=fixed_clock, **kw)


async def opened(pilot) -> SessionScreen:
    app = pilot.app
    await after_workers(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.model is not None, what="open")
    screen = app.screen
    await after_workers(pilot, lambda: screen.model.indexed and screen.model.stats is not None, what="index and stats")
    await pilot.pause()
    return screen


def subagent_project(tmp_path: Path) -> Path:
    d = tmp_path / "project"
    shutil.copytree(PROJECT, d)
    for f in d.rglob("*"):
        os.utime(f, (NOW - 3600, NOW - 3600))  # finished: written an hour before the tests' now
    return d / f"{MAIN}.jsonl"


# -- where a session opens --------------------------------------------------------------------------
async def test_a_finished_session_opens_at_its_first_prompt_and_G_goes_to_the_end(tmp_path):
    path = place(FIXTURES / "codex-rollout.jsonl", tmp_path, 3600)  # #1 meta, #2 environment context, #3 the prompt
    async with make_app(path).run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        t = screen.transcript
        assert screen.state == "idle"
        assert t.cursor_number == 3 and not t.follow
        await pilot.press("G")
        assert t.cursor_number == len(screen.model) and t.follow
        await pilot.press("g")
        assert t.cursor_number == 1


async def test_a_live_session_opens_at_its_end_following(tmp_path):
    path = place(FIXTURES / "codex-rollout.jsonl", tmp_path, 1)  # written a second ago: live
    async with make_app(path).run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        t = screen.transcript
        assert screen.state == "live"
        assert t.cursor_number == len(screen.model) and t.follow
        await pilot.press("g")
        assert t.cursor_number == 1 and not t.follow


# -- the prompt list ----------------------------------------------------------------------------------
async def test_the_prompt_list_jumps_to_the_chosen_prompt(tmp_path):
    path = place(REAL / "daaain-representative_messages.jsonl", tmp_path, 3600)
    async with make_app(path).run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await pilot.press("G")
        await pilot.press("P")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, PromptsScreen), what="prompt list")
        ol = pilot.app.screen.query_one(OptionList)
        assert ol.option_count == 4
        assert ol.highlighted == 3  # the prompt the cursor was in (the last one)
        await pilot.press("up", "enter")
        await wait_for(pilot, lambda: pilot.app.screen is screen, what="back to the session")
        assert screen.transcript.cursor_number == 7
        # typing filters; enter takes the one left
        await pilot.press("P")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, PromptsScreen), what="prompt list")
        await pilot.press(*"timing")
        assert pilot.app.screen.query_one(OptionList).option_count == 1
        await pilot.press("enter")
        await wait_for(pilot, lambda: pilot.app.screen is screen, what="back to the session")
        assert screen.transcript.cursor_number == 11


async def test_the_prompt_list_leaves_out_injected_lines_and_tool_results(tmp_path):
    path = place(REAL / "daaain-edge_cases.jsonl", tmp_path, 3600)
    views = list(open_session(str(path)).views())
    wanted = [v.number for v in views if is_prompt(v)]
    assert any(v.injected for v in views) and any(v.tool_results for v in views)
    async with make_app(path).run_test(size=SIZE) as pilot:
        await opened(pilot)
        await pilot.press("P")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, PromptsScreen), what="prompt list")
        shown = [p.number for p in pilot.app.screen.prompts]
        assert shown == wanted
        assert pilot.app.screen.query_one(OptionList).option_count == len(wanted)
        await pilot.press("escape")


# -- the outline ----------------------------------------------------------------------------------------
def tree_rows(screen: OutlineScreen) -> list[tuple[str, int | None]]:
    tree = screen.query_one(Tree)
    rows = []
    for i in range(tree.last_line + 1):
        node = tree.get_node_at_line(i)
        if node is not None and node.data is not None:
            rows.append((node.data[0].kind, node.data[0].number))
    return rows


async def goto_row(pilot, screen: OutlineScreen, kind: str, number: int | None = None) -> None:
    tree = screen.query_one(Tree)
    for i in range(tree.last_line + 1):
        node = tree.get_node_at_line(i)
        if node is not None and node.data is not None and node.data[0].kind == kind and (number is None or node.data[0].number == number):
            tree.cursor_line = i
            await pilot.pause()
            return
    raise AssertionError(f"no {kind} #{number} in the outline: {tree_rows(screen)}")


async def test_the_outline_shows_the_sidechain_under_its_task_call_and_enter_jumps(tmp_path):
    path = place(REAL / "daaain-sidechain_integrated.jsonl", tmp_path, 3600)
    async with make_app(path).run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await pilot.press("T")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, OutlineScreen), what="outline")
        outline = pilot.app.screen
        assert tree_rows(outline) == [("start", 1), ("tool", 1), ("subagent", 3), ("tool", 4)]
        await goto_row(pilot, outline, "tool", 4)
        await pilot.press("enter")
        await wait_for(pilot, lambda: pilot.app.screen is screen, what="back to the session")
        assert screen.transcript.cursor_number == 4


async def test_a_subagent_file_opens_in_its_own_screen_and_esc_returns_to_its_call(tmp_path):
    path = subagent_project(tmp_path)
    sub = path.with_suffix("") / "subagents" / "agent-a0ad4f44468bdf20d.jsonl"
    async with make_app(path).run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        assert screen.transcript.cursor_number == 2  # the first prompt
        await pilot.press("T")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, OutlineScreen), what="outline")
        outline = pilot.app.screen
        assert tree_rows(outline) == [("turn", 2), ("tool", 3), ("subagent", None)]
        await goto_row(pilot, outline, "subagent")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, SessionScreen) and pilot.app.screen is not screen, what="the subagent's screen")
        sub_screen = pilot.app.screen
        assert sub_screen.path == str(sub)
        await after_workers(pilot, lambda: sub_screen.model is not None and sub_screen.model.indexed, what="subagent open")
        assert sub_screen.model.view(1).text == "Search the repo for TODO comments"
        await pilot.press("escape")
        await wait_for(pilot, lambda: pilot.app.screen is screen, what="back to the parent session")
        assert screen.transcript.cursor_number == 3  # the Task call that started it


async def test_a_subagent_file_unfolds_inline_and_its_call_opens_its_screen_there(tmp_path):
    path = subagent_project(tmp_path)
    async with make_app(path).run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await pilot.press("T")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, OutlineScreen), what="outline")
        outline = pilot.app.screen
        await goto_row(pilot, outline, "subagent")
        await pilot.press("space")
        await wait_for(pilot, lambda: ("tool", 2) in tree_rows(outline), what="the subagent's own outline")
        assert tree_rows(outline) == [("turn", 2), ("tool", 3), ("subagent", None), ("turn", 1), ("tool", 2)]
        labels = [str(outline.query_one(Tree).get_node_at_line(i).label) for i in range(5)]
        assert "bash  grep -rn TODO" in labels[4]
        await goto_row(pilot, outline, "tool", 2)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, SessionScreen) and pilot.app.screen is not screen, what="the subagent's screen")
        sub_screen = pilot.app.screen
        await after_workers(pilot, lambda: sub_screen.model is not None and sub_screen.transcript.cursor_number == 2, what="at the bash call")
        await pilot.press("q")
        await wait_for(pilot, lambda: pilot.app.screen is screen, what="back to the parent session")
        assert screen.transcript.cursor_number == 3


async def test_outline_esc_leaves_the_cursor_where_it_was(tmp_path):
    path = place(REAL / "daaain-representative_messages.jsonl", tmp_path, 3600)
    async with make_app(path).run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await pilot.press("j")
        before = screen.transcript.cursor_number
        await pilot.press("T")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, OutlineScreen), what="outline")
        await pilot.press("escape")
        await wait_for(pilot, lambda: pilot.app.screen is screen, what="back")
        assert screen.transcript.cursor_number == before


async def test_hostile_prompts_stay_inert_in_the_outline_and_the_prompt_list(tmp_path):
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(
        b'{"role":"user","content":"[bold red]markup[/] \\u001b[31mred\\u001b]52;c;aGk=\\u0007 $(rm)"}\n'
        b'{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"shell[/]","arguments":{"command":"echo [link=file:///etc]x[/link]"}}]}\n'
    )
    os.utime(path, (NOW - 3600, NOW - 3600))
    async with make_app(path).run_test(size=SIZE) as pilot:
        await opened(pilot)
        await pilot.press("T")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, OutlineScreen), what="outline")
        tree = pilot.app.screen.query_one(Tree)
        labels = [tree.get_node_at_line(i).label.plain for i in range(tree.last_line + 1)]
        assert labels == [
            "#1 ❯ [bold red]markup[/] \\x1b[31mred\\x1b]52;c;aGk=\\x07 $(rm)",
            "#2 ⚙ shell[/]  echo [link=file:///etc]x[/link]",
        ]
        await pilot.press("escape")
        await pilot.press("P")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, PromptsScreen), what="prompt list")
        option = pilot.app.screen.query_one(OptionList).get_option_at_index(0)
        assert "[bold red]markup[/] \\x1b[31mred" in str(option.prompt)
