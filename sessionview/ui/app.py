"""The Textual application class: wiring only. Screens own their behaviour; logic lives in ``core``.

Imported through :mod:`sessionview.ui.launch` (``SessionViewApp``), which stays light until it is needed.
"""

from __future__ import annotations

import os
import time
from functools import partial
from typing import Any, Callable, Iterable

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from sessionview.core.text import escape_control
from sessionview.ui.startup import release_collector


_HERE = os.path.dirname(os.path.abspath(__file__))
#: the style sheet of the first screen (each screen's CSS_PATH; the same path, so Textual reads it only once)
_FIRST_SCREEN_CSS = {True: os.path.join(_HERE, "screens", "browser.tcss"), False: os.path.join(_HERE, "screens", "session.tcss")}

try:  # what a whole frame is: Textual's own class for it (any update, in a Textual without it)
    from textual._compositor import LayoutUpdate as _WHOLE_FRAME
except ImportError:  # pragma: no cover
    _WHOLE_FRAME = object


COLLECTOR_WAIT = 2.0  # seconds: the cyclic garbage collector runs again by then, with or without a first frame


class SessionViewApp(App[int]):
    """Browse a directory of sessions, or read and follow one session file."""

    TITLE = "sessionview"
    CSS_PATH = os.path.join(_HERE, "app.tcss")
    ENABLE_COMMAND_PALETTE = True

    BINDINGS = [
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding("ctrl+p", "command_palette", "Commands", show=False, id="app.palette"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True, id="app.quit"),
        Binding("f8", "screenshot", "Save a screenshot", show=False, id="app.screenshot"),
    ]

    def __init__(
        self,
        path: str | os.PathLike[str] = ".",
        read_only: bool = False,
        *,
        clock: Callable[[], float] = time.time,
        watch: bool = True,
        poll_interval: float = 0.015,
        prefetch: object = None,
        hosts: dict[str, str] | None = None,
        local: bool = True,
        host_timeout: float = 10.0,
        remote: Any = None,
    ) -> None:
        listing = (not local or os.path.isdir(path)) if remote is None else getattr(remote, "is_dir", False)
        # the first screen's style sheet read with the app's: pushing that screen then parses no style sheet
        # again (Textual parses every source anew when a screen brings a file of its own)
        super().__init__(css_path=[self.CSS_PATH, _FIRST_SCREEN_CSS[bool(listing)]])
        #: the hosts the session list shows besides the local directory (None: the [hosts] of config.toml)
        self.hosts = hosts
        self.local = local  # False: only the hosts (sessionview hosts --app, or a remote directory)
        self.host_timeout = host_timeout
        #: a remote address the app was opened on (sessionview.ui.launch.RemoteTarget), or None
        self.remote = remote
        self.remote_hosts = None  # the app's SSH connections (sessionview.ui.fleet.RemoteHosts), on first use
        self.prefetch = prefetch  # a Future of the TranscriptModel, opened while Textual was imported
        self.path = os.path.abspath(os.fspath(path))
        self.display_path = os.path.normpath(os.fspath(path))  # as given: shown in headers
        #: the root that saves must stay inside: the directory the app was opened on (or that holds the file)
        self.root = self.path if os.path.isdir(self.path) else os.path.dirname(self.path)
        self.read_only = read_only
        self.clock = clock
        self.watch = watch
        self.poll_interval = poll_interval
        #: ``external_editor(text) -> text``: hands a message to $VISUAL/$EDITOR with the app suspended
        #: (replaceable, e.g. by tests or an embedding that has another way to edit text)
        self.external_editor: Callable[[str], str] = partial(_external_edit, self)
        self._after_frame: list[Callable[[], object]] = []
        self._session_made = False  # the single session's screen, Textual's default screen (get_default_screen)

    def call_after_frame(self, callback: Callable[[], object]) -> None:
        """Run ``callback`` after the next whole frame is written to the terminal. Unlike
        ``call_after_refresh``, not after a refresh whose frame Textual drops (it renders the first frame
        while it mounts the screen, in a batch, and writes it only with the next whole frame), nor after a
        partial update (of the status line, say) that went out before it."""
        self._after_frame.append(callback)

    def _display(self, screen: Screen, renderable: Any) -> None:
        super()._display(screen, renderable)
        if self._after_frame and isinstance(renderable, _WHOLE_FRAME) and not self._batch_count:
            waiting, self._after_frame = self._after_frame, []
            for callback in waiting:
                self.call_later(callback)

    def _one_session(self) -> bool:
        return self.remote is None and self.local and not os.path.isdir(self.path)

    def get_default_screen(self) -> Screen:
        """One local session: its screen is the first on the stack, not pushed over Textual's empty default
        screen (which would be mounted, styled, laid out and resumed first, all for nothing). Once: another
        mode's first screen would be Textual's."""
        if not self._one_session() or self._session_made:
            return super().get_default_screen()
        self._session_made = True
        from sessionview.ui.screens.session import SessionScreen
        from sessionview.ui.widgets.first_frame import draw_first_frame_once, resume_without_restyle

        screen = SessionScreen(
            self.path,
            display=self.display_path,
            standalone=True,
            prefetch=self.prefetch,
            clock=self.clock,
            poll_interval=self.poll_interval,
            read_only=self.read_only,
        )
        return resume_without_restyle(draw_first_frame_once(screen))  # mounted inside Textual's mount batch

    def on_mount(self) -> None:
        # the collector held until the first frame (sessionview.ui.startup); at the latest after COLLECTOR_WAIT
        self.call_after_frame(release_collector)
        self.set_timer(COLLECTOR_WAIT, release_collector)
        listing = self.remote is None and (not self.local or os.path.isdir(self.path))
        hosts: dict[str, str] = {}
        if listing:
            hosts = self._apply_keymap()  # the session list needs the config's [hosts] now
        else:
            # one session: the user's keymap (and the dialog about mistakes in the configuration) after the first
            # frame that shows it (on a busy machine a frame without its messages may go out before it)
            self.call_after_frame(self._after_the_session_is_drawn)
        if self.remote is not None:
            self.remote.mount(self)
        elif listing:
            from sessionview.ui.screens.browser import BrowserScreen

            self.push_screen(
                BrowserScreen(
                    self.path if self.local else None,
                    display=self.display_path if self.local else "every host",
                    clock=self.clock,
                    watch=self.watch,
                    poll_interval=self.poll_interval,
                    read_only=self.read_only,
                    hosts=self.hosts if self.hosts is not None else hosts,
                    host_timeout=self.host_timeout,
                )
            )
        # else: one local session, the first screen itself (get_default_screen)

    def _after_the_session_is_drawn(self) -> None:
        transcript = getattr(self.screen, "transcript", None)  # the session screen's (not a remote one's yet)
        if transcript is None:
            self._apply_keymap()
        else:
            transcript.call_after_first_frame(self._apply_keymap)

    def _apply_keymap(self) -> dict[str, str]:
        """The user's ``[keymap]`` (binding id = keys) from the config file, if there is one. Mistakes in
        the file (invalid TOML, an unknown setting, binding id or key) are shown once, with the file and
        line, in a dialog; what is right in it is applied. Returns the file's ``[hosts]``."""
        from sessionview.core.config import ConfigError, config_path, load_config

        try:
            config = load_config()
        except ConfigError as exc:
            self._config_problems([str(exc)], config_path())
            return {}
        problems = list(config.problems)
        if config.keymap and config.path:
            from sessionview.ui.keymap import check_keymap

            good, bad = check_keymap(config.keymap, config.path)
            problems += bad
            if good:
                self.set_keymap(good)
        if problems:
            self._config_problems(problems, config.path or config_path())
        return dict(config.hosts)

    def on_unmount(self) -> None:
        release_collector()
        if self.remote_hosts is not None:
            from sessionview.ui.fleet import close_hosts

            close_hosts(self)

    def _config_problems(self, problems: list[str], path: str) -> None:
        from sessionview.ui.dialogs.modal import NoticeScreen

        lines = [escape_control(p, one_line=True) for p in problems]
        lines.append("")
        lines.append("The rest of the configuration is used; fix the file and start again.")
        title = f"configuration: {len(problems)} mistake{'s' if len(problems) != 1 else ''} in {escape_control(path, one_line=True)}"
        self.call_after_refresh(self.push_screen, NoticeScreen(title, lines))

    def action_help(self) -> None:
        from sessionview.ui.dialogs.help import HelpScreen, action_rows

        if isinstance(self.screen, HelpScreen):
            return
        from sessionview.ui.dialogs.help import READ_ONLY_NOTE

        note = READ_ONLY_NOTE if getattr(self.screen, "read_only", False) else ""
        self.push_screen(HelpScreen(action_rows(self.screen), note=note))

    def action_screenshot(self) -> None:
        path = self.save_screenshot()
        self.notify(f"saved {escape_control(path, one_line=True)}", markup=False)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The palette lists every action of the current screen (the same list as the help screen)."""
        from sessionview.ui.dialogs.help import action_rows

        yield from super().get_system_commands(screen)
        seen: set[tuple[object, str]] = set()
        for active in screen.active_bindings.values():
            b = active.binding
            if not b.description or b.action in ("command_palette",) or (active.node, b.action) in seen:
                continue
            seen.add((active.node, b.action))
            keys = [k for w, k, d, i in action_rows(screen) if d == b.description]
            help_text = f"key: {keys[0]}" if keys else ""
            yield SystemCommand(b.description, help_text, partial(self._run_binding, active.node, b.action))

    async def _run_binding(self, node, action: str) -> None:
        await self.run_action(action, node)


def _external_edit(app: App, text: str) -> str:
    from sessionview.ui.external import edit_text

    return edit_text(app, text)
