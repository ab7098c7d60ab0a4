"""Every host's sessions at once: the ``[hosts]`` table of ``config.toml`` listed in parallel.

Each host is listed in its own thread over its own connection, so a slow or dead host never holds up the
others: :meth:`Fleet.load` returns when every host has answered or ``timeout`` has passed, and a host that
has not answered by then is marked unreachable (its listing, if it comes later, is given to ``on_host``
too). :class:`FleetCatalog` is the session list's model: the rows of every host with a host column,
filtered and sorted like :meth:`sessionview.core.catalog.Catalog.sorted`, and the hosts that are down.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Callable, Iterable

from sessionview.core.catalog import Entry
from sessionview.remote.address import Address, parse
from sessionview.remote.connection import Connection, RemoteError
from sessionview.remote.sessions import scan
from sessionview.remote.sftp import SftpAccess

DEFAULT_TIMEOUT = 10.0


@dataclass
class HostSessions:
    """One host's listing, or why there is none."""

    name: str
    address: str
    entries: list[Entry] = field(default_factory=list)
    error: str | None = None  # "unreachable (...)", a refused host key, a bad address...
    seconds: float = 0.0

    @property
    def reachable(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class Row:
    host: str
    entry: Entry

    @property
    def label(self) -> str:
        return f"{self.host}:{self.entry.rel}"


#: ``access_for(address) -> SftpAccess``: a connection kept by the caller (the app's, reused between listings)
AccessFor = Callable[[Address], SftpAccess]


def list_host(
    name: str,
    address: str,
    timeout: float = DEFAULT_TIMEOUT,
    should_stop: Callable[[], bool] | None = None,
    access_for: AccessFor | None = None,
) -> HostSessions:
    start = time.monotonic()
    parsed = parse(address, check_local=False)
    if parsed is None:
        return HostSessions(name, address, error=f"{address!r} is not a remote address")
    try:
        if access_for is not None:
            access = access_for(parsed)
            access.timeout = timeout
            entries = list(scan(access, parsed.path or ".", should_stop))
        else:
            with Connection(parsed, timeout=timeout) as conn:
                conn.open()
                access = SftpAccess(conn, timeout=timeout)
                entries = list(scan(access, parsed.path or ".", should_stop))
    except RemoteError as exc:
        return HostSessions(name, address, error=str(exc).removeprefix(f"{parsed.host_label}: "), seconds=time.monotonic() - start)
    except OSError as exc:
        return HostSessions(name, address, error=f"unreachable ({exc.strerror or exc})", seconds=time.monotonic() - start)
    return HostSessions(name, address, entries, seconds=time.monotonic() - start)


class Fleet:
    def __init__(self, hosts: dict[str, str], timeout: float = DEFAULT_TIMEOUT, access_for: AccessFor | None = None) -> None:
        self.hosts = dict(hosts)
        self.timeout = timeout
        self.access_for = access_for
        self._stop = threading.Event()

    def address(self, name: str) -> Address | None:
        text = self.hosts.get(name)
        return parse(text, check_local=False) if text is not None else None

    def load(self, on_host: Callable[[HostSessions], None] | None = None) -> list[HostSessions]:
        """List every host; a host without an answer after ``timeout`` seconds is marked unreachable."""
        if not self.hosts:
            return []
        pool = ThreadPoolExecutor(max_workers=min(16, len(self.hosts)), thread_name_prefix="sessionview-host")
        futures: dict[Future[HostSessions], str] = {}
        for name, address in self.hosts.items():
            fut = pool.submit(list_host, name, address, self.timeout, self._stop.is_set, self.access_for)
            futures[fut] = name
            if on_host is not None:
                fut.add_done_callback(lambda f: on_host(f.result()))
        results: dict[str, HostSessions] = {}
        deadline = time.monotonic() + self.timeout + 1.0
        pending = set(futures)
        while pending:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            done, pending = wait(pending, left, return_when=FIRST_COMPLETED)
            for fut in done:
                results[futures[fut]] = fut.result()
        for fut in pending:
            name = futures[fut]
            results[name] = HostSessions(name, self.hosts[name], error=f"unreachable (no answer within {self.timeout:g} s)",
                                         seconds=self.timeout)
        pool.shutdown(wait=False, cancel_futures=True)
        return [results[name] for name in self.hosts]

    def stop(self) -> None:
        self._stop.set()


class FleetCatalog:
    """The session list's model for many hosts: rows with a host column, and each host's state."""

    def __init__(self, hosts: Iterable[str] = ()) -> None:
        self.listings: dict[str, HostSessions] = {}
        self.order = list(hosts)
        self.version = 0

    def apply(self, listing: HostSessions) -> None:
        """A host's (newer) listing: its rows replace its old ones; an unreachable host keeps no rows."""
        if listing.name not in self.order:
            self.order.append(listing.name)
        self.listings[listing.name] = listing
        self.version += 1

    @property
    def unreachable(self) -> dict[str, str]:
        return {n: h.error for n, h in self.listings.items() if h.error is not None}

    @property
    def waiting(self) -> list[str]:
        """Hosts not heard from yet."""
        return [n for n in self.order if n not in self.listings]

    def rows(self, text: str = "", key: str = "mtime") -> list[Row]:
        needle = text.casefold()
        rows = [Row(n, e) for n in self.order if n in self.listings for e in self.listings[n].entries]
        if needle:
            rows = [r for r in rows if needle in r.label.casefold()]
        if key == "name":
            return sorted(rows, key=lambda r: (r.entry.rel.casefold(), r.host))
        if key == "size":
            return sorted(rows, key=lambda r: (-r.entry.size, r.entry.rel, r.host))
        if key == "host":
            return sorted(rows, key=lambda r: (r.host, -r.entry.mtime, r.entry.rel))
        return sorted(rows, key=lambda r: (-r.entry.mtime, r.entry.rel, r.host))

    def status(self) -> str:
        """One line for the status bar: how many sessions on how many hosts, and which hosts are down."""
        up = [h for h in self.listings.values() if h.error is None]
        count = sum(len(h.entries) for h in up)
        parts = [f"{count} session{'s' if count != 1 else ''} on {len(up)} host{'s' if len(up) != 1 else ''}"]
        parts += [f"{n}: {err}" for n, err in self.unreachable.items()]
        if self.waiting:
            parts.append(f"waiting for {', '.join(self.waiting)}")
        return " · ".join(parts)
