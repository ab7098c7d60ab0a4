"""The cross-session search on a shared PostgreSQL index: which index, and opening another host's hit.

The index is PostgreSQL when the screen is given a ``postgresql://`` URL, or ``$SESSIONVIEW_INDEX`` is one
(:func:`sessionview.fleetindex.configured_index`); the whole fleet is then searched. A hit on another host
opens the way ``sessionview ssh://host/path`` does: this app reads it over SFTP (:mod:`sessionview.ui.fleet`),
at the hit's ``#N`` with the match highlighted. The host is found by its ``[hosts]`` name when config.toml
has one (its user, port or alias), else as ssh takes the recorded name.
"""

from __future__ import annotations

from typing import Any, Callable


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


def address_for(hit: Any) -> Any:
    """The address of a hit's file: its host as ``[hosts]`` of config.toml names it (user, port, alias), or
    the host name the indexer recorded, as ssh takes it."""
    from sessionview.remote.address import configured, parse

    try:
        from sessionview.core.config import load_config

        hosts = load_config().hosts
    except Exception:  # a broken config is reported elsewhere
        hosts = {}
    base = configured(hit.host, hosts)
    if base is not None:
        return base.with_path(hit.path)
    return parse(address_of(hit), check_local=False)


def open_remote(app: Any, hit: Any, term: str, open_at: Callable[[Any, Any, int, str], None]) -> str:
    """Open the hit's file on its host here, over SFTP (connecting in a thread), at its ``#N`` with ``term``
    highlighted (``open_at(app, screen, n, term)``: :func:`sessionview.ui.screens.search_all.open_at`);
    what the status line says meanwhile."""
    from sessionview.ui.screens.remote import open_in_thread

    where = address_of(hit)
    address = address_for(hit)
    if address is None:
        return f"{where} (#{hit.n}): not an address ssh takes; open it with: sessionview show {where}"
    open_in_thread(app, address, where, lambda screen: open_at(app, screen, hit.n, term))
    return f"opening {where} at #{hit.n} over SSH…"
