"""One SSH connection to a host, usable from synchronous code: asyncssh runs on a private event loop in a
daemon thread, and every call waits for its result with a timeout.

Authentication is the user's own, as ``ssh`` does it: the SSH agent (``SSH_AUTH_SOCK``), the keys in
``~/.ssh`` and ``~/.ssh/config`` (``Host`` aliases, ``User``, ``Port``, ``IdentityFile``...). The host key is
verified against ``~/.ssh/known_hosts`` (and the files ``UserKnownHostsFile`` names); an unknown or changed
key is refused with :class:`HostKeyRefused`. Password and keyboard-interactive authentication are off, so
nothing ever prompts.
"""

from __future__ import annotations

import asyncio
import os
import threading
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Awaitable, TypeVar

import asyncssh

from sessionview.remote.address import Address

T = TypeVar("T")

CONNECT_TIMEOUT = 10.0  # seconds to connect and log in
CALL_TIMEOUT = 30.0  # seconds for one SFTP request or command start

_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


class RemoteError(OSError):
    """A remote operation failed; the message is one line meant for people."""


class HostKeyRefused(RemoteError):
    """The host's key is not in known_hosts, or does not match it."""


class Unreachable(RemoteError):
    """The host could not be reached or logged into."""


def loop() -> asyncio.AbstractEventLoop:
    """The event loop all connections live on (started on first use, in a daemon thread)."""
    global _loop
    with _lock:
        if _loop is None:
            new = asyncio.new_event_loop()
            threading.Thread(target=new.run_forever, name="sessionview-ssh", daemon=True).start()
            _loop = new
        return _loop


def call(coro: Awaitable[T], timeout: float | None = CALL_TIMEOUT) -> T:
    """Run ``coro`` on the SSH loop and wait for its result (``TimeoutError`` after ``timeout`` seconds)."""
    fut = asyncio.run_coroutine_threadsafe(_wrap(coro), loop())
    try:
        return fut.result(timeout)
    except FutureTimeout:
        fut.cancel()
        raise TimeoutError(f"no answer within {timeout:g} s") from None


async def _wrap(coro: Awaitable[T]) -> T:
    return await coro


def known_hosts_has(host: str, port: int | None, user: str | None = None) -> bool:
    """Whether the known_hosts files name the host at all (to tell a changed key from an unknown one).
    The host and port are resolved through ``~/.ssh/config`` as the connection resolves them."""
    import getpass

    from asyncssh.config import SSHClientConfig

    home = os.path.expanduser("~")
    name, files = host, [os.path.join(home, ".ssh", "known_hosts")]
    config_file = os.path.join(home, ".ssh", "config")
    try:
        if os.access(config_file, os.R_OK):
            cfg = SSHClientConfig.load(None, [config_file], False, False, False, getpass.getuser(), user or (), host, port or ())
            name = str(cfg.get("HostKeyAlias") or cfg.get("Hostname") or host)
            port = port or int(cfg.get("Port") or 22)  # type: ignore[call-overload]
            listed = cfg.get("UserKnownHostsFile")
            if isinstance(listed, (list, tuple)) and listed:
                files = [os.path.expanduser(str(f)) for f in listed]
    except Exception:
        pass
    for path in files:
        try:
            found = asyncssh.read_known_hosts(path).match(name, "", None if not port or port == 22 else port)
        except Exception:
            continue
        if found and found[0]:
            return True
    return False


class Connection:
    """An SSH connection with an SFTP client, opened by :meth:`open`."""

    def __init__(self, address: Address, timeout: float = CONNECT_TIMEOUT) -> None:
        self.address = address
        self.timeout = timeout
        self.conn: Any = None
        self.sftp: Any = None

    @property
    def name(self) -> str:
        return self.address.host_label

    def open(self) -> "Connection":
        try:
            self.conn, self.sftp = call(self._open(), self.timeout + 2)
        except TimeoutError:
            raise Unreachable(f"{self.name}: unreachable (no answer within {self.timeout:g} s)") from None
        return self

    async def _open(self) -> tuple[Any, Any]:
        a = self.address
        opts: dict[str, Any] = {
            "password_auth": False,
            "kbdint_auth": False,
            "connect_timeout": self.timeout,
            "login_timeout": self.timeout,
        }
        if a.user:
            opts["username"] = a.user
        if a.port:
            opts["port"] = a.port
        try:
            conn = await asyncssh.connect(a.host, **opts)
        except asyncssh.HostKeyNotVerifiable as exc:
            if known_hosts_has(a.host, a.port, a.user):
                raise HostKeyRefused(
                    f"{self.name}: host key verification failed: the host's key does not match known_hosts "
                    f"(it changed: a reinstalled host, or someone in between); nothing was read. Check it, then fix "
                    f"~/.ssh/known_hosts (ssh-keygen -R)"
                ) from None
            raise HostKeyRefused(
                f"{self.name}: host key verification failed: the host is not in known_hosts ({exc.reason}); nothing "
                f"was read. Connect once with ssh and check its fingerprint, or add it to ~/.ssh/known_hosts"
            ) from None
        except asyncssh.PermissionDenied:
            raise Unreachable(f"{self.name}: permission denied (no key of the agent or ~/.ssh was accepted; "
                              "sessionview never asks for a password)") from None
        except FileNotFoundError as exc:  # asyncssh stops at a missing IdentityFile, where ssh warns
            raise Unreachable(f"{self.name}: a key file named in ~/.ssh/config does not exist: {exc.filename or exc}") from None
        except (OSError, asyncssh.Error) as exc:
            raise Unreachable(f"{self.name}: unreachable ({_reason(exc)})") from None
        try:
            sftp = await conn.start_sftp_client()
        except (OSError, asyncssh.Error) as exc:
            conn.close()
            raise Unreachable(f"{self.name}: no SFTP ({_reason(exc)})") from None
        return conn, sftp

    def run(self, command: str, stdin: bytes | None = None, timeout: float | None = None) -> tuple[int, bytes, bytes]:
        """Run ``command`` (one shell command line, already quoted) on the host: exit status, stdout, stderr."""
        return call(self._run(command, stdin), timeout)

    async def _run(self, command: str, stdin: bytes | None) -> tuple[int, bytes, bytes]:
        try:
            result = await self.conn.run(command, input=stdin if stdin is not None else b"", encoding=None, check=False)
        except (OSError, asyncssh.Error) as exc:
            raise RemoteError(f"{self.name}: {_reason(exc)}") from None
        status = result.exit_status
        if status is None:  # killed by a signal
            status = 128 + 15 if result.exit_signal is None else 128
        out = result.stdout or b""
        err = result.stderr or b""
        return status, bytes(out), bytes(err)

    def close(self) -> None:
        conn, self.conn, self.sftp = self.conn, None, None
        if conn is not None:
            try:
                call(_close(conn), 5)
            except Exception:
                pass

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


async def _close(conn: Any) -> None:
    conn.close()
    await conn.wait_closed()


def _reason(exc: BaseException) -> str:
    text = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return " ".join(str(text).split())
