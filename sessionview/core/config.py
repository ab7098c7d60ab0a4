"""User configuration: ``$XDG_CONFIG_HOME/sessionview/config.toml`` (default ``~/.config/...``), or the
file named by ``$SESSIONVIEW_CONFIG``.

```toml
summarizer = "llm -s 'Summarise this agent session'"   # used by compaction in the app
summarizer_timeout = 120
backups_keep = 20                 # backups kept per file (the newest is never pruned)
backups_max_bytes = "2GiB"        # all files' backups together: bytes, or "500MiB", "2GiB", "1.5G", "100MB"
index_in_background = true       # the app keeps the full-text index current from the session list
index = "postgresql://sv@db.internal/sessions"   # the fleet's shared index (default: the local SQLite one);
index_host = "gpu-box"            # this host's name in it (default: the host name); the password: ~/.pgpass

[keymap]            # binding id = keys (comma-separated); every action of the app has an id
edit = "e"
edit_external = "E"
delete = "d,delete"
truncate = "t"
mark_range = "v"
compact = "c"
undo = "u"
redo = "ctrl+r"
drop_result = "D"
"session.context" = "C"

[hosts]             # the fleet: name = a directory of sessions on a host, ssh://[user@]host[:port]/path or host:path
web1 = "ssh://agent@web1.example/srv/agents/sessions"
gpu = "gpu-box:runs"
```
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from typing import Any

from sessionview.core.sizes import parse_size


class ConfigError(ValueError):
    pass


@dataclass
class Config:
    keymap: dict[str, str] = field(default_factory=dict)
    summarizer: str | None = None
    summarizer_timeout: float = 120.0
    backups_keep: int = 20
    backups_max_bytes: int = 2 * 1024**3
    #: the fleet: host name -> the address of its session directory (parsed by :mod:`sessionview.remote`)
    hosts: dict[str, str] = field(default_factory=dict)
    index_in_background: bool = True
    index: str | None = None  # a postgresql:// URL: the shared index searched by default
    index_host: str | None = None
    path: str | None = None
    #: mistakes that did not stop the file from loading (an unknown setting), as ``path:line: what``
    problems: tuple[str, ...] = ()


KNOWN_KEYS = (
    "keymap", "summarizer", "summarizer_timeout", "backups_keep", "backups_max_bytes", "hosts", "index_in_background", "index", "index_host",
)


def line_of(path: str, key: str, section: str | None = None) -> int | None:
    """The line (1-based) that sets ``key`` (inside ``[section]`` if given) in the TOML file at ``path``."""
    import re

    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    current: str | None = None
    key_re = re.compile(r'^\s*(?:"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([A-Za-z0-9_.-]+))\s*=')
    for i, text in enumerate(lines, 1):
        stripped = text.strip()
        if stripped.startswith("[") and not stripped.startswith("[["):
            current = stripped.strip("[] \t").split("]")[0].strip().strip('"')
            continue
        m = key_re.match(text)
        if m and current == section and next(g for g in m.groups() if g is not None) == key:
            return i
    return None


def where(path: str, key: str, section: str | None = None) -> str:
    """``path:line`` of ``key`` (``path`` alone when the line is not found)."""
    n = line_of(path, key, section)
    return f"{path}:{n}" if n else path


def config_path() -> str:
    explicit = os.environ.get("SESSIONVIEW_CONFIG")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "sessionview", "config.toml")


def load_config(path: str | None = None) -> Config:
    """The user's configuration; a missing file is an empty config, a broken one a :class:`ConfigError`."""
    path = path or config_path()
    try:
        with open(path, "rb") as f:
            data: dict[str, Any] = tomllib.load(f)
    except FileNotFoundError:
        return Config(path=None)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror or exc}") from None
    keymap = data.get("keymap", {})
    if not isinstance(keymap, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in keymap.items()):
        raise ConfigError(f"{where(path, 'keymap')}: [keymap] must map binding ids to key strings (id = \"keys\")")
    summarizer = data.get("summarizer")
    if summarizer is not None and not isinstance(summarizer, str):
        raise ConfigError(f"{path}: summarizer must be a string (a shell command)")
    timeout = data.get("summarizer_timeout", 120.0)
    if not isinstance(timeout, (int, float)) or timeout <= 0:
        raise ConfigError(f"{path}: summarizer_timeout must be a positive number of seconds")
    keep = data.get("backups_keep", Config.backups_keep)
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
        raise ConfigError(f"{path}: backups_keep must be a whole number of at least 1 (backups kept per file); got {keep!r}")

    try:
        max_bytes = parse_size(data.get("backups_max_bytes", Config.backups_max_bytes), "backups_max_bytes")
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    hosts = data.get("hosts", {})
    if not isinstance(hosts, dict) or not all(isinstance(k, str) and k and isinstance(v, str) for k, v in hosts.items()):
        raise ConfigError(f"{where(path, 'hosts')}: [hosts] must map host names to addresses (name = \"ssh://host/path\" or \"host:path\")")
    for name, address in hosts.items():
        if not (address.startswith("ssh://") or ":" in address):
            raise ConfigError(f"{where(path, name, 'hosts')}: [hosts] {name}: {address!r} is not a remote address (ssh://[user@]host[:port]/path or host:path)")
    background = data.get("index_in_background", True)
    if not isinstance(background, bool):
        raise ConfigError(f"{where(path, 'index_in_background')}: index_in_background must be true or false; got {background!r}")
    index, index_host = data.get("index"), data.get("index_host")
    if index is not None and not (isinstance(index, str) and index.lower().startswith(("postgresql://", "postgres://"))):
        raise ConfigError(f"{where(path, 'index')}: index must be a PostgreSQL URL (\"postgresql://[user@]server/db\")")
    if index_host is not None and not (isinstance(index_host, str) and index_host.strip()):
        raise ConfigError(f"{where(path, 'index_host')}: index_host must be a host name")
    problems = tuple(
        f"{where(path, key)}: unknown setting {key!r} (known: {', '.join(KNOWN_KEYS)})" for key in data if key not in KNOWN_KEYS
    )
    return Config(
        dict(keymap), summarizer, float(timeout), backups_keep=keep, backups_max_bytes=max_bytes, hosts=dict(hosts),
        index_in_background=background, path=path, problems=problems, index=index, index_host=index_host,
    )
