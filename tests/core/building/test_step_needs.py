"""Steps declare what they need; the runner's parts decide by that, never by a step's name.
Pure parts only: no engine (tests/docker/test_privileges.py checks real containers)."""

from __future__ import annotations

from pathlib import Path

from tfwizard.core.building.plan.fetchplan import make_fetch_plan
from tfwizard.core.building.plan.flags import RECORD
from tfwizard.core.building.plan.plan import Step, make_plan
from tfwizard.core.building.run.containers import (
    PREPARE_CAPS,
    SECRETS_DIR,
    StepSecrets,
    create_options,
)
from tfwizard.core.building.run.volumes import step_mounts
from tfwizard.core.consent import CONSENT_ENV
from tfwizard.core.recipe import load_recipe

ROOT = Path(__file__).resolve().parents[3]
OLD = load_recipe(ROOT / "recipes" / "tf216-rocm-gfx90a.toml")  # has a package step
CPU = load_recipe(ROOT / "recipes" / "tf221-cpu-portable.toml")


def test_each_plan_step_declares_its_role_network_and_record():
    plan = make_plan(OLD, uid=1000, gid=1000)
    roles = {s.name: (s.role, s.needs_network, s.needs_record) for s in plan.steps}
    assert roles["fetch"] == ("fetch", True, False)
    assert roles["configure"] == ("configure", True, False)
    assert roles["build"] == ("build", True, True)  # Bazel writes the BEP file to /record
    assert roles["package"] == ("package", False, False)
    fetch = make_fetch_plan(CPU, uid=1000, gid=1000)
    listing = [s for s in fetch.steps if s.role == "list"]
    assert [s.name for s in listing] == ["cache-before", "cache-after"]
    assert all(not s.needs_network and not s.needs_record for s in listing)
    nobuild = next(s for s in fetch.steps if s.role == "build")
    assert "--nobuild" in nobuild.argv and nobuild.needs_record


def test_only_a_step_that_writes_the_record_gets_its_volume():
    mounts = [{"Target": "/src", "Type": "volume"}, {"Target": RECORD, "Type": "volume"}]
    build = Step("compile-it", "compile", ("true",), role="build")
    other = Step("build", "fetch", ("true",), role="fetch")  # a name is only a name
    assert [m["Target"] for m in step_mounts(build, mounts)] == ["/src", RECORD]
    assert [m["Target"] for m in step_mounts(other, mounts)] == ["/src"]


def test_capabilities_and_gpu_follow_the_role_not_the_name():
    plan = make_plan(CPU, uid=1000, gid=1000)
    plan.gpu_passthrough = "rocm"

    def options(step):
        return create_options(plan, step, name="n", labels={"a": "1"}, mounts=[], user=None,
                              argv=list(step.argv), environment={}, init=True)

    prepare = options(Step("chown-volumes", "prepare", ("chown",), role="prepare",
                           needs_network=False))
    named_prepare = options(Step("prepare", "fetch", ("true",), role="fetch"))
    assert prepare["cap_add"] == list(PREPARE_CAPS) and "devices" not in prepare
    assert prepare["network_mode"] == "none"
    assert named_prepare["cap_add"] is None and named_prepare["devices"]
    for o in (prepare, named_prepare):
        assert o["privileged"] is False and o["cap_drop"] == ["ALL"]
        assert o["security_opt"] == ["no-new-privileges"]


def test_secrets_leave_argv_and_env_for_files():
    recipe = CPU.with_changes({"remote.cache": "grpcs://cache:443",
                               "remote.headers": ["x-api-key=${KEY}"],
                               "network.https_proxy": "http://user:pw@proxy:3128"})
    plan = make_plan(recipe, uid=1000, gid=1000)
    secrets = StepSecrets(plan, {"KEY": "k3y", CONSENT_ENV: "KEY@cache"})
    secrets.check()
    build = next(s for s in plan.steps if s.role == "build")
    argv, env, tar = secrets.files_for(build, "1000:1000")
    assert tar is not None and f"--bazelrc={SECRETS_DIR}/bazelrc" in argv
    assert not any("k3y" in a or "${KEY}" in a or "user:pw" in a for a in argv)
    assert "HTTPS_PROXY" not in env and b"k3y" in tar
