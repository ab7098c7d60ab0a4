"""The app processes of ``sessionview serve``: one TUI per browser tab, stopped and reaped with its socket."""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from textual_serve.app_service import AppService

QUIT_GRACE = 3.0  # seconds an app has to quit by itself once its socket closed
TERM_GRACE = 2.0  # seconds between SIGTERM and SIGKILL

# --------------------------------------------------------------------------------------------------
# the app process


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: SIGTERM the app if the server dies without cleaning up (SIGKILL, a crash)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:
        pass


class AppProcess(AppService):
    """textual-serve's ``AppService``, run from an argv (no shell) in its own process group, and
    stopped for sure: asked to quit, then SIGTERM, then SIGKILL, and always reaped."""

    def __init__(self, argv: Sequence[str], *, on_spawn: Callable[["AppProcess"], None], **kwargs: Any) -> None:
        super().__init__(shlex.join(argv), **kwargs)
        self.argv = list(argv)
        self.on_spawn = on_spawn
        self._stop_lock = asyncio.Lock()

    @property
    def process(self) -> asyncio.subprocess.Process | None:
        return self._process

    async def _open_app_process(self, width: int = 80, height: int = 24) -> asyncio.subprocess.Process:
        environment = self._build_environment(width=width, height=height)
        process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=environment,
            start_new_session=True,  # its own process group: stopped as a whole, untouched by the terminal's ^C
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )
        self._process = process
        self._stdin = process.stdin
        self.on_spawn(self)
        return process

    async def run(self) -> None:
        try:
            await super().run()
        finally:
            # the app ended (quit, crash): close the browser's socket, so the page says so
            try:
                await self.remote_close()
            except Exception:
                pass

    async def stop(self) -> None:
        async with self._stop_lock:
            process = self._process
            task = self._task
            if task is not None and not task.done():
                await self._download_manager.cancel_app_downloads(app_service_id=self.app_service_id)
                if self._stdin is not None and process is not None and process.returncode is None:
                    await self.send_meta({"type": "quit"})
                try:
                    await asyncio.wait_for(asyncio.shield(task), QUIT_GRACE)
                except (asyncio.TimeoutError, Exception):
                    pass
            if process is not None:
                await self._reap(process)
            if task is not None and not task.done():
                task.cancel()
                try:
                    await task
                except BaseException:
                    pass
            self._task = None

    async def _reap(self, process: asyncio.subprocess.Process) -> None:
        if process.returncode is None:
            self._signal(process, signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), TERM_GRACE)
            except asyncio.TimeoutError:
                self._signal(process, signal.SIGKILL)
        await process.wait()
        # whatever else is left in its group (the app's own children)
        self._signal(process, signal.SIGKILL)

    @staticmethod
    def _signal(process: asyncio.subprocess.Process, sig: int) -> None:
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            if process.returncode is None:
                try:
                    process.send_signal(sig)
                except ProcessLookupError:
                    pass


# --------------------------------------------------------------------------------------------------
# the server


@dataclass
class Stats:
    """What the server did, for tests and for the log."""

    spawned: int = 0  # app processes started, ever
    reaped: int = 0  # app processes stopped and waited for
    refused: dict[int, int] = field(default_factory=dict)  # HTTP status -> count
    pids: list[int] = field(default_factory=list)  # every app process id, in order


def app_argv(path: str, *, read_only: bool) -> list[str]:
    """The command that runs the TUI for one browser tab."""
    argv = [sys.executable, "-m", "sessionview"]
    if read_only:
        argv.append("--read-only")
    argv.append(os.path.abspath(path))
    return argv
