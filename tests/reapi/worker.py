"""tfwizard's REAPI test worker: a Remote Workers API bot that runs actions with `docker exec`.

Test infrastructure only (never shipped). It runs with the BuildGrid virtualenv's Python,
whose wheel carries the generated `google.devtools.remoteworkers.v1test2` and
`build.bazel.remote.execution.v2` modules; `tests/reapi/service.py` starts it:

    .venv-buildgrid/bin/python tests/reapi/worker.py --endpoint 127.0.0.1:PORT \
        --instance NAME --work-dir DIR --actions-log FILE --status-file FILE [--capacity N]

What it does, written against the protos (not BuildGrid's or buildbox's code):

- one bot session (CreateBotSession), then UpdateBotSession in a loop. With free capacity
  the call long-polls (the server holds it until work arrives or most of its deadline has
  passed). At full capacity the server would answer at once, so the worker calls again only
  when an action ends or a keep-alive is due: it never spins. A long-poll in flight is
  cancelled when an action ends, so the result is reported at once.
- each lease's Action (payload, or its digest) names its image in the `container-image`
  platform property (`docker://NAME[:TAG][@sha256:DIGEST]`). Actions without one, or whose
  image is not on this machine, are refused with FAILED_PRECONDITION and a clear message.
- inputs are fetched from CAS into a per-action folder (a small local blob cache), which a
  long-lived, network-less container of the image sees through a bind mount; the command
  runs there with `docker exec` (docker SDK) as the worker's uid, after the output paths'
  parent folders were created. Outputs, stdout and stderr go to CAS; the lease completes with
  an ActionResult (BuildGrid's scheduler writes it to the action cache).
- every action (and every refusal) is one JSON line in --actions-log: lease, action digest,
  image, image id, argv, working directory, exit code, status, outputs, seconds.
- --status-file is rewritten after each call: session name, call counts, errors.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import signal
import stat
import sys
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import docker
import grpc
from buildgrid._protos.build.bazel.remote.execution.v2 import remote_execution_pb2 as re_pb2
from buildgrid._protos.build.bazel.remote.execution.v2 import (
    remote_execution_pb2_grpc as re_grpc,
)
from buildgrid._protos.google.bytestream import bytestream_pb2, bytestream_pb2_grpc
from buildgrid._protos.google.devtools.remoteworkers.v1test2 import (
    bots_pb2,
    bots_pb2_grpc,
    worker_pb2,
)
from buildgrid._protos.google.rpc import code_pb2, status_pb2
from google.protobuf import any_pb2

#: the platform property that names the action's image
IMAGE_PROPERTY = "container-image"
#: where the per-action folders appear inside the action containers
CONTAINER_ROOT = "/reapi"
#: label on every container this worker creates (value: its --token)
LABEL = "org.tfwizard.test.reapi"
#: blobs up to this size travel in batch calls; bigger ones through ByteStream
BATCH_BLOB_MAX = 1 << 20
BATCH_TOTAL_MAX = 2 << 20
CHUNK = 1 << 20
#: gRPC messages up to this size (the server's own limit is 4 MiB)
MAX_MESSAGE = 16 << 20


class Refusal(Exception):
    """The action cannot run here; the lease completes with this status code and message."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def log(msg: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} reapi-worker: {msg}", file=sys.stderr, flush=True)


def digest_of(data: bytes) -> re_pb2.Digest:
    return re_pb2.Digest(hash=hashlib.sha256(data).hexdigest(), size_bytes=len(data))


def digest_of_file(path: Path) -> re_pb2.Digest:
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
            size += len(chunk)
    return re_pb2.Digest(hash=h.hexdigest(), size_bytes=size)


def dkey(d: re_pb2.Digest) -> str:
    return f"{d.hash}/{d.size_bytes}"


def safe_relpath(rel: str, what: str) -> PurePosixPath:
    """A relative path that stays below its root (REAPI paths must; refuse the rest)."""
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts:
        raise Refusal(code_pb2.INVALID_ARGUMENT, f"{what} {rel!r} is not a relative path below the input root")
    return p


def parse_image(ref: str) -> tuple[str, str | None]:
    """'docker://name[:tag][@sha256:hex]' -> ('name[:tag]', 'sha256:hex' or None)."""
    ref = ref.strip()
    if ref.startswith("docker://"):
        ref = ref[len("docker://"):]
    name, sep, digest = ref.partition("@")
    if sep and not digest.startswith("sha256:"):
        raise Refusal(code_pb2.FAILED_PRECONDITION, f"{IMAGE_PROPERTY} {ref!r}: only @sha256: digests are accepted")
    return name, (digest if sep else None)


# --------------------------------------------------------------------------- CAS


class Cas:
    """CAS and ByteStream calls for one instance, with a local blob cache (files by hash)."""

    def __init__(self, channel: grpc.Channel, instance: str, cache_dir: Path) -> None:
        self.instance = instance
        self.cas = re_grpc.ContentAddressableStorageStub(channel)
        self.bytestream = bytestream_pb2_grpc.ByteStreamStub(channel)
        self.cache_dir = cache_dir
        cache_dir.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def _resource(self, tail: str) -> str:
        return f"{self.instance}/{tail}" if self.instance else tail

    # ---- reading
    def read_blobs(self, digests: Iterable[re_pb2.Digest]) -> dict[str, bytes]:
        """The blobs' bytes by hash (batched; big ones through ByteStream)."""
        wanted = {d.hash: d for d in digests}
        out: dict[str, bytes] = {}
        small = [d for d in wanted.values() if d.size_bytes <= BATCH_BLOB_MAX]
        for d in wanted.values():
            if d.size_bytes == 0:
                out[d.hash] = b""
            elif d.size_bytes > BATCH_BLOB_MAX:
                out[d.hash] = self._read_stream(d)
        for batch in _batches([d for d in small if d.size_bytes > 0]):
            resp = self.cas.BatchReadBlobs(
                re_pb2.BatchReadBlobsRequest(instance_name=self.instance, digests=batch), timeout=120)
            for r in resp.responses:
                if r.status.code != code_pb2.OK:
                    raise Refusal(code_pb2.FAILED_PRECONDITION,
                                  f"input blob {dkey(r.digest)} is missing from CAS: {r.status.message}")
                if hashlib.sha256(r.data).hexdigest() != r.digest.hash:
                    raise RuntimeError(f"CAS returned wrong bytes for {dkey(r.digest)}")
                out[r.digest.hash] = r.data
        return out

    def _read_stream(self, d: re_pb2.Digest) -> bytes:
        name = self._resource(f"blobs/{d.hash}/{d.size_bytes}")
        data = b"".join(r.data for r in self.bytestream.Read(
            bytestream_pb2.ReadRequest(resource_name=name), timeout=600))
        if hashlib.sha256(data).hexdigest() != d.hash:
            raise RuntimeError(f"ByteStream returned wrong bytes for {dkey(d)}")
        return data

    def message(self, d: re_pb2.Digest, cls: Any) -> Any:
        msg = cls()
        msg.ParseFromString(self.read_blobs([d])[d.hash])
        return msg

    def cached_path(self, d: re_pb2.Digest) -> Path:
        return self.cache_dir / d.hash

    def fill_cache(self, digests: Iterable[re_pb2.Digest]) -> None:
        """Make sure every blob is in the local cache."""
        missing = {d.hash: d for d in digests if not self.cached_path(d).exists()}
        if not missing:
            return
        for h, data in self.read_blobs(missing.values()).items():
            tmp = self.cache_dir / f".{h}.{uuid.uuid4().hex}"
            tmp.write_bytes(data)
            os.replace(tmp, self.cache_dir / h)

    # ---- writing
    def upload(self, blobs: dict[str, tuple[re_pb2.Digest, bytes | Path]]) -> None:
        """Upload what CAS lacks of `blobs` (hash -> (digest, bytes or a file's path))."""
        blobs = {h: v for h, v in blobs.items() if v[0].size_bytes > 0}
        if not blobs:
            return
        missing: set[str] = set()
        items = list(blobs.values())
        for i in range(0, len(items), 1000):
            resp = self.cas.FindMissingBlobs(re_pb2.FindMissingBlobsRequest(
                instance_name=self.instance, blob_digests=[d for d, _ in items[i:i + 1000]]),
                timeout=60)
            missing.update(d.hash for d in resp.missing_blob_digests)
        todo = [blobs[h] for h in missing]
        small = [(d, src) for d, src in todo if d.size_bytes <= BATCH_BLOB_MAX]
        for d, src in todo:
            if d.size_bytes > BATCH_BLOB_MAX:
                self._write_stream(d, src)
        for batch in _batches([d for d, _ in small]):
            by_hash = {d.hash: src for d, src in small}
            reqs = [re_pb2.BatchUpdateBlobsRequest.Request(digest=d, data=_bytes(by_hash[d.hash]))
                    for d in batch]
            resp = self.cas.BatchUpdateBlobs(
                re_pb2.BatchUpdateBlobsRequest(instance_name=self.instance, requests=reqs), timeout=120)
            bad = [r for r in resp.responses if r.status.code != code_pb2.OK]
            if bad:
                raise RuntimeError(f"CAS refused {dkey(bad[0].digest)}: {bad[0].status.message}")

    def _write_stream(self, d: re_pb2.Digest, src: bytes | Path) -> None:
        name = self._resource(f"uploads/{uuid.uuid4()}/blobs/{d.hash}/{d.size_bytes}")

        def requests() -> Iterator[bytestream_pb2.WriteRequest]:
            offset = 0
            with _open(src) as f:
                while True:
                    chunk = f.read(CHUNK)
                    last = offset + len(chunk) >= d.size_bytes
                    yield bytestream_pb2.WriteRequest(resource_name=name if offset == 0 else "",
                                                      write_offset=offset, finish_write=last,
                                                      data=chunk)
                    offset += len(chunk)
                    if last:
                        return

        resp = self.bytestream.Write(requests(), timeout=600)
        if resp.committed_size != d.size_bytes:
            raise RuntimeError(f"ByteStream committed {resp.committed_size} of {d.size_bytes} bytes")


def _batches(digests: list[re_pb2.Digest]) -> Iterator[list[re_pb2.Digest]]:
    batch: list[re_pb2.Digest] = []
    total = 0
    for d in digests:
        if batch and total + d.size_bytes > BATCH_TOTAL_MAX:
            yield batch
            batch, total = [], 0
        batch.append(d)
        total += d.size_bytes
    if batch:
        yield batch


def _bytes(src: bytes | Path) -> bytes:
    return src if isinstance(src, bytes) else Path(src).read_bytes()


@contextlib.contextmanager
def _open(src: bytes | Path) -> Iterator[Any]:
    import io

    if isinstance(src, bytes):
        yield io.BytesIO(src)
    else:
        with open(src, "rb") as f:
            yield f


# --------------------------------------------------------------------------- docker


class Containers:
    """One long-lived, network-less container per image, seeing the action folders."""

    def __init__(self, client: docker.DockerClient, actions_dir: Path, token: str) -> None:
        self.client = client
        self.api = client.api
        self.actions_dir = actions_dir
        self.token = token
        self._by_image: dict[str, str] = {}
        self._lock = threading.Lock()
        self.user = f"{os.getuid()}:{os.getgid()}"

    def resolve(self, ref: str) -> str:
        """The local image id the property names; Refusal when this machine has no such image."""
        name, digest = parse_image(ref)
        candidates = []
        if digest:
            repo = name.rsplit(":", 1)[0] if ":" in name.rsplit("/", 1)[-1] else name
            candidates += [f"{repo}@{digest}", digest]
        else:
            candidates.append(name)
        for candidate in candidates:
            try:
                image = self.client.images.get(candidate)
            except docker.errors.ImageNotFound:
                continue
            except (docker.errors.DockerException, ValueError) as e:  # e.g. an invalid reference
                raise Refusal(code_pb2.FAILED_PRECONDITION,
                              f"{IMAGE_PROPERTY} {ref!r} is not a usable image reference: {e}") from e
            if digest and candidate == digest and name:
                tags = image.tags or []
                wanted = name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"
                if wanted not in tags and not any(t.rsplit(":", 1)[0] == name for t in tags):
                    raise Refusal(code_pb2.FAILED_PRECONDITION,
                                  f"{IMAGE_PROPERTY} {ref!r}: image {digest} is not tagged {name}")
            return str(image.id)
        raise Refusal(code_pb2.FAILED_PRECONDITION,
                      f"{IMAGE_PROPERTY} {ref!r} is not present on this worker "
                      "(it never pulls: load or build the image on the worker's machine)")

    def container_for(self, image_id: str) -> str:
        with self._lock:
            if image_id in self._by_image:
                return self._by_image[image_id]
            name = f"tfw-reapi-{self.token}-{image_id.split(':')[-1][:12]}"
            with contextlib.suppress(docker.errors.NotFound):
                self.client.containers.get(name).remove(force=True)
            container = self.client.containers.run(
                image_id, ["2147483647"], entrypoint=["sleep"], name=name, detach=True,
                init=True, network_mode="none", working_dir="/",
                labels={LABEL: self.token, "org.tfwizard.test": "1"},
                volumes={str(self.actions_dir): {"bind": CONTAINER_ROOT, "mode": "rw"}})
            self._by_image[image_id] = container.id
            log(f"started container {name} for {image_id}")
            return str(container.id)

    def _exec_create(self, image_id: str, argv: list[str], env: dict[str, str], workdir: str) -> str:
        for attempt in (1, 2):
            container = self.container_for(image_id)
            try:
                return str(self.api.exec_create(container, argv, environment=env, workdir=workdir,
                                                user=self.user, stdout=True, stderr=True)["Id"])
            except docker.errors.APIError as e:
                if attempt == 2:
                    raise
                # the container is gone or stopped (nothing ran yet): a new one, once
                log(f"container for {image_id} unusable ({e.explanation}): starting a new one")
                with self._lock:
                    self._by_image.pop(image_id, None)
        raise AssertionError("unreachable")

    def run(self, image_id: str, argv: list[str], env: dict[str, str], workdir: str,
            stdout: Path, stderr: Path, timeout_s: float | None) -> tuple[int, bool]:
        """Run argv in the image's container; (exit code, timed out)."""
        exec_id = self._exec_create(image_id, argv, env, workdir)
        stream = self.api.exec_start(exec_id, stream=True, demux=True)
        timed_out = threading.Event()
        timer = None
        if timeout_s:
            def kill() -> None:
                timed_out.set()
                # the host pid of the exec'd process (0 until it has started: ask now)
                _kill_tree(int(self.api.exec_inspect(exec_id).get("Pid") or 0))

            timer = threading.Timer(timeout_s, kill)
            timer.daemon = True
            timer.start()
        try:
            with open(stdout, "wb") as out, open(stderr, "wb") as err:
                for o, e in stream:
                    if o:
                        out.write(o)
                    if e:
                        err.write(e)
        finally:
            if timer is not None:
                timer.cancel()
        for _ in range(100):
            info = self.api.exec_inspect(exec_id)
            if not info.get("Running"):
                return int(info.get("ExitCode") or 0), timed_out.is_set()
            time.sleep(0.05)
        return -1, timed_out.is_set()

    def remove_all(self) -> None:
        for c in self.client.containers.list(all=True, filters={"label": f"{LABEL}={self.token}"}):
            with contextlib.suppress(docker.errors.APIError):
                c.remove(force=True)


def _kill_tree(pid: int) -> None:
    """SIGKILL a host process and its descendants (a timed-out action)."""
    if pid <= 0:
        return
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
    todo, seen = [pid], []
    while todo:
        p = todo.pop()
        seen.append(p)
        todo.extend(children.get(p, []))
    for p in seen:
        with contextlib.suppress(OSError):
            os.kill(p, signal.SIGKILL)


# --------------------------------------------------------------------------- one action


@dataclass
class Lease:
    id: str
    payload: Any
    state: int = bots_pb2.LeaseState.ACTIVE
    status: status_pb2.Status | None = None
    result: re_pb2.ActionResult | None = None
    cancelled: bool = False
    started: float = field(default_factory=time.monotonic)


def _timestamp(msg: Any, when: float) -> None:
    msg.FromNanoseconds(int(when * 1e9))


class Executor:
    """Runs one Action: inputs from CAS, `docker exec`, outputs to CAS."""

    def __init__(self, cas: Cas, containers: Containers, actions_dir: Path, bot_id: str,
                 actions_log: Path, keep: bool) -> None:
        self.cas = cas
        self.containers = containers
        self.actions_dir = actions_dir
        self.bot_id = bot_id
        self.actions_log = actions_log
        self.keep = keep
        self._log_lock = threading.Lock()
        self._n = 0
        self._n_lock = threading.Lock()

    def record(self, entry: dict[str, Any]) -> None:
        entry = {"time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **entry}
        with self._log_lock, open(self.actions_log, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry, sort_keys=True) + "\n")

    def execute(self, lease: Lease) -> tuple[status_pb2.Status, re_pb2.ActionResult | None]:
        entry: dict[str, Any] = {"lease": lease.id, "bot": self.bot_id}
        t0 = time.time()
        try:
            status, result = self._execute(lease, entry)
        except Refusal as r:
            status, result = status_pb2.Status(code=r.code, message=str(r)), None
        except Exception as e:  # infrastructure trouble: INTERNAL (the scheduler retries it)
            log(f"lease {lease.id}: {type(e).__name__}: {e}")
            status, result = status_pb2.Status(code=code_pb2.INTERNAL,
                                               message=f"test worker: {type(e).__name__}: {e}"), None
        entry.update(status=code_pb2.Code.Name(status.code), message=status.message,
                     seconds=round(time.time() - t0, 3))
        if result is not None:
            entry["exit_code"] = result.exit_code
        self.record(entry)
        return status, result

    def _folder(self) -> Path:
        with self._n_lock:
            self._n += 1
            n = self._n
        path = self.actions_dir / f"a{n}"
        if path.exists():
            _rmtree(path)
        path.mkdir(parents=True)
        return path

    def _execute(self, lease: Lease, entry: dict[str, Any]
                 ) -> tuple[status_pb2.Status, re_pb2.ActionResult]:
        meta = re_pb2.ExecutedActionMetadata(worker=self.bot_id)
        _timestamp(meta.worker_start_timestamp, time.time())
        action = re_pb2.Action()
        if lease.payload.Is(re_pb2.Action.DESCRIPTOR):
            lease.payload.Unpack(action)
            entry["action"] = dkey(digest_of(action.SerializeToString()))
        else:
            action_digest = re_pb2.Digest()
            lease.payload.Unpack(action_digest)
            entry["action"] = dkey(action_digest)
            action = self.cas.message(action_digest, re_pb2.Action)
        command = self.cas.message(action.command_digest, re_pb2.Command)
        entry["argv"] = list(command.arguments)
        entry["workdir"] = command.working_directory
        platform = action.platform if action.platform.properties else command.platform
        props: dict[str, list[str]] = {}
        for p in platform.properties:
            props.setdefault(p.name, []).append(p.value)
        entry["platform"] = props
        images = props.get(IMAGE_PROPERTY, [])
        if not images:
            raise Refusal(code_pb2.FAILED_PRECONDITION,
                          f"the action names no {IMAGE_PROPERTY} platform property; this worker runs "
                          "each action only in the image the action names (Bazel: "
                          f"--remote_default_exec_properties={IMAGE_PROPERTY}=docker://IMAGE)")
        if len(images) > 1:
            raise Refusal(code_pb2.FAILED_PRECONDITION,
                          f"the action names {len(images)} {IMAGE_PROPERTY} values: {images}")
        entry["image"] = images[0].strip().removeprefix("docker://")
        image_id = self.containers.resolve(images[0])
        entry["image_id"] = image_id
        if not command.arguments:
            raise Refusal(code_pb2.INVALID_ARGUMENT, "the command has no arguments")

        folder = self._folder()
        entry["folder"] = folder.name
        try:
            root = folder / "root"
            _timestamp(meta.input_fetch_start_timestamp, time.time())
            self._materialise(action.input_root_digest, root)
            _timestamp(meta.input_fetch_completed_timestamp, time.time())

            workdir_rel = safe_relpath(command.working_directory or ".", "working directory")
            workdir = root / workdir_rel
            workdir.mkdir(parents=True, exist_ok=True)
            outputs = list(command.output_paths) or [*command.output_files, *command.output_directories]
            for rel in outputs:
                (workdir / safe_relpath(rel, "output path")).parent.mkdir(parents=True, exist_ok=True)

            env = {v.name: v.value for v in command.environment_variables}
            timeout = action.timeout.ToTimedelta().total_seconds() if action.HasField("timeout") else None
            stdout, stderr = folder / "stdout", folder / "stderr"
            _timestamp(meta.execution_start_timestamp, time.time())
            exit_code, timed_out = self.containers.run(
                image_id, list(command.arguments), env,
                str(PurePosixPath(CONTAINER_ROOT) / folder.name / "root" / workdir_rel),
                stdout, stderr, timeout or None)
            _timestamp(meta.execution_completed_timestamp, time.time())

            _timestamp(meta.output_upload_start_timestamp, time.time())
            result = re_pb2.ActionResult(exit_code=exit_code)
            blobs: dict[str, tuple[re_pb2.Digest, bytes | Path]] = {}
            for path, target in ((stdout, result.stdout_digest), (stderr, result.stderr_digest)):
                if path.stat().st_size:
                    d = digest_of_file(path)
                    target.CopyFrom(d)
                    blobs[d.hash] = (d, path)
            entry["outputs"] = self._collect_outputs(command, workdir, result, blobs)
            self.cas.upload(blobs)
            _timestamp(meta.output_upload_completed_timestamp, time.time())
            _timestamp(meta.worker_completed_timestamp, time.time())
            result.execution_metadata.CopyFrom(meta)
            if timed_out:
                return status_pb2.Status(code=code_pb2.DEADLINE_EXCEEDED,
                                         message=f"the action ran past its timeout ({timeout} s)"), result
            return status_pb2.Status(code=code_pb2.OK), result
        finally:
            if not self.keep:
                _rmtree(folder)

    def _materialise(self, root_digest: re_pb2.Digest, root: Path) -> None:
        """Fetch the input tree (directories level by level, files into the cache) and lay it out."""
        dirs: dict[str, re_pb2.Directory] = {}
        level = [root_digest]
        while level:
            todo = [d for d in {d.hash: d for d in level}.values() if d.hash not in dirs]
            if not todo:
                break
            for h, data in self.cas.read_blobs(todo).items():
                msg = re_pb2.Directory()
                msg.ParseFromString(data)
                dirs[h] = msg
            level = [c.digest for d in todo for c in dirs[d.hash].directories]
        files = [f.digest for d in dirs.values() for f in d.files if f.digest.size_bytes > 0]
        self.cas.fill_cache(files)

        def lay(digest: re_pb2.Digest, path: Path) -> None:
            path.mkdir(parents=True, exist_ok=True)
            node = dirs[digest.hash]
            for f in node.files:
                dest = path / safe_relpath(f.name, "input file")
                if f.digest.size_bytes:
                    with open(self.cas.cached_path(f.digest), "rb") as src, open(dest, "wb") as out:
                        while chunk := src.read(CHUNK):
                            out.write(chunk)
                else:
                    dest.write_bytes(b"")
                dest.chmod(0o755 if f.is_executable else 0o644)
            for s in node.symlinks:
                os.symlink(s.target, path / safe_relpath(s.name, "input symlink"))
            for d in node.directories:
                lay(d.digest, path / safe_relpath(d.name, "input directory"))

        lay(root_digest, root)

    def _collect_outputs(self, command: re_pb2.Command, workdir: Path, result: re_pb2.ActionResult,
                         blobs: dict[str, tuple[re_pb2.Digest, bytes | Path]]) -> list[str]:
        if command.output_paths:
            paths = [(p, None) for p in command.output_paths]
        else:
            paths = [(p, False) for p in command.output_files] + [
                (p, True) for p in command.output_directories]
        found = []
        for rel, want_dir in paths:
            path = workdir / rel
            if not path.exists():
                continue
            is_dir = path.is_dir()
            if want_dir is not None and is_dir != want_dir:
                continue  # REAPI: a path of the wrong kind is not an output
            if is_dir:
                tree = re_pb2.Tree()
                tree.root.CopyFrom(self._directory(path, tree, blobs))
                data = tree.SerializeToString()
                d = digest_of(data)
                blobs[d.hash] = (d, data)
                result.output_directories.add(path=rel, tree_digest=d)
            else:
                d = digest_of_file(path)
                blobs[d.hash] = (d, path)
                result.output_files.add(path=rel, digest=d, is_executable=_executable(path))
            found.append(rel)
        return found

    def _directory(self, path: Path, tree: re_pb2.Tree,
                   blobs: dict[str, tuple[re_pb2.Digest, bytes | Path]]) -> re_pb2.Directory:
        node = re_pb2.Directory()
        for child in sorted(path.iterdir(), key=lambda p: p.name):
            if child.is_symlink():
                node.symlinks.add(name=child.name, target=os.readlink(child))
            elif child.is_dir():
                sub = self._directory(child, tree, blobs)
                data = sub.SerializeToString()
                node.directories.add(name=child.name, digest=digest_of(data))
                tree.children.append(sub)
            elif child.is_file():
                d = digest_of_file(child)
                blobs[d.hash] = (d, child)
                node.files.add(name=child.name, digest=d, is_executable=_executable(child))
        return node


def _executable(path: Path) -> bool:
    return bool(path.stat().st_mode & stat.S_IXUSR)


def _rmtree(path: Path) -> None:
    import shutil

    def make_writable(func: Any, p: str, _exc: Any) -> None:
        with contextlib.suppress(OSError):
            os.chmod(p, 0o700)
            func(p)

    shutil.rmtree(path, onerror=make_writable)


# --------------------------------------------------------------------------- the bot


class Bot:
    """One bot session and its UpdateBotSession loop."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.instance = args.instance
        self.capacity = args.capacity
        self.bot_id = args.bot_id or f"tfw-reapi-{args.token}"
        work = Path(args.work_dir)
        actions_dir = work / "actions"
        actions_dir.mkdir(parents=True, exist_ok=True)
        self.channel = grpc.insecure_channel(args.endpoint, options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE),
            ("grpc.max_send_message_length", MAX_MESSAGE),
            # gRPC's own reconnect backoff grows to 2 minutes: a server that restarts must be
            # seen again within seconds
            ("grpc.initial_reconnect_backoff_ms", 250),
            ("grpc.min_reconnect_backoff_ms", 250),
            ("grpc.max_reconnect_backoff_ms", 2000)])
        self.bots = bots_pb2_grpc.BotsStub(self.channel)
        self.docker = docker.from_env(timeout=120)
        self.containers = Containers(self.docker, actions_dir, args.token)
        self.executor = Executor(Cas(self.channel, self.instance, work / "blobs"), self.containers,
                                 actions_dir, self.bot_id, Path(args.actions_log), args.keep)
        self.pool = ThreadPoolExecutor(max_workers=self.capacity, thread_name_prefix="action")
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.session: bots_pb2.BotSession | None = None
        self.running: dict[str, Lease] = {}
        self.done: dict[str, Lease] = {}  # completed, not yet acknowledged by the server
        self.stats: dict[str, Any] = {"pid": os.getpid(), "bot_id": self.bot_id, "creates": 0,
                                      "updates": 0, "long_polls_cancelled": 0, "errors": 0,
                                      "leases_started": 0, "leases_completed": 0,
                                      "last_error": "", "session": "", "last_ok": 0.0}
        self.status_file = Path(args.status_file)

    # ---- status
    def write_status(self) -> None:
        tmp = self.status_file.with_suffix(".tmp")
        with self.lock:
            data = dict(self.stats, running=len(self.running), time=time.time())
        tmp.write_text(json.dumps(data, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self.status_file)

    # ---- the session message
    def _worker(self) -> worker_pb2.Worker:
        w = worker_pb2.Worker()
        w.configs.add(key="capacity", value=str(self.capacity))
        device = w.devices.add(handle=self.bot_id)
        for key, value in self.args.property:
            device.properties.add(key=key, value=value)
        return w

    def _session_message(self) -> bots_pb2.BotSession:
        assert self.session is not None
        s = bots_pb2.BotSession(name=self.session.name, bot_id=self.bot_id, status=bots_pb2.BotStatus.OK,
                                version=self.session.version)
        s.worker.CopyFrom(self._worker())
        for lease in self.running.values():
            s.leases.add(id=lease.id, state=bots_pb2.LeaseState.ACTIVE)
        for lease in self.done.values():
            pb = s.leases.add(id=lease.id, state=bots_pb2.LeaseState.COMPLETED)
            assert lease.status is not None
            pb.status.CopyFrom(lease.status)
            if lease.result is not None:
                pb.result.Pack(lease.result)
        return s

    # ---- leases
    def _start(self, pb: bots_pb2.Lease) -> None:
        payload = any_pb2.Any()
        payload.CopyFrom(pb.payload)
        lease = Lease(id=pb.id, payload=payload)
        self.running[lease.id] = lease
        self.stats["leases_started"] += 1
        self.pool.submit(self._run, lease)

    def _run(self, lease: Lease) -> None:
        status, result = self.executor.execute(lease)
        with self.lock:
            self.running.pop(lease.id, None)
            if not lease.cancelled:
                lease.status, lease.result = status, result
                lease.state = bots_pb2.LeaseState.COMPLETED
                self.done[lease.id] = lease
                self.stats["leases_completed"] += 1
        self.wake.set()

    def _merge(self, answer: bots_pb2.BotSession, sent: dict[str, int]) -> bool:
        """Take the server's view of the session; True when new work arrived.

        `sent` maps the lease ids of the request to the states it reported them in.
        """
        new_work = False
        with self.lock:
            self.session = answer
            for lid, state in sent.items():
                if state == bots_pb2.LeaseState.COMPLETED:
                    self.done.pop(lid, None)  # the server has the result
            listed = {pb.id for pb in answer.leases}
            for pb in answer.leases:
                if pb.state == bots_pb2.LeaseState.CANCELLED:
                    lease = self.running.pop(pb.id, None)
                    if lease is not None:
                        lease.cancelled = True
                elif (pb.id not in self.running and pb.id not in self.done
                      and pb.state in (bots_pb2.LeaseState.PENDING, bots_pb2.LeaseState.ACTIVE)
                      # a lease without payload is our own ACTIVE lease echoed back, not work
                      and pb.payload.type_url):
                    self._start(pb)
                    new_work = True
            for lid, state in sent.items():
                if state == bots_pb2.LeaseState.ACTIVE and lid in self.running and lid not in listed:
                    self.running.pop(lid).cancelled = True  # the server dropped it (cancelled)
        return new_work

    # ---- the loop
    def _create(self) -> None:
        s = bots_pb2.BotSession(bot_id=self.bot_id, status=bots_pb2.BotStatus.OK)
        s.worker.CopyFrom(self._worker())
        # a short deadline: BuildGrid then answers at once instead of long-polling for work
        answer = self.bots.CreateBotSession(
            bots_pb2.CreateBotSessionRequest(parent=self.instance, bot_session=s), timeout=3.5)
        with self.lock:
            self.stats["creates"] += 1
            self.stats["session"] = answer.name
            self.stats["last_ok"] = time.time()
            # leases of an earlier session of this bot are gone; so are their results
            for lease in self.running.values():
                lease.cancelled = True
            self.running.clear()
            self.done.clear()
        self._merge(answer, {})
        log(f"bot session {answer.name} (capacity {self.capacity})")

    def loop(self) -> None:
        backoff = 0.2
        last_contact = 0.0
        quick_empty = 0
        while not self.stopping.is_set():
            try:
                if self.session is None:
                    self._create()
                    last_contact = time.monotonic()
                    backoff = 0.2
                    self.write_status()
                    continue
                with self.lock:
                    news = bool(self.done)
                    full = len(self.running) >= self.capacity
                    self.wake.clear()
                since = time.monotonic() - last_contact
                if not news and full and since < self.args.keepalive:
                    # the server would answer at once: wait for an action to end or the keep-alive
                    self.wake.wait(self.args.keepalive - since)
                    continue
                if not news and quick_empty >= 2:
                    # a server that keeps answering at once must not make us spin
                    self.wake.wait(1.0)
                    quick_empty = 0
                    continue
                with self.lock:
                    request = bots_pb2.UpdateBotSessionRequest(name=self.session.name,
                                                               bot_session=self._session_message())
                    sent = {lease.id: lease.state for lease in request.bot_session.leases}
                    self.stats["updates"] += 1
                t0 = time.monotonic()
                future = self.bots.UpdateBotSession.future(request, timeout=self.args.poll)
                future.add_done_callback(lambda _f: self.wake.set())
                if not news:
                    # a long-poll: an action that ends meanwhile cancels it, to report at once
                    while not future.done():
                        self.wake.wait()
                        self.wake.clear()
                        if self.stopping.is_set():
                            future.cancel()
                            break
                        with self.lock:
                            if self.done and not future.done():
                                future.cancel()
                                self.stats["long_polls_cancelled"] += 1
                                break
                try:
                    answer = future.result()
                except grpc.FutureCancelledError:
                    continue
                last_contact = time.monotonic()
                new_work = self._merge(answer, sent)
                quick = time.monotonic() - t0 < 0.5
                quick_empty = quick_empty + 1 if (quick and not new_work and not news) else 0
                backoff = 0.2
                with self.lock:
                    self.stats["last_ok"] = time.time()
                self.write_status()
            except grpc.RpcError as e:
                code = e.code() if hasattr(e, "code") else None
                if code == grpc.StatusCode.CANCELLED and self.stopping.is_set():
                    break
                with self.lock:
                    self.stats["errors"] += 1
                    self.stats["last_error"] = f"{code}: {e.details() if hasattr(e, 'details') else e}"
                if code not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED,
                                grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.CANCELLED):
                    log(f"session error {self.stats['last_error']}: new session")
                    self.session = None
                self.write_status()
                self.stopping.wait(backoff)
                backoff = min(backoff * 2, 2.0)

    def stop(self) -> None:
        self.stopping.set()
        self.wake.set()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--endpoint", required=True, help="host:port of the Bots service")
    p.add_argument("--instance", required=True)
    p.add_argument("--work-dir", required=True)
    p.add_argument("--actions-log", required=True)
    p.add_argument("--status-file", required=True)
    p.add_argument("--token", default=uuid.uuid4().hex[:8], help="labels this worker's containers")
    p.add_argument("--bot-id", default="")
    p.add_argument("--capacity", type=int, default=2)
    p.add_argument("--property", nargs=2, action="append", metavar=("KEY", "VALUE"),
                   default=[], help="a worker property (OSFamily, ISA, ...)")
    p.add_argument("--poll", type=float, default=20.0, help="long-poll deadline, seconds")
    p.add_argument("--keepalive", type=float, default=15.0,
                   help="call at least this often while busy, seconds")
    p.add_argument("--parent-pid", type=int, default=0, help="exit when this process is gone")
    p.add_argument("--keep", action="store_true", help="keep the action folders")
    args = p.parse_args(argv)

    bot = Bot(args)

    def on_signal(_sig: int, _frame: Any) -> None:
        bot.stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if args.parent_pid:
        def watch_parent() -> None:
            while not bot.stopping.wait(1.0):
                if not Path(f"/proc/{args.parent_pid}").exists():
                    log("parent process is gone: stopping")
                    bot.stop()

        threading.Thread(target=watch_parent, daemon=True).start()
    try:
        bot.loop()
    finally:
        bot.pool.shutdown(wait=False, cancel_futures=True)
        bot.containers.remove_all()
        bot.write_status()
        log("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
