"""``sessionview serve``: the app in a web browser, closed to everyone but the person who started it.

textual-serve runs a Textual app behind a websocket, but it has no authentication and accepts a
websocket from any page (any ``Origin``) under any name (any ``Host``): any web site the user opens could
start the app and drive an editor of an agent's memory. ``sessionview.serve.server`` wraps textual-serve's
``Server`` and ``AppService`` and puts this in front of everything that spawns or talks to an app process:

* **loopback by default**: ``127.0.0.1``; another address needs ``--public`` and prints a warning
  (without it: a one-line error, exit status 2);
* **a token**: ``secrets.token_urlsafe`` on each run, printed in the URL (``/?token=...``) like Jupyter.
  ``/``, ``/ws``, ``/download/...`` and any other path need it (query ``token=`` or the cookie the page
  sets), compared with ``hmac.compare_digest``; without it: 403 and no process. The page that ``/`` serves
  sets an HttpOnly, SameSite=Strict cookie (one name per port) which its websocket carries: textual-serve's
  script appends ``?width=...`` to the websocket URL, so the token is never put in that URL. The page's
  static files (script, CSS, fonts: public files) need no token;
* **Host and Origin checks**: the ``Host`` header (DNS rebinding) and, when one is sent, the ``Origin``
  header (cross-site websocket hijacking) must name the served address: ``host:port``, and for loopback
  ``127.0.0.1``, ``localhost`` or ``[::1]`` with the same port. Otherwise 403. (Another port of
  127.0.0.1 is the same *site* for cookies, so the Origin check is what stops a page served there);
* **a cap** on concurrent app processes (``--max-sessions``, default 4): one more websocket gets 503
  before the upgrade and spawns nothing. When a socket closes its process is asked to quit, then sent
  SIGTERM, then SIGKILL (its whole process group), and always reaped;
* **read-only** apps (``--read-only``) unless ``--allow-write``;
* ``--port 0`` picks a free port; the printed URL has the real one.

This module only imports the server when it runs, so a broken install (no textual-serve or aiohttp)
is one clear line rather than a traceback.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

REQUIRED = {"textual_serve", "aiohttp", "aiohttp_jinja2", "jinja2"}
NEEDS = "sessionview depends on textual-serve and aiohttp: reinstall it (pip install -e .)"


@dataclass(frozen=True, slots=True)
class ServeOptions:
    """What ``sessionview serve`` was asked for, passed whole from the command line to the server."""

    path: str  # a directory of sessions, or one file
    host: str = "127.0.0.1"
    port: int = 8765  # 0: any free port
    public: bool = False  # allow a non-loopback --host
    allow_write: bool = False  # the apps may edit sessions
    max_sessions: int = 4  # app processes at once


def serve(options: ServeOptions) -> int:
    """Serve the app on PATH (a directory of sessions or one file) until Ctrl+C. Returns the exit status."""
    try:
        from sessionview.serve import server as serve_server
    except ImportError as exc:
        missing = (getattr(exc, "name", None) or "").split(".")[0]
        if missing not in REQUIRED:
            raise
        sys.stderr.write(f"sessionview: serve needs {missing}, which is not installed; {NEEDS}\n")
        sys.stderr.flush()
        return 2
    return serve_server.run(options)
