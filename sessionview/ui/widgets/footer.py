"""The footer of the session screen: Textual's :class:`~textual.widgets.Footer`, rebuilt only when what it shows
changed.

Textual's footer removes and mounts all its keys again each time the screen's bindings are refreshed, which
the session screen does whenever its state changes (opening, live, idle, …) and several times while it
starts. This one rebuilds once per frame at most, and only when the keys shown, their descriptions or
whether they are enabled differ from what is on screen."""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer


class SessionFooter(Footer):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._due = False
        self._shown: tuple | None = None

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen or self._due:
            return
        self._due = True
        self.call_after_refresh(self._rebuild)

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
