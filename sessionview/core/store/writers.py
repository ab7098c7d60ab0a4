"""Who has a file open for writing: ``/proc`` scans, and read leases on a replaced inode (Linux; elsewhere no-ops)."""

from __future__ import annotations

import errno
import fcntl
import os
import sys
import time
from dataclasses import dataclass

__all__ = ["Writer", "command", "scan_writers", "find_writers", "lease_probe"]

_F_SETLEASE = getattr(fcntl, "F_SETLEASE", 1024 if sys.platform.startswith("linux") else None)


@dataclass(frozen=True, slots=True)
class Writer:
    pid: int
    fd: int
    command: str

    def describe(self) -> str:
        return f"pid {self.pid} ({self.command})"


def command(pid: int) -> str:
    """The command line of process ``pid`` (shortened), or its name, or ``?``."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read(4096)
        cmd = " ".join(os.fsdecode(p) for p in raw.split(b"\0") if p)
        if cmd:
            return cmd if len(cmd) <= 200 else cmd[:199] + "…"
    except OSError:
        pass
    try:
        with open(f"/proc/{pid}/comm", "rb") as f:
            return os.fsdecode(f.read().strip()) or "?"
    except OSError:
        return "?"


def scan_writers(real: str, dev: int, ino: int, *, include_self: bool) -> list[tuple[int, int]]:
    """(pid, fd) of every open file description on inode (dev, ino) with write access, from /proc."""
    found: list[tuple[int, int]] = []
    base = os.path.basename(real)
    me = os.getpid()
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return found
    for pid in pids:
        if pid == me and not include_self:
            continue
        fd_dir = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for name in fds:
            link = f"{fd_dir}/{name}"
            try:
                target = os.readlink(link)
            except OSError:
                continue
            # cheap filter before stat: the kernel shows the path the file was opened by (links
            # resolved), possibly through another mount, with " (deleted)" once it is unlinked
            if target.endswith(" (deleted)"):
                target = target[: -len(" (deleted)")]
            if os.path.basename(target) != base:
                continue
            try:
                st = os.stat(link)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) != (dev, ino):
                continue
            try:
                with open(f"/proc/{pid}/fdinfo/{name}", "rb") as f:
                    info = f.read(4096)
            except OSError:
                continue
            for line in info.splitlines():
                if line.startswith(b"flags:"):
                    flags = int(line.split()[1], 8)
                    if flags & os.O_ACCMODE in (os.O_WRONLY, os.O_RDWR):
                        found.append((pid, int(name)))
                    break
    return found


def find_writers(
    path: str | os.PathLike[str],
    st: os.stat_result | None = None,
    *,
    include_self: bool = False,
    persistent: bool = True,
) -> list[Writer]:
    """Processes that have the file open for writing (Linux /proc; elsewhere an empty list).

    With ``persistent`` a process must be seen in every one of a few scans spread over ~20 ms, so a
    writer that opens, appends and closes the file for every line (which a save handles) is not
    mistaken for one that keeps it open (whose later writes would go to the replaced file).
    """
    real = os.path.realpath(os.fspath(path))
    if st is None:
        try:
            st = os.stat(real)
        except OSError:
            return []
    if not os.path.isdir("/proc/self/fd"):
        return []
    seen = set(scan_writers(real, st.st_dev, st.st_ino, include_self=include_self))
    if persistent:
        for pause in (0.002, 0.005, 0.012):
            if not seen:
                break
            time.sleep(pause)
            seen &= set(scan_writers(real, st.st_dev, st.st_ino, include_self=include_self))
    return [Writer(pid, fd, command(pid)) for pid, fd in sorted(seen)]


def lease_probe(fd: int) -> bool | None:
    """Whether anyone has the inode of ``fd`` (opened read-only) open for writing, via a read lease.

    Only used on a replaced (unlinked) inode, which nobody can open by name any more, so holding the lease
    for a moment cannot block another process. Returns None when leases are unavailable.
    """
    if _F_SETLEASE is None:
        return None
    try:
        fcntl.fcntl(fd, _F_SETLEASE, fcntl.F_RDLCK)
    except OSError as exc:
        if exc.errno == errno.EAGAIN:
            return True
        return None
    try:
        fcntl.fcntl(fd, _F_SETLEASE, fcntl.F_UNLCK)
    except OSError:
        pass
    return False
