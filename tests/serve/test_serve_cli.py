"""``sessionview serve`` as a command: the printed URL (real port, token), --public, Ctrl+C."""

from __future__ import annotations

import asyncio
import glob
import os
import re
import signal
import sys

import aiohttp
import pytest
from serve_helpers import fake_argv, none_left, wait_for

import sessionview.serve.server as serve_mod
from sessionview.serve import ServeOptions, serve
from sessionview.serve.server import SessionViewServer

pytestmark = pytest.mark.timeout(90)

URL = re.compile(rb"http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9_-]+)")


async def start_cli(sessions) -> tuple[asyncio.subprocess.Process, int, str, bytes]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "sessionview", "serve", str(sessions), "--port", "0",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out = b""
    while not URL.search(out):
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        assert line, (out, await proc.stderr.read())
        out += line
    port, token = URL.search(out).groups()
    return proc, int(port), token.decode(), out


def children_of(pid: int) -> set[int]:
    pids: set[int] = set()
    for f in glob.glob(f"/proc/{pid}/task/*/children"):
        with open(f) as fh:
            pids.update(int(p) for p in fh.read().split())
    return pids


def dead(pid: int) -> bool:
    """Gone, or a zombie waiting for an init that does not reap (as in some containers)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


async def test_cli_prints_the_real_port_and_token_and_stops_on_ctrl_c(sessions):
    proc, port, token, out = await start_cli(sessions)
    try:
        assert port != 0
        assert b"read-only" in out
        async with aiohttp.ClientSession() as client:
            async with client.get(f"http://127.0.0.1:{port}/") as r:
                assert r.status == 403
            async with client.get(f"http://127.0.0.1:{port}/?token={token}") as r:
                assert r.status == 200
        proc.send_signal(signal.SIGINT)
        assert await asyncio.wait_for(proc.wait(), 30) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.1"])
async def test_cli_non_loopback_without_public_is_a_one_line_error(sessions, host):
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "sessionview", "serve", str(sessions), "--host", host, "--port", "0",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 2
    assert out == b""
    lines = err.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sessionview: ") and "--public" in lines[0], err


def test_serve_function_refuses_non_loopback_without_public(sessions, capsys):
    assert serve(ServeOptions(str(sessions), host="0.0.0.0", port=0)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--public" in err


def test_serve_function_reports_a_port_in_use(sessions, capsys):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert serve(ServeOptions(str(sessions), port=port)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"127.0.0.1:{port}" in err


async def test_public_prints_a_warning(sessions, capsys):
    # Built for a network address with --public, then bound to loopback: tests never listen off-machine.
    server = SessionViewServer(str(sessions), host="192.0.2.1", public=True, port=0, argv=fake_argv(), allow_write=True)
    server.host = "127.0.0.1"
    task = asyncio.create_task(serve_mod._serve(server))
    assert await wait_for(lambda: server._runner is not None, timeout=10)
    await asyncio.sleep(0.05)
    os.kill(os.getpid(), signal.SIGINT)  # the server's own handler catches it
    assert await asyncio.wait_for(task, 20) == 0
    captured = capsys.readouterr()
    assert "warning" in captured.err and "reachable from the network" in captured.err
    assert "edit sessions" in captured.err
    assert server.url in captured.out
    assert "WRITABLE" in captured.out
    assert none_left(server)


def test_a_broken_install_is_one_clear_line(sessions, capsys, monkeypatch):
    monkeypatch.delitem(sys.modules, "sessionview.serve.server")
    monkeypatch.delattr("sessionview.serve.server", raising=False)
    monkeypatch.setitem(sys.modules, "textual_serve.server", None)  # as if textual-serve were not installed
    assert serve(ServeOptions(str(sessions), port=0)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "textual-serve" in err and "textual_serve" in err


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
async def test_the_app_does_not_outlive_the_server(sessions, sig):
    """SIGTERM/SIGHUP: the server stops its apps and exits 0. SIGKILL: the app gets SIGTERM from the kernel."""
    proc, port, token, _ = await start_cli(sessions)
    try:
        async with aiohttp.ClientSession() as client:
            async with client.ws_connect(f"ws://127.0.0.1:{port}/ws?token={token}&width=80&height=24") as ws:
                msg = await ws.receive(timeout=60)
                assert msg.type == aiohttp.WSMsgType.BINARY
                (app,) = children_of(proc.pid)
                assert "--read-only" in open(f"/proc/{app}/cmdline").read()
                proc.send_signal(sig)
                code = await asyncio.wait_for(proc.wait(), 30)
        assert code == (-signal.SIGKILL if sig == signal.SIGKILL else 0)
        assert await wait_for(lambda: dead(app), timeout=15)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
