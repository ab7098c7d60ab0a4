"""Export the session to Markdown or HTML, or fork it at the selected record, from the app (``X``).

The dialog offers the three and a path, by default next to the session file: ``NAME.md``, ``NAME.html``
(then ``NAME-2.md``...), or the fork's name as ``sessionview fork`` makes it (``NAME.fork-N.EXT``). Nothing
is ever written over an existing file. The writing runs in a worker thread on the file as it is on disk
(:mod:`sessionview.core.export`), and a notification gives the path written.
"""

from __future__ import annotations

import os
from functools import partial
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.widgets import Input, RadioButton, RadioSet, Static

from sessionview.core.text import escape_control
from sessionview.ui.dialogs.modal import SMALL_CSS, Dialog

KINDS = ("md", "html", "fork")
TITLES = {"md": "Markdown", "html": "HTML (one self-contained page)", "fork": "Fork: a new session of records 1 to {n}"}


def free_name(path: str, ext: str) -> str:
    """``NAME.ext`` next to ``path``, or ``NAME-2.ext``... when that is taken."""
    stem = os.path.splitext(path)[0]
    for k in range(1, 1000):
        name = f"{stem}{'-' + str(k) if k > 1 else ''}{ext}"
        if not os.path.lexists(name):
            return name
    return f"{stem}{ext}"


def default_paths(path: str, line: int | None) -> dict[str, str]:
    from sessionview.core.export import fork_names

    out = {"md": free_name(path, ".md"), "html": free_name(path, ".html")}
    if line is not None:
        out["fork"] = next((n for n in fork_names(path, line) if not os.path.lexists(n)), "")
    return out


class ExportScreen(Dialog[tuple[str, str] | None]):
    """Returns ``(kind, path)``: kind ``md``, ``html`` or ``fork``; or None."""

    DEFAULT_CSS = "ExportScreen {" + SMALL_CSS + """
        .modal-box { border: round $accent; }
        .modal-title { color: $text-accent; }
        RadioSet { width: 100%; height: auto; }
        #export-path { margin-top: 1; }
        #export-error { color: $text-error; height: auto; }
    }"""

    BINDINGS = [Binding("escape", "reply(None)", "Cancel", id="export.cancel")]

    def __init__(self, display: str, defaults: dict[str, str], kind: str, line: int | None) -> None:
        super().__init__()
        self.display_path = display
        self.defaults = defaults
        self.kind = kind if kind in defaults else "md"
        self.line = line

    def compose_box(self) -> ComposeResult:
        yield Static(Content(f"Export or fork {escape_control(self.display_path, one_line=True)}"), classes="modal-title")
        with RadioSet(id="export-kind"):
            for k in KINDS:
                title = TITLES[k].format(n=f"{self.line:,}" if self.line is not None else "N")
                yield RadioButton(title, value=k == self.kind, disabled=k not in self.defaults, id=f"export-{k}", name=k)
        yield Input(self.defaults[self.kind], id="export-path")
        yield Static("", id="export-error")
        yield Static(Content("enter writes the file (never over an existing one) · tab moves · esc cancels"), classes="modal-keys")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(RadioSet.Changed)
    def _kind(self, event: RadioSet.Changed) -> None:
        kind = event.pressed.name or "md"
        box = self.query_one(Input)
        if box.value == self.defaults.get(self.kind, ""):  # not typed by the user: follow the choice
            box.value = self.defaults.get(kind, "")
        self.kind = kind
        self._error("")

    def _error(self, text: str) -> None:
        self.query_one("#export-error", Static).update(Content(escape_control(text, one_line=True)))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        path = os.path.expanduser(event.value.strip())
        if not path:
            self._error("type a file name")
            return
        if os.path.lexists(path):
            self._error(f"{path} exists: choose another name (nothing is written over a file)")
            return
        if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            self._error(f"{os.path.dirname(path)}: no such directory")
            return
        self.dismiss((self.kind, path))


class ExportFlow:
    """The session screen's export and fork: the dialog, then the writing in a worker thread."""

    def __init__(self, host: Any) -> None:
        self.host = host
        self.last = ""  # what the last export or fork said

    def start(self, kind: str) -> None:
        host = self.host
        if host.read_only:
            host.notify("read-only: export and fork write files, and writing is off", title="read-only", severity="warning", markup=False)
            return
        model = host.model
        if model is None:
            return
        n = host.transcript.cursor_number
        line = model.line_number(n) if n is not None else None
        if kind == "fork" and line is None:
            host.notify("fork needs a selected record with its line number (the file may still be indexing)", markup=False)
            return
        defaults = default_paths(host.path, line)
        host.app.push_screen(ExportScreen(host.display_path, defaults, kind, line), partial(self._chosen, line))

    def _chosen(self, line: int | None, choice: tuple[str, str] | None) -> None:
        if choice is None:
            return
        kind, out = choice
        host = self.host
        host.notify(f"writing {escape_control(out, one_line=True)}…", markup=False, timeout=2)
        host.run_worker(partial(self._write, kind, out, line), group="export", thread=True, exit_on_error=False)

    def _write(self, kind: str, out: str, line: int | None) -> None:
        from sessionview.core import export
        from sessionview.core.session import open_session

        host = self.host
        try:
            session = open_session(host.path)
            try:
                if kind == "fork":
                    assert line is not None
                    forked = export.fork(session, line, out)
                    done, warnings = f"forked records 1 to {line:,} into {out}", forked.warnings
                else:
                    warnings = export.write_file(session, kind, out, new=True)
                    done = f"exported to {out}"
            finally:
                session.close()
        except FileExistsError:
            host.app.call_from_thread(self._said, f"{out} exists now: nothing was written over it", "error")
            return
        except Exception as exc:  # a refusal, a read or write error: said as it is
            host.app.call_from_thread(self._said, f"{out}: {exc}", "error")
            return
        host.app.call_from_thread(self._said, "; ".join([done, *warnings]), "information")

    def _said(self, text: str, severity: str) -> None:
        self.last = text
        title = "export" if severity != "error" else "not written"
        self.host.notify(escape_control(text, one_line=True), title=title, severity=severity, markup=False, timeout=12)
