"""Witness databases for the tests: a SQLite file, and a real PostgreSQL server started here.

The PostgreSQL server is Debian's (`apt-get install postgresql`, done by
.ci/run): a throwaway cluster made with initdb in a private directory, listening
only on a unix socket there, run as the `postgres` user when the tests run as
root (the server refuses root), stopped and removed after the session. Each
test gets a database of its own. Where the server or psycopg is missing, the
PostgreSQL cases are skipped with the reason.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

from tests.net.conftest import ctx, keys  # noqa: F401 - the network tests' fixtures, for the follower's tests


def _pg_bin() -> Path | None:
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    return Path(dirs[-1]) if dirs else None


class PostgresServer:
    """initdb + pg_ctl start in a temporary directory; `url(db)` connects over its unix socket."""

    def __init__(self) -> None:
        bindir = _pg_bin()
        if bindir is None or not (bindir / "pg_ctl").exists():
            raise RuntimeError("no PostgreSQL server binaries (initdb, pg_ctl): apt-get install postgresql")
        self.bindir = bindir
        self.dir = Path(tempfile.mkdtemp(prefix="shoed-pg-", dir="/tmp"))
        self.data = self.dir / "data"
        self.prefix: list[str] = []
        if os.geteuid() == 0:
            try:
                user = pwd.getpwnam("postgres")
            except KeyError:
                raise RuntimeError("running as root and there is no 'postgres' user to run the server as") from None
            os.chown(self.dir, user.pw_uid, user.pw_gid)
            self.prefix = ["runuser", "-u", "postgres", "--"]
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8",
                  "--locale=C")
        options = f"-k {self.dir} -c listen_addresses='' -F -c max_connections=40"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.dir / "log"), "-o", options, "-w", "-t", "60",
                  "start")
        self.started = True

    def _run(self, tool: str, *args: str) -> None:
        proc = subprocess.run([*self.prefix, str(self.bindir / tool), *args], capture_output=True, text=True,
                              timeout=120)
        if proc.returncode != 0:
            log = (self.dir / "log").read_text()[-800:] if (self.dir / "log").exists() else ""
            raise RuntimeError(f"{tool} failed: {proc.stderr.strip()[-800:]} {log}")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@/{database}?host={self.dir}"

    def create_database(self) -> str:
        import psycopg

        name = f"w_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        except (RuntimeError, subprocess.TimeoutExpired):
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres():
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (pip install 'shoed[witness]'): PostgreSQL witness not tested")
    try:
        server = PostgresServer()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"PostgreSQL server not available here: {exc}")
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    """A fresh, empty witness database of each kind."""
    if request.param == "sqlite":
        return f"sqlite://{tmp_path}/witness.db"
    return request.getfixturevalue("postgres").create_database()
