"""The token, the Host and Origin checks: status codes, and that a refused request starts no process."""

from __future__ import annotations

import json

import aiohttp
import pytest
from serve_helpers import children, wait_for
from yarl import URL

pytestmark = pytest.mark.timeout(60)


def base(server) -> str:
    return f"http://127.0.0.1:{server.port}"


async def refused_ws(client, url: str, **kwargs) -> int:
    with pytest.raises(aiohttp.WSServerHandshakeError) as info:
        async with client.ws_connect(url, **kwargs):
            pass
    return info.value.status


async def first_packet(ws) -> dict:
    msg = await ws.receive(timeout=10)
    assert msg.type == aiohttp.WSMsgType.BINARY, msg
    return json.loads(msg.data)


# -- the token ---------------------------------------------------------------------------------------


async def test_url_has_a_fresh_token_and_the_real_port(make_server):
    a = await make_server()
    b = await make_server()
    assert a.port != 0 and b.port != 0
    assert a.url == f"http://127.0.0.1:{a.port}/?token={a.token}"
    assert a.token != b.token and len(a.token) >= 32


async def test_index_without_or_with_a_wrong_token_is_403(make_server, client):
    server = await make_server()
    before = children()
    for url in (
        base(server) + "/",
        base(server) + "/?token=",
        base(server) + "/?token=wrong",
        base(server) + "/?token=" + server.token[:-1],
        base(server) + "/?token=" + server.token + "x",
        base(server) + "/?token=%C3%A9t%C3%A9",  # non-ASCII: still a plain 403, no crash
        base(server) + "/?TOKEN=" + server.token,
    ):
        async with client.get(url) as r:
            assert r.status == 403, url
            assert "token" in await r.text()
            assert not r.cookies
    assert server.stats.spawned == 0
    assert children() <= before  # no new process


async def test_index_with_the_token_sets_a_strict_httponly_cookie(make_server, client):
    server = await make_server()
    async with client.get(server.url) as r:
        assert r.status == 200
        html = await r.text()
        cookie = r.cookies[server.cookie_name]
        assert cookie.value == server.token
        assert cookie["httponly"] is True
        assert cookie["samesite"] == "Strict"
        assert cookie["path"] == "/"
        assert r.headers["X-Frame-Options"] == "DENY"
        assert "frame-ancestors 'none'" in r.headers["Content-Security-Policy"]
        assert r.headers["Referrer-Policy"] == "no-referrer"
    # the page's websocket URL carries no token (textual.js appends "?width=..." to it): the cookie does
    assert f'data-session-websocket-url="ws://127.0.0.1:{server.port}/ws"' in html
    assert server.token not in html
    assert "fonts.googleapis.com" not in html
    assert server.stats.spawned == 0  # the page alone starts nothing


def test_textual_js_appends_its_own_query_to_the_websocket_url():
    """Why the token travels by cookie: a token in data-session-websocket-url would become 'T?width=..'."""
    import textual_serve

    js = (__import__("pathlib").Path(textual_serve.__file__).parent / "static/js/textual.js").read_text()
    assert 'this.websocket_url+"?width="' in js


async def test_websocket_without_or_with_a_wrong_token_is_403_and_spawns_nothing(make_server, client):
    server = await make_server()
    before = children()
    ws = f"ws://127.0.0.1:{server.port}/ws"
    assert await refused_ws(client, ws) == 403
    assert await refused_ws(client, ws + "?token=nope") == 403
    assert await refused_ws(client, ws + f"?token={server.token}?width=80&height=24") == 403  # the naive append
    # a cookie from another run (or another port's server) is no key
    client.cookie_jar.update_cookies({server.cookie_name: "stale"}, URL(base(server)))
    assert await refused_ws(client, ws) == 403
    assert server.stats.spawned == 0
    assert server.stats.refused[403] == 4
    assert children() <= before  # no new process


async def test_page_cookie_opens_the_websocket(make_server, client):
    server = await make_server()
    async with client.get(server.url) as r:
        assert r.status == 200
    # exactly what textual.js does: the page's URL plus "?width=..&height=.."
    async with client.ws_connect(f"ws://127.0.0.1:{server.port}/ws?width=90&height=30") as ws:
        assert (await first_packet(ws))["argv"][0].endswith("fake_app.py")
    assert server.stats.spawned == 1


async def test_token_in_the_query_opens_the_websocket(make_server, client):
    server = await make_server()
    async with client.ws_connect(f"ws://127.0.0.1:{server.port}/ws?token={server.token}&width=90&height=30") as ws:
        await first_packet(ws)
        await ws.send_str(json.dumps(["stdin", "hello"]))
        msg = await ws.receive(timeout=10)
        assert msg.data == b"echo:hello"
    assert server.stats.spawned == 1


async def test_plain_get_of_the_websocket_address_spawns_nothing(make_server, client):
    server = await make_server()
    async with client.get(f"{base(server)}/ws?token={server.token}") as r:
        assert r.status == 400
    assert server.stats.spawned == 0


async def test_static_files_need_no_token_but_list_nothing(make_server, client):
    server = await make_server()
    for path in ("/static/js/textual.js", "/static/css/xterm.css", "/static/images/background.png"):
        async with client.get(base(server) + path) as r:
            assert r.status == 200, path
    async with client.get(base(server) + "/static/") as r:
        assert r.status in (403, 404)  # no directory listing
    # a path that merely starts with /static/ but resolves elsewhere is not a public file
    async with client.get(base(server) + "/static/../ws") as r:
        assert r.status == 403
    async with client.get(base(server) + "/static/%2e%2e/ws") as r:
        assert r.status in (403, 404)
    assert server.stats.spawned == 0


async def test_downloads_and_unknown_paths_need_the_token(make_server, client):
    server = await make_server()
    async with client.get(base(server) + "/download/abc") as r:
        assert r.status == 403
    async with client.get(base(server) + "/nothing-here") as r:
        assert r.status == 403
    async with client.get(base(server) + f"/download/abc?token={server.token}") as r:
        assert r.status == 404


# -- Host (DNS rebinding) ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:{port}",
        "127.0.0.1",  # no port: not this server's authority
        "127.0.0.1:{other}",
        "localhost.evil.example:{port}",
        "127.0.0.1.nip.io:{port}",
        "",
    ],
)
async def test_foreign_host_is_403_even_with_the_token(make_server, client, host):
    server = await make_server()
    host = host.format(port=server.port, other=server.port + 1)
    before = children()
    async with client.get(server.url, headers={"Host": host}) as r:
        assert r.status == 403
        assert "Host" in await r.text()
    async with client.get(base(server) + "/static/js/textual.js", headers={"Host": host}) as r:
        assert r.status == 403
    ws = f"ws://127.0.0.1:{server.port}/ws?token={server.token}"
    assert await refused_ws(client, ws, headers={"Host": host}) == 403
    assert server.stats.spawned == 0
    assert children() <= before  # no new process


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}", "[::1]:{port}"])
async def test_loopback_aliases_of_the_same_port_are_accepted(make_server, client, host):
    server = await make_server()
    host = host.format(port=server.port)
    async with client.get(server.url, headers={"Host": host}) as r:
        assert r.status == 200
        assert f'data-session-websocket-url="ws://{host.lower()}/ws"' in await r.text()


# -- Origin (cross-site websocket hijacking) -------------------------------------------------------------


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "https://evil.example",
        "http://127.0.0.1:{other}",  # another local server's page
        "http://localhost:{other}",
        "https://127.0.0.1:{port}",
        "null",
        "file://",
        "http://127.0.0.1:{port}.evil.example",
    ],
)
async def test_foreign_origin_websocket_is_403_and_spawns_nothing(make_server, client, origin):
    server = await make_server()
    origin = origin.format(port=server.port, other=server.port + 1)
    before = children()
    ws = f"ws://127.0.0.1:{server.port}/ws?token={server.token}"
    assert await refused_ws(client, ws, origin=origin) == 403
    # the same holds for the page itself (a cross-origin fetch carries an Origin)
    async with client.get(server.url, headers={"Origin": origin}) as r:
        assert r.status == 403
    assert server.stats.spawned == 0
    assert children() <= before  # no new process


@pytest.mark.parametrize("origin", ["http://127.0.0.1:{port}", "http://localhost:{port}", "http://[::1]:{port}"])
async def test_same_origin_websocket_is_accepted(make_server, client, origin):
    server = await make_server()
    ws = f"ws://127.0.0.1:{server.port}/ws?token={server.token}"
    async with client.ws_connect(ws, origin=origin.format(port=server.port)) as sock:
        await first_packet(sock)
    assert server.stats.spawned == 1
    assert await wait_for(lambda: server.stats.reaped == 1)


async def test_the_page_escapes_the_served_path(tmp_path, make_server, client):
    hostile = tmp_path / "<img src=x onerror=alert(1)>"
    hostile.mkdir()
    server = await make_server(path=hostile)
    async with client.get(server.url) as r:
        html = await r.text()
    assert "<img src=x" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def _request(host: str, local: str, origin: str | None = None):
    from types import SimpleNamespace

    headers = {"Host": host} if origin is None else {"Host": host, "Origin": origin}
    return SimpleNamespace(headers=headers, transport=SimpleNamespace(get_extra_info=lambda key: (local, 8765)))


def test_public_wildcard_bind_accepts_only_the_address_a_connection_reached(sessions):
    from sessionview.serve.server import SessionViewServer

    server = SessionViewServer(str(sessions), host="0.0.0.0", public=True, port=8765)  # never bound here
    server._allowed = server._compute_allowed()
    assert server.host_ok(_request("192.0.2.7:8765", "192.0.2.7"))
    assert server.origin_ok(_request("192.0.2.7:8765", "192.0.2.7", origin="http://192.0.2.7:8765"))
    assert server.host_ok(_request("localhost:8765", "127.0.0.1"))  # reached on loopback
    assert not server.host_ok(_request("localhost:8765", "192.0.2.7"))
    assert not server.host_ok(_request("evil.example:8765", "192.0.2.7"))  # DNS rebinding to our address
    assert not server.host_ok(_request("192.0.2.8:8765", "192.0.2.7"))
    assert not server.origin_ok(_request("192.0.2.7:8765", "192.0.2.7", origin="http://evil.example"))


def test_public_specific_address(sessions):
    from sessionview.serve.server import SessionViewServer

    server = SessionViewServer(str(sessions), host="192.0.2.7", public=True, port=8765)
    server._allowed = server._compute_allowed()
    assert server.url.startswith("http://192.0.2.7:8765/?token=")
    assert server.host_ok(_request("192.0.2.7:8765", "192.0.2.7"))
    assert not server.host_ok(_request("localhost:8765", "192.0.2.7"))
    assert not server.host_ok(_request("evil.example:8765", "192.0.2.7"))
