"""A real pypiserver on loopback, as a team runs one for its wheels (the `test` extra
installs pypiserver and passlib from PyPI).

    with PypiServer(tmp_path, users={"builder": "s3cret"}) as server:
        server.simple          # http://127.0.0.1:PORT/simple/   (what pip and advise read)
        server.upload          # http://127.0.0.1:PORT/          (what twine uploads to)
        server.packages        # the folder it serves
        server.log_text()      # its request log

Uploads need a user of the htpasswd file (written with passlib, bcrypt-free: sha256-crypt);
listing and downloads are open, as pypiserver's default `-a update`. sha256 fragments in its
pages (`--hash-algo sha256`); no fallback to PyPI.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.net.servers import MAX_LIFE_S, _Server, free_port, wait_for_port


class PypiServer(_Server):
    """pypiserver serving (and taking uploads into) a folder, on 127.0.0.1."""

    def __init__(self, base: Path, *, users: dict[str, str]) -> None:
        self.base = Path(base) / f"pypiserver-{free_port()}"
        self.packages = self.base / "packages"
        self.port = free_port()
        self.users = users

    @property
    def simple(self) -> str:
        return f"http://127.0.0.1:{self.port}/simple/"

    @property
    def upload(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self) -> None:
        from passlib.apache import HtpasswdFile

        self.packages.mkdir(parents=True, exist_ok=True)
        htpasswd = HtpasswdFile(str(self.base / "htpasswd"), new=True,
                                default_scheme="sha256_crypt")
        for user, password in self.users.items():
            htpasswd.set_password(user, password)
        htpasswd.save()
        log = (self.base / "server.log").open("wb")
        self.proc = subprocess.Popen(
            ["timeout", str(MAX_LIFE_S), sys.executable, "-m", "pypiserver", "run",
             "-i", "127.0.0.1", "-p", str(self.port), "-P", str(self.base / "htpasswd"),
             "-a", "update", "--hash-algo", "sha256", "--disable-fallback",
             "--server", "wsgiref", "-v", str(self.packages)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})  # the log as requests come
        log.close()
        wait_for_port(self.port, timeout_s=60, proc=self.proc)

    def log_text(self) -> str:
        path = self.base / "server.log"
        return path.read_text(errors="replace") if path.is_file() else ""
