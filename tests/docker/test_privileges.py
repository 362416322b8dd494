"""Least privilege against the real engine: what the containers get, who owns the outputs,
and that no name from a container reaches outside the output folder."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import world
from tests.docker import kit
from tfwizard.core.building.plan.plan import Step, make_plan
from tfwizard.core.building.run.containers import PREPARE_CAPS
from tfwizard.core.building.run.runner import BuildRunner
from tfwizard.core.errors import UsageError
from tfwizard.core.paths import LABEL
from tfwizard.core.recipe import load_recipe

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="module")
def pw(tmp_path_factory):
    yield from kit.docker_world(tmp_path_factory, "priv")


CAPS = "grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs)' /proc/self/status"


def _assert_least_privilege(client, build_id: str) -> dict:
    """Every container of the build: HostConfig as it must be; {step: container}."""
    containers = client.containers.list(all=True, filters={"label": f"{LABEL}.build={build_id}"})
    by_step = {c.labels[f"{LABEL}.step"]: c for c in containers}
    for step, c in by_step.items():
        host = c.attrs["HostConfig"]
        assert host["Privileged"] is False
        assert host["CapDrop"] == ["ALL"]
        assert host["CapAdd"] == (list(PREPARE_CAPS) if step == "prepare" else None)
        assert "no-new-privileges" in (host["SecurityOpt"] or [])
        assert host["NetworkMode"] == "none"  # as the recipe asks (see the test below)
        assert not host.get("Devices") and not host.get("DeviceRequests")
        for m in c.attrs["Mounts"]:
            assert "docker.sock" not in m.get("Source", "")
            if m["Type"] == "bind":
                assert not m["Source"].startswith(("/var/run", "/run", "/var/lib/docker"))
        assert c.labels[LABEL] == "1" and c.labels[f"{LABEL}.build"] == build_id
    return by_step


@pytest.mark.parametrize("uid", [0])  # busybox has no /bin/chown for the uid-1000 prepare
def test_every_container_is_unprivileged_without_capabilities_or_socket(pw, tmp_path, uid):
    """HostConfig of every container and what a step sees inside (uid 1000 and the
    prepare container: the fixture build below)."""
    steps = [Step("fetch", "fetch", ("sh", "-c", CAPS), workdir="/", needs_network=True),
             Step("build", "analyse", ("sh", "-c", CAPS + "; " + kit.make_wheel_script()),
                  workdir="/", needs_network=False)]
    plan = kit.busybox_plan(tmp_path, steps, prefix=pw.prefix, uid=uid, gid=uid)
    runner = BuildRunner(plan, out_dir=tmp_path / "out", data_root=tmp_path, client=pw.client,
                         keep_containers=True)
    pw.builds.append(runner.build_id)
    events = kit.run(runner)
    assert events[-1].result.status == "succeeded", events[-1].result.message
    by_step = _assert_least_privilege(pw.client, runner.build_id)
    assert set(by_step) == {"fetch", "build"}
    # inside: no effective, permitted or bounding capability; no-new-privileges in force
    lines = kit.stdout_lines(events)
    for key in ("CapEff", "CapPrm", "CapBnd"):
        values = {line.split()[1] for line in lines if line.startswith(key + ":")}
        assert values == {"0000000000000000"}, (key, lines)
    assert {line.split()[1] for line in lines if line.startswith("NoNewPrivs")} == {"1"}
    # every volume this build made is labelled as tfwizard's, with the build id
    for vol in pw.client.volumes.list(filters={"label": f"{LABEL}.build={runner.build_id}"}):
        assert vol.attrs["Labels"][LABEL] == "1"
    for name in plan.cache_volumes.values():
        labels = pw.client.volumes.get(name).attrs["Labels"]
        assert labels[LABEL] == "1" and f"{LABEL}.build" not in labels  # kept across builds


@pytest.mark.parametrize("network", ["bridge", "host", "none"])
def test_network_mode_is_what_the_recipe_asks_and_only_for_steps_that_need_it(pw, tmp_path,
                                                                               network):
    """Created (not started: this engine has no docker0 bridge) and inspected."""
    plan = kit.busybox_plan(tmp_path, "true", prefix=pw.prefix, network=network)
    runner = BuildRunner(plan, data_root=tmp_path, client=pw.client)
    pw.builds.append(runner.build_id)
    for needs in (True, False):
        step = Step(f"s{int(needs)}", "fetch", ("true",), workdir="/", needs_network=needs)
        c = runner.stepper.create(step, [], None)
        try:
            c.reload()
            host = c.attrs["HostConfig"]
            assert host["NetworkMode"] == (network if needs else "none")
            assert host["Privileged"] is False and host["CapDrop"] == ["ALL"]
            assert c.labels[f"{LABEL}.build"] == runner.build_id
        finally:
            c.remove(force=True)


def test_wheel_names_from_the_container_cannot_escape_the_output_folder(pw, tmp_path):
    """Links, folders, fifos, hidden and odd names in the wheel folder are never copied."""
    w = kit.WHEEL_DIR
    script = (kit.make_wheel_script("good-1-py3-none-any.whl") +  # a real wheel, checked
              f" && mkdir -p {w}/d-1-py3-none-any.whl && cd {w}"
              " && ln -s /etc/passwd link-1-py3-none-any.whl && ln -s ../../../../x.whl up.whl"
              " && ln good-1-py3-none-any.whl hard-1-py3-none-any.whl"
              " && echo hidden > ..evil.whl && echo nl > \"$(printf 'n\\nl.whl')\""
              " && mkfifo fifo-1-py3-none-any.whl && echo in > d-1-py3-none-any.whl/in.whl"
              " && ls -la")
    plan = kit.busybox_plan(tmp_path, script, prefix=pw.prefix)
    out = tmp_path / "nest" / "out"
    runner = BuildRunner(plan, out_dir=out, data_root=tmp_path / "data", client=pw.client)
    pw.builds.append(runner.build_id)
    result = kit.run(runner)[-1].result
    assert result.status == "succeeded", result.message
    assert sorted(p.name for p in out.iterdir()) == ["good-1-py3-none-any.whl"]
    assert (out / "good-1-py3-none-any.whl").read_bytes() == kit.fake_wheel()
    assert not list(tmp_path.rglob("x.whl")) and not list(tmp_path.rglob("in.whl"))
    assert not list(tmp_path.rglob("*evil*"))
    assert kit.leftovers(pw.client, runner.build_id) == []


@pytest.fixture(scope="module")
def fixture_builds(pw):
    """The fixture workspace built as root and as uid 1000 (one shared disk cache)."""
    out = {}
    for uid in (0, 1000):
        base = pw.base / f"uid{uid}"
        base.mkdir()
        ws = world.copy_workspace(base)
        if uid:
            for p in [base, ws, *ws.rglob("*")]:
                os.lchown(p, uid, uid)
        recipe = kit.recipe_file(base / "fixture.toml", source_dir=ws, prefix=pw.prefix)
        plan = make_plan(load_recipe(recipe), recipe_dir=base, uid=uid, gid=uid)
        # uid 1000: the containers stay for inspection (the prepare one included)
        runner = BuildRunner(plan, out_dir=base / "wheels", data_root=base / "data",
                             client=pw.client, keep_containers=bool(uid))
        pw.builds.append(runner.build_id)
        out[uid] = SimpleNamespace(runner=runner, result=kit.run(runner)[-1].result)
        if uid:
            out[uid].steps = set(_assert_least_privilege(pw.client, runner.build_id))
            kit.remove_build(pw.client, runner.build_id)
    return out


@pytest.mark.parametrize("uid", [0, 1000])
def test_fixture_build_works_without_capabilities_and_the_wheel_is_the_users(
        pw, fixture_builds, uid):
    if os.geteuid() != 0:
        pytest.skip("building as another uid and checking ownership needs root")
    build = fixture_builds[uid]
    result = build.result
    assert result.status == "succeeded", result.message
    wheel = Path(result.wheel)
    assert wheel.name.startswith("tensorflow_cpu-")
    st = wheel.stat()
    assert (st.st_uid, st.st_gid) == (uid, uid)
    assert (wheel.parent.stat().st_uid, wheel.parent.stat().st_gid) == (uid, uid)
    if uid:
        assert build.steps == {"prepare", "configure", "build"}  # all inspected
    assert kit.leftovers(pw.client, result.build_id) == []


# -- the record and --attach (issue 15 item 3) ---------------------------------------------------


def test_a_step_cannot_write_the_record_and_no_bind_reaches_the_data_folder(pw, tmp_path):
    """The whole record folder was bind-mounted read-write at /record; a step could rewrite
    the plan.json that `--attach` runs. Now /record is a per-build volume (the BEP file is
    copied back through the API): what a step writes there never reaches the record."""
    data = tmp_path / "data"
    script = ("echo '{\"steps\": []}' > /record/plan.json; echo evil > /record/result.json; "
              "ls -a /record; " + kit.make_wheel_script())
    plan = kit.busybox_plan(tmp_path, script, prefix=pw.prefix)
    runner = BuildRunner(plan, out_dir=tmp_path / "out", data_root=data, client=pw.client,
                         keep_containers=True)
    pw.builds.append(runner.build_id)
    result = kit.run(runner)[-1].result
    assert result.status == "succeeded", result.message
    assert json.loads((runner.record.path / "plan.json").read_text()) == json.loads(plan.to_json())
    assert json.loads((runner.record.path / "result.json").read_text())["status"] == "succeeded"
    for c in pw.client.containers.list(all=True,
                                       filters={"label": f"{LABEL}.build={runner.build_id}"}):
        for m in c.attrs["Mounts"]:
            if m["Type"] == "bind":
                assert not Path(m["Source"]).is_relative_to(data), m
                assert m["Source"] in {x.source for x in plan.mounts}, m  # the plan's own
            if m["Destination"] == "/record":
                assert m["Type"] == "volume", m


def test_attach_refuses_a_plan_changed_after_the_build_started(pw, tmp_path):
    """Whoever rewrote plan.json (a step before this fix, anything that can write the data
    folder) must not get `--attach` to run a step that mounts the home folder. The digest
    of the plan the build started with is kept in its containers' labels, which no step
    can change; a plan that does not match is refused and nothing runs."""
    home = tmp_path / "home"
    home.mkdir()
    plan = kit.busybox_plan(tmp_path, "i=0; while [ $i -lt 50 ]; do i=$((i+1)); echo line $i; "
                            "sleep 0.2; done", prefix=pw.prefix)
    runner = BuildRunner(plan, out_dir=tmp_path / "out", data_root=tmp_path / "data",
                         client=pw.client)
    pw.builds.append(runner.build_id)
    kit.detach_after(runner, "line 2")
    path = runner.record.path / "plan.json"
    evil = json.loads(path.read_text())
    evil["steps"].append({"name": "evil", "phase": "package", "workdir": "/",
                          "argv": ["sh", "-c", "echo owned > /home-of-user/.bashrc"],
                          "env": {}, "needs_network": False})
    evil["mounts"].append({"source": str(home), "target": "/home-of-user", "kind": "bind",
                           "read_only": False})
    path.write_text(json.dumps(evil, indent=2))
    with pytest.raises(UsageError) as info:
        BuildRunner.attach(runner.build_id, client=pw.client, data_root=tmp_path / "data")
    assert "plan.json" in info.value.message and "changed" in info.value.message
    assert not (home / ".bashrc").exists()
    names = [c.name for c in pw.client.containers.list(
        all=True, filters={"label": f"{LABEL}.build={runner.build_id}"})]
    assert not any(n.endswith("-evil") for n in names), names
    kit.remove_build(pw.client, runner.build_id)
