"""Sessions on other hosts in the app: one SSH connection per host, what each host allows, and opening a
remote session over SFTP.

The app itself reads remote files (``sessionview ssh://host/path``, a host of ``[hosts]`` in the session
list, a fleet search hit): :class:`RemoteHosts` keeps one :class:`~sessionview.remote.connection.Connection`
per host (the user's agent, keys and ``~/.ssh/config``; known_hosts checked; never a prompt) and the session
screen reads through its :class:`~sessionview.remote.sftp.SftpAccess` (range reads, end first; following by
polling the size). Everything that blocks (connecting, the probe of the host's ``sessionview``) runs in a
worker thread, never on the UI thread.

The app never writes a remote file over SFTP. A safe save checks things that only a process next to the
file can check (the inode, ``/proc``, an atomic rename), so an edit of a remote file runs on the host, with
its own ``sessionview`` (:mod:`sessionview.ui.screens.remote_edit`: edit, delete, truncate, compact, drop a
result; undo and the history are the CLI's there, ``sessionview undo host:path``). Without a ``sessionview`` there (or
with an older one) the session is read-only, and the session screen says why, in its status line and when
an edit key is pressed.

The session screen on a remote file is made by :func:`sessionview.ui.screens.remote.session_screen`;
``sessionview hosts --app`` is the session list with the hosts of ``[hosts]`` only
(:func:`sessionview.ui.launch.run_hosts_app`).
"""

from __future__ import annotations

import shlex

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.message import Message

from sessionview.core.catalog import Description, Entry
from sessionview.remote.address import Address, parse

if TYPE_CHECKING:  # asyncssh is imported only once a host is named (the local app starts without it)
    from sessionview.remote.connection import Connection
    from sessionview.remote.fleet import HostSessions
    from sessionview.remote.sftp import SftpAccess
    from sessionview.remote.writes import Capability

CONNECT_TIMEOUT = 10.0  # as sessionview.remote.connection


class RemoteHosts:
    """The app's SSH connections, one per host (``user@host:port``), opened on first use, and each host's
    :class:`~sessionview.remote.writes.Capability`. Methods block: call them from worker threads."""

    def __init__(self, timeout: float = CONNECT_TIMEOUT) -> None:
        self.timeout = timeout
        self._connections: dict[str, Connection] = {}
        self._capabilities: dict[str, Capability] = {}
        self._lock = threading.Lock()
        self._host_locks: dict[str, threading.Lock] = {}

    def _host_lock(self, key: str) -> threading.Lock:
        with self._lock:
            return self._host_locks.setdefault(key, threading.Lock())

    def connection(self, address: Address) -> "Connection":
        """The open connection to ``address``'s host (raises RemoteError: unreachable, key refused...)."""
        from sessionview.remote.connection import Connection

        key = address.host_label
        with self._host_lock(key):
            conn = self._connections.get(key)
            if conn is not None and conn.conn is not None and not _closed(conn):
                return conn
            conn = Connection(address, timeout=self.timeout).open()
            self._connections[key] = conn
            return conn

    def access(self, address: Address) -> "SftpAccess":
        from sessionview.remote.sessions import SessionAccess

        return SessionAccess(self.connection(address))

    def capability(self, address: Address) -> "Capability":
        """Whether the host has a ``sessionview`` that writes could run with (asked once per host)."""
        from sessionview.remote import writes
        from sessionview.remote.writes import Capability

        key = address.host_label
        found = self._capabilities.get(key)
        if found is None:
            try:
                found = writes.probe(self.connection(address))
            except (OSError, TimeoutError) as exc:
                found = Capability(False, f"remote sessions on {key} are read-only: could not ask the host ({exc})", installed=False)
            self._capabilities[key] = found
        return found

    def known_capability(self, address: Address) -> "Capability | None":
        """The host's capability if it was asked already (never blocks)."""
        return self._capabilities.get(address.host_label)

    def close(self) -> None:
        with self._lock:
            conns, self._connections = list(self._connections.values()), {}
        for conn in conns:
            conn.close()


def _closed(conn: "Connection") -> bool:
    transport = getattr(conn.conn, "_transport", None)
    return transport is None or transport.is_closing()


def hosts_of(app: Any) -> RemoteHosts:
    """The app's :class:`RemoteHosts` (made on first use, closed when the app ends: see :func:`close_hosts`)."""
    hosts = getattr(app, "remote_hosts", None)
    if hosts is None:
        hosts = RemoteHosts()
        app.remote_hosts = hosts
    return hosts


def close_hosts(app: Any) -> None:
    hosts = getattr(app, "remote_hosts", None)
    if hosts is not None:
        app.remote_hosts = None
        hosts.close()


def read_only_reason(address: Address, capability: "Capability | None") -> str:
    """What the session screen says about a remote session's editing."""
    if capability is None:
        return f"read-only: a remote session (asking {address.host_label} whether it has sessionview…)"
    if not capability.writable:
        return capability.reason
    return (f"remote: e d t c D write with {address.host_label}'s sessionview, next to the file (its preview first); "
            f"undo and history: sessionview undo/history {shlex.quote(str(address))}")


# -- the session list's hosts ------------------------------------------------------------------------

RELIST_EVERY = 5.0  # seconds between listings of every host (new, changed and deleted remote files)


@dataclass
class HostListed(Message):
    """A host's listing (or why there is none) arrived from the listing thread."""

    listing: "HostSessions"
    round: int


class HostListing:
    """The hosts of the session list: each one listed in the background (in parallel, over the app's
    connections), its rows merged into the screen's catalog with their host, and its state (listing,
    listed, unreachable) for the header. A host that is slow or down never holds up the others or the list:
    after ``timeout`` seconds without an answer it is marked unreachable, and the rest still show."""

    def __init__(self, screen: Any, hosts: dict[str, str], timeout: float = 10.0) -> None:
        self.screen = screen
        self.hosts = dict(hosts)
        self.timeout = timeout
        self.errors: dict[str, str] = {}
        self.heard: set[str] = set()  # hosts that answered (or were given up on) at least once
        self.round = 0
        self._running = False
        self._addresses: dict[str, Address] = {}  # row key -> the file's address

    def start(self) -> None:
        self.list_again()
        self.screen.set_interval(RELIST_EVERY, self.list_again)

    def list_again(self) -> None:
        if self._running or not self.hosts:
            return
        self._running = True
        self.round += 1
        self.screen.run_worker(lambda: self._list(self.round), group="hosts", thread=True, exit_on_error=False)

    def _list(self, round: int) -> None:
        from sessionview.remote.fleet import Fleet

        screen = self.screen
        try:
            fleet = Fleet(self.hosts, timeout=self.timeout, access_for=hosts_of(screen.app).access)
            seen: set[str] = set()

            def arrived(listing: "HostSessions") -> None:
                seen.add(listing.name)
                screen.post_message(HostListed(listing, round))

            for listing in fleet.load(arrived):
                if listing.name not in seen:  # no answer in time: unreachable (a late answer still counts)
                    screen.post_message(HostListed(listing, round))
        finally:
            self._running = False

    def arrived(self, listing: "HostSessions") -> set[str]:
        """Merge a host's listing into the screen's catalog; the row keys that changed."""
        name = listing.name
        self.heard.add(name)
        catalog = self.screen.catalog
        base = parse(self.hosts.get(name, ""), check_local=False)
        if listing.error is not None or base is None:
            self.errors[name] = listing.error or "not a remote address"
            return set()  # rows listed before stay (marked by the header), until the host answers again
        self.errors.pop(name, None)
        old = {k: e for k, e in catalog.entries.items() if e.host == name}
        changed: set[str] = set()
        fresh: dict[str, Entry] = {}
        for e in listing.entries:
            address = base.with_path(e.path)
            key = str(address)
            entry = Entry(key, e.rel, e.size, e.mtime, host=name)
            was = old.pop(key, None)
            if was is not None:
                if (was.size, was.mtime) == (e.size, e.mtime):
                    fresh[key] = was
                    continue
                entry.described_like(was)
            fresh[key] = entry
            self._addresses[key] = address
            changed.add(key)
        for key in old:
            del catalog.entries[key]
            self._addresses.pop(key, None)
            changed.add(key)
        catalog.entries.update(fresh)
        if changed:
            catalog.version += 1
        return changed

    def address(self, key: str) -> Address | None:
        return self._addresses.get(key)

    def describe(self, key: str, size: int) -> Description | None:
        """The description of a remote row (in the describer thread), or None if ``key`` is not one."""
        address = self._addresses.get(key)
        if address is None:
            return None
        from sessionview.remote.sessions import describe

        try:
            access = hosts_of(self.screen.app).access(address)
        except OSError as exc:
            return Description("?", None, str(exc))
        return describe(access, address.path, size)

    def header_parts(self) -> list[tuple[str, str]]:
        """What the header says about the hosts: who is still being listed, who is unreachable."""
        parts: list[tuple[str, str]] = []
        waiting = [n for n in self.hosts if n not in self.heard]
        up = [n for n in self.hosts if n in self.heard and n not in self.errors]
        if up:
            of = f" of {len(self.hosts)}" if len(up) != len(self.hosts) else ""
            parts.append((f" · {len(up)}{of} host{'s' if len(self.hosts) != 1 else ''}", ""))
        if waiting:
            parts.append((f" · listing {', '.join(waiting)}…", "$text-muted"))
        for name, why in self.errors.items():
            said = why if why.startswith("unreachable") else f"unreachable: {why}"
            parts.append((f" · ✗ {name} {said}", "$text-error"))
        return parts
