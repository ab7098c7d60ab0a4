"""Command-palette commands of the session screen that depend on its state (ctrl+p).

Every key of a screen is in the palette as well (see ``SessionViewApp.get_system_commands``); these add
what only makes sense at the moment: "Follow the end" while not following, "Clear the filter" while one
is active, and the writing commands only while the session can be written (and, for undo, redo and
apply again, only when there is something to undo, redo or apply)."""

from __future__ import annotations

from typing import Any, Iterator, Protocol, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from sessionview.ui.controllers.editing import Editing
from sessionview.ui.controllers.writer import Writer
from sessionview.ui.widgets.transcript import TranscriptView


class CommandHost(Protocol):
    model: Any
    editing: Editing
    writer: Writer

    @property
    def transcript(self) -> TranscriptView: ...


class SessionCommands(Provider):
    """The state-dependent commands of a :class:`~sessionview.ui.screens.session.SessionScreen`."""

    def _commands(self) -> Iterator[tuple[str, str, str]]:
        """``(title, help, action)`` for what can be done now."""
        host = cast(CommandHost, self.screen)  # the session screen: it lists this provider
        t = host.transcript
        model = host.model
        if model is None:
            return
        if not t.follow:
            yield "Follow the end", "go to the last record and follow new ones (F)", "screen.follow_end"
        if model.filter.active:
            yield "Clear the filter", "show every record again", "screen.clear_filter"
        yield from _out_of_the_app(t.cursor_number is not None)
        if t.marked_range is not None:
            yield "Drop the marked range", "esc", "screen.clear"
        w = host.writer
        if w.write_refusal() is not None:
            return
        if t.marked_range is not None:
            yield "Delete the marked range", "with a preview first (d)", "screen.delete"
            yield "Compact the marked range", "replace it by one summary, with a preview first (c)", "screen.compact"
        elif t.cursor_number is not None:
            yield "Edit this message", "in the editor, with a preview first (e)", "screen.edit"
            yield "Delete this message", "with a preview first (d)", "screen.delete"
        if w.history is not None and w.history.done:
            yield "Undo the last edit", w.history.done[-1].change.description + " (u)", "screen.undo"
        if w.history is not None and w.history.undone:
            yield "Redo the last undone edit", w.history.undone[-1].change.description + " (ctrl+r)", "screen.redo"
        if w.pending_change is not None:
            yield "Apply the kept edit again", w.pending_change.description + " (a)", "screen.reapply"

    def _runner(self, action: str):
        async def run() -> None:
            await self.app.run_action(action, self.screen)

        return run

    async def discover(self) -> Hits:
        for title, help_text, action in self._commands():
            yield DiscoveryHit(title, self._runner(action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, action in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), self._runner(action), help=help_text)


def _out_of_the_app(selected: bool) -> Iterator[tuple[str, str, str]]:
    """Prompts, outline, copy, export and fork (sessionview.ui.screens.outline, ui.dialogs.export)."""
    yield "Jump to a prompt", "the list of the user's prompts (P)", "screen.prompts"
    yield "Outline of the run", "turns, tool calls and subagents as a tree (T)", "screen.outline"
    yield "Export to Markdown…", "into a new file next to the session (X)", "screen.export('md')"
    yield "Export to HTML…", "one self-contained page, into a new file (X)", "screen.export('html')"
    if selected:
        yield "Copy the message's text", "to the clipboard (y)", "screen.copy_text"
        yield "Copy the record's raw JSON", "to the clipboard (Y)", "screen.copy_raw"
        yield "Fork at this record…", "a new session of the records up to this one (X)", "screen.export('fork')"
