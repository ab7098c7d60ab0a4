"""The full-text index of every session: incremental, kept current with cheap ``stat`` calls.

* :mod:`.model`: what the index holds (:class:`FileState`, :class:`Doc`) and what a search returns
  (:class:`Candidate`, :class:`Hit`), and :class:`IndexBackend`, the small interface a store implements;
* :mod:`.query`: the query language (words, ``"phrases"``, ``prefix*``, ``-exclusion``) and its safe
  translation to FTS5;
* :mod:`.extract`: the searchable text of each record, through the format adapters;
* :mod:`.indexer`: what to (re)index, decided from path, inode, size and a prefix hash;
* :mod:`.hits`: a search, its hits checked against the file and given snippets;
* :mod:`.sqlite`: the embedded backend (SQLite FTS5, WAL), the only module with SQL.

Stdlib and orjson only.
"""

from __future__ import annotations

import os

__all__ = ["default_index_path"]


def default_index_path() -> str:
    """``$SESSIONVIEW_INDEX``, else ``$XDG_CACHE_HOME/sessionview/index.sqlite`` (default ``~/.cache/...``)."""
    given = os.environ.get("SESSIONVIEW_INDEX")
    if given:
        return os.path.abspath(os.path.expanduser(given))
    base = os.environ.get("XDG_CACHE_HOME")
    if not base or not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "sessionview", "index.sqlite")
