"""A throwaway PostgreSQL server for the tests: initdb into a temp dir, started by pg_ctl on a private unix
socket directory and a loopback TCP port (for the password tests), as the ``postgres`` user (or ``nobody``)
when we are root, since postgres refuses to run as root. Stopped (and its files removed) at the end."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass

PASSWORD = "Sekr3t-pa55-in-url"
USER = "svuser"


def binaries() -> str | None:
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.access(os.path.join(d, "initdb"), os.X_OK) and os.access(os.path.join(d, "pg_ctl"), os.X_OK):
            return d
    found = shutil.which("initdb")
    return os.path.dirname(found) if found and shutil.which("pg_ctl") else None


def _runas() -> tuple[list[str], pwd.struct_passwd | None]:
    if os.geteuid() != 0:
        return [], None
    for name in ("postgres", "nobody"):
        try:
            pw = pwd.getpwnam(name)
        except KeyError:
            continue
        return ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups", "--"], pw
    return [], None


def available() -> str | None:
    """Why the server cannot run here (None: it can)."""
    if binaries() is None:
        return "PostgreSQL is not installed (initdb, pg_ctl: Debian's postgresql package)"
    if os.geteuid() == 0 and _runas()[1] is None:
        return "no postgres or nobody user to run PostgreSQL as (it refuses to run as root)"
    if os.geteuid() == 0 and not shutil.which("setpriv"):
        return "setpriv is missing (util-linux), needed to run PostgreSQL as another user"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    base: str
    sockdir: str
    port: int
    bin: str
    prefix: list[str]
    trgm: bool
    counter: int = 0

    def url(self, db: str = "postgres") -> str:
        """A URL to ``db`` over the private socket, as the superuser (trust)."""
        return f"postgresql:///{db}?host={self.sockdir}&port={self.port}&user=postgres"

    def tcp_url(self, db: str, password: str = PASSWORD, user: str = USER, port: int | None = None) -> str:
        return f"postgresql://{user}:{password}@127.0.0.1:{port or self.port}/{db}"

    def new_db(self) -> str:
        import psycopg
        from psycopg import sql

        self.counter += 1
        name = f"t{os.getpid()}_{self.counter}"
        with psycopg.connect(self.url(), autocommit=True) as c:
            c.execute(sql.SQL("create database {} owner {}").format(sql.Identifier(name), sql.Identifier(USER)))
        return name

    def stop(self) -> None:
        subprocess.run([*self.prefix, os.path.join(self.bin, "pg_ctl"), "-D", os.path.join(self.base, "data"), "-m", "immediate",
                        "-w", "stop"], capture_output=True)
        shutil.rmtree(self.base, ignore_errors=True)


def start() -> Server:
    bindir = binaries()
    assert bindir
    prefix, pw = _runas()
    base = tempfile.mkdtemp(prefix="sv-pg-")
    os.chmod(base, 0o755)
    data, sock = os.path.join(base, "data"), os.path.join(base, "sock")
    os.mkdir(sock)
    if pw is not None:
        os.chown(base, pw.pw_uid, pw.pw_gid)
        os.chown(sock, pw.pw_uid, pw.pw_gid)
    env = {**os.environ, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}
    subprocess.run([*prefix, os.path.join(bindir, "initdb"), "-D", data, "-U", "postgres", "-E", "UTF8", "--locale=C.UTF-8",
                    "--auth-local=trust", "--auth-host=scram-sha-256", "-N"], check=True, capture_output=True, env=env, cwd=base)
    port = _free_port()
    opts = f"-k {sock} -h 127.0.0.1 -p {port} -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    r = subprocess.run([*prefix, os.path.join(bindir, "pg_ctl"), "-D", data, "-w", "-t", "60", "-l", os.path.join(base, "log"),
                        "-o", opts, "start"], capture_output=True, env=env, cwd=base, text=True)
    if r.returncode != 0:
        log = open(os.path.join(base, "log")).read() if os.path.exists(os.path.join(base, "log")) else ""
        shutil.rmtree(base, ignore_errors=True)
        raise RuntimeError(f"postgres did not start: {r.stderr}\n{log}")
    import psycopg
    from psycopg import sql

    srv = Server(base, sock, port, bindir, prefix, trgm=bool(glob.glob("/usr/share/postgresql/*/extension/pg_trgm.control")))
    with psycopg.connect(srv.url(), autocommit=True) as c:
        c.execute(sql.SQL("create role {} login password {}").format(sql.Identifier(USER), sql.Literal(PASSWORD)))
    return srv
