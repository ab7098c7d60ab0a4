"""The footer of the session screen: Textual's :class:`~textual.widgets.Footer`, rebuilt only when what it shows
changed.

Textual's footer removes and mounts all its keys again each time the screen's bindings are refreshed, which
the session screen does whenever its state changes (opening, live, idle, …) and several times while it
starts. This one rebuilds once per burst of refreshes at most, and only when the keys shown, their descriptions or
whether they are enabled differ from what is on screen. It is built first after :meth:`release` (the session
screen releases it once the transcript's first frame is drawn) or after ``HOLD`` seconds, so that the keys do
not delay the first screen. The session screen mounts it only then (:func:`mount_in`): its first frame
has an empty row in its place, which looks the same as a footer with no keys yet."""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer


class SessionFooter(Footer):
    HOLD = 0.5

    def __init__(self, *args: Any, held: bool = True, **kwargs: Any) -> None:
        """``held=False``: the keys are composed with the footer itself (when it is mounted after the first frame)."""
        super().__init__(*args, **kwargs)
        self._due = False
        self._held = held
        self._shown: tuple | None = None
        if not held:
            self.set_reactive(Footer._bindings_ready, True)

    def _on_mount(self) -> None:  # Footer.on_mount runs too (Textual calls the handlers of every class)
        if self._held:
            self.set_timer(self.HOLD, self._release)
        else:
            self._shown = self._signature()  # the keys its compose just built

    def release(self) -> None:
        """Show the keys from now on (from any widget's handler: the footer rebuilds in its own)."""
        self.call_later(self._release)

    def _release(self) -> None:
        if self._held:
            self._held = False
            if self.is_attached:
                self.bindings_changed(self.screen)

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if self._held or not screen.app.app_focus or not self.is_attached or screen is not self.screen or self._due:
            return
        self._due = True
        # its own queue, not call_after_refresh: Textual queues that on the app's current screen, and a dialog
        # that covers this screen and is dismissed before it refreshes drops it (and _due would hold forever)
        self.call_later(self._rebuild)

    def _signature(self) -> tuple:
        palette = self.app.COMMAND_PALETTE_BINDING
        return tuple(
            (key, b.key, b.key_display, b.description, b.action, enabled, tooltip, id(b.group))
            for key, (_, b, enabled, tooltip) in self.screen.active_bindings.items()
            if b.show or key == palette
        )

    async def _rebuild(self) -> None:
        self._due = False
        if not self.is_attached:
            return
        signature = self._signature()
        if signature != self._shown:
            self._shown = signature
            await self.recompose()


def mount_in(space: Widget) -> SessionFooter | None:
    """Mount the session screen's footer, with its keys, in ``space``, the row that held its place in the first
    frame (Textual's footer, its style sheet and its keys are not needed before the first frame). Inside it, not
    instead of it: no frame in between shows the row without either. None when the screen is gone already (the
    app quit right after its first frame)."""
    if not space.is_attached:
        return None
    footer = SessionFooter(compact=True, held=False)
    space.mount(footer)
    return footer
