"""App processes: the --max-sessions cap, cleanup when a socket closes, read-only, the real TUI."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time

import aiohttp
import pytest
from serve_helpers import children, fake_argv, gone, none_left, wait_for

import sessionview.serve.server as serve_mod
from sessionview.serve.apps import app_argv
from sessionview.serve.server import SessionViewServer

pytestmark = pytest.mark.timeout(90)


def ws_url(server, **query) -> str:
    query = {"token": server.token, "width": 80, "height": 24, **query}
    return f"ws://127.0.0.1:{server.port}/ws?" + "&".join(f"{k}={v}" for k, v in query.items())


async def first_packet(ws) -> dict:
    msg = await ws.receive(timeout=10)
    assert msg.type == aiohttp.WSMsgType.BINARY, msg
    return json.loads(msg.data)


def cmdline(pid: int) -> list[str]:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return [a.decode() for a in f.read().split(b"\0") if a]


# -- the cap -------------------------------------------------------------------------------------------


async def test_fifth_websocket_gets_503_and_spawns_nothing(make_server, client):
    server = await make_server()  # --max-sessions defaults to 4
    assert server.max_sessions == 4
    socks = []
    try:
        for _ in range(4):
            ws = await client.ws_connect(ws_url(server))
            await first_packet(ws)
            socks.append(ws)
        assert server.stats.spawned == 4
        live = children()
        assert len(set(server.stats.pids)) == 4 and set(server.stats.pids) <= live

        with pytest.raises(aiohttp.WSServerHandshakeError) as info:
            await client.ws_connect(ws_url(server))
        assert info.value.status == 503
        async with client.get(ws_url(server).replace("ws://", "http://")) as r:  # the message a person sees
            assert r.status == 503
            assert "--max-sessions" in await r.text()
        assert server.stats.spawned == 4
        assert children() <= live  # no new process

        # one tab closes: its process is reaped and the slot is free again
        first_pid = server.stats.pids[0]
        await socks.pop(0).close()
        assert await wait_for(lambda: gone(first_pid) and server.stats.reaped == 1)
        ws = await client.ws_connect(ws_url(server))
        await first_packet(ws)
        socks.append(ws)
        assert server.stats.spawned == 5
    finally:
        for ws in socks:
            await ws.close()
    assert await wait_for(lambda: server.stats.reaped == 5 and none_left(server))
    assert server._slots == 0 and not server.apps
    assert all(gone(pid) for pid in server.stats.pids)


async def test_the_cap_holds_under_concurrent_connects(make_server, client):
    server = await make_server(max_sessions=2)

    async def connect():
        try:
            ws = await client.ws_connect(ws_url(server))
        except aiohttp.WSServerHandshakeError as exc:
            return exc.status
        await first_packet(ws)
        return ws

    results = await asyncio.gather(*(connect() for _ in range(6)))
    opened = [r for r in results if not isinstance(r, int)]
    assert len(opened) == 2
    assert sorted(r for r in results if isinstance(r, int)) == [503] * 4
    assert server.stats.spawned == 2
    for ws in opened:
        await ws.close()
    assert await wait_for(lambda: server.stats.reaped == 2 and none_left(server))
    assert server._slots == 0


# -- cleanup -------------------------------------------------------------------------------------------


async def test_closing_the_socket_stops_and_reaps_the_process(make_server, client):
    server = await make_server()
    async with client.ws_connect(ws_url(server)) as ws:
        await first_packet(ws)
        (pid,) = server.stats.pids
        assert not gone(pid)
    assert await wait_for(lambda: gone(pid) and server.stats.reaped == 1)
    assert not server.apps and none_left(server)


async def test_a_process_that_ignores_quit_and_sigterm_is_killed(make_server, client, monkeypatch):
    monkeypatch.setattr(serve_mod, "QUIT_GRACE", 0.3)
    monkeypatch.setattr(serve_mod, "TERM_GRACE", 0.3)
    server = await make_server(argv=fake_argv("--stubborn"))
    async with client.ws_connect(ws_url(server)) as ws:
        await first_packet(ws)
        (pid,) = server.stats.pids
    assert await wait_for(lambda: gone(pid) and server.stats.reaped == 1, timeout=10)
    assert none_left(server)


async def test_the_app_exiting_closes_the_socket(make_server, client):
    server = await make_server(argv=[sys.executable, "-c", "print('__GANGLION__', flush=True)"])
    async with client.ws_connect(ws_url(server)) as ws:
        msg = await ws.receive(timeout=10)
        assert msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSING)
    assert await wait_for(lambda: server.stats.reaped == 1 and none_left(server))


async def test_stopping_the_server_stops_every_app(sessions, client):
    server = SessionViewServer(str(sessions), port=0, argv=fake_argv("--stubborn"))
    await server.start()
    socks = [await client.ws_connect(ws_url(server)) for _ in range(3)]
    for ws in socks:
        await first_packet(ws)
    pids = list(server.stats.pids)
    t0 = time.monotonic()
    serve_mod_quit, serve_mod_term = serve_mod.QUIT_GRACE, serve_mod.TERM_GRACE
    serve_mod.QUIT_GRACE = serve_mod.TERM_GRACE = 0.3
    try:
        await server.stop()
    finally:
        serve_mod.QUIT_GRACE, serve_mod.TERM_GRACE = serve_mod_quit, serve_mod_term
    assert time.monotonic() - t0 < 10
    assert all(gone(pid) for pid in pids)
    assert none_left(server)


async def test_malformed_messages_end_the_session_cleanly(make_server, client):
    server = await make_server()
    async with client.ws_connect(ws_url(server)) as ws:
        await first_packet(ws)
        await ws.send_str("not json")
        msg = await ws.receive(timeout=10)
        assert msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSING)
    assert await wait_for(lambda: server.stats.reaped == 1 and none_left(server))


# -- read-only -----------------------------------------------------------------------------------------


def test_read_only_unless_allow_write(sessions):
    ro = SessionViewServer(str(sessions), port=0)
    rw = SessionViewServer(str(sessions), port=0, allow_write=True)
    assert ro.argv == [sys.executable, "-m", "sessionview", "--read-only", str(sessions)]
    assert rw.argv == [sys.executable, "-m", "sessionview", str(sessions)]
    assert app_argv("rel", read_only=True)[-1].startswith("/")  # never an option-looking path


# -- errors --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.1", "8.8.8.8"])
def test_non_loopback_host_needs_public(sessions, host):
    with pytest.raises(serve_mod.ServeError, match="--public"):
        SessionViewServer(str(sessions), host=host, port=0)
    SessionViewServer(str(sessions), host=host, port=0, public=True)  # accepted (not bound here)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_loopback_hosts_need_no_public(sessions, host):
    assert SessionViewServer(str(sessions), host=host, port=0).loopback


def test_bad_limits(sessions):
    with pytest.raises(serve_mod.ServeError, match="max-sessions"):
        SessionViewServer(str(sessions), max_sessions=0)
    with pytest.raises(serve_mod.ServeError, match="port"):
        SessionViewServer(str(sessions), port=70000)


# -- the real TUI --------------------------------------------------------------------------------------

ANSI = re.compile(rb"\x1b(\[[0-9;?<>=$]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78])")


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_real_app_runs_read_only_and_shows_the_session_list(make_server, client):
    server = await make_server(real_app=True)
    screen = b""
    async with client.ws_connect(ws_url(server, width=100, height=30)) as ws:
        deadline = time.monotonic() + 60
        while b"brute-session.jsonl" not in ANSI.sub(b"", screen) and time.monotonic() < deadline:
            try:
                msg = await ws.receive(timeout=1)
            except asyncio.TimeoutError:
                continue
            if msg.type == aiohttp.WSMsgType.BINARY:
                screen += msg.data
            elif msg.type != aiohttp.WSMsgType.TEXT:
                break
        assert b"brute-session.jsonl" in ANSI.sub(b"", screen), screen[-2000:]
        (pid,) = server.stats.pids
        args = cmdline(pid)
        assert args[1:] == ["-m", "sessionview", "--read-only", str(server.path)]
    assert await wait_for(lambda: gone(pid), timeout=15)
    assert none_left(server)
