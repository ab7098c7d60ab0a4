"""What the first screen of ``sessionview FILE`` costs stays what it is: the modules it imports before its first
frame (none of editing, saving, searching, indexing, Markdown, the footer, the configuration or another
format's adapter), no dataclass to build but the view's, the session screen as Textual's first screen (no empty default screen under it), the
transcript styled once (its focus redraws it), and the cyclic garbage collector held until that frame and
running again after it. A subprocess each: ``sys.modules``
of a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from sessionview.ui.app import SessionViewApp
from sessionview.ui.widgets.transcript import FOCUSED_CURSOR, TranscriptView
from uihelpers import wait_for

#: never imported before the first frame of a Brute session (prefixes of module names)
NOT_BEFORE_THE_FIRST_FRAME = (
    "sessionview.core.edit", "sessionview.core.ops", "sessionview.core.store.save", "sessionview.core.store.backups",
    "sessionview.core.index", "sessionview.core.config", "sessionview.core.export",
    "sessionview.ui.controllers.editing", "sessionview.ui.controllers.writer", "sessionview.ui.controllers.search",
    "sessionview.ui.controllers.indexing", "sessionview.ui.dialogs", "sessionview.ui.widgets.footer",
    "sessionview.ui.widgets.detail", "sessionview.ui.widgets.prompt", "sessionview.ui.commands", "sessionview.ui.keymap",
    "sessionview.ui.screens.browser", "sessionview.editor", "hashlib",  # (OpenSSL: ~4 ms; only a save or a digest needs it)
    # other formats' adapters and readers (a JSON document's, a LittleGhost store's), and Ruby's JSON writer
    "sessionview.core.formats.gemini", "sessionview.core.formats.generic", "sessionview.core.formats.openai",
    "sessionview.core.formats.littleghost_jsonl", "sessionview.core.littleghost", "sessionview.core.rubyjson",
    "sessionview.core.formats.codex", "sessionview.core.formats.claude_code", "sessionview.core.formats.pi",
    "sessionview.core.formats.anthropic",
    "markdown_it", "pygments", "textual.widgets._markdown", "textual.widgets._footer", "tomllib",
)

PROBE = textwrap.dedent(
    """
    import asyncio, dataclasses, gc, json, sys
    built = []  # sessionview's dataclasses, as each is built (dataclass writes and compiles its methods then)
    process = dataclasses._process_class
    def record(cls, *args):
        if cls.__module__.startswith("sessionview."):
            built.append(f"{cls.__module__}.{cls.__qualname__}")
        return process(cls, *args)
    dataclasses._process_class = record
    from sessionview.ui.startup import hold_collector
    hold_collector()  # as `sessionview FILE` does (sessionview.cli)
    from sessionview.ui.app import SessionViewApp
    from sessionview.ui.widgets.transcript import TranscriptView

    styled = []
    restyle = TranscriptView.notify_style_update
    TranscriptView.notify_style_update = lambda self: (styled.append(1), restyle(self))[1]

    async def main():
        app = SessionViewApp(sys.argv[1])
        seen = {}

        def first_frame():
            seen["collector"] = gc.isenabled()
            seen["stack"] = [type(s).__name__ for s in app.screen_stack]
            seen["transcript_styled"] = len(styled)
            drawn()

        def drawn():
            # the modules as of the first frame that draws the session: on a busy machine the frame before
            # the worker's load is done may go out first (and shows no messages yet)
            if app.screen.query_one(TranscriptView).model is None:
                app.call_after_frame(drawn)
                app.screen.refresh()
                return
            seen["modules"] = sorted(sys.modules)
            seen["dataclasses"] = list(built)

        app.call_after_frame(first_frame)  # before the app's own: it runs first
        async with app.run_test(size=(120, 40)) as pilot:
            for _ in range(200):
                await pilot.pause(0.01)
                if "modules" in seen and gc.isenabled():
                    break
            seen["collector_after"] = gc.isenabled()
        print(json.dumps(seen))

    asyncio.run(main())
    """
)


def probe(path: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def brute_session(tmp_path: Path) -> Path:
    p = tmp_path / "s.jsonl"
    lines = [
        {"role": "user", "content": "list the files"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "shell", "arguments": {"command": "ls"}}]},
        {"role": "tool", "content": "a.txt\nb.txt", "tool_call_id": "c1"},
        {"role": "assistant", "content": "Two files: **a.txt** and `b.txt`."},
    ]
    p.write_text("".join(json.dumps(v) + "\n" for v in lines))
    return p


def test_the_first_frame_imports_only_what_it_draws(tmp_path: Path):
    seen = probe(brute_session(tmp_path))
    modules = seen["modules"]
    early = [m for m in modules if any(m == n or m.startswith(n + ".") for n in NOT_BEFORE_THE_FIRST_FRAME)]
    assert early == [], f"imported before the first frame: {early}"
    assert "sessionview.core.formats.brute" in modules and "sessionview.ui.widgets.transcript" in modules  # it did draw


def test_the_first_frame_builds_no_dataclass_but_the_view(tmp_path: Path):
    # each costs 0.5-3 ms at every start; the rest are sessionview.core.values classes (View stays a dataclass:
    # dataclasses.replace and fields() are used on it)
    seen = probe(brute_session(tmp_path))
    assert seen["dataclasses"] == ["sessionview.core.doc.model.View"]


def test_the_session_is_the_first_screen_and_the_collector_waits_for_its_frame(tmp_path: Path):
    seen = probe(brute_session(tmp_path))
    assert seen["stack"] == ["SessionScreen"]  # no empty default screen under it
    assert seen["collector"] is False  # held until the first frame
    assert seen["collector_after"] is True  # and running again after it


def test_the_transcript_is_styled_once_before_the_first_frame(tmp_path: Path):
    assert probe(brute_session(tmp_path))["transcript_styled"] == 1  # (not again when it gets the focus)


async def test_the_cursor_is_drawn_as_focused_while_the_transcript_has_the_focus(tmp_path: Path):
    app = SessionViewApp(brute_session(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        t = app.screen.query_one(TranscriptView)
        await wait_for(pilot, lambda: t.model is not None and t.has_focus, what="the focused transcript")

        def cursor_background():
            layout = t._get_layout()
            y = next(y for y, at in enumerate(layout) if at is not None and at[0] == t.cursor)
            return t.render_line(y)._segments[-2].style.bgcolor  # (the last text cell; the scroll bar's follows)

        pal = t._get_palette()
        focused, unfocused = pal[FOCUSED_CURSOR].bgcolor, pal["transcript--cursor"].bgcolor
        assert focused != unfocused
        assert cursor_background() == focused
        app.set_focus(None)
        await pilot.pause()
        assert not t.has_focus and cursor_background() == unfocused
        t.focus()
        await pilot.pause()
        assert cursor_background() == focused
