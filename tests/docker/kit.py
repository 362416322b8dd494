"""Small helpers for the Docker tests (not a test module): the fault, crash and privilege
tests' plumbing, and the warm `tfwizard test` world the test-command, test-job and
test-select modules share (make_test_world, via tests/docker/conftest.py).

Busybox plans exercise the runner's plumbing in seconds; fixture recipes (the TF-shaped
Bazel workspace in the offline Bazel image) the real thing.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import io
import uuid
import zipfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tests import world
from tfwizard.core.building.plan.plan import OUTPUT_USER_ROOT, BuildPlan, Step, make_plan
from tfwizard.core.building.run.runner import BuildRunner
from tfwizard.core.paths import LABEL
from tfwizard.core.recipe import load_recipe

WHEEL_DIR = f"{OUTPUT_USER_ROOT}/w"
#: the Python of the busybox plans (their fixture recipe's release's default)
BUSYBOX_PYTHON = "3.11"


def consented(plan: BuildPlan, env: dict[str, str]) -> dict[str, str]:
    """`env` with the user's consent to every ${VAR} the plan sends (core/consent.py): what
    a person who trusts the recipe passes as --allow-secret."""
    from tfwizard.core.consent import CONSENT_ENV, secret_uses

    uses = secret_uses(plan.flag_list, plan.container_env, env)
    return {**env, CONSENT_ENV: " ".join(u.pair for u in uses)}


def recipe_file(path: Path, *, source_dir: Path, prefix: str, name: str = "fixture",
                image: str = world.IMAGE, network: str = "none",
                bazel_flags: Sequence[str] = ()) -> Path:
    """A fixture recipe (gcc toolchain, offline) building `source_dir`."""
    return world.fixture_recipe(path, workspace=source_dir, prefix=prefix, name=name,
                                image=image, network=network, bazel_flags=bazel_flags)


def busybox_plan(tmp_path: Path, steps: str | Sequence[Step], *, prefix: str,
                 name: str = "busybox", network: str = "none", uid: int | None = None,
                 gid: int | None = None) -> BuildPlan:
    """A plan whose steps run in busybox; a string is one `build` step's `sh -c` script."""
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    recipe = recipe_file(tmp_path / f"{name}.toml", source_dir=src, prefix=prefix, name=name,
                         network=network)
    plan = make_plan(load_recipe(recipe), recipe_dir=tmp_path, uid=uid, gid=gid)
    assert plan.python == BUSYBOX_PYTHON, "fake_wheel() must say the plan's Python"
    if isinstance(steps, str):
        steps = [Step("build", "analyse", ("sh", "-c", steps), workdir="/")]
    return dataclasses.replace(plan, image=world.BUSYBOX, wheel_dir=WHEEL_DIR, steps=list(steps))


def fake_wheel(python: str = BUSYBOX_PYTHON) -> bytes:
    """A small wheel shaped like the busybox plans' (a CPU build of their fixture recipe:
    tensorflow_cpu, cpXY, TensorFlow's build_info.py), so the runner's wheel check passes
    it as it would a real build's; its checkout says no version, so that is not checked."""
    tag = "cp" + python.replace(".", "")
    dist = "tensorflow_cpu-2.18.0.dist-info"
    members = {f"{dist}/METADATA": "Metadata-Version: 2.1\nName: tensorflow_cpu\n"
                                   "Version: 2.18.0\n",
               f"{dist}/WHEEL": f"Wheel-Version: 1.0\nTag: {tag}-{tag}-linux_x86_64\n",
               "tensorflow/python/platform/build_info.py":
                   "build_info = {'is_cuda_build': False, 'is_rocm_build': False}\n"}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, text in members.items():  # fixed times: the same bytes on every call
            zf.writestr(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), text)
    return buf.getvalue()


def make_wheel_script(name: str = "t-1-py3-none-any.whl", size_mib: int = 0) -> str:
    """sh that writes fake_wheel() into WHEEL_DIR (after size_mib MiB of zeros: a zip may
    start late, so the size is what a copy test needs and the file is still a wheel)."""
    data = base64.b64encode(fake_wheel()).decode("ascii")
    path = f"{WHEEL_DIR}/{name}"
    zeros = (f"dd if=/dev/zero of={path} bs=1048576 count={size_mib} 2>/dev/null && "
             if size_mib else f": > {path} && ")
    return f"mkdir -p {WHEEL_DIR} && {zeros}echo {data} | base64 -d >> {path}"


def run(runner: BuildRunner, on_event: Callable[[BuildRunner, Any], None] | None = None
        ) -> list[Any]:
    """Every event of the runner's build (asyncio.run)."""

    async def main() -> list[Any]:
        events = []
        async for event in runner.events():
            events.append(event)
            if on_event is not None:
                on_event(runner, event)
        return events

    return asyncio.run(main())


def detach_after(runner: BuildRunner, line: str) -> None:
    """Follow the build until the step prints `line`, then detach and leave (asyncio.run):
    the build runs on, to be attached to."""

    async def leave_early() -> None:
        events = runner.events()
        async for event in events:
            if event.type == "log" and line in event.lines:
                runner.detach()
                break
        await events.aclose()

    asyncio.run(leave_early())


def leftovers(client: Any, build_id: str) -> list[Any]:
    """Containers and volumes still labelled with the build id (must be [])."""
    flt = {"label": f"{LABEL}.build={build_id}"}
    return client.containers.list(all=True, filters=flt) + client.volumes.list(filters=flt)


def remove_build(client: Any, build_id: str) -> None:
    """Remove a build's containers, then its volumes (test cleanup)."""
    flt = {"label": f"{LABEL}.build={build_id}"}
    for c in client.containers.list(all=True, filters=flt):
        c.remove(force=True)
    for v in client.volumes.list(filters=flt):
        v.remove(force=True)


def remove_caches(client: Any, prefix: str) -> None:
    """Remove the cache volumes a test's recipes named with `prefix`."""
    for v in client.volumes.list(filters={"label": LABEL}):
        if v.name.startswith(prefix):
            v.remove(force=True)


def numbered_lines(events: list[Any]) -> dict[int, str]:
    """{line number in log.txt: text} of every log line the front end received (events,
    or the JSON objects `--json` prints)."""
    out: dict[int, str] = {}
    for e in events:
        if isinstance(e, dict):
            if e.get("type") == "log":
                assert e["n"] not in out, f"line {e['n']} came twice"
                out[e["n"]] = e["line"]
            continue
        if e.type == "log":
            for i, line in enumerate(e.lines):
                assert e.first_line + i not in out, f"line {e.first_line + i} came twice"
                out[e.first_line + i] = line
    return out


def assert_front_end_saw_the_record(events: list[Any], record: Path) -> None:
    """Every line of the record's log reached the live front end once, numbered as in
    log.txt: none said only to the record (the diagnosis comes as its own events)."""
    from tfwizard.core.building.run.record import read_log

    lines = [text for _channel, text in read_log(record / "log.txt")]
    seen = numbered_lines(events)
    missing = [(n, lines[n - 1]) for n in range(1, len(lines) + 1) if n not in seen]
    assert not missing, f"record lines the front end never got: {missing[:10]}"
    assert sorted(seen) == list(range(1, len(lines) + 1))
    assert all(lines[n - 1] == text for n, text in seen.items())


def stdout_lines(events: list[Any]) -> list[str]:
    return [line for e in events if e.type == "log" and e.channel == "stdout"
            for line in e.lines]


def docker_world(tmp_path_factory: Any, kind: str) -> Iterator[SimpleNamespace]:
    """A module's Docker test world: a folder, a cache prefix, a client, the builds to clean.

    Use as the body of a module-scoped fixture: `yield from kit.docker_world(f, "crash")`.
    """
    world.require_docker()
    world.ensure_images()
    import docker

    ns = SimpleNamespace(base=tmp_path_factory.mktemp(kind),
                         prefix=f"tfwizard-test-{kind}-{uuid.uuid4().hex[:8]}",
                         client=docker.from_env(timeout=120), builds=[])
    yield ns
    for build_id in ns.builds:
        remove_build(ns.client, build_id)
    remove_caches(ns.client, ns.prefix)
    ns.client.close()


#: the fixture workspace's tests that fail on purpose in the shared `tfwizard test` world
FAILING_TESTS = ("//tensorflow/python/kernel_tests:matmul_op_test",
                 "//tensorflow/python/kernel_tests:reduction_ops_test")
#: what configure and Bazel write into the checkout, ignored as TensorFlow's .gitignore does
GIT_IGNORED = "/bazel-*\n.tf_configure.bazelrc\n/tools/python_bin_path.sh\n"


def git(cwd: Path, *args: str) -> None:
    """git in `cwd` with a throwaway identity (output captured, failure raises)."""
    import subprocess

    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid",
                    *args], cwd=cwd, check=True, capture_output=True)


def make_test_world(tmp_path_factory: Any) -> Iterator[SimpleNamespace]:
    """One warm `tfwizard test` world for the test-command, test-job and test-select
    modules (the body of tests/docker/conftest.py's session fixture): the fixture workspace
    as a git checkout, a recipe whose FAILING_TESTS fail, its warm container started (so
    Bazel's server and outputs are built once for all three modules); removed at the end.
    Each module keeps its own data folder (`data_dir`)."""
    world.require_docker()
    world.ensure_images()
    import docker

    from tfwizard.core.building.warm import container as warm

    base = tmp_path_factory.mktemp("testworld")
    prefix = f"tfwizard-test-{uuid.uuid4().hex[:8]}"
    workspace = world.copy_workspace(base)
    (workspace / ".gitignore").write_text(GIT_IGNORED)
    git(workspace, "init", "-q")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-qm", "fixture")
    recipe = world.fixture_recipe(base / "r.toml", workspace=workspace, prefix=prefix,
                                  bazel_flags=["--test_env=TFW_FIXTURE_FAIL="
                                               + ",".join(FAILING_TESTS)])
    client = docker.from_env(timeout=300)
    plan = make_plan(load_recipe(recipe), recipe_dir=recipe.parent)
    space = warm.workspace_for(plan, str(recipe.resolve()))
    warm.WarmContainer(client, plan, space, idle_s=900).ensure()
    yield SimpleNamespace(recipe=recipe, base=base, workspace=workspace, client=client,
                          plan=plan, space=space)
    world.remove_workspace(client, space)
    remove_caches(client, prefix)
    client.close()



def data_dir(shared: SimpleNamespace, tmp_path_factory: Any, name: str) -> SimpleNamespace:
    """The shared test world with a data folder (TFWIZARD_DATA_DIR) of a module's own."""
    return SimpleNamespace(**vars(shared), data=tmp_path_factory.mktemp(name) / "data")
