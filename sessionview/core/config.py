"""User configuration: ``$XDG_CONFIG_HOME/sessionview/config.toml`` (default ``~/.config/...``), or the
file named by ``$SESSIONVIEW_CONFIG``.

```toml
summarizer = "llm -s 'Summarise this agent session'"   # used by compaction in the app
summarizer_timeout = 120
backups_keep = 20                 # backups kept per file (the newest is never pruned)
backups_max_bytes = "2GiB"        # all files' backups together: bytes, or "500MiB", "2GiB", "1.5G", "100MB"

[keymap]            # binding id = keys (comma-separated); every action of the app has an id
edit = "e"
edit_external = "E"
delete = "d,delete"
truncate = "t"
mark_range = "v"
compact = "c"
undo = "u"
redo = "ctrl+r"
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
    path: str | None = None


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
        raise ConfigError(f"{path}: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror or exc}") from None
    keymap = data.get("keymap", {})
    if not isinstance(keymap, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in keymap.items()):
        raise ConfigError(f"{path}: [keymap] must map binding ids to key strings")
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
    return Config(dict(keymap), summarizer, float(timeout), backups_keep=keep, backups_max_bytes=max_bytes, path=path)
