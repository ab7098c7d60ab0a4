"""Help: every key of the screen it was opened from, grouped by where it applies."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

#: paragraphs (one line each: the help box wraps them to its width)
ABOUT = (
    "sessionview shows agent session files (Brute, LittleGhost, Claude Code, Codex, pi, Gemini CLI, OpenAI and "
    "Anthropic message logs) and follows them while they are written. Nothing in a file is interpreted as "
    "markup or terminal control: escapes such as \\x1b are shown as text. The command palette (ctrl+p) lists "
    "the same actions.\n\n"
    "Editing never writes without showing a preview first (y or enter writes, n or esc cancels). Every save is "
    "atomic, keeps a backup (H lists them) and can be undone (u) or redone (ctrl+r) during the run. A session "
    "an agent is writing can be edited, but the agent may write its own memory back over the edit: sessionview "
    "says so and a applies the edit again. What an integrity check refuses, f in the refusal does anyway.\n\n"
    "The right column is each key's binding id: rebind it under [keymap] in config.toml, "
    'e.g. delete = "d,delete" (see the README).'
)

READ_ONLY_NOTE = "read-only: the keys that edit are off (started with --read-only, or served without --allow-write)"


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


def action_rows(screen: Screen) -> list[tuple[str, str, str, str]]:
    """``(where, keys, description, binding ids)`` for every active binding of ``screen`` (hidden ones too)."""
    rows: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
    order: list[tuple[str, str]] = []
    groups = getattr(screen, "help_groups", None)
    for key, active in screen.active_bindings.items():
        b = active.binding
        if not b.description:
            continue
        where = type(active.node).__name__
        where = {"SessionViewApp": "everywhere"}.get(where, where)
        if active.node is screen and groups is not None:
            where = groups.get(b.id, where)
        k = (where, b.description)
        if k not in rows:
            rows[k] = ([], [])
            order.append(k)
        labels, ids = rows[k]
        label = key_label(b.key_display or key)
        if label not in labels:
            labels.append(label)
        if b.id and b.id not in ids:
            ids.append(b.id)
    return [(where, ", ".join(rows[(where, desc)][0]), desc, ", ".join(rows[(where, desc)][1])) for where, desc in order]


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
        .help-keys { width: 100%; }
        #help-note { color: $text-warning; }
    }
    """

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close", id="help.close")]

    def __init__(self, rows: list[tuple[str, str, str, str]], *, note: str = "") -> None:
        super().__init__()
        self.rows = rows
        self.note = note

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Static(Content("sessionview · keys"), id="help-title")
            if self.note:
                yield Static(Content(self.note), id="help-note")
            groups: dict[str, list[tuple[str, str, str]]] = {}
            for where, keys, desc, ids in self.rows:
                groups.setdefault(where, []).append((keys, desc, ids))
            for where, items in groups.items():
                yield Static(Content(_GROUP_TITLES.get(where, where)), classes="help-group")
                width = max(len(k) for k, _, _ in items) + 2
                dwidth = max(len(d) for _, d, _ in items) + 2
                lines = [Content.assemble((k.ljust(width), "bold $accent"), d.ljust(dwidth), (i, "$text-muted")) for k, d, i in items]
                yield Static(Content("\n").join(lines), classes="help-keys")
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
