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
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import unquote

__all__ = ["Address", "parse", "is_remote"]

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


def _host(text: str) -> str:
    return text[1:-1] if text.startswith("[") else text
