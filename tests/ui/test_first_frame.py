"""What waits for the first frame, and what an append redraws: the index and the footer's keys come after the
transcript's first frame; the footer is rebuilt only when its keys change; a tool result that arrives later
redraws the call it answers and leaves the other drawn entries as they were."""

from __future__ import annotations

import json
from pathlib import Path

from textual.screen import ModalScreen
from textual.widgets._footer import FooterKey

from sessionview.ui.app import SessionViewApp
from sessionview.ui.widgets.blocks import plain_lines
from sessionview.ui.widgets.footer import SessionFooter
from uihelpers import SIZE, fixed_clock, wait_for


def record(obj: dict) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def entry_text(screen, number: int) -> str:
    t = screen.transcript
    return "\n".join(plain_lines(t.entry_lines(screen.model.row_of(number))))


def two_messages(tmp_path: Path) -> Path:
    p = tmp_path / "s.jsonl"
    p.write_bytes(record({"role": "user", "content": "hello"}) + record({"role": "assistant", "content": "hi"}))
    return p


def has_edit(footer: SessionFooter) -> bool:
    return any(k.description == "Edit" for k in footer.query(FooterKey))


async def opened(pilot):
    app = pilot.app
    await wait_for(pilot, lambda: getattr(app.screen, "model", None) is not None and app.screen.model.indexed, what="the index")
    await wait_for(pilot, lambda: app.screen.model.stats is not None, what="the stats")
    await pilot.pause()
    return app.screen


async def test_a_result_that_arrives_later_links_its_call_and_leaves_the_other_entries_drawn(tmp_path: Path):
    p = tmp_path / "live.jsonl"
    call = {"role": "assistant", "content": "", "tool_calls": [{"id": "tc_1", "name": "shell", "arguments": {"command": "ls -la"}}]}
    p.write_bytes(record({"role": "user", "content": "list the files"}) + record(call))
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        t = screen.transcript
        prompt = t.entry_lines(screen.model.row_of(1))
        assert "→ #3" not in entry_text(screen, 2)
        with open(p, "ab") as f:
            f.write(record({"role": "tool", "content": "README.md", "tool_call_id": "tc_1"}))
        await wait_for(pilot, lambda: len(screen.model) == 3, what="the result")
        await pilot.pause()
        assert "→ #3" in entry_text(screen, 2)  # the call, drawn before its result, links it now
        assert t.entry_lines(screen.model.row_of(1)) is prompt  # the prompt was not drawn again


async def test_the_footer_keeps_its_keys_until_they_change(tmp_path: Path):
    app = SessionViewApp(two_messages(tmp_path), clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        footer = screen.query_one(SessionFooter)
        await wait_for(pilot, lambda: bool(footer.query(FooterKey)), what="the footer's keys")
        keys = list(footer.query(FooterKey))
        assert any(k.description == "Edit" and not k.disabled for k in keys)
        screen.refresh_bindings()  # nothing changed: the same keys stay mounted
        await pilot.pause()
        await pilot.pause()
        assert list(footer.query(FooterKey)) == keys
        screen.state = "error"  # nothing could be opened: the edit keys go, and the footer shows that
        await wait_for(pilot, lambda: not has_edit(footer), what="a rebuilt footer")
        assert footer.query(FooterKey) and not any(k in keys for k in footer.query(FooterKey))


class DroppingDialog(ModalScreen):
    """A dialog dismissed before it refreshed: what Textual queued on it, to run after its refresh, never runs
    (``call_after_refresh`` from any widget queues on the app's current screen)."""

    def _invoke_later(self, callback, sender) -> None:
        pass


async def test_the_footer_follows_its_screen_under_a_dialog_that_drops_what_was_queued_on_it(tmp_path: Path):
    app = SessionViewApp(two_messages(tmp_path), clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        footer = screen.query_one(SessionFooter)
        await wait_for(pilot, lambda: has_edit(footer), what="the footer's keys")
        state = screen.state
        app.push_screen(DroppingDialog())
        await wait_for(pilot, lambda: isinstance(app.screen, DroppingDialog), what="the dialog")
        screen.state = "error"  # the edit keys go while the dialog is up
        await wait_for(pilot, lambda: not has_edit(footer), what="the footer rebuilt under the dialog")
        app.pop_screen()
        screen.state = state  # and come back: the footer is not stuck on a rebuild that never ran
        await wait_for(pilot, lambda: has_edit(footer), what="the keys back")


async def test_the_index_starts_after_the_first_frame(tmp_path: Path, monkeypatch):
    from sessionview.ui.controllers.follow import Follow

    p = tmp_path / "big.jsonl"
    p.write_bytes(b"".join(record({"role": "user" if i % 2 else "assistant", "content": f"message {i}"}) for i in range(2000)))
    order: list[str] = []
    start = Follow._start_index
    monkeypatch.setattr(Follow, "_start_index", lambda self, *a: (order.append("index"), start(self, *a))[1])
    app = SessionViewApp(p, clock=fixed_clock)
    shown = app._display

    def display(screen, renderable):
        shown(screen, renderable)
        if renderable is not None and not order:
            order.append("frame")

    monkeypatch.setattr(app, "_display", display)
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot)
        assert order[:2] == ["frame", "index"]
        assert "message 1999" in entry_text(app.screen, len(app.screen.model))


async def test_the_first_frame_is_drawn_once_and_the_footer_comes_after_it(tmp_path: Path, monkeypatch):
    """Textual mounts the first screen inside a batch and writes no frame drawn there: the session screen draws
    none inside it, so its first drawn frame is the one written. The footer (Textual's, with its style sheet)
    is mounted only after that frame, in the row that held its place."""
    from textual._compositor import LayoutUpdate

    p = tmp_path / "s.jsonl"
    p.write_bytes(record({"role": "user", "content": "hello"}) + record({"role": "assistant", "content": "hi"}))
    app = SessionViewApp(p, clock=fixed_clock)
    shown = app._display
    frames: list[tuple[int, bool]] = []  # (the app's batch depth, whether the footer was there) of each whole frame

    def display(screen, renderable):
        if isinstance(renderable, LayoutUpdate) and screen is app.screen:
            frames.append((app._batch_count, bool(screen.query(SessionFooter))))
        shown(screen, renderable)

    monkeypatch.setattr(app, "_display", display)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await wait_for(pilot, lambda: bool(screen.query(SessionFooter)), what="the footer")
        assert frames and frames[0] == (0, False)  # drawn once the batch was over, before the footer
        assert all(depth == 0 for depth, _ in frames)
        footer = screen.query_one(SessionFooter)
        assert footer.parent is screen.query_one("#footer-space") and footer.region == footer.parent.region
        await wait_for(pilot, lambda: bool(footer.query(FooterKey)), what="the footer's keys")


def test_the_footer_is_not_mounted_in_a_screen_that_is_gone():
    """The app quit right after its first frame: the footer's row is no longer attached, and mounting in it
    would raise Textual's MountError as the app exits."""
    from textual.containers import Horizontal

    from sessionview.ui.widgets.footer import mount_in

    assert mount_in(Horizontal(id="footer-space")) is None
