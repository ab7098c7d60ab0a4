"""The server behind ``sessionview serve`` (see ``sessionview.serve`` for what it guards and why).

It uses textual-serve and aiohttp; ``sessionview.serve`` imports it only when serving."""

from __future__ import annotations

import asyncio
import hmac
import os
import re
import secrets
import shlex
import signal
import socket
import sys
from typing import Any, Callable, Sequence

import aiohttp_jinja2
import jinja2
from aiohttp import web
from textual_serve.server import Server, to_int

from sessionview.core.text import escape_control
from sessionview.serve import ServeOptions
from sessionview.serve.addresses import ServeError, authority, host_name, ip_of, is_loopback, is_wildcard
from sessionview.serve.apps import QUIT_GRACE, TERM_GRACE, AppProcess, Stats, app_argv

PROG = "sessionview"
TOKEN_PARAM = "token"
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # the server stops its apps, then exits
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
EXTERNAL_LINK = re.compile(r"<link\b[^>]*\bhref=\"https?://[^>]*>", re.IGNORECASE)  # the template's web font


#: The page gives the terminal the keyboard as soon as it exists (and again when the window gets focus),
#: so the app takes keys without a click first. xterm reads keys from its helper textarea.
FOCUS_SCRIPT = """<script>
(function () {
  function focusTerminal() {
    var input = document.querySelector("#terminal .xterm-helper-textarea");
    if (input && document.activeElement !== input) input.focus();
    return !!input;
  }
  var tries = 0;
  var timer = setInterval(function () {
    if ((focusTerminal() && document.body.classList.contains("-first-byte")) || ++tries > 600) clearInterval(timer);
  }, 50);
  window.addEventListener("focus", focusTerminal);
})();
</script>
"""



class SessionViewServer(Server):
    """textual-serve's ``Server`` with a token, Host/Origin checks, a process cap and real cleanup.

    Run in-process with ``await start()`` / ``await stop()`` (tests), or ``serve()`` from the CLI.
    """

    def __init__(
        self,
        path: str,
        *,
        host: str = "127.0.0.1",
        port: int = 8765,
        public: bool = False,
        allow_write: bool = False,
        max_sessions: int = 4,
        token: str | None = None,
        argv: Sequence[str] | None = None,
    ) -> None:
        if max_sessions < 1:
            raise ServeError(f"--max-sessions must be at least 1 (got {max_sessions})")
        if not 0 <= port <= 65535:
            raise ServeError(f"--port must be between 0 and 65535 (got {port})")
        if not host:
            raise ServeError("--host is empty")
        if host.lower().rstrip(".") == "localhost":
            host = "127.0.0.1"  # one socket, one port (localhost may resolve to both 127.0.0.1 and ::1)
        self.loopback = is_loopback(host)
        if not self.loopback and not public:
            raise ServeError(
                f"--host {host} is not a loopback address: add --public to serve the app to the network"
            )
        self.path = os.path.abspath(path)
        self.read_only = not allow_write
        self.argv = list(argv) if argv is not None else app_argv(self.path, read_only=self.read_only)
        super().__init__(shlex.join(self.argv), host=host, port=port, title="sessionview")
        self.public = public
        self.max_sessions = max_sessions
        self.token = token or secrets.token_urlsafe(32)
        self.stats = Stats()
        self.apps: set[AppProcess] = set()
        self._slots = 0  # websockets admitted whose app is not yet reaped (<= max_sessions)
        self._runner: web.AppRunner | None = None
        self._allowed: frozenset[str] = frozenset()

    # -- addresses ----------------------------------------------------------------------------------
    @property
    def cookie_name(self) -> str:
        # cookies are shared by every port of a host: one name per port
        return f"sessionview-token-{self.port}"

    @property
    def url(self) -> str:
        """The URL to open, token included."""
        return f"{self.base_url}/?{TOKEN_PARAM}={self.token}"

    @property
    def base_url(self) -> str:
        if is_wildcard(self.host):
            name = host_name(socket.gethostname())
        else:
            name = host_name(self.host)
        return f"http://{authority(name, self.port)}"

    def _compute_allowed(self) -> frozenset[str]:
        names: set[str] = set()
        if self.loopback:
            names.update(LOOPBACK_NAMES)
        if is_wildcard(self.host):
            for name in (socket.gethostname(), socket.getfqdn()):
                if name and not host_name(name).startswith("localhost"):  # loopback names: only on loopback
                    names.add(host_name(name))
        else:
            names.add(host_name(self.host))
            if ip_of(self.host) is None:  # a name: its addresses too
                try:
                    for info in socket.getaddrinfo(self.host, None, type=socket.SOCK_STREAM):
                        names.add(host_name(str(info[4][0])))
                except OSError:
                    pass
        return frozenset(authority(n, self.port) for n in names)

    def allowed_hosts(self, request: web.Request | None = None) -> frozenset[str]:
        """``host:port`` values that name this server (for Host, and for Origin after ``http://``)."""
        allowed = self._allowed
        if request is not None and is_wildcard(self.host):
            # bound to every address: the address this connection reached is a name of this server
            sockname = request.transport.get_extra_info("sockname") if request.transport else None
            if sockname:
                local = ip_of(str(sockname[0]))
                extra = {host_name(str(sockname[0]))}
                if local is not None and local.is_loopback:
                    extra.update(LOOPBACK_NAMES)
                allowed = allowed | {authority(n, self.port) for n in extra}
        return allowed

    def host_ok(self, request: web.Request) -> bool:
        host = request.headers.get("Host")
        if not host:
            return False
        return host.strip().lower() in self.allowed_hosts(request)

    def origin_ok(self, request: web.Request) -> bool:
        """No Origin (not a browser, or a same-origin GET) is fine; a present Origin must be ours."""
        origin = request.headers.get("Origin")
        if origin is None:
            return True
        origin = origin.strip().lower()
        if not origin.startswith("http://"):
            return False  # "null", https (we serve plain http), anything else
        return origin[len("http://"):].rstrip("/") in self.allowed_hosts(request)

    def token_ok(self, request: web.Request) -> bool:
        expected = self.token.encode()
        for given in (request.query.get(TOKEN_PARAM), request.cookies.get(self.cookie_name)):
            if given is not None and hmac.compare_digest(given.encode("utf-8", "surrogateescape"), expected):
                return True
        return False

    # -- the aiohttp application --------------------------------------------------------------------
    def _refuse(self, status: int, text: str) -> web.Response:
        self.stats.refused[status] = self.stats.refused.get(status, 0) + 1
        return web.Response(status=status, text=f"{PROG} serve: {text}\n", headers={"Cache-Control": "no-store"})

    @web.middleware
    async def _guard(self, request: web.Request, handler: Callable[[web.Request], Any]) -> web.StreamResponse:
        if not self.host_ok(request):
            return self._refuse(403, "forbidden: the Host header does not name this server")
        if not self.origin_ok(request):
            return self._refuse(403, "forbidden: a page from another origin may not use this server")
        if not self._is_static(request) and not self.token_ok(request):
            return self._refuse(403, "forbidden: open the URL with the token that 'sessionview serve' printed")
        response = await handler(request)
        if not isinstance(response, web.WebSocketResponse) and not response.prepared:
            response.headers.setdefault("X-Frame-Options", "DENY")
            response.headers.setdefault("X-Content-Type-Options", "nosniff")
            response.headers.setdefault("Referrer-Policy", "no-referrer")
        return response

    @staticmethod
    def _is_static(request: web.Request) -> bool:
        """The page's public files (by the route aiohttp matched, not by a prefix of the path)."""
        resource = request.match_info.route.resource
        return resource is not None and resource.name == "static"

    async def _make_app(self) -> web.Application:
        app = web.Application(middlewares=[self._guard])
        aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(self.templates_path), autoescape=True)
        app.add_routes(
            [
                web.get("/", self.handle_index, name="index"),
                web.get("/ws", self.handle_websocket, name="websocket"),
                web.get("/download/{key}", self.handle_download, name="download"),
                web.static("/static", self.statics_path, show_index=False, name="static"),
            ]
        )
        app.on_shutdown.append(self.on_shutdown)
        return app

    async def handle_index(self, request: web.Request) -> web.Response:  # type: ignore[override]
        host = request.headers["Host"].strip().lower()  # checked by the guard
        context = {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "app_websocket_url": f"ws://{host}/ws",
            "config": {"static": {"url": "/static/"}},
            "application": {"name": f"sessionview — {escape_control(self.path, one_line=True)}"},
            "ping_url": "",
        }
        html = aiohttp_jinja2.render_string("app_index.html", request, context)
        html = EXTERNAL_LINK.sub("", html)  # nothing from elsewhere (the CSP would block it anyway)
        html = html.replace("</body>", FOCUS_SCRIPT + "</body>", 1)  # keys work without a click first
        response = web.Response(text=html, content_type="text/html")
        response.headers["Cache-Control"] = "no-store"
        response.headers["Content-Security-Policy"] = (
            "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
            f"img-src 'self' data:; font-src 'self' data:; connect-src 'self' ws://{host}; "
            "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
        )
        # the page's websocket (and downloads) carry the token by this cookie
        response.set_cookie(self.cookie_name, self.token, path="/", httponly=True, samesite="Strict")
        return response

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:  # type: ignore[override]
        if self._slots >= self.max_sessions:
            return self._refuse(
                503,
                f"{self.max_sessions} app session{'s are' if self.max_sessions != 1 else ' is'} open already "
                "(--max-sessions); close another tab and reload",
            )
        websocket = web.WebSocketResponse(heartbeat=15)
        if not websocket.can_prepare(request).ok:
            return self._refuse(400, "this address is for the page's websocket")
        # Admitted: the slot is taken before the first await, so the cap holds under concurrent
        # requests; it is given back by _stop_app once the process is reaped.
        self._slots += 1
        app_service = AppProcess(
            self.argv,
            on_spawn=self._spawned,
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=websocket.close,
            download_manager=self.download_manager,
            debug=self.debug,
        )
        self.apps.add(app_service)
        try:
            width = min(max(to_int(request.query.get("width", "80"), 80), 1), 1000)
            height = min(max(to_int(request.query.get("height", "24"), 24), 1), 1000)
            await websocket.prepare(request)
            await app_service.start(width, height)
            await self._process_messages(websocket, app_service)
        except asyncio.CancelledError:
            pass
        except Exception:
            pass  # a malformed message, a socket gone: the app is stopped below all the same
        finally:
            try:
                await asyncio.shield(self._stop_app(app_service))
            finally:
                if not websocket.closed and websocket.prepared:
                    await websocket.close()
        return websocket

    def _spawned(self, app_service: AppProcess) -> None:
        self.stats.spawned += 1
        if app_service.process is not None:
            self.stats.pids.append(app_service.process.pid)

    async def _stop_app(self, app_service: AppProcess) -> None:
        try:
            await app_service.stop()
        finally:
            if app_service in self.apps:  # once per app, however many callers stop it
                self.apps.discard(app_service)
                self._slots -= 1
                if app_service.process is not None:
                    self.stats.reaped += 1

    async def on_startup(self, app: web.Application) -> None:
        pass  # textual-serve prints a logo here; serve() prints the URL instead

    async def on_shutdown(self, app: web.Application) -> None:
        await self.stop_apps()

    async def stop_apps(self) -> None:
        if self.apps:
            await asyncio.gather(*(self._stop_app(a) for a in list(self.apps)), return_exceptions=True)

    # -- running ------------------------------------------------------------------------------------
    async def start(self) -> str:
        """Bind and serve in the running loop. Returns the URL (with the token, and the real port)."""
        app = await self._make_app()
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=QUIT_GRACE + TERM_GRACE + 1)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        if self.port == 0:
            self.port = int(runner.addresses[0][1])
        self._allowed = self._compute_allowed()
        return self.url

    async def stop(self) -> None:
        await self.stop_apps()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        await self.stop_apps()


# --------------------------------------------------------------------------------------------------
# the command


def _err(message: str) -> None:
    sys.stderr.write(f"{PROG}: {escape_control(message, one_line=True)}\n")
    sys.stderr.flush()


async def _serve(server: SessionViewServer) -> int:
    try:
        url = await server.start()
    except OSError as exc:
        _err(f"cannot listen on {host_name(server.host)}:{server.port}: {exc.strerror or exc}")
        return 2
    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    for sig in STOP_SIGNALS:
        try:
            loop.add_signal_handler(sig, done.set)
        except (NotImplementedError, RuntimeError):  # pragma: no cover - not the main thread
            pass
    mode = "read-only (--allow-write to edit)" if server.read_only else "WRITABLE: the app can edit sessions"
    if server.public:
        _err(
            f"warning: serving on {host_name(server.host)}:{server.port}, reachable from the network over plain "
            "HTTP (not encrypted): anyone who can reach it and sees the token can use the app"
            + ("" if server.read_only else " and edit sessions")
            + "; an SSH tunnel to a loopback server is safer"
        )
    out = sys.stdout
    out.write(
        f"{PROG} serve: {escape_control(server.path, one_line=True)}, {mode}, at most {server.max_sessions} "
        f"app session{'s' if server.max_sessions != 1 else ''}\n"
        "Open this URL in a browser (the token in it is the only key; Ctrl+C stops):\n"
        f"    {url}\n"
    )
    out.flush()
    try:
        await done.wait()
    finally:
        for sig in STOP_SIGNALS:
            try:
                loop.remove_signal_handler(sig)
            except (NotImplementedError, RuntimeError):  # pragma: no cover
                pass
        await server.stop()
    return 0


def run(options: ServeOptions) -> int:
    """Serve the app on ``options.path`` (a directory of sessions or one file) until Ctrl+C. Returns the exit status."""
    try:
        server = SessionViewServer(
            options.path,
            host=options.host,
            port=options.port,
            public=options.public,
            allow_write=options.allow_write,
            max_sessions=options.max_sessions,
        )
    except ServeError as exc:
        _err(str(exc))
        return 2
    return asyncio.run(_serve(server))
