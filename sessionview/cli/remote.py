"""Remote addresses on the command line: ``ssh://[user@]host[:port]/path`` and ``[user@]host:path``.

:func:`route` is called with the parsed arguments before a command runs. When the command's file is on
another host:

* ``show``, ``check`` and ``export`` read it over SFTP, in ranges (:mod:`sessionview.remote.sessions`);
  ``export -o OUT`` writes OUT here;
* every other command on a file (``edit``, ``delete``, ``truncate``, ``compact``, ``history``, ``undo``,
  ``prune``, ``fork``) runs on the host with the host's own ``sessionview``, so its checks are
  made next to the file; its exit status and messages come back unchanged. ``--content-file`` and
  ``--summary-file`` are read here and sent on stdin. Without ``sessionview`` on the host, they are refused:
  remote sessions are then read-only.

``sessionview ADDRESS`` (the app) runs the app here and reads over SFTP, as ``show`` does; remote sessions
are read-only in it (:mod:`sessionview.ui.fleet` says why). ``sessionview ADDRESS --on-host`` runs the app on
the host instead, in this terminal (``ssh -t``, with ``BatchMode=yes``: never a password prompt, and
``StrictHostKeyChecking=yes``: an unknown or changed key is refused), so that every edit happens next to the
files. That is refused when the host has no ``sessionview``, and read-only when the host's is older than this one.

The rule that tells ``host:path`` from a local name is in :mod:`sessionview.remote.address`. A ``[hosts]``
name of config.toml is an alias there (``web1:PATH``, ``ssh://web1/PATH``; ``web1:`` is its directory): it
connects with the entry's user, host and port (:func:`parse`).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, Sequence

from sessionview.cli.output import CliError
from sessionview.remote.address import Address, aliased
from sessionview.remote.address import parse as parse_address

if TYPE_CHECKING:
    from sessionview.remote.connection import Connection

READ_COMMANDS = ("show", "check", "export")  # read over SFTP; export writes its output here
#: options whose next argument is a value, not the file
VALUE_OPTIONS = frozenset(
    {"--content", "--content-file", "--json", "--summary", "--summary-file", "--summarizer", "--timeout", "--keep",
     "--max-bytes", "-o", "--output", "--to", "--width", "--last", "--expect"}
)
LOCAL_INPUTS = (("content_file", "--content-file", "--content-file"), ("summary_file", "--summary-file", "--summary-file"))


_ALIASES: dict[Address, str] = {}  # an address a [hosts] name gave -> that name, for messages


def _hosts() -> dict[str, str]:
    from sessionview.core.config import ConfigError, load_config

    try:
        return load_config().hosts
    except ConfigError as exc:
        raise CliError(str(exc)) from None


def parse(text: str) -> Address | None:
    """The remote address ``text`` names (a ``[hosts]`` name with no user or port is that entry's user,
    host and port), or None when it is a local path."""
    address = parse_address(text)
    if address is None or address.user is not None or address.port is not None:
        return address
    resolved = aliased(address, _hosts())
    if resolved is not address:
        _ALIASES[resolved] = address.host
    return resolved


def _files(args: argparse.Namespace) -> list[str]:
    if getattr(args, "file", None) is not None:
        return [args.file]
    return list(getattr(args, "files", None) or [])


def route(args: argparse.Namespace, argv: Sequence[str]) -> int | None:
    """Run the command when it names a remote file (its exit status), or None to run it locally."""
    command = getattr(args, "command", None)
    if command is None:
        path = getattr(args, "path", None)
        address = parse(path) if path else None
        return None if address is None else run_app(args, path, address)
    if command == "search":
        return _route_search(args, argv)
    files = _files(args)
    remote = [parse(f) for f in files]
    if not any(remote):
        return None
    if command in READ_COMMANDS:
        args.open_session = Opener()
        try:
            return int(args.func(args) or 0)
        finally:
            args.open_session.close()
    if len(files) != 1 or remote[0] is None:
        raise CliError(f"{command}: name one remote file at a time (local and remote files do not mix)")
    return run_remote(args, list(argv), files[0], remote[0])


class Opener:
    """Opens local paths as usual and remote addresses over SFTP; one connection per host."""

    def __init__(self) -> None:
        self.connections: dict[str, Any] = {}

    def connection(self, address: Address) -> "Connection":
        from sessionview.remote.connection import Connection, RemoteError

        key = address.host_label
        conn = self.connections.get(key)
        if conn is None:
            try:
                conn = Connection(address).open()
            except RemoteError as exc:
                message, name = str(exc), _ALIASES.get(address)
                if name is not None and message.startswith(key + ":"):
                    message = f"{name} ({key}){message[len(key):]}"
                raise CliError(message) from None
            self.connections[key] = conn
        return conn

    def __call__(self, path: str, digest: bool = True) -> Any:
        from sessionview.cli.commands import open_file

        address = parse(path)
        if address is None:
            return open_file(path, digest=digest)
        from sessionview.core.doc.document import NotRegularFile
        from sessionview.remote.sessions import open_session
        from sessionview.remote.sftp import SftpAccess

        access = SftpAccess(self.connection(address))
        try:
            return open_session(access, address.path or ".", label=path)
        except NotRegularFile as exc:
            raise CliError(f"{path}: {str(exc).split(': ', 1)[-1]}") from None
        except FileNotFoundError:
            raise CliError(f"{path}: no such file") from None
        except PermissionError:
            raise CliError(f"{path}: permission denied") from None
        except OSError as exc:
            raise CliError(f"{path}: {exc.strerror or exc}") from None

    def wait_quiet(self, path: str, quiet: float = 0.2, timeout: float = 2.0) -> None:
        """Wait until the file stops changing (size and mtime, over SFTP for a remote one), as a local
        read waits for a writer to finish a rewrite before it tries again."""
        import time

        from sessionview.core import ops

        address = parse(path)
        if address is None:
            ops.wait_quiet(path)
            return
        from sessionview.remote.sftp import SftpAccess

        access = SftpAccess(self.connection(address))
        start = time.monotonic()
        last, since = None, start
        while time.monotonic() - start < timeout:
            try:
                st = access.stat(address.path or ".")
            except OSError:
                return
            key = (st.st_size, st.st_mtime_ns)
            if key != last:
                last, since = key, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return
            time.sleep(0.02)

    def close(self) -> None:
        for conn in self.connections.values():
            conn.close()
        self.connections.clear()


def remote_argv(argv: list[str], command: str, file: str, remote_path: str) -> list[str]:
    """``argv`` with the file argument (the one that is not an option's value) replaced by the host's path."""
    out = list(argv)
    start = out.index(command) + 1 if command in out else 0
    skip = False
    for i in range(start, len(out)):
        token = out[i]
        if skip:
            skip = False
            continue
        if token in VALUE_OPTIONS:
            skip = True
            continue
        if token == file:
            out[i] = remote_path
            return out
    raise CliError(f"{file}: could not find the file among the arguments")


def _route_search(args: argparse.Namespace, argv: Sequence[str]) -> int | None:
    """``search QUERY ADDRESS``: the search runs on the host, over its own index there (the sessions are
    never copied here); its hits, messages and exit status come back unchanged."""
    paths = list(getattr(args, "paths", None) or [])
    remote = [parse(p) for p in paths]
    if not any(remote):
        return None
    if len(paths) != 1 or remote[0] is None:
        raise CliError("search: name one remote directory or file at a time (local and remote paths do not mix; "
                       "to search every host at once, feed one index: --index postgresql://…)")
    from sessionview.remote import writes

    address = remote[0]
    rargv = list(argv)  # the path is the last word that is the address (search's flags take no values that could be it)
    at = max(i for i, token in enumerate(rargv) if token == paths[0])
    rargv[at] = address.path or "."
    opener = Opener()
    try:
        conn = opener.connection(address)
        if not writes.probe(conn).installed:
            raise CliError(f"{paths[0]}: search runs on the host, over its own index, and sessionview is not "
                           "installed there (install it there, or search a shared index: --index postgresql://…)")
        code, out, err = writes.run(conn, rargv, None)
    finally:
        opener.close()
    _pass(sys.stdout, out)
    _pass(sys.stderr, err)
    return code


def run_remote(args: argparse.Namespace, argv: list[str], file: str, address: Address) -> int:
    from sessionview.cli.writing import read_input
    from sessionview.remote import writes

    if args.command == "edit" and args.content is None and args.content_file is None and args.json is None:
        raise CliError(f"{file}: a remote edit needs --content, --content-file or --json ($EDITOR does not run over SSH)")
    rargv = remote_argv(argv, args.command, file, address.path or ".")
    stdin: bytes | None = None
    for attr, option, _ in LOCAL_INPUTS:
        value = getattr(args, attr, None)
        if value is None:
            continue
        stdin = read_input(value, option).encode("utf-8", "surrogateescape")
        rargv = _set_option(rargv, option, "-")
    opener = Opener()
    try:
        conn = opener.connection(address)
        capability = writes.probe(conn)
        if not capability.writable:
            raise CliError(f"{file}: refused: {capability.reason}", 1)
        code, out, err = writes.run(conn, rargv, stdin)
    finally:
        opener.close()
    _pass(sys.stdout, out)
    _pass(sys.stderr, err)
    return code


def _set_option(argv: list[str], option: str, value: str) -> list[str]:
    out = list(argv)
    for i, token in enumerate(out):
        if token == option and i + 1 < len(out):
            out[i + 1] = value
            return out
        if token.startswith(option + "="):
            out[i] = f"{option}={value}"
            return out
    return out


def _pass(stream: Any, data: bytes) -> None:
    if not data:
        return
    try:
        stream.flush()
        stream.buffer.write(data)
        stream.buffer.flush()
    except (OSError, ValueError, AttributeError):
        try:
            stream.write(data.decode("utf-8", "replace"))
        except (OSError, ValueError):
            pass


def cmd_hosts(args: argparse.Namespace) -> int:
    """``sessionview hosts``: every configured host's sessions at once, a host column first."""
    import time as _time

    from sessionview.cli.output import Out, err
    from sessionview.cli.output import shown
    from sessionview.core.config import ConfigError, config_path, load_config
    from sessionview.core.text import escape_control
    from sessionview.remote.fleet import Fleet, FleetCatalog

    try:
        config = load_config()
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    hosts = config.hosts
    read = shown(config.path or config_path()) + ("" if config.path else " (no such file)")
    if args.names:
        unknown = [n for n in args.names if n not in hosts]
        if unknown:
            raise CliError(f"not in [hosts] of {read}: {', '.join(shown(n) for n in unknown)}")
        hosts = {n: hosts[n] for n in args.names}
    if not hosts:
        raise CliError(f"no [hosts] in {read}: add name = \"ssh://host/path\" lines (see sessionview hosts --help)")
    if getattr(args, "app", False):
        from sessionview.ui.launch import run_hosts_app

        return run_hosts_app(hosts, timeout=args.timeout, read_only=args.read_only)
    catalog = FleetCatalog(hosts)
    for listing in Fleet(hosts, timeout=args.timeout).load():
        catalog.apply(listing)
    out = Out()
    rows = catalog.rows()
    width = max((len(r.host) for r in rows), default=4)
    for r in rows:
        when = _time.strftime("%Y-%m-%d %H:%M", _time.gmtime(r.entry.mtime))
        out.write(f"{escape_control(r.host, one_line=True):<{width}}  {when}  {r.entry.size:>12,}  "
                  f"{escape_control(r.entry.path, one_line=True)}\n")
    out.flush()
    for name, why in catalog.unreachable.items():
        err(f"{escape_control(name, one_line=True)}: {escape_control(why, one_line=True)}")
    return 1 if catalog.unreachable else 0


def run_app(args: argparse.Namespace, path: str, address: Address) -> int:
    """The app on a remote directory or file: by default the app runs here and reads over SFTP
    (:func:`sessionview.ui.launch.run_remote`); with ``--on-host`` it runs on the host, in this terminal."""
    if not getattr(args, "on_host", False):
        from sessionview.ui.launch import run_remote

        return run_remote(path, address, read_only=bool(getattr(args, "read_only", False)))
    return run_on_host(args, path, address)


def run_on_host(args: argparse.Namespace, path: str, address: Address) -> int:
    """``--on-host``: checked here over asyncssh (host key, login, the host's sessionview), then run there
    through ``ssh -t``. Its exit status comes back."""
    import shutil
    import subprocess

    from sessionview.remote import writes
    from sessionview.remote.terminal import app_argv

    ssh = shutil.which("ssh")
    if ssh is None:
        raise CliError(f"{path}: the app on another host needs the OpenSSH client (ssh); 'sessionview show' and "
                       "'check' read over SFTP without it")
    opener = Opener()
    try:
        capability = writes.probe(opener.connection(address))
    finally:
        opener.close()
    if not capability.installed:
        raise CliError(f"{path}: {capability.reason}; the app runs on the host, so it cannot open this address. "
                       "'sessionview show' and 'check' read it over SFTP", 1)
    read_only = bool(getattr(args, "read_only", False)) or not capability.writable
    if not capability.writable:
        from sessionview.cli.output import status

        status(f"{path}: {capability.reason}; opening it read-only")
    try:
        return subprocess.call(app_argv(address, address.path, read_only, ssh))
    except KeyboardInterrupt:
        return 130
