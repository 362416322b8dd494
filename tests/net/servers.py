"""Real servers on loopback for the network tests: nginx (HTTP cache / file server),
tinyproxy (forward proxy) and a second dockerd (a "remote" engine).

Each one listens on 127.0.0.1 only, runs from a temporary config with its own log files,
is started with a bounded wait until it answers and is stopped (terminate, then kill) by
`stop()`; use them as context managers or from fixtures' finalizers. Every process is
started with a `timeout` wrapper as well, so nothing outlives a crashed test session.

    with NginxServer(tmp_path) as nginx:      nginx.url, nginx.root, nginx.access_lines()
    with TinyProxy(tmp_path) as proxy:        proxy.url, proxy.requests()
    with SecondDockerd() as engine:           engine.host ("tcp://127.0.0.1:PORT"), engine.client
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from tests import world

#: hard upper bound on a server's life (the `timeout` wrapper), seconds
MAX_LIFE_S = 1800


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, *, timeout_s: float = 20.0, proc: Any = None) -> None:
    """Poll until 127.0.0.1:port accepts a connection (bounded)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before listening")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.1)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout_s} s")


def _stop(proc: subprocess.Popen[bytes] | None, grace_s: float = 10.0) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


class _Server:
    proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Any:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        _stop(self.proc)
        self.proc = None


class NginxServer(_Server):
    """nginx serving (and, with WebDAV PUT, storing) files under `root`.

    The configuration Bazel documents for an HTTP remote cache: `dav_methods PUT;
    create_full_put_path on; client_max_body_size 0;`. Runs as root (workers too, so PUT
    can write the temporary root), in the foreground, from a config in `base`.
    """

    def __init__(self, base: Path, *, put: bool = True) -> None:
        self.base = Path(base) / f"nginx-{os.getpid()}-{free_port()}"
        self.root = self.base / "root"
        self.port = free_port()
        self.put = put

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self) -> None:
        b = self.base
        for d in ("root", "tmp", "logs"):
            (b / d).mkdir(parents=True, exist_ok=True)
        dav = ("dav_methods PUT; create_full_put_path on; client_max_body_size 0; "
               "dav_access user:rw group:r all:r;") if self.put else ""
        conf = b / "nginx.conf"
        # the combined format, then the x-api-key request header (a remote cache's secret)
        fmt = ("'$remote_addr - $remote_user [$time_local] \"$request\" $status "
               "$body_bytes_sent \"$http_referer\" \"$http_user_agent\" \"$http_x_api_key\"'")
        conf.write_text(f"""daemon off;
master_process on;
worker_processes 1;
user root root;
pid {b}/nginx.pid;
error_log {b}/logs/error.log info;
events {{ worker_connections 64; }}
http {{
  log_format tfw {fmt};
  access_log {b}/logs/access.log tfw;
  client_body_temp_path {b}/tmp/body;
  proxy_temp_path {b}/tmp/proxy;
  fastcgi_temp_path {b}/tmp/fastcgi;
  uwsgi_temp_path {b}/tmp/uwsgi;
  scgi_temp_path {b}/tmp/scgi;
  server {{
    listen 127.0.0.1:{self.port};
    root {self.root};
    location / {{ {dav} }}
  }}
}}
""", encoding="utf-8")
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.proc = subprocess.Popen(
            ["timeout", str(MAX_LIFE_S), nginx, "-c", str(conf), "-p", str(b),
             "-e", str(b / "logs" / "error.log")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.port, proc=self.proc)

    def access_lines(self) -> list[str]:
        path = self.base / "logs" / "access.log"
        return path.read_text(errors="replace").splitlines() if path.is_file() else []

    def stored(self, top: str) -> list[Path]:
        """Files stored under root/top (e.g. "ac", "cas")."""
        folder = self.root / top
        return [p for p in folder.rglob("*") if p.is_file()] if folder.is_dir() else []


class Http10Cache:
    """A Bazel HTTP cache (GET/HEAD/PUT of /ac/ and /cas/ files under `root`) that answers
    in HTTP/1.0, as Python's http.server does by default: Bazel stores into it, but refuses
    its hits ("HTTP version 1.1 is required, was: HTTP/1.0"). In a thread of the test
    process, on 127.0.0.1; `requests` lists "METHOD /path STATUS" lines."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.port = free_port()
        self.requests: list[str] = []
        self._server: Any = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def __enter__(self) -> Http10Cache:
        import http.server
        import threading

        cache = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def _file(self) -> Path:
                return cache.root / self.path.lstrip("/").replace("..", "_")

            def _answer(self, status: int, data: bytes = b"", body: bool = True) -> None:
                cache.requests.append(f"{self.command} {self.path} {status}")
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if body:
                    self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                f = self._file()
                self._answer(*((200, f.read_bytes()) if f.is_file() else (404,)))

            def do_HEAD(self) -> None:  # noqa: N802
                self._answer(200 if self._file().is_file() else 404, body=False)

            def do_PUT(self) -> None:  # noqa: N802
                data = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                f = self._file()
                f.parent.mkdir(parents=True, exist_ok=True)
                f.write_bytes(data)
                self._answer(200)

            def log_message(self, *args: Any) -> None:
                pass

        self.root.mkdir(parents=True, exist_ok=True)
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()


class TinyProxy(_Server):
    """tinyproxy on 127.0.0.1 with its own config and log file (LogLevel Info)."""

    def __init__(self, base: Path | None = None, *,
                 basic_auth: tuple[str, str] | None = None) -> None:
        # its own folder under /tmp, not `base`: tinyproxy opens the log after dropping to
        # `nobody`, who cannot pass pytest's 0700 tmp folders
        del base
        self.base = Path(tempfile.mkdtemp(prefix="tfwp.", dir="/tmp"))
        self.port = free_port()
        self.log = self.base / "tinyproxy.log"
        self.basic_auth = basic_auth  # (user, password): every client must authenticate

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.base.mkdir(parents=True, exist_ok=True)
        self.base.chmod(0o755)
        self.log.touch()
        self.log.chmod(0o666)  # tinyproxy drops to `nobody` before writing
        conf = self.base / "tinyproxy.conf"
        user = ["User nobody", "Group nogroup"] if os.geteuid() == 0 else []
        conf.write_text("\n".join([
            *user,
            f"Port {self.port}",
            "Listen 127.0.0.1",
            "Timeout 30",
            f'LogFile "{self.log}"',
            "LogLevel Info",
            "MaxClients 16",
            "Allow 127.0.0.1",
            *([f"BasicAuth {self.basic_auth[0]} {self.basic_auth[1]}"] if self.basic_auth
              else []),
            "",
        ]), encoding="utf-8")
        self.proc = subprocess.Popen(
            ["timeout", str(MAX_LIFE_S), shutil.which("tinyproxy") or "/usr/bin/tinyproxy",
             "-d", "-c", str(conf)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.port, proc=self.proc)

    def stop(self) -> None:
        super().stop()
        shutil.rmtree(self.base, ignore_errors=True)

    def requests(self) -> list[str]:
        """The request lines tinyproxy logged, e.g. "GET http://127.0.0.1:P/f HTTP/1.1"."""
        out = []
        for line in self.log.read_text(errors="replace").splitlines():
            _, sep, request = line.partition("): ")
            if sep and "Request (file descriptor" in line:
                out.append(request.strip())
        return out


class SecondDockerd(_Server):
    """A second Docker engine on tcp://127.0.0.1:PORT with its own data, exec root and
    containerd (dockerd supervises one in its exec root when none is given), a bridge of its
    own and no iptables changes. As root only. `stop()` ends it and removes its folders."""

    def __init__(self) -> None:
        # short: containerd's unix socket path lives below the exec root (108-byte limit)
        self.base = Path(tempfile.mkdtemp(prefix="tfwd.", dir="/tmp"))
        self.port = free_port()
        self.client: Any = None
        self.bridge: str | None = None

    @property
    def host(self) -> str:
        return f"tcp://127.0.0.1:{self.port}"

    def start(self) -> None:
        import docker

        b = self.base
        self.bridge = world.second_engine_bridge()  # never --bridge none (it deletes docker0)
        self.logfile = (b / "dockerd.log").open("wb")
        self.proc = subprocess.Popen(
            ["timeout", str(MAX_LIFE_S), shutil.which("dockerd") or "/usr/sbin/dockerd",
             "--host", self.host, "--host", f"unix://{b}/d.sock",
             "--data-root", str(b / "data"), "--exec-root", str(b / "e"),
             "--pidfile", str(b / "d.pid"), "--bridge", self.bridge, "--iptables=false",
             "--ip-masq=false"],
            stdin=subprocess.DEVNULL, stdout=self.logfile, stderr=subprocess.STDOUT)
        wait_for_port(self.port, timeout_s=60, proc=self.proc)
        self.client = docker.DockerClient(base_url=self.host, timeout=300)
        deadline = time.monotonic() + 60
        while True:
            try:
                self.client.ping()
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)

    def log_text(self) -> str:
        return (self.base / "dockerd.log").read_text(errors="replace")

    def load_image(self, source_client: Any, name: str) -> None:
        """Copy an image from another engine: images.get().save() -> images.load()."""
        # streamed: save() yields chunks, load() posts them as they come
        self.client.images.load(source_client.images.get(name).save(named=True))

    def stop(self) -> None:
        if self.client is not None:
            with contextlib.suppress(Exception):
                for c in self.client.containers.list(all=True):
                    c.remove(force=True)
            with contextlib.suppress(Exception):
                self.client.close()
            self.client = None
        _stop(self.proc, grace_s=20)
        self.proc = None
        with contextlib.suppress(Exception):
            self.logfile.close()
        # the engine unmounts its overlays on a clean stop; lazily unmount any leftover
        mounts = Path("/proc/mounts").read_text().splitlines()
        for target in sorted((m.split()[1] for m in mounts
                              if m.split()[1].startswith(str(self.base))), reverse=True):
            subprocess.run(["umount", "-l", target], check=False, capture_output=True)
        shutil.rmtree(self.base, ignore_errors=True)
        world.drop_bridge(self.bridge)
