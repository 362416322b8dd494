"""Bazel remote execution against a real REAPI service, by hand (no product code).

The service is tests/reapi: BuildGrid from PyPI (its scheduler in Debian's PostgreSQL) and
a test worker that runs each action with `docker exec` in a network-less container of the
image the action names in its `container-image` platform property. Bazel 4.2.3 in the test
image builds the TF-shaped fixture with --remote_executor, no --disk_cache (Bazel < 5
refuses the two together).

The Bazel containers use the host's network and reach the server on 127.0.0.1: Docker's
default bridge has been seen to vanish on these machines, and the service binds the bridge
address only while it exists (`reapi.bridge_endpoint`); one test builds over the bridge.
"""

from __future__ import annotations

import os
import re
import time
import uuid
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import world
from tests.reapi.service import ReapiService, bridge_address

pytestmark = [pytest.mark.docker, pytest.mark.slow]

SMALL_TARGET = "//tensorflow/core:platform"  # four compiles and an archive
_PROCESSES = re.compile(r"^INFO: \d+ process(?:es)?: (.*)$", re.M)  # "1 process: ..."


def _counts(output: str) -> dict[str, int]:
    """Bazel's last `INFO: N processes: ...` line as {"remote": 28, "internal": 2, ...}."""
    found = _PROCESSES.findall(output)
    assert found, "no `processes:` line in Bazel's output:\n" + output[-3000:]
    counts = {}
    for part in found[-1].rstrip(".").split(", "):
        n, _, kind = part.partition(" ")
        counts[kind] = int(n)
    return counts


def _flags(svc: ReapiService, *, instance: str | None = None, endpoint: str | None = None,
           properties: tuple[str, ...] | None = None, extra: tuple[str, ...] = ()) -> list[str]:
    if properties is None:
        properties = (svc.image_property(world.IMAGE),)
    return ["--repo_env=WHEEL_NAME=tensorflow_cpu", "--jobs=4",
            f"--remote_executor={endpoint or svc.endpoint}",
            f"--remote_instance_name={svc.instance_name if instance is None else instance}",
            *(f"--remote_default_exec_properties={p}" for p in properties), *extra]


def _build(svc: ReapiService, ws: Path, *args: str, target: str = world.WHEEL_TARGET
           ) -> SimpleNamespace:
    t0 = time.monotonic()
    res = world.bazel_build(ws, *args, target=target, network="host", timeout=900)
    return SimpleNamespace(exit_code=res.exit_code, output=res.output, wheel=res.wheel,
                           wall=time.monotonic() - t0, tail=res.output[-5000:])


def _image_id(name: str) -> str:
    import docker

    client = docker.from_env(timeout=60)
    try:
        return str(client.images.get(name).id)
    finally:
        client.close()


def _run_copt(token: str) -> str:
    """A --copt that gives every compile of a build new action keys (a cold action cache)."""
    return f"--copt=-DTFW_REAPI_RUN={token}"


def _compiles_of(actions: list[dict], token: str) -> list[dict]:
    return [a for a in actions if f"-DTFW_REAPI_RUN={token}" in a.get("argv", [])]


@pytest.fixture(scope="module")
def rx(tmp_path_factory):
    world.ensure_images()
    # this module's wheel builds: the first runs remotely whatever the session built before
    return SimpleNamespace(base=tmp_path_factory.mktemp("reapi-builds"), n=0,
                           token=uuid.uuid4().hex[:8])


def _workspace(rx: SimpleNamespace) -> Path:
    rx.n += 1
    ws = world.copy_workspace(rx.base / f"ws{rx.n}")
    conf = world.run_configure(ws)
    assert conf.exit_code == 0, conf.output
    return ws


@pytest.fixture(scope="module")
def first_build(reapi_service, rx):
    """The fixture's wheel built remotely once (the cache-hit test builds it again)."""
    reapi_service.ensure_running()
    ws = _workspace(rx)
    mark, before = reapi_service.mark(), reapi_service.worker_status()
    res = _build(reapi_service, ws, *_flags(reapi_service, extra=(_run_copt(rx.token),)))
    return SimpleNamespace(res=res, actions=reapi_service.actions(mark), before=before,
                           after=reapi_service.worker_status())


def test_capabilities_name_the_instance_execution_and_sha256(reapi):
    caps = reapi.capabilities()
    assert caps["executionCapabilities"]["execEnabled"] is True
    assert caps["executionCapabilities"]["digestFunction"] == "SHA256"
    assert "SHA256" in caps["cacheCapabilities"]["digestFunctions"]
    cache_only = reapi.capabilities(reapi.cache_only_instance)
    assert not cache_only["executionCapabilities"].get("execEnabled", False)
    with pytest.raises(RuntimeError, match=r"Invalid instance name: \[no-such-instance\]"):
        reapi.capabilities("no-such-instance")


def test_remote_build_runs_every_action_in_the_recipe_image(reapi, rx, first_build):
    res = first_build.res
    assert res.exit_code == 0, res.tail
    counts = _counts(res.output)
    assert counts.get("remote", 0) > 0, counts
    ran = first_build.actions
    # every remote execution is one record of the worker (a retried one would add records)
    assert len(ran) >= counts["remote"], (counts, len(ran))
    assert {a["image"] for a in ran} == {world.IMAGE}
    assert {a["image_id"] for a in ran} == {_image_id(world.IMAGE)}
    assert all(a["status"] == "OK" and a["exit_code"] == 0 for a in ran), ran
    compiles = _compiles_of(ran, rx.token)
    assert len(compiles) >= 20, [a["argv"][-1] for a in ran]
    assert all(any(x.endswith(".cc") for x in a["argv"]) for a in compiles)
    assert res.wheel is not None
    with zipfile.ZipFile(res.wheel) as zf:
        assert zf.testzip() is None
        assert any(n.endswith("libtensorflow_framework.so") for n in zf.namelist())
    # the worker long-polls and never spins: a few calls per action, not thousands
    updates = first_build.after["updates"] - first_build.before["updates"]
    assert updates <= 4 * len(ran) + res.wall / 5 + 10, (updates, len(ran), res.wall)


def test_actions_run_in_network_less_containers_of_the_named_image(reapi, first_build):
    import docker

    client = docker.from_env(timeout=60)
    try:
        containers = client.containers.list(
            filters={"label": f"org.tfwizard.test.reapi={reapi.token}"})
        assert containers, "the worker keeps its action containers while it runs"
        for c in containers:
            assert c.attrs["HostConfig"]["NetworkMode"] == "none"
            assert c.attrs["Image"] in {a["image_id"] for a in first_build.actions}
    finally:
        client.close()


def test_second_build_in_a_fresh_container_comes_from_the_remote_cache(reapi, rx, first_build):
    first = _counts(first_build.res.output)
    ws = _workspace(rx)
    mark = reapi.mark()
    res = _build(reapi, ws, *_flags(reapi, extra=(_run_copt(rx.token),)))
    assert res.exit_code == 0, res.tail
    counts = _counts(res.output)
    assert counts.get("remote cache hit") == first["remote"], (counts, first)
    assert "remote" not in counts
    assert reapi.actions(mark) == []
    assert res.wheel is not None


def test_wrong_instance_name_fails_in_seconds(reapi, rx):
    ws = _workspace(rx)
    res = _build(reapi, ws, *_flags(reapi, instance="no-such-instance"))
    assert res.exit_code != 0
    assert ("Failed to query remote execution capabilities: INVALID_ARGUMENT: "
            "Invalid instance name: [no-such-instance]") in res.output, res.tail
    # a container start, Bazel's server start and one call: seconds, not a build's minutes
    assert res.wall < 30, res.wall


def test_unregistered_platform_property_is_refused(reapi, rx):
    ws = _workspace(rx)
    mark = reapi.mark()
    res = _build(reapi, ws, *_flags(reapi, properties=(reapi.image_property(world.IMAGE),
                                                       "gpu=nvidia")), target=SMALL_TARGET)
    assert res.exit_code != 0
    assert "FAILED_PRECONDITION: Unregistered platform property [gpu={'nvidia'}]" in res.output, \
        res.tail
    assert reapi.actions(mark) == []  # refused by the scheduler: no worker saw it


def test_worker_refuses_an_action_without_container_image(reapi, rx):
    ws = _workspace(rx)
    mark = reapi.mark()
    res = _build(reapi, ws, *_flags(reapi, properties=()), target=SMALL_TARGET)
    assert res.exit_code != 0
    assert ("Failed Precondition: the action names no container-image platform property"
            in res.output), res.tail
    refused = reapi.actions(mark)
    assert refused and all(a["status"] == "FAILED_PRECONDITION" and "image" not in a
                           for a in refused), refused


def test_worker_refuses_an_image_it_does_not_have(reapi, rx):
    ws = _workspace(rx)
    mark = reapi.mark()
    res = _build(reapi, ws, *_flags(reapi, properties=(
        "container-image=docker://tfwizard-test/absent:1",)), target=SMALL_TARGET)
    assert res.exit_code != 0
    assert "'docker://tfwizard-test/absent:1' is not present on this worker" in res.output, res.tail
    assert {a["status"] for a in reapi.actions(mark)} == {"FAILED_PRECONDITION"}


def test_an_image_pinned_by_digest_runs_in_that_image(reapi, rx):
    image_id = _image_id(world.IMAGE)  # local images have no repo digest: pin the image id
    pinned = f"{world.IMAGE}@{image_id}"
    ws = _workspace(rx)
    mark = reapi.mark()
    res = _build(reapi, ws, *_flags(reapi, properties=(reapi.image_property(pinned),)),
                 target=SMALL_TARGET)
    assert res.exit_code == 0, res.tail
    assert _counts(res.output).get("remote", 0) > 0
    ran = reapi.actions(mark)
    assert ran and {(a["image"], a["image_id"], a["status"]) for a in ran} == {
        (pinned, image_id, "OK")}


#: what Bazel or Docker say when docker0 went away under a container (see _on_the_bridge)
_BRIDGE_TROUBLE = ("No route to host", "Network is unreachable", "could not find bridge")


def _bind_bridge(reapi: ReapiService) -> None:
    """Make sure the server listens on the default bridge's current address."""
    if reapi.bridge_endpoint is None or bridge_address() != reapi.bridge_ip:
        # the bridge vanished or came back since the server started: rebind (as root the
        # service recreates a vanished docker0 first)
        reapi.stop_server()
        reapi.ensure_running()
    if reapi.bridge_endpoint is None:
        message = "Docker's default bridge is missing (as root the service recreates it)"
        if world.in_ci():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


def _on_the_bridge(reapi: ReapiService, ws: Path, flags: list[str]) -> world.BazelBuild:
    """A small build in a container on the default bridge.

    Another program's dockerd started with `--bridge none` deletes docker0 (see
    world.second_engine_bridge), maybe while a container used it ("No route to host"):
    then the bridge is repaired and the build tried once more. A clean machine never takes
    the second turn.
    """
    import docker

    res = None
    for turn in (1, 2):
        try:
            res = world.bazel_build(ws, *flags, target=SMALL_TARGET, network="bridge",
                                    timeout=600)
        except docker.errors.APIError as e:  # the container could not join the bridge
            if turn == 2:
                raise
            print(f"bridge trouble, once more: {e}")
            _bind_bridge(reapi)
            continue
        if turn == 1 and any(m in res.output for m in _BRIDGE_TROUBLE):
            print("bridge trouble, once more:", res.output[-500:])
            _bind_bridge(reapi)
            continue
        break
    assert res is not None
    return res


def test_a_container_on_the_default_bridge_reaches_the_bridge_endpoint(reapi, rx):
    _bind_bridge(reapi)
    ws = _workspace(rx)
    mark = reapi.mark()
    token = uuid.uuid4().hex[:8]
    res = _on_the_bridge(reapi, ws, _flags(reapi, endpoint=reapi.endpoint_for("bridge"),
                                           extra=(_run_copt(token),)))
    assert res.exit_code == 0, res.output[-5000:]
    assert _counts(res.output).get("remote", 0) > 0
    assert len(_compiles_of(reapi.actions(mark), token)) == 4
    # the host's loopback is the container's own: why the bridge address is bound at all
    res = _on_the_bridge(reapi, ws, _flags(reapi, extra=(_run_copt(token), "--remote_retries=0")))
    assert res.exit_code != 0
    assert (f"Failed to query remote execution capabilities: Connection refused: "
            f"/127.0.0.1:{reapi.port}") in res.output, res.output[-3000:]


def test_worker_returns_outputs_streams_environment_and_exit_code(reapi, tmp_path):
    """What Bazel's fixture build does not use: output directories, a working directory,
    environment variables, stderr, executables and a non-zero exit code."""
    inputs = tmp_path / "in"
    (inputs / "sub").mkdir(parents=True)
    tool = inputs / "sub" / "tool.sh"
    tool.write_text('#!/bin/sh\necho "tool says $GREETING"\n')
    tool.chmod(0o755)
    script = ("./tool.sh; echo oops >&2; mkdir -p out/tree/deeper; printf x > out/tree/a; "
              "printf y > out/tree/deeper/b; printf z > out/file; cp tool.sh out/exe; "
              "test -d made || exit 8; test -e made/gen && exit 9; exit 3")
    res = reapi.execute(["sh", "-c", script], input_dir=inputs, workdir="sub",
                        output_files=("out/file", "out/exe", "out/missing"),
                        output_dirs=("out/tree", "made/gen"), env={"GREETING": "hello"},
                        properties={"container-image": f"docker://{world.IMAGE}"})
    assert res["status"]["code"] == "OK", res
    # the worker made the output directory's parent, not the output directory itself
    assert res["exit_code"] == 3, res
    assert res["stdout"] == "tool says hello\n"
    assert res["stderr"] == "oops\n"
    assert res["files"] == {"out/file": {"text": "z", "executable": False},
                            "out/exe": {"text": tool.read_text(), "executable": True}}
    assert res["dirs"] == {"out/tree": {"a": "x", "deeper/b": "y"}}


def test_worker_ends_an_action_past_its_timeout(reapi):
    t0 = time.monotonic()
    res = reapi.execute(["sleep", "60"], timeout_s=2,
                        properties={"container-image": f"docker://{world.IMAGE}"})
    assert res["status"]["code"] == "DEADLINE_EXCEEDED", res
    assert time.monotonic() - t0 < 30  # the sleep was killed, not waited for


# -- the warm path (issue 17): `tfwizard build` without --fresh, the recipe's executor --------
_HOST = Path(__file__).resolve().parents[1] / "data/hosts/no-gpu-server.json"
_KERNEL = "tensorflow/core/kernels/add_op.cc"


def _warm_build(recipe: Path, env: dict[str, str]) -> SimpleNamespace:
    """`tfwizard build RECIPE` (warm); its record folder, log and Bazel's process counts."""
    from tfwizard.cli import capture

    t0 = time.monotonic()
    status, out, err = capture(["build", str(recipe), "--host", str(_HOST)], env)
    wall = time.monotonic() - t0
    assert int(status) == 0, (out + err)[-5000:]
    record = Path(next(x for x in out.splitlines()[::-1] if x.startswith("Record: ")).split()[1])
    log = (record / "log.txt").read_text("utf-8")
    bazel = re.sub(r"^\w+ \| ", "", log, flags=re.M)  # the record's "err | " channel marks
    return SimpleNamespace(out=out + err, record=record, log=log, counts=_counts(bazel),
                           wall=wall)


def _bazel_actions(actions: list[dict]) -> list[dict]:
    """The worker's records less tfwizard's preflight probe (a no-op action of its own)."""
    from tfwizard.core.remote.reapi import PROBE_ARGV

    return [a for a in actions if a.get("argv") != list(PROBE_ARGV)]


def test_warm_build_with_the_recipes_executor_runs_remotely_and_reuses_its_container(
        reapi, rx, tmp_path):
    import docker

    from tests.docker import kit
    from tfwizard.core.building.plan.plan import make_plan
    from tfwizard.core.building.warm import container as warm
    from tfwizard.core.recipe import load_recipe

    token = uuid.uuid4().hex[:8]
    prefix = f"tfwizard-test-rxw-{token}"
    ws = world.copy_workspace(tmp_path)
    recipe = world.fixture_recipe(
        tmp_path / "r.toml", workspace=ws, prefix=prefix, network="host",
        name=f"rxw-{token}", bazel_flags=[_run_copt(token)],
        extra=(f'[remote]\nexecutor = "{reapi.endpoint}"\n'
               f'instance_name = "{reapi.instance_name}"\n'))
    env = {**os.environ, "TFWIZARD_DATA_DIR": str(tmp_path / "data")}
    client = docker.from_env(timeout=300)
    space = warm.workspace_for(make_plan(load_recipe(recipe), recipe_dir=tmp_path),
                               str(recipe.resolve()))
    try:
        mark = reapi.mark()
        first = _warm_build(recipe, env)
        assert "warm build container" in first.out and "started" in first.out
        ran = _bazel_actions(reapi.actions(mark))
        assert first.counts.get("remote", 0) >= 20, first.counts
        assert len(ran) >= first.counts["remote"], (first.counts, len(ran))
        assert {a["image"] for a in ran} == {world.IMAGE}
        assert len(_compiles_of(ran, token)) >= 20
        wheel = Path(next(x for x in first.out.splitlines() if x.startswith("Wheel: "))[7:])
        with zipfile.ZipFile(wheel) as zf:
            assert any(n.endswith("libtensorflow_framework.so") for n in zf.namelist())
        box = client.containers.get(space.container_name)
        assert box.labels.get(warm.WORKSPACE_LABEL) == space.key

        # one file edited: the same container, configure not run again, that one compile
        # (and what depends on it) executed remotely
        kernel = ws / _KERNEL
        kernel.write_text(kernel.read_text("utf-8")
                          + '\nextern "C" int tfw_rx_edit(void) { return 17; }\n', "utf-8")
        mark = reapi.mark()
        second = _warm_build(recipe, env)
        assert "reused" in second.out, second.out[-2000:]
        assert client.containers.get(space.container_name).id == box.id
        assert warm.SKIP_LINE in second.log
        ran = _bazel_actions(reapi.actions(mark))
        assert 0 < second.counts.get("remote", 0) < first.counts["remote"], second.counts
        assert any(a["argv"][-1].endswith("add_op.cc") or _KERNEL in a["argv"] for a in ran), \
            [a["argv"][-1] for a in ran]

        # nothing changed: nothing executes, remotely or here
        mark = reapi.mark()
        third = _warm_build(recipe, env)
        assert client.containers.get(space.container_name).id == box.id
        assert _bazel_actions(reapi.actions(mark)) == []
        assert "remote" not in third.counts and "linux-sandbox" not in third.counts, third.counts
        print(f"\nwarm + remote executor: first {first.wall:.1f} s ({first.counts}), "
              f"one-file edit {second.wall:.1f} s ({second.counts}), "
              f"no-op {third.wall:.1f} s ({third.counts})")
    finally:
        world.remove_workspace(client, space)
        kit.remove_caches(client, prefix)
        client.close()
