"""Help: every key of the screen it was opened from, grouped by where it applies."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

ABOUT = """sessionview shows agent session files (Brute, LittleGhost, Claude Code, Codex, pi, OpenAI and
Anthropic message logs) and follows them while they are written. Nothing in a file is interpreted as
markup or terminal control: escapes such as \\x1b are shown as text. The command palette (ctrl+p) lists the
same actions.

Editing never writes without showing a preview first (y or enter writes, n or esc cancels). Every save is
atomic, keeps a backup (H lists them) and can be undone (u) or redone (ctrl+r) during the run. A session
an agent is writing can be edited, but the agent may write its own memory back over the edit: sessionview
says so and a applies the edit again."""


def key_label(key: str) -> str:
    names = {
        "slash": "/",
        "colon": ":",
        "question_mark": "?",
        "escape": "esc",
        "space": "space",
        "pageup": "pgup",
        "pagedown": "pgdn",
        "delete": "del",
        "shift+up": "shift+↑",
        "shift+down": "shift+↓",
    }
    return ", ".join(names.get(k.strip(), k.strip()) for k in key.split(","))


def action_rows(screen: Screen) -> list[tuple[str, str, str]]:
    """``(where, keys, description)`` for every active binding of ``screen`` (hidden ones too)."""
    rows: dict[tuple[str, str], list[str]] = {}
    order: list[tuple[str, str]] = []
    for key, active in screen.active_bindings.items():
        b = active.binding
        if not b.description:
            continue
        where = type(active.node).__name__
        where = {"SessionViewApp": "everywhere"}.get(where, where)
        where = getattr(active.node, "HELP_GROUPS", {}).get(b.id, where)
        k = (where, b.description)
        if k not in rows:
            rows[k] = []
            order.append(k)
        label = key_label(b.key_display or key)
        if label not in rows[k]:
            rows[k].append(label)
    return [(where, ", ".join(rows[(where, desc)]), desc) for where, desc in order]


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        background: $background 60%;
        #help-box {
            width: 90;
            max-width: 95%;
            height: 85%;
            border: round $accent;
            background: $surface;
            padding: 0 1;
        }
        #help-title { text-style: bold; color: $text-accent; margin-bottom: 1; }
        .help-group { text-style: bold; color: $text-primary; margin-top: 1; }
        .help-about { color: $text-muted; margin-top: 1; }
    }
    """

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close", id="help.close")]

    def __init__(self, rows: list[tuple[str, str, str]]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Static(Content("sessionview · keys"), id="help-title")
            groups: dict[str, list[tuple[str, str]]] = {}
            for where, keys, desc in self.rows:
                groups.setdefault(where, []).append((keys, desc))
            for where, items in groups.items():
                yield Static(Content(_GROUP_TITLES.get(where, where)), classes="help-group")
                width = max(len(k) for k, _ in items) + 2
                lines = [Content.assemble((k.ljust(width), "bold $accent"), d) for k, d in items]
                yield Static(Content("\n").join(lines))
            yield Static(Content(ABOUT), classes="help-about")

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)


_GROUP_TITLES = {
    "TranscriptView": "Transcript",
    "SessionScreen": "Session",
    "BrowserScreen": "Sessions",
    "SessionTable": "Session list",
    "DetailPane": "Detail",
    "Editing": "Editing (every write is previewed first)",
    "PromptBar": "Prompt",
    "everywhere": "Everywhere",
}
