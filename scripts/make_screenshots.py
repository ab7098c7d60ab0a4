#!/usr/bin/env python3
"""Regenerate ``screenshots/`` from the real app, on the bundled demo sessions: the ``*.svg`` headless, and
``serve-browser.png`` from ``sessionview serve`` in headless Chromium (playwright).

    python scripts/make_screenshots.py [--out screenshots] [--size 120x36] [--no-browser]

Deterministic: the sessions are copied to a temporary directory (shown as ``sessions``) with fixed mtimes,
the app gets a fixed clock, and every worker is waited for before a picture is taken. The browser picture
needs ``chromium`` and fonts with the app's glyphs (Debian: ``apt-get install chromium fonts-dejavu-core
fonts-noto-color-emoji``); without Chromium or playwright it is skipped with a word.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

NOW = 1_767_225_600.0  # 2026-01-01T00:00:00Z

from sessionview.ui.widgets import markdown  # noqa: E402

markdown.load()  # Markdown from the first frame, as the app shows it once its renderer has loaded


def clock() -> float:
    return NOW


async def wait_for(pilot, predicate, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(str(predicate))
        await pilot.pause(0.01)


def prepare(directory: Path) -> None:
    from sessionview.demo import example_files

    for i, src in enumerate(example_files()):
        dst = directory / os.path.basename(src)
        shutil.copyfile(src, dst)
        stamp = NOW - 540 * (i + 1)
        os.utime(dst, (stamp, stamp))
    live = directory / "brute-live.jsonl"
    shutil.copyfile(directory / "brute-session.jsonl", live)
    os.utime(live, (NOW - 2, NOW - 2))


async def session_ready(pilot) -> None:
    from sessionview.ui.screens.session import SessionScreen

    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.model is not None)
    await wait_for(pilot, lambda: app.screen.model.indexed and app.screen.model.stats is not None)
    await pilot.pause()


async def shoot(out: Path, size: tuple[int, int]) -> list[Path]:
    from sessionview.ui.app import SessionViewApp
    from sessionview.ui.screens.browser import BrowserScreen

    written: list[Path] = []

    def save(app, name: str) -> None:
        app.save_screenshot(filename=name, path=str(out))
        written.append(out / name)

    # 1. the browser
    app = SessionViewApp("sessions", clock=clock, watch=False)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen) and app.screen.loaded)
        await wait_for(pilot, lambda: all(not e.stale for e in app.screen.table.rows))
        await pilot.pause()
        save(app, "browser.svg")

    # 2. a transcript with tool calls, one unfolded, and the detail pane
    app = SessionViewApp("sessions/brute-session.jsonl", clock=clock)
    async with app.run_test(size=size) as pilot:
        await session_ready(pilot)
        await pilot.press("colon", *"10", "enter")
        await wait_for(pilot, lambda: app.screen.transcript.cursor_number == 10)
        await pilot.press("enter")
        await pilot.pause()
        save(app, "transcript.svg")
        await pilot.press("i")
        await pilot.pause()
        save(app, "detail.svg")

    # 3. follow mode: scrolled away while the agent writes (new-messages marker, pending line)
    app = SessionViewApp("sessions/brute-live.jsonl", clock=clock)
    async with app.run_test(size=size) as pilot:
        await session_ready(pilot)
        screen = app.screen
        await pilot.press("k", "k", "k")
        with open("sessions/brute-live.jsonl", "ab") as f:
            f.write(b'{"role":"user","content":"Can you also check the Windows runner?"}\n')
            f.write(b'{"role":"assistant","content":"","tool_calls":[{"id":"tc_08","name":"shell","arguments":{"command":"gh run list --workflow ci.yml"}}]}\n')
            f.write(b'{"role":"tool","content":"completed  success  ci  main')
        await wait_for(pilot, lambda: screen.transcript.new_count == 2 and screen.model.pending is not None)
        await pilot.pause()
        save(app, "follow.svg")

    # 4. bad records: invalid JSON, invalid UTF-8, hostile text shown literally
    app = SessionViewApp("sessions/problems.jsonl", clock=clock)
    async with app.run_test(size=size) as pilot:
        await session_ready(pilot)
        await pilot.press("g", "j", "j", "i")
        await pilot.pause()
        save(app, "bad-record.svg")

    # 5. help: tall enough to show every key
    app = SessionViewApp("sessions/brute-session.jsonl", clock=clock)
    async with app.run_test(size=(size[0], max(size[1], 84))) as pilot:
        await session_ready(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        save(app, "help.svg")

    # 6. editing: the message editor, then a compaction's preview and its diff (nothing is written)
    from sessionview.ui.dialogs.confirm import PreviewScreen
    from sessionview.ui.dialogs.edit import CompactScreen, EditorScreen

    app = SessionViewApp("sessions/brute-session.jsonl", clock=clock)
    async with app.run_test(size=size) as pilot:
        await session_ready(pilot)
        screen = app.screen
        await pilot.press("colon", "9", "enter")
        await wait_for(pilot, lambda: screen.transcript.cursor_number == 9)
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, EditorScreen))
        editor = app.screen
        # an edit Brute's reader would reject: the error is shown in place and the text is kept
        editor.text_area.load_text(
            '{\n  "role": "user",\n  "content": "Yes please. Keep the default behaviour backwards compatible, '
            'and add a test for Tokyo.",\n  "priority": "high"\n}\n'
        )
        editor.text_area.move_cursor((3, 22))
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: editor.error)
        await pilot.pause()
        save(app, "editor.svg")
        from sessionview.ui.dialogs.confirm import ConfirmScreen

        await pilot.press("escape")  # the text was changed: it asks first
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_for(pilot, lambda: app.screen is screen and not screen.busy)
        await pilot.press("colon", "2", "enter")
        await wait_for(pilot, lambda: screen.transcript.cursor_number == 2)
        await pilot.press("v", *"jjjjjj", "c")
        await wait_for(pilot, lambda: isinstance(app.screen, CompactScreen))
        compact = app.screen
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: compact.text.startswith("Compacted"))
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, PreviewScreen))
        await pilot.pause()
        save(app, "compact-preview.svg")
        await pilot.press("d")
        await pilot.pause()
        save(app, "diff.svg")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, CompactScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen and not screen.busy)

    # 7. the outline of a run (T): turns, tool calls (an error), a subagent, compactions
    from sessionview.ui.screens.outline import OutlineScreen

    app = SessionViewApp("sessions/claude-code.jsonl", clock=clock)
    async with app.run_test(size=size) as pilot:
        await session_ready(pilot)
        await pilot.press("T")
        await wait_for(pilot, lambda: isinstance(app.screen, OutlineScreen))
        await pilot.pause()
        save(app, "outline.svg")

    # 8. the context view (C): the context over the session, the largest records, totals by role and tool
    from sessionview.ui.screens.context import ContextScreen

    app = SessionViewApp("sessions/claude-code.jsonl", clock=clock)
    async with app.run_test(size=size) as pilot:
        await session_ready(pilot)
        await pilot.press("C")
        await wait_for(pilot, lambda: isinstance(app.screen, ContextScreen) and app.screen.profile is not None and not app.screen.workers_running())
        await pilot.pause()
        save(app, "context.svg")

    # 9. search every session (ctrl+f in the session list); the index is in the temporary directory
    from sessionview.ui.screens.search_all import SearchAllScreen

    app = SessionViewApp("sessions", clock=clock, watch=False)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen) and app.screen.loaded)
        await pilot.press("ctrl+f")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchAllScreen))
        screen = app.screen
        await wait_for(pilot, lambda: screen.index_status == "index current", timeout=60)
        screen.query_one("#search-all-input").value = "timestamp"
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.hits and screen.search_status and "…" not in screen.search_status)
        await wait_for(pilot, lambda: screen.index_status == "index current", timeout=60)  # the search's own pass
        await pilot.pause()
        save(app, "search.svg")
    return written


SERVE_NEEDLE = "The test suite fails on CI"  # message #2 of the demo's brute-session.jsonl

SCREEN_TEXT = """() => {
  const t = window.__svTerminal;
  if (!t) { const rows = document.querySelector('.xterm-rows'); return rows ? rows.innerText : ''; }
  const b = t.buffer.active, out = [];
  for (let i = 0; i < t.rows; i++) { const line = b.getLine(b.viewportY + i); out.push(line ? line.translateToString(true) : ''); }
  return out.join('\\n');
}"""

KEEP_TERMINAL = """(() => {
  Object.defineProperty(Object.prototype, "_terminal", {configurable: true, set(value) {
    Object.defineProperty(this, "_terminal", {value, writable: true, configurable: true, enumerable: true});
    if (value && value.buffer && value.buffer.active && !window.__svTerminal) window.__svTerminal = value;
  }});
})();"""


async def shoot_browser(out: Path) -> Path | None:
    """``sessionview serve`` (read-only) on the demo sessions, in headless Chromium: a session, from the top."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        chromium = None
    if chromium is None:
        print("serve-browser.png: skipped (needs chromium and playwright)", file=sys.stderr)
        return None
    from sessionview.serve.server import SessionViewServer

    # the app runs in its own process with the real clock: ages relative to now
    now = time.time()
    for i, p in enumerate(sorted(Path("sessions").iterdir())):
        os.utime(p, (now - 540 * (i + 1), now - 540 * (i + 1)))
    argv = [sys.executable, "-m", "sessionview", "--read-only", "sessions"]
    server = SessionViewServer("sessions", argv=argv, port=0)
    await server.start()
    try:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox", "--disable-gpu"])
            try:
                context = await browser.new_context(viewport={"width": 1200, "height": 760})
                await context.add_init_script(KEEP_TERMINAL)
                page = await context.new_page()
                await page.goto(server.url)

                async def screen_with(needle: str, nudge: str | None = None) -> str:
                    deadline = time.monotonic() + 60
                    while time.monotonic() < deadline:
                        text = await page.evaluate(SCREEN_TEXT)
                        if needle in text:
                            return text
                        if nudge:
                            await page.keyboard.press(nudge)
                        await asyncio.sleep(0.3)
                    raise TimeoutError(f"{needle!r} never showed; the screen was:\n{text}")

                await screen_with("brute-session.jsonl")
                await page.keyboard.press("/")
                await page.keyboard.type("brute-session")
                await screen_with("1 match")
                await page.keyboard.press("Enter")  # opens the match
                await screen_with(SERVE_NEEDLE, nudge="Home")
                previous = ""
                for _ in range(40):  # until the screen settles
                    await asyncio.sleep(0.3)
                    text = await page.evaluate(SCREEN_TEXT)
                    if SERVE_NEEDLE not in text:
                        await page.keyboard.press("Home")
                        continue
                    if text == previous:
                        break
                    previous = text
                path = out / "serve-browser.png"
                await page.screenshot(path=str(path))
                return path
            finally:
                await browser.close()
    finally:
        await server.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "screenshots"))
    ap.add_argument("--size", default="120x36")
    ap.add_argument("--no-browser", action="store_true", help="do not make serve-browser.png")
    args = ap.parse_args()
    w, h = (int(x) for x in args.size.split("x"))
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="sessionview-shots-") as tmp:
        # no user configuration or state: the same pictures everywhere, and nothing written outside tmp
        os.environ["SESSIONVIEW_CONFIG"] = os.path.join(tmp, "no-config.toml")
        os.environ["SESSIONVIEW_STATE_DIR"] = os.path.join(tmp, "state")
        os.environ["SESSIONVIEW_INDEX"] = os.path.join(tmp, "index.sqlite")
        sessions = Path(tmp) / "sessions"
        sessions.mkdir()
        prepare(sessions)
        os.chdir(tmp)
        try:
            written = asyncio.run(shoot(out, (w, h)))
            if not args.no_browser:
                shot = asyncio.run(shoot_browser(out))
                if shot is not None:
                    written.append(shot)
        finally:
            os.chdir(cwd)
    for p in written:
        print(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
