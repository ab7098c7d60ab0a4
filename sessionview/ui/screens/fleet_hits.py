"""The cross-session search on a shared PostgreSQL index: which index, and opening another host's hit.

The index is PostgreSQL when the screen is given a ``postgresql://`` URL, or ``$SESSIONVIEW_INDEX`` is one
(:func:`sessionview.fleetindex.configured_index`); the whole fleet is then searched. A hit on another host
opens the way ``sessionview ssh://host/path`` does: the app runs on that host in this terminal
(``ssh -t host sessionview PATH``, no prompts, known_hosts checked), with this app suspended meanwhile.
Where the app cannot be suspended (served to a browser), the hit's address is shown to copy instead.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Any


def index_url(given: str | None) -> str | None:
    """The PostgreSQL URL to search, or None for the embedded SQLite index."""
    from sessionview.fleetindex import configured_index, is_url

    if given:
        return given if is_url(given) else None
    return configured_index()


def open_backend(url: str) -> Any:
    from sessionview.fleetindex.postgres import PostgresBackend

    return PostgresBackend(url)


def address_of(hit: Any) -> str:
    from sessionview.fleetindex import hit_address

    return hit_address(hit.host, hit.path)


def open_remote(app: Any, hit: Any) -> str:
    """Run the app on the hit's host in this terminal; what to tell the user afterwards."""
    from sessionview.remote.address import parse
    from sessionview.remote.terminal import app_argv

    where = address_of(hit)
    address = parse(where, check_local=False)
    ssh = shutil.which("ssh")
    if address is None or ssh is None:
        why = "the OpenSSH client (ssh) is missing" if ssh is None else "not an address ssh takes"
        return f"{where} (#{hit.n}) is on another host: {why}; open it with: sessionview show {where}"
    argv = app_argv(address, address.path, False, ssh)
    try:
        with app.suspend():
            code = subprocess.call(argv)
    except Exception as exc:  # SuspendNotSupported (a browser), or ssh cannot run
        return f"{where} #{hit.n} is on {hit.host}; this app cannot hand over its terminal ({type(exc).__name__}): " \
               f"run sessionview {where}"
    return f"back from {where} (#{hit.n})" + (f": ssh exited with {code}" if code else "")
