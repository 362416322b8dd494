"""The small real test world: local Docker images and a TensorFlow-shaped Bazel workspace.

Tests import this module (``from tests import world`` or ``import world`` with tests/ on
sys.path). It holds no fixtures; wrap these helpers in fixtures as you need them.

    IMAGE, BUSYBOX              the two local images (built by tests/images/build_images.sh)
    FIXTURE_WORKSPACE           tests/fixtures/tf_workspace (never build in it: copy it)
    docker_available()          True when a Docker engine answers
    require_docker()            pytest.skip without Docker; pytest.fail in CI (CI=true)
    ensure_images()             ensure_docker.sh + build_images.sh, once per session
    copy_workspace(tmp_path)    a fresh copy of the fixture workspace; returns its path
    build_cuda_stub_wheel(dest) the offline stand-in for NVIDIA's pip libraries; its path

plus a few conveniences built on them: run_in_image(), run_configure(), bazel_build(), and
long_lived() for a container that stays up for several commands (docker exec).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import threading
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

TESTS_DIR = Path(__file__).resolve().parent
IMAGES_DIR = TESTS_DIR / "images"
FIXTURE_WORKSPACE = TESTS_DIR / "fixtures" / "tf_workspace"
CUDA_STUB_DIR = TESTS_DIR / "fixtures" / "cuda_stub"

IMAGE = "tfwizard-test/bazel:bookworm"
BUSYBOX = "tfwizard-test/busybox:latest"
CONTENT_LABEL = "org.tfwizard.test.content"

#: Where the workspace is mounted in IMAGE (its WORKDIR).
CONTAINER_WORKSPACE = "/src"
#: Where a disk-cache volume is mounted in IMAGE (mode 1777 in the image).
CONTAINER_CACHE = "/cache"
WHEEL_TARGET = "//tensorflow/tools/pip_package:wheel"
WHEEL_HOUSE = "bazel-bin/tensorflow/tools/pip_package/wheel_house"
#: Flags every non-tty Bazel run in the test world should carry.
BAZEL_UI_FLAGS = ("--curses=no", "--color=no", "--show_progress_rate_limit=1")

#: configure.py answers for a CPU build with gcc that never prompt.
CPU_GCC_ANSWERS = {
    "PYTHON_BIN_PATH": "/usr/bin/python3",
    "USE_DEFAULT_PYTHON_LIB_PATH": "1",
    "TF_SET_ANDROID_WORKSPACE": "0",
    "TF_NEED_ROCM": "0",
    "TF_NEED_CUDA": "0",
    "TF_NEED_CLANG": "0",
    "CC_OPT_FLAGS": "-Wno-sign-compare",
}

_lock = threading.Lock()
_images_ready = False
_docker_seen = False


def in_ci() -> bool:
    """True when the CI variable says so (GitHub and most CIs set CI=true)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def docker_available() -> bool:
    """True when a Docker engine answers through the docker SDK (default socket / DOCKER_HOST)."""
    global _docker_seen
    if _docker_seen:
        return True
    try:
        import docker

        client = docker.from_env(timeout=10)
        try:
            client.ping()
        finally:
            client.close()
    except Exception:
        return False
    _docker_seen = True
    return True


def _run_script(name: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(IMAGES_DIR / name)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
    )


def _unavailable(reason: str) -> None:
    if in_ci():
        pytest.fail(f"{reason} (CI is set: Docker tests must run in CI)", pytrace=False)
    pytest.skip(reason)


def require_docker() -> None:
    """Skip the calling test without a Docker engine; fail it instead when CI is set.

    In CI, as root, it first tries tests/images/ensure_docker.sh (starts or installs dockerd).
    """
    if docker_available():
        return
    if in_ci() and os.geteuid() == 0:
        proc = _run_script("ensure_docker.sh", timeout=600)
        if proc.returncode == 0 and docker_available():
            return
        _unavailable("no Docker engine, and ensure_docker.sh failed:\n" + proc.stdout[-3000:])
    _unavailable("no Docker engine answers (run tests/images/ensure_docker.sh as root)")


def _image_labels(name: str) -> dict[str, str] | None:
    import docker

    client = docker.from_env(timeout=30)
    try:
        image = client.images.get(name)
    except docker.errors.ImageNotFound:
        return None
    finally:
        client.close()
    return dict(image.labels or {})


def ensure_images() -> None:
    """Make sure IMAGE and BUSYBOX exist and are current (once per test session).

    As root it runs ensure_docker.sh and build_images.sh (a second or so when the images are
    current, about a minute from scratch). Not as root it only checks that both images exist.
    Skips (or, in CI, fails) the calling test when that is not possible.
    """
    global _images_ready
    with _lock:
        if _images_ready:
            return
        require_docker()
        if os.geteuid() == 0:
            proc = _run_script("build_images.sh", timeout=1800)
            if proc.returncode != 0:
                pytest.fail(
                    "tests/images/build_images.sh failed:\n" + proc.stdout[-6000:], pytrace=False
                )
        else:
            missing = [n for n in (IMAGE, BUSYBOX) if _image_labels(n) is None]
            if missing:
                _unavailable(
                    f"missing test images {missing}; run tests/images/build_images.sh as root"
                )
        _images_ready = True


def copy_workspace(tmp_path: Path, *, version: str = "") -> Path:
    """A fresh copy of the fixture workspace under tmp_path (builds must not write the repo).

    `version`: the copy says it is that TensorFlow version, where TensorFlow's source does
    (tensorflow/tf_version.bzl; the fixture's own is 2.18.0), as a release tag's source
    says its release: the build's wheel check holds a release build's wheel to it.
    """
    dest = Path(tmp_path) / "tf_workspace"
    shutil.copytree(
        FIXTURE_WORKSPACE,
        dest,
        symlinks=True,
        ignore=shutil.ignore_patterns(
            "bazel-*", ".tf_configure.bazelrc", "python_bin_path.sh", "__pycache__", "*.whl"
        ),
    )
    if version:
        path = dest / "tensorflow" / "tf_version.bzl"
        text = path.read_text("utf-8")
        assert 'TF_VERSION = "2.18.0"' in text, "the fixture's version moved"
        path.write_text(text.replace('TF_VERSION = "2.18.0"', f'TF_VERSION = "{version}"'),
                        "utf-8")
    return dest


def build_cuda_stub_wheel(dest: Path) -> Path:
    """Build tfwizard-fixture-cuda-stub 1.0 (py3-none-any) into dest; returns the wheel's path.

    With it in a --find-links folder, ``pip install --no-index --find-links DIR
    'fixture.whl[and-cuda]'`` resolves offline.
    """
    spec = importlib.util.spec_from_file_location(
        "_tfw_cuda_stub_build_wheel", CUDA_STUB_DIR / "build_wheel.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return Path(module.build_wheel(Path(dest)))


# --------------------------------------------------------------------------- conveniences


@dataclass
class ContainerRun:
    exit_code: int
    output: str  # stdout and stderr, interleaved as the container wrote them


def _default_user() -> str | None:
    """Run containers as the invoking user when that is not root (files stay theirs)."""
    if os.geteuid() == 0:
        return None
    return f"{os.getuid()}:{os.getgid()}"


def _container_kwargs(
    *,
    workspace: Path | None = None,
    image: str = IMAGE,
    environment: Mapping[str, str] | None = None,
    user: str | None = None,
    cache_volume: str | None = None,
    extra_volumes: Mapping[str, Mapping[str, str]] | None = None,
    network: str = "none",
) -> dict[str, Any]:
    """The docker SDK arguments of a test-world container (run_in_image, long_lived).

    Network none unless given; workspace is bind-mounted at /src, cache_volume (a named
    volume) at /cache. As a non-root user (user="UID:GID", default: the invoking user when
    not root) USER and HOME=/tmp/home are set, which Bazel needs (see
    tests/images/README.md).
    """
    user = user if user is not None else _default_user()
    env = dict(environment or {})
    if user is not None and not user.startswith("0:") and user != "0":
        env.setdefault("USER", "tfwizard")
        env.setdefault("HOME", "/tmp/home")
    volumes: dict[str, dict[str, str]] = {}
    if workspace is not None:
        volumes[str(Path(workspace).resolve())] = {"bind": CONTAINER_WORKSPACE, "mode": "rw"}
    if cache_volume is not None:
        volumes[cache_volume] = {"bind": CONTAINER_CACHE, "mode": "rw"}
    volumes.update({k: dict(v) for k, v in (extra_volumes or {}).items()})
    return {
        "image": image,
        "network_mode": network,
        "environment": env,
        "user": user or "",
        "volumes": volumes,
        "working_dir": CONTAINER_WORKSPACE if image == IMAGE else None,
        "labels": {"org.tfwizard.test": "1"},
    }


def run_in_image(argv: Sequence[str], *, timeout: float = 900, **spec: Any) -> ContainerRun:
    """Run argv in a new container, wait, return exit code and output.

    spec: workspace, image, environment, user, cache_volume, extra_volumes, network (see
    _container_kwargs).
    """
    import docker

    client = docker.from_env(timeout=60)
    container = client.containers.run(command=list(argv), detach=True,
                                      **_container_kwargs(**spec))
    try:
        try:
            status = container.wait(timeout=timeout)
        except Exception:
            container.kill()
            status = container.wait(timeout=60)
        output = container.logs(stdout=True, stderr=True).decode("utf-8", "replace")
        return ContainerRun(int(status.get("StatusCode", -1)), output)
    finally:
        container.remove(force=True)
        client.close()


class LongLived:
    """A started container (``sleep infinity``) that runs commands with docker exec."""

    def __init__(self, container, environment: Mapping[str, str], user: str) -> None:
        self.container = container
        self._environment = dict(environment)
        self._user = user

    def exec(self, argv: Sequence[str], *, environment: Mapping[str, str] | None = None,
             timeout: float = 900) -> ContainerRun:
        """Run argv in the container (in /src for IMAGE), wait; exit code and output.

        It runs under coreutils' ``timeout`` (IMAGE has it); timeout=0 runs it bare.
        """
        env = {**self._environment, **(environment or {})}
        cmd = ["timeout", "-k", "10", str(int(timeout)), *argv] if timeout else list(argv)
        code, output = self.container.exec_run(cmd, environment=env, user=self._user,
                                               workdir=self.container.attrs["Config"].get(
                                                   "WorkingDir") or None)
        return ContainerRun(int(code), output.decode("utf-8", "replace"))


@contextmanager
def long_lived(workspace: Path | None = None, **spec: Any) -> Iterator[LongLived]:
    """A container that stays up while the block runs (the way a warm workspace keeps its
    Bazel server), set up as run_in_image's (spec: see _container_kwargs); removed after."""
    import docker

    kwargs = _container_kwargs(workspace=workspace, **spec)
    client = docker.from_env(timeout=120)
    container = client.containers.run(command=["sleep", "infinity"], detach=True, **kwargs)
    try:
        container.reload()
        yield LongLived(container, kwargs["environment"], kwargs["user"])
    finally:
        container.remove(force=True)
        client.close()


def run_configure(
    workspace: Path, answers: Mapping[str, str] | None = None, **kwargs
) -> ContainerRun:
    """Run the workspace's configure.py in IMAGE with answers as its only environment.

    Stdin is closed (as in a driver), so unanswered questions take their defaults.
    """
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin"}
    env.update(CPU_GCC_ANSWERS if answers is None else answers)
    return run_in_image(
        ["python3", "configure.py", "--workspace", CONTAINER_WORKSPACE],
        workspace=workspace,
        environment=env,
        **kwargs,
    )


@dataclass
class BazelBuild:
    exit_code: int
    output: str
    wheel: Path | None  # the built wheel, copied to <workspace>/dist/, when the build passed


def bazel_build(
    workspace: Path,
    *bazel_args: str,
    target: str = WHEEL_TARGET,
    cache_volume: str | None = None,
    **kwargs,
) -> BazelBuild:
    """``bazel build <UI flags> [--disk_cache=/cache] <bazel_args> <target>`` in IMAGE.

    When the build passes, wheels found in the wheel house are copied to <workspace>/dist/
    (the bazel-bin symlink dangles outside the container) and the first one is returned.
    """
    args = ["build", *BAZEL_UI_FLAGS]
    if cache_volume is not None:
        args.append(f"--disk_cache={CONTAINER_CACHE}")
    args += [*bazel_args, target]
    script = (
        'bazel "$@"; rc=$?; '
        f'if [ "$rc" = 0 ] && [ -d {WHEEL_HOUSE} ]; then '
        f"mkdir -p dist && cp -L {WHEEL_HOUSE}/*.whl dist/ 2>/dev/null; fi; "
        'exit "$rc"'
    )
    dist = Path(workspace) / "dist"
    before = set(dist.glob("*.whl")) if dist.is_dir() else set()
    run = run_in_image(
        ["sh", "-c", script, "bazel", *args],
        workspace=workspace,
        cache_volume=cache_volume,
        **kwargs,
    )
    wheel = None
    if run.exit_code == 0 and dist.is_dir():
        wheels = sorted(dist.glob("*.whl"), key=lambda p: (p not in before, p.stat().st_mtime))
        wheel = wheels[-1] if wheels else None
    return BazelBuild(run.exit_code, run.output, wheel)


def second_engine_bridge() -> str:
    """A Linux bridge of its own for a second dockerd, to pass as `--bridge NAME` (as root).

    Never `--bridge none`: a dockerd started so deletes the host's `docker0` (moby's
    removeDefaultBridgeInterface, seen with docker.io 20.10), and every later container on
    the main engine's default network fails with "could not find bridge docker0". Remove
    it with drop_bridge after the engine stopped."""
    name = "tfwd" + uuid.uuid4().hex[:8]  # an interface name has at most 15 bytes
    subprocess.run(["ip", "link", "add", name, "type", "bridge"], check=True,
                   capture_output=True, timeout=30)
    return name


def drop_bridge(name: str | None) -> None:
    if name:
        subprocess.run(["ip", "link", "del", name], check=False, capture_output=True,
                       timeout=30)


def new_volume_name(prefix: str = "tfwizard-test-cache") -> str:
    """A unique name for a throw-away named volume (remove it with remove_volume)."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def remove_workspace(client: Any, space: Any) -> list[str]:
    """Remove a warm workspace's container and volumes (core/building/warm/workspace.py:
    those labelled with its key); the names removed."""
    import docker.errors

    from tfwizard.core.building.warm.workspace import WORKSPACE_LABEL
    from tfwizard.core.paths import own_filter

    gone: list[str] = []
    flt = own_filter(f"{WORKSPACE_LABEL}={space.key}")
    for c in client.containers.list(all=True, filters=flt):
        c.remove(force=True)
        gone.append(c.name)
    for v in client.volumes.list(filters=flt):
        try:
            v.remove(force=True)
            gone.append(v.name)
        except docker.errors.NotFound:
            pass
    return gone


def remove_prefixed_volumes(client: Any, prefix: str) -> list[str]:
    """Remove the volumes named PREFIX-* and first the warm workspaces that mount them (a
    wizard's Start builds warm: its container stays up and holds the cache volumes, and
    removing them alone fails with "volume is in use"); the names removed."""
    from tfwizard.core.building.warm.workspace import WORKSPACE_LABEL
    from tfwizard.core.paths import LABEL

    gone: list[str] = []
    for c in client.containers.list(all=True, filters={"label": LABEL}):
        key = c.labels.get(WORKSPACE_LABEL)
        if key and any(str(m.get("Name", "")).startswith(prefix)
                       for m in c.attrs.get("Mounts", [])):
            gone += remove_workspace(client, SimpleNamespace(key=key))
    for vol in client.volumes.list():
        if vol.name.startswith(prefix):
            vol.remove(force=True)
            gone.append(vol.name)
    return gone


def remove_prefixed(prefix: str) -> list[str]:
    """remove_prefixed_volumes with a client of its own (a test's finally: its cache volumes
    are named PREFIX-u<uid>-bazel-*-cache, and a warm build's workspace still mounts them)."""
    import docker

    client = docker.from_env(timeout=120)
    try:
        return remove_prefixed_volumes(client, prefix)
    finally:
        client.close()


def remove_warm(client: Any, space: Any, prefix: str) -> None:
    """Remove a test's warm workspace and its volumes named PREFIX-*, then close the
    client."""
    from tfwizard.core.paths import LABEL

    try:
        remove_workspace(client, space)
        for vol in client.volumes.list(filters={"label": LABEL}):
            if vol.name.startswith(prefix):
                vol.remove(force=True)
    finally:
        client.close()


def remove_volume(name: str) -> None:
    import docker

    client = docker.from_env(timeout=60)
    try:
        client.volumes.get(name).remove(force=True)
    except docker.errors.NotFound:
        pass
    finally:
        client.close()


def fixture_recipe(path: Path, *, workspace: Path | None, prefix: str,
                   name: str = "fixture", image: str = IMAGE, network: str = "none",
                   bazel_flags: Sequence[str] = (), disk_cache: bool = True,
                   extra: str = "", git_url: str = "", ref: str = "",
                   opt_flags: Sequence[str] = ()) -> Path:
    """Write an ordinary recipe that builds the TF-shaped fixture in the offline test image.

    gcc toolchain (the image has no clang: toolchain.local_clang, since 2.21 would otherwise
    compile with TF's hermetic LLVM), two jobs, caches in volumes named after
    `prefix` so each test module owns its own; `extra` is appended as more TOML tables.
    The source is the checkout `workspace`, or with `git_url` (and `ref`) a git clone of
    the release tag (or ref) from that URL. `opt_flags`: build.opt_flags (configure's
    CC_OPT_FLAGS) when given.
    """
    import json

    flags = ", ".join(json.dumps(f) for f in bazel_flags)
    opts = (f"opt_flags = [{', '.join(json.dumps(f) for f in opt_flags)}]\n"
            if opt_flags else "")
    if git_url:
        source = f"git_url = {json.dumps(git_url)}" + (f"\nref = {json.dumps(ref)}" if ref else "")
    else:
        source = f"source_dir = {json.dumps(str(workspace))}"
    text = f"""schema = 1
name = "{name}"
[tensorflow]
version = "2.21.0"
{source}
[backend]
kind = "cpu"
[toolchain]
gcc = "12"
clang = ""
local_clang = true
[build]
image = "{image}"
network = "{network}"
jobs = 2
bazel_flags = [{flags}]
{opts}[cache]
disk_cache = {"true" if disk_cache else "false"}
volume_prefix = "{prefix}"
{extra}"""
    path.write_text(text, encoding="utf-8")
    return path


def warm_fixture(tmp_path: Path) -> tuple[Path, str, Any, Any]:
    """A Docker test's fixture for the warm path: the engine and images checked, a fresh
    copy of the fixture workspace, its recipe (volumes named after a new test prefix), a
    client and the recipe's warm workspace: (recipe, prefix, client, space). Remove them
    with remove_warm(client, space, prefix)."""
    require_docker()
    ensure_images()
    import docker

    from tfwizard.core.building.plan.plan import make_plan
    from tfwizard.core.building.warm import container as warm
    from tfwizard.core.recipe import load_recipe

    prefix = f"tfwizard-test-{uuid.uuid4().hex[:8]}"
    recipe = fixture_recipe(tmp_path / "r.toml", workspace=copy_workspace(tmp_path),
                            prefix=prefix)
    space = warm.workspace_for(make_plan(load_recipe(recipe), recipe_dir=recipe.parent),
                               str(recipe.resolve()))
    return recipe, prefix, docker.from_env(timeout=300), space


def sleeper_running(client, container: str) -> bool:
    """Whether the fixture's `TFW_FIXTURE_SLEEP` action is sleeping now in the container
    (a `sleep 1` among its processes). Bazel shows an action's output only when it ends, so
    a cancel test that waits for "tfw fixture: sleeping" lines cancels after the action."""
    import docker.errors

    try:
        box = client.containers.get(container)
    except docker.errors.NotFound:  # not made yet
        return False
    if box.status != "running":
        return False
    try:
        found = box.exec_run(
            ["sh", "-c", 'for p in /proc/[0-9]*; do tr "\\0" " " < "$p/cmdline"; echo; done'],
            workdir="/")
    except docker.errors.APIError:  # it stopped meanwhile
        return False
    return any(line.startswith("sleep 1") for line in found.output.decode(errors="replace")
               .splitlines())


def wait_for_sleeper(client, container: str, timeout: float = 240.0) -> None:
    """Until the fixture's sleeping action runs (sleeper_running); AssertionError after
    `timeout` seconds."""
    import time

    deadline = time.monotonic() + timeout
    while not sleeper_running(client, container):
        assert time.monotonic() < deadline, "the sleeping action never started"
        time.sleep(0.5)
