"""A real REAPI service for the tests: BuildGrid (PyPI), PostgreSQL (Debian), tests/reapi/worker.py.

    svc = ReapiService(base_dir)      # base_dir: a folder for configs, logs, CAS, actions
    svc.start()                       # venv (once), PostgreSQL, migrations, server, worker
    svc.endpoint                      # grpc://127.0.0.1:PORT       (host processes, network=host)
    svc.bridge_endpoint               # grpc://172.17.0.1:PORT      (containers on the default bridge)
    svc.instance_name                 # "tfwizard-test": execution, CAS, action cache, capabilities
    svc.cache_only_instance           # "tfwizard-test-cache-only": no execution (exec_enabled false)
    svc.actions(since=n), svc.mark()  # what the worker ran (its JSON-lines log)
    svc.capabilities(), svc.execute(argv, ...)          # GetCapabilities; one Execute (client.py)
    svc.stop_server(kill=True) / svc.start_server()     # a server that goes away mid-build
    svc.close()

Processes (PostgreSQL as the `postgres` user when root, the BuildGrid server, the worker) run
in their own process groups under a `timeout` wrapper, so nothing outlives a crashed session
by more than MAX_LIFE_S. The worker also exits when the process that started it is gone.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import hashlib
import json
import os
import pwd
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from tests.net.servers import free_port, wait_for_port

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
VENV = ROOT / ".venv-buildgrid"
REQUIREMENTS = HERE / "requirements.txt"
WORKER = HERE / "worker.py"
CLIENT = HERE / "client.py"

INSTANCE = "tfwizard-test"
CACHE_ONLY_INSTANCE = "tfwizard-test-cache-only"
#: platform property keys the scheduler matches between actions and workers
MATCH_KEYS = ("OSFamily", "ISA")
#: keys it accepts without matching: the worker reads them (container-image picks the image)
WILDCARD_KEYS = ("container-image",)
#: what the test worker advertises
WORKER_PROPERTIES = (("OSFamily", "Linux"), ("ISA", "x86-64"))
#: gRPC threads of the server: every long-poll of a worker and every Execute stream of a
#: client holds one; past it BuildGrid answers RESOURCE_EXHAUSTED
THREAD_POOL_SIZE = 64
#: a hard bound on each process's life, seconds (the `timeout` wrapper)
MAX_LIFE_S = int(os.environ.get("TFW_REAPI_MAX_LIFE_S", str(4 * 3600)))
MIN_PYTHON = (3, 11)


class ServiceUnavailable(RuntimeError):
    """Something the service needs is missing on this machine (a tool, a package, Docker)."""


@dataclass
class SetupTimes:
    """Wall seconds of each setup step (venv_s is ~0 when the venv was already there)."""

    venv_s: float = 0.0
    venv_installed: bool = False
    postgres_s: float = 0.0
    migrate_s: float = 0.0
    server_s: float = 0.0
    worker_s: float = 0.0

    def total(self) -> float:
        return self.venv_s + self.postgres_s + self.migrate_s + self.server_s + self.worker_s


# --------------------------------------------------------------------------- helpers


def _python_for_venv() -> str:
    """A Python >= 3.11 (BuildGrid 0.4's floor): this one, else one on PATH."""
    if sys.version_info[:2] >= MIN_PYTHON:
        return sys.executable
    for name in ("python3.13", "python3.12", "python3.11", "python3"):
        found = shutil.which(name)
        if found:
            done = subprocess.run([found, "-c", "import sys; print(sys.version_info >= (3, 11))"],
                                  capture_output=True, text=True, check=False)
            if done.stdout.strip() == "True":
                return found
    raise ServiceUnavailable("BuildGrid needs Python >= 3.11 and none was found on PATH")


def _stamp() -> str:
    h = hashlib.sha256(REQUIREMENTS.read_bytes())
    h.update(sys.version.encode())
    return h.hexdigest()


def ensure_venv(venv: Path = VENV) -> tuple[Path, float, bool]:
    """The BuildGrid virtualenv's python, installed once (a stamp file records the requirements).

    Returns (python, seconds spent, whether it installed). Serialised with a lock file, so
    parallel test sessions of one checkout install once.
    """
    t0 = time.monotonic()
    stamp_file = venv / ".tfw-reapi-stamp"
    python = venv / "bin" / "python"
    lock_path = Path(tempfile.gettempdir()) / (
        "tfw-reapi-venv-" + hashlib.sha256(str(venv).encode()).hexdigest()[:12] + ".lock")
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if python.exists() and (venv / "bin" / "bgd").exists() and stamp_file.exists() \
                and stamp_file.read_text().strip() == _stamp():
            return python, time.monotonic() - t0, False
        if not python.exists():
            subprocess.run([_python_for_venv(), "-m", "venv", str(venv)], check=True,
                           capture_output=True, timeout=300)
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--progress-bar",
             "off", "-q", "-r", str(REQUIREMENTS)],
            capture_output=True, text=True, timeout=1800, check=False)
        if done.returncode != 0:
            raise ServiceUnavailable(f"pip install -r {REQUIREMENTS.name} failed:\n{done.stderr[-3000:]}")
        stamp_file.write_text(_stamp() + "\n")
    return python, time.monotonic() - t0, True


def postgres_bindir() -> Path:
    """Debian's PostgreSQL server binaries (the newest installed major), or ServiceUnavailable."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"),
                   key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("postgres")
    if on_path:
        return Path(on_path).parent
    raise ServiceUnavailable("PostgreSQL is not installed (Debian: apt-get install postgresql)")


def bridge_address() -> str | None:
    """The IPv4 address of Docker's default bridge on this machine (172.17.0.1), or None."""
    name = "docker0"
    with contextlib.suppress(Exception):
        import docker

        client = docker.from_env(timeout=10)
        try:
            options = client.networks.get("bridge").attrs.get("Options") or {}
            name = options.get("com.docker.network.bridge.name", name)
        finally:
            client.close()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            answer = fcntl.ioctl(s.fileno(), 0x8915,  # SIOCGIFADDR
                                 struct.pack("256s", name.encode()[:15]))
        except OSError:
            return None
    return socket.inet_ntoa(answer[20:24])


def ensure_bridge() -> str | None:
    """bridge_address(); as root, first recreate Docker's default bridge when it vanished.

    A dockerd started with `--bridge none` deletes `docker0` while the main one keeps
    running (our second engines use bridges of their own: world.second_engine_bridge);
    recreating it with the bridge network's own gateway (and subnet) brings containers on
    the default network back.
    """
    address = bridge_address()
    if address or os.geteuid() != 0:
        return address
    try:
        import ipaddress

        import docker

        client = docker.from_env(timeout=10)
        try:
            attrs = client.networks.get("bridge").attrs
        finally:
            client.close()
        name = (attrs.get("Options") or {}).get("com.docker.network.bridge.name", "docker0")
        config = (attrs.get("IPAM") or {}).get("Config") or [{}]
        network = ipaddress.ip_network(config[0].get("Subnet") or "172.17.0.0/16")
        gateway = config[0].get("Gateway") or str(next(network.hosts()))
    except Exception:
        return None
    for argv in (["ip", "link", "add", name, "type", "bridge"],
                 ["ip", "addr", "add", f"{gateway}/{network.prefixlen}", "dev", name],
                 ["ip", "link", "set", name, "up"]):
        subprocess.run(argv, capture_output=True, timeout=30, check=False)
    return bridge_address()


def _stop_group(proc: subprocess.Popen[bytes] | None, sig: int = signal.SIGTERM,
                grace_s: float = 15.0) -> None:
    """Signal a process group we started (proc.pid leads it), then SIGKILL it after grace_s."""
    if proc is None or proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def _wait_for_address(host: str, port: int, *, timeout_s: float,
                      proc: subprocess.Popen[bytes]) -> None:
    """Poll until host:port accepts a connection while proc runs (bounded)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before listening on {host}")
        with contextlib.suppress(OSError), socket.create_connection((host, port), 0.5):
            return
        time.sleep(0.1)
    raise TimeoutError(f"nothing listens on {host}:{port} after {timeout_s} s")


def _tail(path: Path, n: int = 4000) -> str:
    with contextlib.suppress(OSError):
        return path.read_text(errors="replace")[-n:]
    return ""


# --------------------------------------------------------------------------- PostgreSQL


class Postgres:
    """A throw-away PostgreSQL cluster on 127.0.0.1:port, as the `postgres` user when root.

    initdb and postgres refuse to run as root, and the data folder must be reachable by the
    user they run as: it lives in its own 0755 folder under /tmp (pytest's folders are 0700).
    Durability is off (fsync, synchronous_commit, full_page_writes): it is a test database.
    """

    def __init__(self) -> None:
        self.port = free_port()
        self.base: Path | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"postgresql+psycopg2://postgres@127.0.0.1:{self.port}/postgres"

    def _as_postgres(self) -> list[str]:
        if os.geteuid() != 0:
            return []
        try:
            pwd.getpwnam("postgres")
        except KeyError as e:
            raise ServiceUnavailable("no `postgres` user (Debian's postgresql package creates it)") from e
        return ["runuser", "-u", "postgres", "--"]

    def start(self) -> None:
        bindir = postgres_bindir()
        prefix = self._as_postgres()
        self.base = Path(tempfile.mkdtemp(prefix="tfw-reapi-pg.", dir="/tmp"))
        self.base.chmod(0o755)
        data = self.base / "data"
        data.mkdir(mode=0o700)
        if prefix:
            pw = pwd.getpwnam("postgres")
            os.chown(data, pw.pw_uid, pw.pw_gid)
        log_path = self.base / "postgres.log"
        self._log = open(log_path, "ab")
        done = subprocess.run(
            [*prefix, str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
             "-E", "UTF8", "--locale=C", "--no-sync"],
            stdout=self._log, stderr=subprocess.STDOUT, timeout=120, check=False)
        if done.returncode != 0:
            raise ServiceUnavailable(f"initdb failed ({done.returncode}):\n{_tail(log_path)}")
        settings = {"listen_addresses": "127.0.0.1", "port": str(self.port),
                    "unix_socket_directories": str(data), "fsync": "off",
                    "synchronous_commit": "off", "full_page_writes": "off",
                    "max_connections": "200", "shared_buffers": "32MB"}
        argv = [*prefix, "timeout", "--foreground", str(MAX_LIFE_S), str(bindir / "postgres"),
                "-D", str(data)]
        for key, value in settings.items():
            argv += ["-c", f"{key}={value}"]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_for_port(self.port, timeout_s=60, proc=self.proc)
        except (RuntimeError, TimeoutError) as e:
            raise ServiceUnavailable(f"PostgreSQL did not start: {e}\n{_tail(log_path)}") from e

    def stop(self) -> None:
        # SIGINT: PostgreSQL's fast shutdown (the whole group: runuser, timeout, postgres)
        _stop_group(self.proc, signal.SIGINT, grace_s=20)
        self.proc = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if self.base is not None:
            shutil.rmtree(self.base, ignore_errors=True)
            self.base = None


# --------------------------------------------------------------------------- the service


def buildgrid_config(*, addresses: list[str], port: int, sql_url: str, cas_dir: Path,
                     instance: str = INSTANCE, cache_only_instance: str = CACHE_ONLY_INSTANCE,
                     keepalive_s: int = 60) -> str:
    """BuildGrid's YAML: Execution + Operations + Bots, CAS, ByteStream, ActionCache and
    Capabilities (implied) for `instance`; CAS, ByteStream and ActionCache only for
    `cache_only_instance`. The scheduler lives in PostgreSQL."""
    channels = "".join(f'  - !channel\n    address: "{a}:{port}"\n    insecure-mode: true\n'
                       for a in addresses)
    cache_services = "".join(f"      - !{kind}\n        {ref}\n" for kind, ref in (
        ("action-cache", "cache: *ac"), ("cas", "storage: *cas"), ("bytestream", "storage: *cas")))
    match = ", ".join(MATCH_KEYS)
    wildcard = ", ".join(WILDCARD_KEYS)
    return f"""\
description: tfwizard's REAPI test service (tests/reapi)
server:
{channels}grpc-server-options:
  grpc.so_reuseport: 0
authorization:
  method: none
monitoring:
  enabled: false
thread-pool-size: {THREAD_POOL_SIZE}
connections:
  - !sql-connection &sql
    connection-string: {sql_url}
    pool-size: 10
    max-overflow: 20
storages:
  - !disk-storage &cas
    path: {cas_dir}
caches:
  - !lru-action-cache &ac
    storage: *cas
    max-cached-refs: 100000
    allow-updates: true
    cache-failed-actions: false
schedulers:
  - !sql-scheduler &scheduler
    sql: *sql
    storage: *cas
    action-cache: *ac
    property-set: !dynamic-property-set
      match-property-keys: [{match}]
      wildcard-property-keys: [{wildcard}]
    bot-session-keepalive-timeout: {keepalive_s}
    max-execution-timeout: 3600
    poll-interval: 0.5
    assigners:
      - !priority-age-assigner
        count: 1
        interval: 0.25
instances:
  - name: {instance}
    description: remote execution in the image each action names
    services:
      - !execution
        scheduler: *scheduler
{cache_services}  - name: {cache_only_instance}
    description: a cache without execution
    services:
{cache_services}"""


@dataclass
class ReapiService:
    """BuildGrid + PostgreSQL + the test worker, controlled from tests (see the module doc)."""

    base: Path
    capacity: int = 2
    bridge: bool = True
    instance_name: str = INSTANCE
    cache_only_instance: str = CACHE_ONLY_INSTANCE
    times: SetupTimes = field(default_factory=SetupTimes)
    token: str = field(default_factory=lambda: uuid.uuid4().hex[:8])

    def __post_init__(self) -> None:
        self.base = Path(self.base)
        self.port = free_port()
        self.postgres = Postgres()
        self.python: Path | None = None
        self.bridge_ip: str | None = None
        self.config = self.base / "buildgrid.yml"
        self.server_log = self.base / "server.log"
        self.worker_stderr = self.base / "worker.log"
        self.worker_log = self.base / "worker-actions.jsonl"
        self.worker_status_file = self.base / "worker-status.json"
        self._server: subprocess.Popen[bytes] | None = None
        self._worker: subprocess.Popen[bytes] | None = None
        self._logs: list[IO[bytes]] = []

    # ---- addresses
    @property
    def endpoint(self) -> str:
        """grpc://127.0.0.1:PORT: for host processes and containers with network=host."""
        return f"grpc://127.0.0.1:{self.port}"

    @property
    def bridge_endpoint(self) -> str | None:
        """grpc://<bridge address>:PORT for containers on Docker's default bridge (or None)."""
        return f"grpc://{self.bridge_ip}:{self.port}" if self.bridge_ip else None

    def endpoint_for(self, network: str) -> str:
        """The endpoint a container on `network` ("host", "bridge"/"default") reaches."""
        if network == "host":
            return self.endpoint
        if network in ("bridge", "default") and self.bridge_endpoint:
            return self.bridge_endpoint
        raise ValueError(f"no endpoint of this service is reachable from network {network!r}")

    @staticmethod
    def image_property(image: str) -> str:
        """The exec property that names an action's image: container-image=docker://IMAGE."""
        return f"container-image=docker://{image}"

    # ---- life cycle
    def start(self) -> ReapiService:
        self.base.mkdir(parents=True, exist_ok=True)
        self.python, self.times.venv_s, self.times.venv_installed = ensure_venv()
        t0 = time.monotonic()
        self.postgres.start()
        self.times.postgres_s = time.monotonic() - t0
        t0 = time.monotonic()
        done = subprocess.run([str(self.bgd), "migrate", "apply", self.postgres.url],
                              capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0:
            raise ServiceUnavailable(f"bgd migrate apply failed:\n{done.stdout[-2000:]}{done.stderr[-3000:]}")
        self.times.migrate_s = time.monotonic() - t0
        t0 = time.monotonic()
        self.start_server()
        self.times.server_s = time.monotonic() - t0
        t0 = time.monotonic()
        self.start_worker()
        self.times.worker_s = time.monotonic() - t0
        return self

    def close(self) -> None:
        self.stop_worker()
        self.stop_server()
        self.postgres.stop()
        for f in self._logs:
            f.close()
        self._logs.clear()
        self._remove_containers()

    def __enter__(self) -> ReapiService:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def bgd(self) -> Path:
        assert self.python is not None, "start() first"
        return self.python.parent / "bgd"

    def _log_file(self, path: Path) -> IO[bytes]:
        f = open(path, "ab")
        self._logs.append(f)
        return f

    # ---- server
    @property
    def server_running(self) -> bool:
        return self._server is not None and self._server.poll() is None

    def start_server(self) -> None:
        """Start `bgd server start` (again: same port, database and CAS); wait until it listens
        on every address it was given."""
        if self.server_running:
            return
        for attempt in (1, 2, 3):
            # the bridge can vanish on these machines, and an address that is gone makes the
            # server exit: bind it only while it exists (as root: recreated), and the third
            # time, if the bridge keeps vanishing under us, loopback alone
            self.bridge_ip = ensure_bridge() if self.bridge and attempt < 3 else None
            addresses = ["127.0.0.1"] + ([self.bridge_ip] if self.bridge_ip else [])
            self.config.write_text(buildgrid_config(addresses=addresses, port=self.port,
                                                    sql_url=self.postgres.url,
                                                    cas_dir=self.base / "cas"), encoding="utf-8")
            log = self._log_file(self.server_log)
            self._server = subprocess.Popen(
                ["timeout", str(MAX_LIFE_S), str(self.bgd), "server", "start", str(self.config)],
                cwd=self.base, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)
            try:
                # BuildGrid binds one address after the other, and exits when a later one fails
                # after the first already listened: wait for all of them
                for address in addresses:
                    _wait_for_address(address, self.port, timeout_s=90, proc=self._server)
                return
            except (RuntimeError, TimeoutError) as e:
                self.stop_server(kill=True)
                if attempt == 3 or "Failed to bind" not in _tail(self.server_log):
                    raise ServiceUnavailable(
                        f"bgd server did not start: {e}\n{_tail(self.server_log)}") from e

    def stop_server(self, *, kill: bool = False) -> None:
        """Stop the server (SIGTERM; kill=True: SIGKILL, as a crash). The worker keeps retrying."""
        _stop_group(self._server, signal.SIGKILL if kill else signal.SIGTERM, grace_s=10)
        self._server = None

    # ---- worker
    @property
    def worker_running(self) -> bool:
        return self._worker is not None and self._worker.poll() is None

    def worker_status(self) -> dict[str, Any]:
        """The worker's status file: session, creates, updates, errors, leases started/completed."""
        with contextlib.suppress(OSError, ValueError):
            return dict(json.loads(self.worker_status_file.read_text()))
        return {}

    def start_worker(self, *, timeout_s: float = 60) -> None:
        """Start the worker and wait until it holds a bot session."""
        if self.worker_running:
            return
        assert self.python is not None
        with contextlib.suppress(FileNotFoundError):
            self.worker_status_file.unlink()
        argv = ["timeout", str(MAX_LIFE_S), str(self.python), str(WORKER),
                "--endpoint", f"127.0.0.1:{self.port}", "--instance", self.instance_name,
                "--work-dir", str(self.base / "worker"), "--actions-log", str(self.worker_log),
                "--status-file", str(self.worker_status_file), "--token", self.token,
                "--capacity", str(self.capacity), "--parent-pid", str(os.getpid())]
        for key, value in WORKER_PROPERTIES:
            argv += ["--property", key, value]
        self._worker = subprocess.Popen(argv, cwd=self.base, stdin=subprocess.DEVNULL,
                                        stdout=self._log_file(self.worker_stderr),
                                        stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.worker_status().get("session"):
                return
            if self._worker.poll() is not None:
                break
            time.sleep(0.1)
        raise ServiceUnavailable(f"the test worker holds no bot session:\n{_tail(self.worker_stderr)}")

    def stop_worker(self) -> None:
        _stop_group(self._worker, signal.SIGTERM, grace_s=15)
        self._worker = None

    def ensure_running(self) -> None:
        """Server and worker up, and talking (after a test stopped either)."""
        restarted = not self.server_running
        self.start_server()
        self.start_worker()
        if restarted:
            self.wait_worker_connected()

    def _remove_containers(self) -> None:
        with contextlib.suppress(Exception):
            import docker

            client = docker.from_env(timeout=60)
            try:
                for c in client.containers.list(
                        all=True, filters={"label": f"org.tfwizard.test.reapi={self.token}"}):
                    c.remove(force=True)
            finally:
                client.close()

    # ---- asking the service
    def capabilities(self, instance: str | None = None) -> dict[str, Any]:
        """GetCapabilities through BuildGrid's own client (`bgd capabilities`), as a dict.

        Raises RuntimeError with the client's message when the call fails (e.g. "Invalid
        instance name"). A reference for what a product preflight should see.
        """
        name = self.instance_name if instance is None else instance
        done = subprocess.run([str(self.bgd), "capabilities", "--remote",
                               f"http://127.0.0.1:{self.port}", "--instance-name", name],
                              capture_output=True, text=True, timeout=60, check=False)
        if done.returncode != 0:
            raise RuntimeError((done.stderr or done.stdout).strip()[-2000:])
        return dict(json.loads(done.stdout))

    def execute(self, argv: list[str], *, input_dir: Path | None = None, workdir: str = "",
                output_files: tuple[str, ...] = (), output_dirs: tuple[str, ...] = (),
                env: dict[str, str] | None = None, properties: dict[str, str] | None = None,
                timeout_s: float = 0, instance: str | None = None) -> dict[str, Any]:
        """One Execute through tests/reapi/client.py (no cache lookup, do_not_cache).

        Returns its JSON: status, exit_code, stdout, stderr, files, dirs (or "error" when the
        Execute call itself failed).
        """
        cmd = [str(self.python), str(CLIENT), "--endpoint", f"127.0.0.1:{self.port}",
               "--instance", self.instance_name if instance is None else instance]
        if input_dir is not None:
            cmd += ["--input-dir", str(input_dir)]
        if workdir:
            cmd += ["--workdir", workdir]
        for path in output_files:
            cmd += ["--output-file", path]
        for path in output_dirs:
            cmd += ["--output-dir", path]
        for key, value in (env or {}).items():
            cmd += ["--env", f"{key}={value}"]
        for key, value in (properties or {}).items():
            cmd += ["--property", f"{key}={value}"]
        if timeout_s:
            cmd += ["--timeout", str(timeout_s)]
        done = subprocess.run([*cmd, "--", *argv], capture_output=True, text=True, timeout=660,
                              check=False)
        if done.returncode not in (0, 2):
            raise RuntimeError(f"client.py failed ({done.returncode}):\n{done.stderr[-3000:]}")
        return dict(json.loads(done.stdout))

    def wait_worker_connected(self, timeout_s: float = 60.0) -> None:
        """Wait until the worker has had a successful call to the server from now on."""
        since = time.time()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if float(self.worker_status().get("last_ok") or 0) >= since:
                return
            time.sleep(0.2)
        raise TimeoutError(f"the worker did not reach the server in {timeout_s} s: "
                           f"{self.worker_status().get('last_error')}")

    # ---- what the worker ran
    def actions(self, since: int = 0) -> list[dict[str, Any]]:
        """The worker's records (one per action or refusal), from line `since` on."""
        with contextlib.suppress(FileNotFoundError):
            lines = self.worker_log.read_text(encoding="utf-8").splitlines()
            return [json.loads(line) for line in lines[since:] if line.strip()]
        return []

    def mark(self) -> int:
        """The number of records so far: pass it to actions(since=...) later."""
        return len(self.actions())
