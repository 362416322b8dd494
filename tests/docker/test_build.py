"""The build runner and `tfwizard build` against the real Docker engine and the TF-shaped
fixture workspace (tests/fixtures/tf_workspace) in the offline Bazel test image.

Docker time is kept modest: one cold fixture build, the rest reuse its disk cache or stop
early (busybox for the plumbing, cancel at the first action line).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import world
from tests.docker import kit
from tfwizard.cli import ExitStatus, capture
from tfwizard.core.building.plan.plan import OUTPUT_USER_ROOT, Step, make_plan
from tfwizard.core.building.run.record import read_log
from tfwizard.core.building.run.runner import BuildRunner
from tfwizard.core.diagnosis.build import diagnose_file
from tfwizard.core.paths import LABEL
from tfwizard.core.recipe import load_recipe

pytestmark = [pytest.mark.docker, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]


def _recipe(path: Path, *, workspace: Path, prefix: str, name: str = "fixture",
            bazel_flags: tuple[str, ...] = ()) -> Path:
    return world.fixture_recipe(path, workspace=workspace, prefix=prefix, name=name,
                                bazel_flags=bazel_flags)


@pytest.fixture(scope="module")
def tw(tmp_path_factory):
    """The module's test world: one workspace copy, one pair of cache volumes, a data dir."""
    world.require_docker()
    world.ensure_images()
    import docker

    base = tmp_path_factory.mktemp("build")
    prefix = f"tfwizard-test-{uuid.uuid4().hex[:8]}"
    ns = SimpleNamespace(base=base, workspace=world.copy_workspace(base), prefix=prefix,
                         data=base / "data", client=docker.from_env(timeout=120))
    ns.recipe = _recipe(base / "fixture.toml", workspace=ns.workspace, prefix=prefix)
    yield ns
    for vol in ns.client.volumes.list(filters={"label": f"{LABEL}.recipe"}):
        if vol.name.startswith(prefix):
            vol.remove(force=True)
    ns.client.close()


def test_events_stream_from_a_container_with_channels_and_a_wheel(tw, tmp_path):
    """Plumbing on busybox: stdout/stderr separated, partial and \\r lines, record, wheel."""
    plan = make_plan(load_recipe(tw.recipe), recipe_dir=tw.base)
    script = ("echo out-1; echo err-1 >&2; printf 'cr-a\\rcr-b\\n'; printf 'no-newline'; "
              + kit.make_wheel_script())
    plan = dataclasses.replace(
        plan, image=world.BUSYBOX, wheel_dir=f"{OUTPUT_USER_ROOT}/w",
        steps=[Step("build", "analyse", ("sh", "-c", script), workdir="/")])
    runner = BuildRunner(plan, out_dir=tmp_path / "out", data_root=tmp_path, client=tw.client)
    events = kit.run(runner)
    result = events[-1].result
    assert result.status == "succeeded", result.message
    assert Path(result.wheel).read_bytes() == kit.fake_wheel()
    logs = [(e.channel, line) for e in events if e.type == "log" for line in e.lines]
    # order holds within a channel (stdout and stderr are separate pipes: not across them)
    assert [t for c, t in logs if c == "stdout"] == ["out-1", "cr-a", "cr-b", "no-newline"]
    assert [t for c, t in logs if c == "stderr"] == ["err-1"]
    assert list(read_log(runner.record.log_path)) == logs
    record = runner.record.path
    assert json.loads((record / "plan.json").read_text())["image"] == world.BUSYBOX
    assert json.loads((record / "result.json").read_text())["status"] == "succeeded"
    assert kit.leftovers(tw.client, runner.build_id) == []


def test_a_missing_image_is_a_clear_error(tw, tmp_path):
    plan = make_plan(load_recipe(tw.recipe), recipe_dir=tw.base)
    plan = dataclasses.replace(plan, image="tfwizard-test/absent:nothing")
    runner = BuildRunner(plan, data_root=tmp_path, client=tw.client, pull=False)
    result = kit.run(runner)[-1].result
    assert result.status == "error"
    assert "tfwizard-test/absent:nothing is not on this machine" in result.message


@pytest.fixture(scope="module")
def cold(tw):
    """The one cold fixture build of the module, through the runner."""
    plan = make_plan(load_recipe(tw.recipe), recipe_dir=tw.base)
    runner = BuildRunner(plan, out_dir=tw.base / "wheels", data_root=tw.data, client=tw.client,
                         recipe_text=tw.recipe.read_text())
    events = kit.run(runner)
    return SimpleNamespace(runner=runner, events=events, result=events[-1].result)


def test_fixture_build_produces_a_real_wheel_and_a_full_record(tw, cold):
    result = cold.result
    assert result.status == "succeeded", result.message
    wheel = Path(result.wheel)
    assert wheel.parent == tw.base / "wheels" and wheel.name.startswith("tensorflow_cpu-")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    assert any(n.endswith("METADATA") for n in names)
    assert result.bazel_exit == "SUCCESS" and result.actions == 30
    phases = [e.phase for e in cold.events if e.type == "phase"]
    for a, b in zip(["prepare", "configure", "analyse", "compile"],
                    ["configure", "analyse", "compile", "package"], strict=True):
        assert phases.index(a) < phases.index(b)
    progress = [e for e in cold.events if e.type == "progress" and e.total]
    assert progress and progress[-1].done == progress[-1].total == 30
    record = Path(result.record_dir)
    assert {"recipe.toml", "plan.json", "log.txt", "bep.json", "result.json"} <= {
        p.name for p in record.iterdir()}
    assert (record / "recipe.toml").read_text() == tw.recipe.read_text()
    log = (record / "log.txt").read_text()
    assert "err | INFO: Build completed successfully, 30 total actions" in log
    assert "out | You have bazel" in log  # configure.py's output, tagged stdout
    assert kit.leftovers(tw.client, result.build_id) == []


def test_plan_and_result_carry_the_image_the_build_ran_in(tw, cold):
    """plan.json and result.json name the image by ID (and repository digest when a registry
    gave it: the fixture image is imported here, so it has none)."""
    assert cold.result.status == "succeeded", cold.result.message
    record = Path(cold.result.record_dir)
    image = tw.client.images.get(world.IMAGE)
    plan = json.loads((record / "plan.json").read_text())
    result = json.loads((record / "result.json").read_text())
    assert plan["image"] == world.IMAGE
    assert plan["image_id"] == result["image_id"] == image.id
    assert plan["image_digest"] == result["image_digest"] == (
        image.attrs.get("RepoDigests") or [""])[0]
    log = (record / "log.txt").read_text()
    assert f"tfw | image {image.id}: what the plan needs is there" in log
    assert log.index("what the plan needs is there") < log.index("step configure")


def test_second_build_through_the_cli_reuses_the_disk_cache(tw, cold, tmp_path):
    assert cold.result.status == "succeeded"
    out = tmp_path / "out"
    status, stdout, stderr = capture(
        ["build", "--fresh", str(tw.recipe), "--out", str(out), "--json"],
        env_vars={**os.environ, "TFWIZARD_DATA_DIR": str(tw.data)})
    assert status == ExitStatus.OK, stderr + stdout[-3000:]
    events = [json.loads(line) for line in stdout.splitlines()]
    finished = [e for e in events if e["type"] == "finished"][-1]["result"]
    assert finished["status"] == "succeeded"
    # Bazel 4 reports disk-cache hits as "remote cache hit": every compile came from the cache
    assert finished["cache_hits"] == 28
    assert finished["build_id"] != cold.result.build_id
    assert Path(finished["wheel"]).parent == out and Path(finished["wheel"]).is_file()
    assert any(e["type"] == "log" and e["line"].startswith("INFO: 30 processes: 28 remote "
                                                           "cache hit") for e in events)


def test_break_variant_fails_and_is_diagnosed_from_the_real_log(tw, tmp_path):
    """As a non-root uid (volumes handed over by the prepare container, /record a volume)."""
    ws = world.copy_workspace(tmp_path)
    for p in [ws, *ws.rglob("*")]:
        os.lchown(p, 1000, 1000)
    recipe = _recipe(tmp_path / "break.toml", workspace=ws, prefix=tw.prefix + "-uid",
                     bazel_flags=("--copt=-DTFW_FIXTURE_BREAK",))
    plan = make_plan(load_recipe(recipe), recipe_dir=tmp_path, uid=1000, gid=1000)
    runner = BuildRunner(plan, out_dir=tmp_path / "out", data_root=tw.data, client=tw.client)
    events = kit.run(runner)
    result = events[-1].result
    assert result.status == "failed" and result.wheel is None
    assert result.bazel_exit == "BUILD_FAILURE" and result.exit_code == 1
    assert "compile-error" in result.findings
    finding = next(e for e in events if e.type == "finding" and e.id == "compile-error")
    lines = runner.record.log_path.read_text().splitlines()
    assert any("matmul_op.cc" in lines[n - 1] for n in finding.lines)
    assert [d.id for d in diagnose_file(runner.record.path)][0] == "compile-error"
    # only generic signatures: the compiler's own line follows, labelled as not recognised
    unknown = [e for e in events if e.type == "unrecognised"]
    assert len(unknown) == 1 and events.index(unknown[0]) > events.index(finding)
    assert any(speaker == "compiler" and "'MatMulKernel' was not declared" in text
               for _line, text, speaker in unknown[0].lines), unknown[0].lines
    assert "MatMulKernel" in unknown[0].query and "findings" not in unknown[0].to_dict()
    assert "NOT RECOGNISED: no known cause matches this log" in \
        runner.record.log_path.read_text()
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
    assert (runner.record.path / "bep.json").is_file()  # copied back from the volume
    assert kit.leftovers(tw.client, result.build_id) == []


def test_cancel_mid_build_stops_within_10s_and_leaves_nothing(tw, tmp_path):
    recipe = _recipe(tmp_path / "sleep.toml", workspace=tw.workspace, prefix=tw.prefix,
                     bazel_flags=("--action_env=TFW_FIXTURE_SLEEP=120",))
    plan = make_plan(load_recipe(recipe), recipe_dir=tmp_path)
    cancelled_at = []

    def on_event(runner, event):
        if (not cancelled_at and event.type == "log"
                and any(line.startswith("[") for line in event.lines)):
            cancelled_at.append(time.monotonic())
            runner.cancel()

    runner = BuildRunner(plan, out_dir=tmp_path / "out", data_root=tw.data, client=tw.client)
    events = kit.run(runner, on_event)
    assert cancelled_at, "the build never reached its first action"
    assert time.monotonic() - cancelled_at[0] < 10
    result = events[-1].result
    assert result.status == "cancelled" and result.wheel is None
    assert kit.leftovers(tw.client, runner.build_id) == []
    saved = json.loads((runner.record.path / "result.json").read_text())
    assert saved["status"] == "cancelled"
    log = runner.record.log_path.read_text()
    assert "Analyzing: target //tensorflow/tools/pip_package:wheel" in log


def test_sigint_to_tfwizard_build_cancels_cleanly(tw, tmp_path):
    name = f"sigint-{uuid.uuid4().hex[:6]}"
    recipe = _recipe(tmp_path / "sigint.toml", workspace=tw.workspace, prefix=tw.prefix,
                     name=name, bazel_flags=("--action_env=TFW_FIXTURE_SLEEP=120",))
    env = {**os.environ, "TFWIZARD_DATA_DIR": str(tw.data), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "tfwizard", "build", "--fresh", str(recipe), "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=tmp_path)
    record = None
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            event = json.loads(line)
            if event["type"] == "artifact" and event["kind"] == "record":
                record = Path(event["path"])
            if event["type"] == "log" and event["line"].startswith("["):
                break
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=30)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == ExitStatus.CANCELLED, err
    assert took < 10
    left = tw.client.containers.list(all=True, filters={"label": f"{LABEL}.recipe={name}"})
    assert left == []
    assert record is not None
    assert json.loads((record / "result.json").read_text())["status"] == "cancelled"
    assert (record / "log.txt").stat().st_size > 0


def test_secrets_reach_the_container_but_never_the_record(tw, tmp_path):
    """A ${ENV} reference is resolved only at container start; log, plan and BEP mask it."""
    secret = "http://alice:s3cretpass@proxy.invalid:3128"
    plan = make_plan(load_recipe(tw.recipe), recipe_dir=tw.base)
    env = dict(plan.container_env, HTTPS_PROXY="${TFW_TEST_PROXY}")
    script = ('echo "len=${#HTTPS_PROXY}"; echo "proxy is $HTTPS_PROXY"; '
              + kit.make_wheel_script())
    plan = dataclasses.replace(
        plan, image=world.BUSYBOX, wheel_dir=f"{OUTPUT_USER_ROOT}/w", container_env=env,
        steps=[Step("build", "analyse", ("sh", "-c", script), workdir="/")])
    runner = BuildRunner(plan, out_dir=tmp_path / "out", data_root=tmp_path, client=tw.client,
                         env=kit.consented(plan, {**os.environ, "TFW_TEST_PROXY": secret}))
    events = kit.run(runner)
    assert events[-1].result.status == "succeeded", events[-1].result.message
    lines = [line for e in events if e.type == "log" for line in e.lines]
    assert f"len={len(secret)}" in lines  # the container saw the resolved value
    assert not any("s3cretpass" in line for line in lines)  # front ends see it masked
    record = runner.record.path
    for name in ("log.txt", "plan.json", "result.json"):
        text = (record / name).read_text()
        assert "s3cretpass" not in text, name
    assert "${TFW_TEST_PROXY}" in (record / "plan.json").read_text()
    assert any("***" in line for _, line in read_log(runner.record.log_path))


def test_build_install_verify_chain_on_the_fixture(tw, cold, tmp_path):
    """`tfwizard build --install --verify` then `tfwizard verify --venv`: a truthful report."""
    if sys.version_info[:2] != (3, 11):
        pytest.skip("the fixture wheel is cp311")
    links = tmp_path / "links"
    world.build_cuda_stub_wheel(links)
    recipe = tw.recipe.read_text().replace("[cache]", f'[install]\nvenv = "{tmp_path / "venv"}"\n'
                                           'extras = ["and-cuda"]\n[cache]')
    path = tmp_path / "fixture-install.toml"
    path.write_text(recipe)
    env = {**os.environ, "TFWIZARD_DATA_DIR": str(tw.data)}
    status, out, err = capture(["build", "--fresh", str(path), "--host",
                                str(ROOT / "tests/data/hosts/no-gpu-server.json"), "--install",
                                "--find-links", str(links), "--no-index", "--verify"], env)
    assert status == ExitStatus.OK, out + err
    assert "Installed" in out and "reduce_sum" in out
    venv_py = tmp_path / "venv" / "bin" / "python"
    freeze = subprocess.run([str(venv_py), "-m", "pip", "freeze"], capture_output=True,
                            text=True, check=True).stdout
    assert "tfwizard-fixture-cuda-stub==1.0" in freeze  # the [and-cuda] extra resolved offline
    status, out, err = capture(["verify", "--venv", str(tmp_path / "venv"), "--expect", "cpu",
                                "--host", str(ROOT / "tests/data/hosts/no-gpu-server.json")], env)
    assert status == ExitStatus.OK, out + err
    assert "2.18.0" in out or "TensorFlow" in out
    records = sorted((tw.data / "builds").iterdir(), key=lambda p: p.stat().st_mtime)
    assert (records[-1] / "install.json").is_file() and (records[-1] / "verify.json").is_file()


def test_the_team_flow_publishes_the_fixture_build_and_a_fresh_machine_installs_it(
        tw, cold, tmp_path):
    """The build server publishes the cold fixture build to a pypiserver on loopback (an
    htpasswd for uploads); a machine with a fresh data folder and home asks `advise
    --wheelhouse`, which names that wheel, and `install --wheelhouse` puts it into a venv:
    pip reports the labelled version. The upload password is in no record, log or bundle.
    (Last in the module: publishing adds to the cold build's record.)"""
    if sys.version_info[:2] != (3, 11):
        pytest.skip("the fixture wheel is cp311")
    from tests.core.wheelhouse import kit as house_kit
    from tests.net.pypiserver import PypiServer

    assert cold.result.status == "succeeded", cold.result.message
    no_gpu = str(ROOT / "tests/data/hosts/no-gpu-server.json")
    password = f"fixture-upload-{uuid.uuid4().hex}"
    build_home = tmp_path / "build-home"
    build_home.mkdir()
    builder = {**os.environ, "HOME": str(build_home), "TFWIZARD_DATA_DIR": str(tw.data),
               "TWINE_USERNAME": "builder", "TWINE_PASSWORD": password}
    with PypiServer(tmp_path, users={"builder": password}) as server:
        status, out, err = capture(["publish", cold.result.build_id, "--to", server.simple],
                                   builder)
        assert status == ExitStatus.OK, out + err
        stored = [p.name for p in server.packages.iterdir()]
        assert len(stored) == 1 and stored[0].startswith("tensorflow_cpu-2.18.0+cpu-cp311-")
        assert f"Uploaded {stored[0]}" in out
        assert "User 'builder' stored" in server.log_text()

        home = tmp_path / "home"
        home.mkdir()
        machine = {k: v for k, v in os.environ.items() if not k.startswith("TWINE_")}
        machine.update(HOME=str(home), TFWIZARD_DATA_DIR=str(tmp_path / "fresh-data"))
        status, out, err = capture(["advise", "--wheelhouse", server.simple, "--host", no_gpu,
                                    "--python", "3.11", "--intent", "cpu"], machine)
        assert status == ExitStatus.OK, out + err
        assert f"The wheelhouse has a wheel that serves this machine: {stored[0]}" in out
        assert out.index(stored[0]) < out.index("Verdict:")  # ahead of a source build
        venv = tmp_path / "venv"
        status, out, err = capture(["install", "--wheelhouse", server.simple, "--venv",
                                    str(venv), "--create", "--host", no_gpu, "--no-index"],
                                   machine)
        assert status == ExitStatus.OK, out + err
        show = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "show",
                               "tensorflow-cpu"], capture_output=True, text=True,
                              check=True).stdout
        assert "Version: 2.18.0+cpu" in show
        record = json.loads(next((tmp_path / "fresh-data" / "installs").glob("*.json"))
                            .read_text())
        assert record["provenance"]["build_id"] == cold.result.build_id
        assert f"{stored[0]}: sha256 as the index gives it" in out
        # verify names the wheelhouse build the venv holds (from its dist-info)
        status, out, err = capture(["verify", "--venv", str(venv), "--expect", "cpu",
                                    "--host", no_gpu], machine)
        assert status == ExitStatus.OK, out + err
        assert re.search(rf"Wheelhouse\s+2\.18\.0\+cpu: recipe fixture \(sha256 [0-9a-f]{{12}}\), "
                         rf"build {cold.result.build_id} of ", out), out
        assert f"installed from {server.simple} on " in out  # the install record's

    bundle = tmp_path / "bundle"
    bundle.mkdir()
    status, out, err = capture(["bundle", cold.result.build_id, "--out", str(bundle), "--host",
                                no_gpu], builder)
    assert status == ExitStatus.OK, out + err
    assert house_kit.leaks(password, tw.data, tmp_path / "fresh-data", bundle, venv) == []
    assert house_kit.leaks("builder", Path(cold.result.record_dir) / "publish.json")
