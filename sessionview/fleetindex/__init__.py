"""One index for a fleet of hosts: the full-text index in a shared PostgreSQL database.

* :mod:`.postgres`: :class:`~sessionview.fleetindex.postgres.PostgresBackend`, an
  :class:`~sessionview.core.index.model.IndexBackend` with the host name on every row;
* this module: telling an index URL from a path, and the URL with its password removed (for every message).

psycopg is imported only when a PostgreSQL index is opened, so nothing needs it (or a server) unless the
user names one: ``--to``/``--index URL``, ``$SESSIONVIEW_INDEX`` set to a URL, or ``index = "postgresql://…"``
in config.toml (used when ``$SESSIONVIEW_INDEX`` is unset). This host's name on its rows: ``--host``,
``$SESSIONVIEW_HOST``, ``index_host`` in config.toml, else the host name. Credentials are libpq's: the URL,
``PG*`` environment variables, ``~/.pgpass``; messages show the URL without its password.
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

__all__ = ["is_url", "redact", "scrub", "configured_index", "INSTALL_HINT"]

_SCHEMES = ("postgresql://", "postgres://")
_CONNINFO_PASSWORD = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.I)
INSTALL_HINT = "a PostgreSQL index needs psycopg: pip install 'psycopg[binary]>=3.1,<4'"


def is_url(text: str | None) -> bool:
    """Whether ``text`` names a PostgreSQL index (a ``postgresql://`` or ``postgres://`` URL)."""
    return bool(text) and text.strip().lower().startswith(_SCHEMES)  # type: ignore[union-attr]


def configured_index() -> str | None:
    """The shared index to use when none is named: ``$SESSIONVIEW_INDEX`` when it is a PostgreSQL URL, else
    (when that variable is unset) ``index`` in config.toml. None: the local SQLite index."""
    given = os.environ.get("SESSIONVIEW_INDEX")
    if given is not None:
        return given.strip() if is_url(given) else None
    config = _config()
    return config.index if config is not None else None


def configured_host() -> str | None:
    """This host's name in the shared index: ``$SESSIONVIEW_HOST``, else ``index_host`` in config.toml."""
    given = os.environ.get("SESSIONVIEW_HOST")
    if given:
        return given
    config = _config()
    return config.index_host if config is not None else None


def _config() -> Any:
    from sessionview.core.config import ConfigError, load_config

    try:
        return load_config()
    except ConfigError:  # the app and the commands that read the config report it
        return None


def redact(url: str) -> str:
    """The URL (or ``key=value`` conninfo) with any password removed: safe to print."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "postgresql://…"
    if parts.scheme.lower() not in ("postgresql", "postgres"):
        return _CONNINFO_PASSWORD.sub(r"\1***", url)
    netloc = parts.netloc
    if "@" in netloc:
        cred, _, where = netloc.rpartition("@")
        user = cred.split(":", 1)[0]
        netloc = f"{user}:***@{where}" if ":" in cred else f"{user}@{where}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(k.lower() == "password" for k, _ in pairs):
            query = urlencode([(k, "***" if k.lower() == "password" else v) for k, v in pairs], safe="*")
    return f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if query else "") + (f"#{parts.fragment}" if parts.fragment else "")


def secrets(url: str) -> list[str]:
    """The passwords written in ``url`` (to take out of any text that might repeat them)."""
    out: list[str] = []
    try:
        parts = urlsplit(url)
    except ValueError:
        return [url]
    if parts.scheme.lower() in ("postgresql", "postgres"):
        if parts.password:
            from urllib.parse import unquote

            out += [parts.password, unquote(parts.password)]
        out += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if k.lower() == "password" and v]
    else:
        out += [m.group(2).strip("'") for m in _CONNINFO_PASSWORD.finditer(url)]
    return [s for s in out if s]


def scrub(text: str, url: str) -> str:
    """``text`` (an error message) with the URL shown redacted and every password in it removed."""
    text = text.replace(url, redact(url))
    for s in sorted(secrets(url), key=len, reverse=True):
        text = text.replace(s, "***")
    return text


def hit_address(host: str, path: str) -> str:
    """``host:path`` as ``sessionview show`` and scp take it (an ``ssh://`` URL for a host scp would misread)."""
    from urllib.parse import quote

    from sessionview.remote.address import parse

    text = f"{host}:{path}"
    got = parse(text, check_local=False)
    if got is not None and got.host == host and got.path == path:
        return text
    return f"ssh://{quote(host, safe='@[]:')}{quote(path, safe='/~')}"
