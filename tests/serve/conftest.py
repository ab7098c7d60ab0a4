"""Fixtures for ``sessionview serve``: in-process servers on 127.0.0.1, port 0, a tiny session directory."""

from __future__ import annotations

import pathlib
import shutil

import pytest

pytest.importorskip("textual_serve", reason="sessionview serve needs textual-serve and aiohttp")
aiohttp = pytest.importorskip("aiohttp")

from serve_helpers import BRUTE, fake_argv  # noqa: E402

from sessionview.serve.server import SessionViewServer  # noqa: E402


@pytest.fixture
def sessions(tmp_path: pathlib.Path) -> pathlib.Path:
    d = tmp_path / "sessions"
    d.mkdir()
    shutil.copy(BRUTE, d / "brute-session.jsonl")
    return d


@pytest.fixture
async def make_server(sessions):
    """``await make_server(**kwargs)``: a started server (fake app unless argv=None is overridden)."""
    started: list[SessionViewServer] = []

    async def make(argv: list[str] | None = None, real_app: bool = False, **kwargs) -> SessionViewServer:
        kwargs.setdefault("port", 0)
        server = SessionViewServer(
            str(kwargs.pop("path", sessions)),
            argv=None if real_app else (argv or fake_argv()),
            **kwargs,
        )
        await server.start()
        started.append(server)
        return server

    yield make
    for server in started:
        await server.stop()


@pytest.fixture
async def client():
    # unsafe=True: keep cookies for an IP address host (127.0.0.1), as a browser does
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
        yield session
