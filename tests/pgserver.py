"""A throwaway PostgreSQL server on 127.0.0.1 for the tests: one per test session.

`initdb` + `pg_ctl -w` (which waits until the server accepts connections) into a temporary
folder, run as the unprivileged `postgres` user when the tests run as root (PostgreSQL
refuses root). The schema is migrated once into a template database; each test gets a
fresh copy of it (`CREATE DATABASE ... TEMPLATE`, a file copy, ~0.1 s) and drops it after.
Durability is switched off: the data is thrown away anyway.
"""
from __future__ import annotations

import contextlib
import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import psycopg

USER = "rt"
TEMPLATE = "rt_template"


def pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgServer:
    def __init__(self) -> None:
        self.bin = pg_bin()
        if self.bin is None:
            raise RuntimeError("PostgreSQL is not installed: run scripts/setup --dev")
        self.root = Path(tempfile.mkdtemp(prefix="rt-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self._as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self._as:
            shutil.chown(self.root, "postgres")
        self._names = itertools.count(1)
        self._run("initdb", "-D", str(self.data), "-U", USER, "--auth=trust", "-E", "UTF8",
                  "--locale=C", "--no-sync", "--no-instructions")
        opts = (f"-h 127.0.0.1 -p {self.port} -k {self.root} -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        self._opts = opts
        self._admin = None
        self.start()

    def start(self) -> None:
        """Start the server (`-w`: returns once it accepts connections)."""
        self._run("pg_ctl", "-D", str(self.data), "-w", "-l", str(self.root / "log"),
                  "-o", self._opts, "start")

    def halt(self) -> None:
        """Stop the server but keep its data, as an outage would: `start()` brings it back."""
        if self._admin is not None:
            self._admin.close()
            self._admin = None
        self._run("pg_ctl", "-D", str(self.data), "-w", "-m", "fast", "stop")

    def _run(self, tool: str, *args: str) -> None:
        subprocess.run([*self._as, str(self.bin / tool), *args], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def url(self, database: str) -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    @property
    def admin(self) -> psycopg.Connection:
        if self._admin is None:
            self._admin = psycopg.connect(self.url("postgres"), autocommit=True)
        return self._admin

    def create_template(self) -> None:
        """The migrated schema, once: every fresh database copies it."""
        from rt_core.store import Store

        self.admin.execute(f"CREATE DATABASE {TEMPLATE}")
        Store(self.url(TEMPLATE)).close()

    def fresh_database(self, empty: bool = False) -> str:
        """A new database's URL: the migrated template's copy, or an empty one."""
        name = f"t{next(self._names)}"
        self.admin.execute(f"CREATE DATABASE {name}" + ("" if empty else f" TEMPLATE {TEMPLATE}"))
        return self.url(name)

    def drop(self, url: str) -> None:
        self.admin.execute(f"DROP DATABASE IF EXISTS {url.rsplit('/', 1)[1]} WITH (FORCE)")

    def stop(self) -> None:
        if self._admin is not None:
            self._admin.close()
        with contextlib.suppress(subprocess.CalledProcessError):  # halted already (an outage test)
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


@contextlib.contextmanager
def running():
    """A started server with the migrated template, stopped however the block ends."""
    server = PgServer()
    try:
        server.create_template()
        yield server
    finally:
        server.stop()
