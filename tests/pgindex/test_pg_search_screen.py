"""The app's cross-session search on a shared PostgreSQL index: every host's hits, another host's named
``host:path``, and Enter on it opens it here over SFTP at its #N (tests/remote/test_app_sftp.py opens one
from a real sshd)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ui"))

from uihelpers import SIZE, fixed_clock, wait_for  # noqa: E402

from sessionview.core.index.indexer import Indexer  # noqa: E402
from sessionview.fleetindex.postgres import PostgresBackend  # noqa: E402
from sessionview.ui.app import SessionViewApp  # noqa: E402
from sessionview.ui.screens import fleet_hits  # noqa: E402
from sessionview.ui.screens.browser import BrowserScreen  # noqa: E402
from sessionview.ui.screens.search_all import SearchAllScreen  # noqa: E402


def line(obj) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def _fleet(tmp_path, pg, monkeypatch):
    there, here = tmp_path / "there", tmp_path / "here"
    there.mkdir()
    here.mkdir()
    (there / "far.jsonl").write_bytes(line({"role": "user", "content": "the walrus far away"}))
    (here / "near.jsonl").write_bytes(line({"role": "user", "content": "a walrus nearby"}))
    b = PostgresBackend(pg.db_url, host="hosta")
    Indexer(b).update([str(there)])
    b.close()
    monkeypatch.setenv("SESSIONVIEW_INDEX", pg.db_url)
    monkeypatch.setenv("SESSIONVIEW_HOST", "hostb")
    return there, here


async def test_the_fleet_s_hits_show_and_enter_on_another_host_s_says_where_it_is(tmp_path, pg, monkeypatch):
    there, here = _fleet(tmp_path, pg, monkeypatch)
    app = SessionViewApp(here, clock=fixed_clock, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen) and app.screen.loaded, what="listing")
        await pilot.press("ctrl+f")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchAllScreen), what="the search screen")
        screen = app.screen
        await wait_for(pilot, lambda: screen.index_status == "index current", timeout=30, what="the first update")
        screen.query_one("#search-all-input").value = "walrus"
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.search_status and "…" not in screen.search_status, what="search done")
        got = {(h.host, os.path.basename(h.path), h.remote) for h in screen.hits}
        assert got == {("hosta", "far.jsonl", True), ("hostb", "near.jsonl", False)}
        i = next(i for i, h in enumerate(screen.hits) if h.remote)
        assert screen._label(screen.hits[i]) == f"hosta:{there / 'far.jsonl'}"
        screen.open_hit(i)  # opened over SFTP in a thread ("hosta" does not resolve here: a notice says so)
        assert f"opening hosta:{there / 'far.jsonl'} at #1 over SSH" in screen.search_status
        assert isinstance(app.screen, SearchAllScreen)


def test_a_hit_s_host_is_found_by_its_hosts_name_or_as_ssh_takes_it(tmp_path, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text('[hosts]\nhosta = "ssh://agent@web1.example:2222/srv/agents"\n')
    monkeypatch.setenv("SESSIONVIEW_CONFIG", str(config))
    named = fleet_hits.address_for(SimpleNamespace(host="hosta", path="/srv/runs/it's $(x).jsonl", n=4))
    assert (named.host, named.user, named.port, named.path) == ("web1.example", "agent", 2222, "/srv/runs/it's $(x).jsonl")
    other = fleet_hits.address_for(SimpleNamespace(host="gpu-box", path="/runs/a b.jsonl", n=1))
    assert (other.host, other.user, other.port, other.path) == ("gpu-box", None, None, "/runs/a b.jsonl")


def test_a_hostile_host_name_from_the_index_never_reaches_ssh():
    app = SimpleNamespace()  # never touched: nothing is opened
    for host in ("-oProxyCommand=touch /tmp/pwned", "a b", "host;rm -rf x", ""):
        said = fleet_hits.open_remote(app, SimpleNamespace(host=host, path="/s.jsonl", n=1, remote=True), "", lambda *a: None)
        assert "not an address ssh takes" in said
