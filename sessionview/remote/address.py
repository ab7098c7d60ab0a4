"""Remote addresses: ``ssh://[user@]host[:port]/path`` and scp's ``[user@]host:path``. Pure: no SSH here.

The rule for the scp form (so that a local file name with a colon is never sent to a host):

* a name that exists locally is always local;
* it must have a ``:`` before any ``/`` (``./a:b`` and ``dir/a:b`` are local, as with scp);
* the part before the colon must look like a host: ``[user@]name`` with a name of letters, digits, ``.``,
  ``-`` and ``_`` (or ``[IPv6]``), not a single letter (``C:``), and not a session file's name
  (``s.jsonl:3`` is a local name: no host is called ``*.jsonl``, ``*.json`` or ``*.ndjson``).

Write ``./NAME`` to make any name local.

``host:`` alone is the home directory; a relative path is relative to it (as SFTP and scp do); an
``ssh://`` path is absolute, and ``ssh://host/~/x`` is relative to the home directory.

A ``[hosts]`` name of config.toml is an alias (:func:`aliased`): ``web1:PATH`` and ``ssh://web1/PATH``, with
no user and no port, connect with that entry's user, host and port; ``web1:`` and ``ssh://web1`` (no path)
are the entry's directory. A name not in ``[hosts]`` is left to ssh (``~/.ssh/config``, then DNS).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Mapping
from urllib.parse import unquote

__all__ = ["Address", "parse", "is_remote", "configured", "aliased"]

_HOST = r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?)"
_USER = r"[A-Za-z0-9_.][A-Za-z0-9_.-]*"
_SCP = re.compile(rf"\A(?:(?P<user>{_USER})@)?(?P<host>{_HOST}):(?P<path>.*)\Z", re.S)
_URL = re.compile(rf"\Assh://(?:(?P<user>[^@/]+)@)?(?P<host>{_HOST})(?::(?P<port>[0-9]{{1,5}}))?(?P<path>/.*)?\Z", re.S)


@dataclass(frozen=True)
class Address:
    host: str  # a host name, an ~/.ssh/config alias, or an address (IPv6 without brackets)
    path: str  # on the host: absolute, or relative to the login's home directory ("" is the home)
    user: str | None = None
    port: int | None = None

    @property
    def host_label(self) -> str:
        """The host as people write it (``user@host:port``)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        user = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port else ""
        return f"{user}{host}{port}"

    def with_path(self, path: str) -> "Address":
        return Address(self.host, path, self.user, self.port)

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        user = f"{self.user}@" if self.user else ""
        if self.port or self.path.startswith("/") or not self.path:
            port = f":{self.port}" if self.port else ""
            path = self.path if self.path.startswith("/") else "/~/" + self.path if self.path else "/~"
            return f"ssh://{user}{host}{port}{path}"
        return f"{user}{host}:{self.path}"


def parse(text: str, *, check_local: bool = True) -> Address | None:
    """The remote address ``text`` names, or None when it is a local path (see the module's rule)."""
    m = _URL.match(text)
    if m is not None:
        port = int(m["port"]) if m["port"] else None
        if port is not None and not 0 < port < 65536:
            return None
        path = unquote(m["path"] or "/~")
        if path == "/~" or path.startswith("/~/"):
            path = path[3:]
        return Address(_host(m["host"]), path, unquote(m["user"]) if m["user"] else None, port)
    if text.startswith("ssh://"):
        return None
    m = _SCP.match(text)
    if m is None or "/" in text.split(":", 1)[0]:
        return None
    if len(m["host"]) == 1 and not m["user"]:
        return None  # a drive letter
    if m["host"].lower().endswith((".jsonl", ".json", ".ndjson")):
        return None  # a session file's name, e.g. s.jsonl:3
    if check_local and os.path.lexists(text):
        return None
    return Address(_host(m["host"]), m["path"], m["user"], None)


def is_remote(text: str) -> bool:
    return parse(text) is not None


def configured(name: str, hosts: Mapping[str, str]) -> Address | None:
    """The address of the ``[hosts]`` entry ``name`` (None: no such entry, or not an address)."""
    entry = hosts.get(name)
    return parse(entry, check_local=False) if entry else None


def aliased(address: Address, hosts: Mapping[str, str]) -> Address:
    """``address`` with a ``[hosts]`` name as its host (and no user or port given) replaced by that entry's
    user, host and port. Its path is kept; an empty one (``web1:``, ``ssh://web1``) is the entry's directory."""
    if address.user is not None or address.port is not None:
        return address
    base = configured(address.host, hosts)
    if base is None:
        return address
    return base.with_path(address.path or base.path)


def _host(text: str) -> str:
    return text[1:-1] if text.startswith("[") else text
