"""Every host's sessions at once (``sessionview hosts --app``): host, last change, size and path.

The hosts of ``config.toml``'s ``[hosts]`` are listed in parallel, in a thread (:class:`sessionview.remote.
fleet.Fleet`): each host's rows appear as soon as it answers, and a host that is down, hung or has an unknown
key is named on the status line as unreachable while the others show. Enter opens the selected session with
the app on its host, in this terminal (``ssh -t``: :mod:`sessionview.remote.terminal`); ``r`` lists again,
``s`` cycles the order (last change, host, name, size). Host names and paths are shown escaped.
"""

from __future__ import annotations

import subprocess
import time
from typing import Callable

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Static

from sessionview.core.text import escape_control
from sessionview.remote.fleet import Fleet, FleetCatalog, HostSessions

SORTS = ("mtime", "host", "name", "size")


def _plain(text: str) -> Text:
    return Text(escape_control(text, one_line=True))


class FleetApp(App[int]):
    TITLE = "sessionview · hosts"
    CSS = """
    #rows { height: 1fr; }
    #status { height: 1; padding: 0 1; background: $panel; }
    """
    BINDINGS = [
        Binding("q", "quit", "Quit", id="hosts.quit"),
        Binding("r", "reload", "List again", id="hosts.reload"),
        Binding("s", "sort", "Order", id="hosts.sort"),
    ]

    def __init__(
        self,
        hosts: dict[str, str],
        *,
        timeout: float = 10.0,
        read_only: bool = False,
        opener: Callable[[str, str], str | None] | None = None,
    ) -> None:
        super().__init__()
        self.hosts = dict(hosts)
        self.timeout = timeout
        self.read_only = read_only
        self.catalog = FleetCatalog(self.hosts)
        self.sort = SORTS[0]
        #: ``opener(host name, path) -> message or None``: opens a session (default: the app over ssh -t)
        self.opener = opener or self._open_over_ssh
        self.note = ""

    def compose(self) -> ComposeResult:
        yield DataTable(id="rows", cursor_type="row", zebra_stripes=True)
        yield Static(id="status")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("host", key="host")
        table.add_column("modified", key="modified")
        table.add_column("size", key="size")
        table.add_column("path", key="path")
        self.action_reload()

    # -- listing -------------------------------------------------------------------------------
    def action_reload(self) -> None:
        self.catalog = FleetCatalog(self.hosts)
        self._show()
        self.run_worker(self._load, thread=True, exclusive=True, group="fleet")

    def _load(self) -> None:
        catalog = self.catalog
        results = Fleet(self.hosts, timeout=self.timeout).load(lambda listing: self._from_thread(catalog, listing))
        for listing in results:
            if listing.name not in catalog.listings:  # gave up on it: unreachable
                self._from_thread(catalog, listing)

    def _from_thread(self, catalog: FleetCatalog, listing: HostSessions) -> None:
        try:
            self.call_from_thread(self._arrived, catalog, listing)
        except RuntimeError:  # the app has ended (a hung host answered late)
            pass

    def _arrived(self, catalog: FleetCatalog, listing: HostSessions) -> None:
        if catalog is not self.catalog or listing.name in catalog.listings:
            return  # an older listing, or a late answer from a host already marked unreachable
        catalog.apply(listing)
        self._show()

    def _show(self) -> None:
        table = self.query_one(DataTable)
        selected = self.selected()
        table.clear()
        for row in self.catalog.rows(key=self.sort):
            e = row.entry
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(e.mtime))
            table.add_row(_plain(row.host), when, Text(f"{e.size:,}", justify="right"), _plain(e.path),
                          key=f"{row.host}\0{e.path}")
        if selected is not None:
            try:
                table.move_cursor(row=table.get_row_index(f"{selected[0]}\0{selected[1]}"))
            except Exception:
                pass
        status = escape_control(self.catalog.status(), one_line=True)
        self.query_one("#status", Static).update(Text(status + (f" · {self.note}" if self.note else "")))

    def action_sort(self) -> None:
        self.sort = SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]
        self.note = f"order: {self.sort}"
        self._show()

    def selected(self) -> tuple[str, str] | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        try:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        except Exception:
            return None
        if not key:
            return None
        host, _, path = key.partition("\0")
        return host, path

    # -- opening -------------------------------------------------------------------------------
    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        chosen = self.selected()
        if chosen is None:
            return
        self.note = self.opener(*chosen) or ""
        self._show()

    def _open_over_ssh(self, host: str, path: str) -> str | None:
        from sessionview.remote.terminal import app_argv

        address = Fleet(self.hosts).address(host)
        if address is None:
            return f"{host}: not a remote address"
        with self.suspend():
            code = subprocess.call(app_argv(address, path, self.read_only))
        if code == 127:
            return (f"{host}: sessionview is not installed there, so the app cannot run there (remote sessions are read-only); "
                    f"'sessionview show {address.with_path(path)}' reads it")
        if code == 255:
            return f"{host}: ssh failed (unreachable, or its key is not in known_hosts)"
        return None
