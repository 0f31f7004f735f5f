"""A throw-away PostgreSQL server for the tests: a real one, on a temporary folder and a
127.0.0.1 port, with a password (a kernel can reach 127.0.0.1 too), gone after its tests.

PostgreSQL comes from Debian's packages. Where it is missing and the tests run as root (as
on CI's fresh machines), :func:`binaries` installs it with ``apt-get``. ``initdb`` refuses
to run as root, so the server runs as the ``postgres`` user the package creates.
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import socket
import subprocess
from pathlib import Path


def binaries() -> Path:
    """The folder of ``initdb`` and ``pg_ctl``, installing PostgreSQL first where it is missing."""
    found = _find()
    if found is None and os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "postgresql"], check=True, env=env)
        found = _find()
    if found is None:
        raise RuntimeError("PostgreSQL is not installed and cannot be here (not root, or no apt-get): "
                           "apt-get install postgresql")
    return found


def _find() -> Path | None:
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    initdb = shutil.which("initdb")
    return Path(initdb).resolve().parent if initdb else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``initdb`` and ``pg_ctl start`` in ``folder``; :meth:`database` makes an empty database."""

    def __init__(self, folder: Path):
        self.bin = binaries()
        self.folder = Path(folder)
        self.data = self.folder / "data"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        self.user = "postgres" if os.geteuid() == 0 else None
        self.password = secrets.token_hex(16)
        password_file = self.folder / "password"
        password_file.write_text(self.password + "\n")
        if self.user:
            shutil.chown(self.folder, self.user)
            shutil.chown(password_file, self.user)
        self._run("initdb", "-D", str(self.data), "-A", "scram-sha-256", "--pwfile", str(password_file),
                  "-U", "postgres", "-E", "UTF8")
        password_file.unlink()
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "server.log"), "-w", "-o",
                  f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1", "start")

    def _run(self, program: str, *args: str) -> str:
        cmd = [str(self.bin / program), *args]
        if self.user:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=self.folder)
        if proc.returncode:
            raise RuntimeError(f"{program} failed ({proc.returncode}): {proc.stderr or proc.stdout}")
        return proc.stdout

    def database(self, name: str) -> str:
        """A new empty database; its SQLAlchemy URL (psycopg2, as nbgrader needs)."""
        import psycopg2

        connection = psycopg2.connect(host="127.0.0.1", port=self.port, user="postgres", password=self.password,
                                      dbname="postgres")
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute(f'CREATE DATABASE "{name}"')
        connection.close()
        return f"postgresql+psycopg2://postgres:{self.password}@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
