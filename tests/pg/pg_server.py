"""A throwaway PostgreSQL server for the tests: the system's initdb/pg_ctl, loopback only.

PostgreSQL refuses to run as root, so under root (CI) the server runs as the `postgres`
system user (runuser), in a data folder under a private temporary folder owned by that user.
Each pytest(-xdist) worker process starts its own server on its own free port.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

PASSWORD = "pg-test-secret-7Hq"  # the superuser's; tests check that no message shows it
USER = "lc"
START_TIMEOUT_S = 60


class NoServer(RuntimeError):
    """No server could be started here; the message says why."""


@dataclass
class Server:
    base: Path  # temporary folder: data/, log, password file
    port: int
    run_as: list[str]  # command prefix that runs a program as the server's user
    bindir: Path

    @property
    def data(self) -> Path:
        return self.base / "data"

    def url(self, dbname: str = "postgres", password: str | None = PASSWORD) -> str:
        secret = f":{password}" if password is not None else ""
        return f"postgresql://{USER}{secret}@127.0.0.1:{self.port}/{dbname}"

    def ctl(self, *args: str, check: bool = True, timeout: float = START_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
        cmd = [*self.run_as, str(self.bindir / "pg_ctl"), "-D", str(self.data), *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=check)

    def start(self) -> None:
        options = f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories={self.base}"
        proc = self.ctl("start", "-w", "-t", str(START_TIMEOUT_S), "-l", str(self.base / "server.log"),
                        "-o", options, check=False)  # fmt: skip
        if proc.returncode != 0:
            log = (self.base / "server.log").read_text(errors="replace")[-2000:] if self.base.exists() else ""
            raise NoServer(f"pg_ctl start failed: {proc.stderr.strip()} {log}")

    def kill(self) -> None:
        """Stop at once, like a crash: no shutdown checkpoint, open transactions are lost."""
        self.ctl("stop", "-m", "immediate", "-w", check=False)

    def stop(self) -> None:
        self.kill()
        shutil.rmtree(self.base, ignore_errors=True)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _bindir() -> Path:
    found = shutil.which("initdb") or shutil.which("initdb", path="/usr/local/bin")
    if found:
        return Path(found).resolve().parent
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), reverse=True)
    if candidates:
        return candidates[0].parent
    raise NoServer("no initdb on PATH or in /usr/lib/postgresql/*/bin (install the PostgreSQL server)")


def start_server() -> Server:
    """Start a fresh server; NoServer when this machine cannot run one."""
    bindir = _bindir()
    base = Path(tempfile.mkdtemp(prefix="lc-pg-"))
    run_as: list[str] = []
    if os.geteuid() == 0:
        try:
            account = pwd.getpwnam("postgres")
        except KeyError:
            shutil.rmtree(base, ignore_errors=True)
            raise NoServer("running as root and there is no `postgres` user to run the server as") from None
        os.chown(base, account.pw_uid, account.pw_gid)
        run_as = ["runuser", "-u", "postgres", "--"]
    pwfile = base / "pw"
    pwfile.write_text(PASSWORD + "\n")
    if run_as:
        os.chown(pwfile, pwd.getpwnam("postgres").pw_uid, -1)
    init = subprocess.run(
        [*run_as, str(bindir / "initdb"), "-D", str(base / "data"), "-U", USER, f"--pwfile={pwfile}",
         "--auth-host=scram-sha-256", "--auth-local=trust", "-E", "UTF8", "--locale=C", "--no-sync"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    if init.returncode != 0:
        shutil.rmtree(base, ignore_errors=True)
        raise NoServer(f"initdb failed: {init.stderr.strip()[-500:]}")
    with open(base / "data" / "postgresql.conf", "a") as conf:
        # a test server: no fsync (a crash of the server process, which kill() simulates, still
        # loses nothing the OS has been given; synchronous_commit stays on, so a commit has been
        # given to the OS before it is acknowledged), small, quiet
        conf.write("fsync = off\nfull_page_writes = off\nmax_connections = 60\n")
        conf.write("shared_buffers = 16MB\nlog_min_messages = warning\n")
    last: NoServer | None = None
    for _ in range(3):  # the free port may be taken between choosing and binding it
        server = Server(base, _free_port(), run_as, bindir)
        try:
            server.start()
            return server
        except NoServer as exc:
            last = exc
            server.kill()
    shutil.rmtree(base, ignore_errors=True)
    raise last or NoServer("could not start")


def wait_until_accepting(server: Server, timeout: float = START_TIMEOUT_S) -> None:
    import psycopg

    deadline = time.monotonic() + timeout
    while True:
        try:
            with psycopg.connect(server.url(), connect_timeout=2):
                return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def create_database(server: Server, name: str) -> str:
    import psycopg

    with psycopg.connect(server.url(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return server.url(name)
