"""End to end: Debian's chromium, headless, driven by playwright, on the served app.

It opens the printed URL, selects the session in the app's list with a key and no click (the page gives the
terminal the keyboard when it loads), reads a message's text from the terminal and takes a screenshot (into
the test's temporary directory: ``scripts/make_screenshots.py`` makes the committed one). Then a page from another local origin tries to drive the app
with the same browser (which holds the token cookie: another port of 127.0.0.1 is the same *site*, so
SameSite=Strict alone does not stop it) and must fail without a process being started.

The terminal draws on a canvas (textual.js loads xterm's WebGL/canvas renderers), so there are no DOM
rows to read: an init script keeps the xterm ``Terminal`` that the page's addons receive in
``activate(terminal)`` (they store it as ``this._terminal``), and the test reads its screen buffer —
exactly the cells xterm renders. ``.xterm-rows`` is used instead when xterm renders to the DOM.
"""

from __future__ import annotations

import asyncio
import shutil
import time

import pytest
from aiohttp import web
from serve_helpers import children, wait_for

playwright_api = pytest.importorskip("playwright.async_api", reason="playwright is not installed (pip install playwright)")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(240),
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)"),
]

NEEDLE = "Liste les fichiers du dépôt"  # the text of message #1 of tests/fixtures/brute-session.jsonl
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

KEEP_TERMINAL = """
(() => {
  Object.defineProperty(Object.prototype, "_terminal", {
    configurable: true,
    set(value) {
      Object.defineProperty(this, "_terminal", {value, writable: true, configurable: true, enumerable: true});
      if (value && value.buffer && value.buffer.active && !window.__svTerminal) window.__svTerminal = value;
    },
  });
})();
"""

SCREEN_TEXT = """() => {
  const rows = document.querySelector('.xterm-rows');
  if (rows && rows.innerText.trim()) return rows.innerText;
  const t = window.__svTerminal;
  if (!t) return '';
  const b = t.buffer.active, out = [];
  for (let i = 0; i < t.rows; i++) {
    const line = b.getLine(b.viewportY + i);
    out.push(line ? line.translateToString(true) : '');
  }
  return out.join('\\n');
}"""

HOSTILE_PAGE = """<!DOCTYPE html><html><body><script>
window.result = new Promise((resolve) => {
  const ws = new WebSocket("ws://127.0.0.1:PORT/ws?width=80&height=24");
  ws.onopen = () => resolve("open");
  ws.onerror = () => resolve("error");
  ws.onclose = () => resolve("closed");
});
</script></body></html>"""


async def screen_with(page, needle: str, timeout: float = 90.0, nudge: str | None = None) -> str:
    """Wait for NEEDLE on the terminal's screen; press NUDGE now and then (the app may be busy or scrolled)."""
    deadline = time.monotonic() + timeout
    text = ""
    nudged = 0.0
    while time.monotonic() < deadline:
        text = await page.evaluate(SCREEN_TEXT)
        if needle in text:
            return text
        if nudge and time.monotonic() - nudged > 1.0:
            await page.keyboard.press(nudge)
            nudged = time.monotonic()
        await asyncio.sleep(0.2)
    raise AssertionError(f"{needle!r} never appeared on the terminal; last screen:\n{text}")


async def test_browser_opens_a_session_and_a_foreign_page_cannot(make_server, tmp_path):
    shot = tmp_path / "serve-browser.png"
    server = await make_server(real_app=True)

    async def hostile_page(request: web.Request) -> web.Response:
        return web.Response(text=HOSTILE_PAGE.replace("PORT", str(server.port)), content_type="text/html")

    hostile = web.Application()
    hostile.router.add_get("/", hostile_page)
    runner = web.AppRunner(hostile, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    hostile_port = runner.addresses[0][1]

    async with playwright_api.async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            context = await browser.new_context(viewport={"width": 1200, "height": 760})
            await context.add_init_script(KEEP_TERMINAL)
            page = await context.new_page()

            # without the token: 403, nothing started
            response = await page.goto(f"http://127.0.0.1:{server.port}/")
            assert response.status == 403
            assert "token" in await page.inner_text("body")
            assert server.stats.spawned == 0

            # with it: the session list, then the session
            response = await page.goto(server.url)
            assert response.status == 200
            listing = await screen_with(page, "brute-session.jsonl")
            assert "sessionview" in listing
            assert server.stats.spawned == 1
            # no click: the page focused the terminal when it loaded
            assert await page.evaluate("document.activeElement && document.activeElement.classList.contains('xterm-helper-textarea')")
            await page.keyboard.press("Enter")  # the list's cursor is on the only session: open it
            # the transcript opens following its tail: Home goes to its first message
            # (the list shows message #1 as the session's title: wait for message #4, which only the transcript shows)
            await screen_with(page, "Trois entrées", nudge="Home")
            transcript = await screen_with(page, NEEDLE, nudge="Home")
            assert "read-only" in transcript  # the app was started with --read-only
            # a screenshot that shows the message (in tmp: the committed one comes from make_screenshots.py)
            # (the app may still be loading, and jump back to the tail once: go Home again then)
            for _ in range(30):
                await asyncio.sleep(0.3)
                before = await page.evaluate(SCREEN_TEXT)
                if NEEDLE not in before:
                    await page.keyboard.press("Home")
                    continue
                await page.screenshot(path=str(shot))
                if before == await page.evaluate(SCREEN_TEXT):
                    break
            else:
                raise AssertionError(f"the screen never settled on {NEEDLE!r}:\n{before}")
            assert shot.stat().st_size > 10_000

            # another local page, same browser (the token cookie is in it): its websocket is refused
            refused = server.stats.refused.get(403, 0)
            evil = await context.new_page()
            await evil.goto(f"http://127.0.0.1:{hostile_port}/")
            assert await evil.evaluate("window.result") in ("error", "closed")
            assert server.stats.spawned == 1
            assert server.stats.refused.get(403, 0) == refused + 1
            await evil.close()

            # ...and it is the Origin check that stops it: without it, the cookie would open the app
            server.origin_ok = lambda request: True
            try:
                evil = await context.new_page()
                await evil.goto(f"http://127.0.0.1:{hostile_port}/")
                assert await evil.evaluate("window.result") == "open"
                assert server.stats.spawned == 2
                await evil.close()
            finally:
                del server.origin_ok
            assert await wait_for(lambda: server.stats.reaped == 1, timeout=30)

            # closing the tab ends the app process
            pid = server.stats.pids[0]
            await page.close()
            assert await wait_for(lambda: server.stats.reaped == 2, timeout=30)
            assert str(pid) not in {str(c) for c in children()}
        finally:
            await browser.close()
            await runner.cleanup()
