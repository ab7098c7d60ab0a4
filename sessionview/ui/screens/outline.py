"""The outline of the run (``T``) and where it comes from.

:class:`Overview` (owned by the session screen) reads the session once in a worker thread into a
:class:`~sessionview.core.view.outline.Outline` (kept until the file grows or is reopened), and drives the
prompt list (``P``, :mod:`sessionview.ui.screens.prompts`) and the outline screen.

:class:`OutlineScreen` draws the outline as a tree: user turns, under each its tool calls, under a call
the subagent it started. Enter on a turn or a call goes to its record in the transcript. A subagent whose
lines are in this file unfolds inline (space), with its calls; one in its own file (Claude Code
``subagents/agent-*.jsonl``, a Codex thread's rollout) unfolds into that file's outline, read when asked,
and Enter opens the file in its own session screen. Esc there comes back here and on to the call that
started the subagent.
"""

from __future__ import annotations

import os
from functools import partial
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static, Tree
from textual.widgets.tree import TreeNode
from textual.worker import get_current_worker

from sessionview.core.text import escape_control
from sessionview.core.view.render import plural
from sessionview.core.view.outline import Node, Outline, build_outline, outline_file, related_files

#: outlines with more nodes than this open with their turns folded
UNFOLD_LIMIT = 400
#: a session bigger than this says that its outline is being read
SAY_READING = 32 << 20

ICONS = {"start": "·", "turn": "❯", "tool": "⚙", "subagent": "⎇", "branch": "⑂", "compaction": "≡"}
STYLES = {"start": "dim", "turn": "bold", "tool": "", "subagent": "bold magenta", "branch": "yellow", "compaction": "dim italic"}


class Overview:
    """The outline of the session screen's file, read in a worker thread and cached."""

    def __init__(self, host: Any) -> None:
        self.host = host
        self._cache: tuple[Any, int, Outline] | None = None

    async def get(self) -> Outline | None:
        host = self.host
        model = host.model
        if model is None:
            return None
        if not model.indexed:
            host.notify("the outline needs every line: the file is still being indexed, try again in a moment", markup=False)
            return None
        count = len(model)
        if self._cache is not None and self._cache[0] is model and self._cache[1] == count:
            return self._cache[2]
        fmt = getattr(model.adapter, "name", "") or getattr(model.session, "format", "")
        files, main = related_files(host.path, fmt)
        if model.size > SAY_READING:
            host.notify("reading the whole session for its outline…", markup=False, timeout=4)
        worker = host.run_worker(partial(_read, model, count, host.path, files, main), group="outline", exclusive=True, thread=True, exit_on_error=False)
        try:
            outline = await worker.wait()
        except Exception:  # cancelled by a newer request, or the file went away under it
            return None
        if outline is not None and host.model is model:
            self._cache = (model, count, outline)
        return outline

    def line(self, n: int | None) -> int | None:
        return None if n is None or self.host.model is None else self.host.model.line_number(n)

    def jump(self, n: int | None) -> None:
        """Put the transcript's cursor on record ``n``."""
        model = self.host.model
        if n is None or model is None:
            return
        if not model.row_visible(n):
            self.host.notify(f"#{n} is hidden by the filter (esc clears it)", markup=False)
            return
        self.host.transcript.move_cursor_to(model.row_of(n), center=True)
        self.host.transcript.focus()

    async def show_prompts(self) -> None:
        from sessionview.ui.screens.prompts import PromptsScreen

        outline = await self.get()
        if outline is None:
            return
        if not outline.prompts:
            self.host.notify("no prompt of the user in this session", markup=False)
            return
        lines = [self.line(p.number) for p in outline.prompts]
        self.host.app.push_screen(PromptsScreen(outline.prompts, lines, self.host.transcript.cursor_number), self.jump)

    async def show_outline(self) -> None:
        outline = await self.get()
        if outline is None:
            return
        host = self.host
        self.host.app.push_screen(OutlineScreen(outline, host.display_path, self.line, opener=self._session_screen), self.jump)

    def _session_screen(self, path: str, line: int | None) -> Screen:
        """A session screen (the host's class) for a subagent's file, at ``line`` (else where a session opens)."""
        h = self.host
        screen = type(h)(path, clock=h.clock, poll_interval=h.poll_interval, read_only=h.read_only)
        if line is not None:
            screen.follow.pending_goto = line
        return screen


def _read(model: Any, count: int, path: str, files: list[str], main: str | None) -> Outline | None:
    worker = get_current_worker()
    stop = lambda: worker.is_cancelled  # noqa: E731
    outline = build_outline(model.scanner().quick_views(1, count, stop), path=path, agent_files=files, main=main)
    return None if stop() else outline


def label(node: Node, line: int | None) -> Text:
    """A node's line in the tree: its record, an icon and its (untrusted, escaped) label, never markup."""
    text = Text(no_wrap=True, overflow="ellipsis")
    if line is not None:
        text.append(f"#{line:,} ", style="dim")
    text.append(ICONS.get(node.kind, "·") + " ", style=STYLES.get(node.kind, ""))
    text.append(node.label, style="red" if node.error else STYLES.get(node.kind, ""))
    if node.error:
        text.append("  ✗ error", style="bold red")
    if node.path is not None:
        text.append(f"  {escape_control(os.path.basename(node.path), one_line=True)}", style="dim")
    return text


class OutlineScreen(Screen[int | None]):
    """Returns the record to go to in the session (None: stay where it was)."""

    DEFAULT_CSS = """
    OutlineScreen { background: $surface; }
    OutlineScreen #outline-title { height: auto; color: $text-accent; text-style: bold; padding: 0 1; }
    OutlineScreen #outline-hint { height: auto; color: $text-muted; padding: 0 1; }
    OutlineScreen Tree { height: 1fr; }
    """

    BINDINGS = [
        Binding("escape,q", "close", "Back", id="outline.close"),
        Binding("enter", "choose", "Go to / open", id="outline.choose", priority=True),
        Binding("space", "toggle", "Unfold", id="outline.toggle", priority=True),
    ]

    def __init__(self, outline: Outline, display: str, line: Any, *, opener: Any) -> None:
        super().__init__()
        self.outline = outline
        self.display_path = display
        self.line = line  # record number -> line number in this session's file
        self.opener = opener  # (path, line) -> a session screen for a subagent's file
        self._return_to: int | None = None
        self._opened_sub = False

    def compose(self) -> ComposeResult:
        nodes = list(self.outline.walk())
        turns = sum(1 for n in nodes if n.kind == "turn")
        tools = sum(1 for n in nodes if n.kind == "tool")
        subs = sum(1 for n in nodes if n.kind == "subagent")
        yield Static(
            Content(f"outline of {escape_control(self.display_path, one_line=True)}: {plural(turns, 'turn')} · {plural(tools, 'tool call')} · {plural(subs, 'subagent')}"),
            id="outline-title",
        )
        yield Static(Content("enter: go to the record (a subagent's file: open it) · space: unfold · esc: back"), id="outline-hint")
        tree: Tree[tuple[Node, str | None]] = Tree("outline", id="outline-tree")
        tree.show_root = False
        tree.auto_expand = False
        unfold = len(nodes) <= UNFOLD_LIMIT
        for node in self.outline.nodes:
            self._add(tree.root, node, None, unfold)
        tree.root.expand()
        yield tree
        yield Footer(compact=True)

    def _add(self, parent: TreeNode, node: Node, file: str | None, unfold: bool) -> None:
        line = self.line(node.number) if file is None else node.number
        lazy = node.path is not None and not node.children  # a subagent's file: read when unfolded
        child = parent.add(label(node, line), data=(node, file), expand=unfold and not lazy, allow_expand=bool(node.children) or lazy)
        for c in node.children:
            self._add(child, c, file, unfold)

    @property
    def tree(self) -> Tree:
        return self.query_one("#outline-tree", Tree)

    def on_mount(self) -> None:
        self.tree.focus()

    def on_screen_resume(self) -> None:
        if self._opened_sub:
            # back from a subagent's session: on to the call that started it
            self._opened_sub = False
            self.dismiss(self._return_to)

    # -- keys ---------------------------------------------------------------------------------------
    def action_close(self) -> None:
        self.dismiss(None)

    def action_toggle(self) -> None:
        node = self.tree.cursor_node
        if node is not None and node.allow_expand:
            node.toggle()

    def action_choose(self) -> None:
        tnode = self.tree.cursor_node
        if tnode is None or tnode.data is None:
            return
        node, file = tnode.data
        if node.path is not None or file is not None:
            self._open_file(tnode, node.path or file, None if node.path is not None else node.number)
            return
        if node.number is not None:
            self.dismiss(node.number)

    def _open_file(self, tnode: TreeNode, path: str, line: int | None) -> None:
        """Open a subagent's file in its own session screen; coming back goes on to the call above it."""
        call = tnode
        while call.parent is not None and (call.data is None or call.data[1] is not None or call.data[0].kind == "subagent"):
            call = call.parent
        self._return_to = call.data[0].number if call.data is not None else None
        self._opened_sub = True
        self.app.push_screen(self.opener(path, line))

    @on(Tree.NodeExpanded)
    def _expanded(self, event: Tree.NodeExpanded) -> None:
        data = event.node.data
        if data is None or data[0].path is None or event.node.children:
            return
        self.run_worker(partial(self._load, event.node, data[0].path), group="outline-file", thread=True, exit_on_error=False)

    def _load(self, tnode: TreeNode, path: str) -> None:
        try:
            sub = outline_file(path)
        except Exception as exc:  # unreadable: say so in the tree
            self.app.call_from_thread(self._loaded, tnode, path, None, str(exc))
            return
        self.app.call_from_thread(self._loaded, tnode, path, sub, "")

    def _loaded(self, tnode: TreeNode, path: str, sub: Outline | None, error: str) -> None:
        if tnode.children:
            return
        if sub is None or not sub.nodes:
            why = f"cannot read it: {error}" if error else "nothing in it yet"
            tnode.add_leaf(Text(escape_control(why, one_line=True), style="dim"))
            return
        for node in sub.nodes:
            self._add(tnode, node, path, True)
