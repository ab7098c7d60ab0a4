"""How long the session screen's status line keeps a message (the screen's watchers call these): a file
event, a search result or "saved" passes after ``SessionScreen.STATUS_LIFETIME`` seconds; what is still
going on (searching…, a conflict, a deleted file, an error) stays until it is over."""

from __future__ import annotations

from typing import Any


class StatusLifetimes:
    def __init__(self, screen: Any, timers: dict[str, Any]) -> None:
        self.screen = screen
        self._expiry = timers

    def notice(self, value: str) -> None:
        # a file event passes; "deleted" and an error to open are the state of things, and stay
        self.expire_later("notice", value if value in ("truncated", "compacted", "replaced", "changed") else "")

    def search_status(self, value: str) -> None:
        # "searching… 40%", "filtering…", "waiting for the index…" stay until they are over
        self.expire_later("search_status", "" if value.endswith("…") or "esc cancels" in value else value)

    def edit_status(self, value: str) -> None:
        # a conflict or an overwritten edit stays while the edit waits to be applied again
        self.expire_later("edit_status", value if value.startswith("saved") else "")

    def expire_later(self, name: str, value: str) -> None:
        """Clear the screen's attribute ``name`` in a while if it still holds ``value`` ("" cancels)."""
        screen = self.screen
        old = self._expiry.pop(name, None)
        if old is not None:
            old.stop()
        if value and screen.is_mounted:

            def expire() -> None:
                self._expiry.pop(name, None)
                if getattr(screen, name) == value:
                    setattr(screen, name, "")
                    if name == "notice":
                        screen.notice_detail = ""

            self._expiry[name] = screen.set_timer(screen.STATUS_LIFETIME, expire)
