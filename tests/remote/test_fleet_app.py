"""The fleet in the app (Pilot): every host's sessions with a host column, a down host named, Enter opens."""

import asyncio

from rich.text import Text
from textual.widgets import DataTable, Static

from sessionview.ui.fleet import FleetApp

import remote_sshd


async def wait_until(pilot, cond, timeout=30.0):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not cond():
        assert loop.time() < deadline, "timed out"
        await pilot.pause(0.05)


async def test_every_host_with_a_host_column_and_the_down_one_named(sshd):
    (sshd.sessions / "a.jsonl").write_bytes(b'{"role":"user","content":"hi"}\n')
    (sshd.sessions / "evil\x1b[31m.jsonl").write_bytes(b'{"role":"user","content":"x"}\n')
    down = remote_sshd.free_port()
    hosts = {"web1": f"svtest:{sshd.sessions}", "down": f"ssh://127.0.0.1:{down}/srv"}
    opened = []
    app = FleetApp(hosts, timeout=5, opener=lambda host, path: opened.append((host, path)) or "opened")
    async with app.run_test(size=(140, 20)) as pilot:
        await wait_until(pilot, lambda: len(app.catalog.listings) == 2)
        await pilot.pause()
        table = app.query_one(DataTable)
        assert table.row_count == 2
        hosts_col = [str(table.get_cell_at((r, 0))) for r in range(2)]
        paths = sorted(str(table.get_cell_at((r, 3))) for r in range(2))
        assert hosts_col == ["web1", "web1"]
        assert paths == sorted([str(sshd.sessions / "a.jsonl"), str(sshd.sessions) + "/evil\\x1b[31m.jsonl"])
        assert all(isinstance(table.get_cell_at((r, 3)), Text) for r in range(2))  # never read as markup
        status = str(app.query_one("#status", Static).render())
        assert "2 sessions on 1 host" in status and "down: unreachable" in status
        await pilot.press("enter")
        await pilot.pause()
        assert len(opened) == 1 and opened[0][0] == "web1" and opened[0][1].startswith(str(sshd.sessions))
        assert "opened" in str(app.query_one("#status", Static).render())
