"""The session list keeps the full-text index current in the background (with its watcher), shows progress
above the footer, and a config setting turns it off."""

from __future__ import annotations

import json

from uihelpers import SIZE, all_text, fixed_clock, wait_for

from sessionview.core.index import default_index_path
from sessionview.core.index.sqlite import SqliteBackend
from sessionview.ui.app import SessionViewApp
from sessionview.ui.screens.browser import BrowserScreen


def line(obj) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def indexed_lines(path) -> int:
    b = SqliteBackend(default_index_path())
    try:
        state = b.file_state(str(path))
        return -1 if state is None else state.lines
    finally:
        b.close()


async def browser(pilot) -> BrowserScreen:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen) and app.screen.loaded, what="listing")
    return app.screen


async def test_the_list_indexes_in_the_background_and_follows_changes(tmp_path):
    d = tmp_path / "s"
    d.mkdir()
    a = d / "a.jsonl"
    a.write_bytes(line({"role": "user", "content": "first words"}))
    app = SessionViewApp(d, clock=fixed_clock, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await browser(pilot)
        assert screen.indexing is not None
        await wait_for(pilot, lambda: screen.indexing.status.startswith("index current"), timeout=30, what="the first update")
        assert indexed_lines(a) == 1
        await wait_for(pilot, lambda: "index current" in all_text(app), what="the status line")
        with open(a, "ab") as f:
            f.write(line({"role": "assistant", "content": "a later walrus"}))
        (d / "b.jsonl").write_bytes(line({"role": "user", "content": "a new file"}))
        await wait_for(pilot, lambda: indexed_lines(a) == 2 and indexed_lines(d / "b.jsonl") == 1, timeout=30,
                       what="the watcher's changes indexed")
        (d / "b.jsonl").unlink()
        await wait_for(pilot, lambda: indexed_lines(d / "b.jsonl") == -1, timeout=30, what="the deleted file gone")
        thread = screen.indexing._thread
    assert thread is not None
    thread.join(5)
    assert not thread.is_alive()  # unmounting stops it


async def test_progress_shows_while_a_big_directory_is_indexed(tmp_path):
    d = tmp_path / "s"
    d.mkdir()
    body = b"".join(line({"role": "user", "content": f"message {i} " + "words " * 40}) for i in range(3000))
    for k in range(3):
        (d / f"s{k}.jsonl").write_bytes(body)
    app = SessionViewApp(d, clock=fixed_clock, watch=True)
    seen: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        screen = await browser(pilot)
        screen.indexing.batch = 16 << 10  # many small transactions: progress between them

        def done() -> bool:
            seen.append(screen.indexing.status)
            return screen.indexing.status.startswith("index current")

        await wait_for(pilot, done, timeout=60, what="the first update")
    assert any(s.startswith("indexing") and "files" in s for s in seen), seen


async def test_the_config_turns_it_off(tmp_path, monkeypatch):
    cfg = tmp_path / "config.toml"
    cfg.write_text("index_in_background = false\n")
    monkeypatch.setenv("SESSIONVIEW_CONFIG", str(cfg))
    d = tmp_path / "s"
    d.mkdir()
    (d / "a.jsonl").write_bytes(line({"role": "user", "content": "first words"}))
    app = SessionViewApp(d, clock=fixed_clock, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await browser(pilot)
        await pilot.pause(0.3)
        assert screen.indexing is not None and not screen.indexing.running
        assert not screen.query("#index-status")
    assert indexed_lines(d / "a.jsonl") == -1


async def test_without_watching_nothing_is_indexed(tmp_path):
    d = tmp_path / "s"
    d.mkdir()
    (d / "a.jsonl").write_bytes(line({"role": "user", "content": "first words"}))
    app = SessionViewApp(d, clock=fixed_clock, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await browser(pilot)
        assert screen.indexing is None


def test_the_setting_must_be_true_or_false(tmp_path):
    import pytest

    from sessionview.core.config import ConfigError, load_config

    cfg = tmp_path / "config.toml"
    cfg.write_text('index_in_background = "no"\n')
    with pytest.raises(ConfigError, match="index_in_background must be true or false"):
        load_config(str(cfg))
    cfg.write_text("index_in_background = false\n")
    assert load_config(str(cfg)).index_in_background is False and not load_config(str(cfg)).problems
