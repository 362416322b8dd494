"""The preflight that asks the remote execution service (issue 21), against BuildGrid.

tests/reapi runs the service: instance `tfwizard-test` executes (container-image is its
scheduler's one platform property key), `tfwizard-test-cache-only` does not.
"""

from __future__ import annotations

import time

import pytest

from tests import world
from tfwizard.cli import ExitStatus, capture
from tfwizard.core.recipe import parse_recipe
from tfwizard.core.remote.check import check_service

pytestmark = [pytest.mark.docker]


def _recipe(endpoint: str, instance: str, extra: str = ""):
    return parse_recipe(f"""schema = 1
name = "rx"
[tensorflow]
version = "2.21.0"
[remote]
executor = "{endpoint}"
instance_name = "{instance}"
{extra}
""")


def _codes(check) -> dict[str, object]:
    return {f.code: f for f in check.findings}


def test_a_good_service_answers_with_its_limits_and_takes_the_probe(reapi):
    prop = reapi.image_property(world.IMAGE)
    check = check_service(_recipe(reapi.endpoint, reapi.instance_name), {}, [prop])
    found = _codes(check)
    assert set(found) == {"REMOTE_SERVICE"}, [f.message for f in check.findings]
    assert check.capabilities is not None and check.capabilities.exec_enabled
    assert "4193280" in found["REMOTE_SERVICE"].message  # BuildGrid's batch limit
    assert check.probe is not None and check.probe.verdict in ("accepted", "ran")


def test_a_wrong_instance_name_is_an_error_in_seconds(reapi):
    t0 = time.monotonic()
    check = check_service(_recipe(reapi.endpoint, "no-such-instance"), {},
                          [reapi.image_property(world.IMAGE)])
    seconds = time.monotonic() - t0
    found = _codes(check)
    assert list(found) == ["REMOTE_CAPABILITIES"]
    finding = found["REMOTE_CAPABILITIES"]
    assert finding.severity == "error" and finding.key == "remote.instance_name"
    assert "no-such-instance" in finding.message and "remote.instance_name" in finding.message
    assert seconds < 5, seconds
    assert check.probe is None  # nothing submitted to an instance that does not exist


def test_a_service_without_execution_is_an_error(reapi):
    check = check_service(_recipe(reapi.endpoint, reapi.cache_only_instance), {},
                          [reapi.image_property(world.IMAGE)])
    found = _codes(check)
    assert found["REMOTE_NO_EXECUTION"].severity == "error"
    assert "remote.cache" in found["REMOTE_NO_EXECUTION"].message  # the fix is named
    assert check.probe is None


def test_an_unregistered_platform_property_is_an_error_before_the_build(reapi):
    t0 = time.monotonic()
    check = check_service(_recipe(reapi.endpoint, reapi.instance_name), {},
                          [reapi.image_property(world.IMAGE), "Pool=gpu-big"])
    found = _codes(check)
    assert found["REMOTE_PLATFORM"].severity == "error"
    assert found["REMOTE_PLATFORM"].key == "remote.exec_properties"
    assert "Pool" in found["REMOTE_PLATFORM"].message
    assert time.monotonic() - t0 < 5


def test_probe_off_submits_nothing(reapi):
    check = check_service(_recipe(reapi.endpoint, reapi.instance_name, "probe = false"), {},
                          ["Pool=gpu-big"])
    assert set(_codes(check)) == {"REMOTE_SERVICE"} and check.probe is None


def test_check_preflight_reports_the_wrong_instance(reapi, tmp_path):
    recipe = world.fixture_recipe(
        tmp_path / "r.toml", workspace=world.copy_workspace(tmp_path / "ws"),
        prefix="tfwizard-test-rxpre",
        extra=f'[remote]\nexecutor = "{reapi.endpoint}"\ninstance_name = "wrong-one"\n')
    t0 = time.monotonic()
    status, out, err = capture(["check", "--preflight", str(recipe)],
                               {"HOME": str(tmp_path), "TFWIZARD_DATA_DIR": str(tmp_path / "data")})
    assert status == ExitStatus.ERROR, out + err
    assert "REMOTE_CAPABILITIES" in out and "wrong-one" in out, out
    assert time.monotonic() - t0 < 30


@pytest.mark.slow
def test_only_executor_and_instance_build_the_wheel_remotely_in_the_recipes_image(
        reapi, tmp_path):
    """Issue 21, done when: a recipe with only remote.executor and remote.instance_name
    (and a network that reaches the service) builds the fixture's wheel on BuildGrid,
    every compile action executed remotely in the recipe's image; the counts reach
    result.json and the summary. The image's Bazel is 4.2.3: no --disk_cache."""
    import json
    import os
    import uuid
    from pathlib import Path

    world.ensure_images()
    token = uuid.uuid4().hex[:8]  # new action keys: a cold remote action cache
    recipe = world.fixture_recipe(
        tmp_path / "r.toml", workspace=world.copy_workspace(tmp_path / "ws"),
        prefix=f"tfwizard-test-rxb-{token}", network="host",
        bazel_flags=[f"--copt=-DTFW_REAPI_RUN={token}"],
        extra=f'[remote]\nexecutor = "{reapi.endpoint}"\n'
              f'instance_name = "{reapi.instance_name}"\n')
    mark = reapi.mark()
    data = tmp_path / "data"
    try:
        status, out, err = capture(["build", str(recipe), "--fresh", "--out", str(tmp_path / "out")],
                                   env_vars={**os.environ, "TFWIZARD_DATA_DIR": str(data)})
    finally:
        world.remove_prefixed(f"tfwizard-test-rxb-{token}")
    assert status == ExitStatus.OK, err + out[-4000:]
    record = Path(next(line for line in out.splitlines()
                       if line.startswith("Record: ")).split()[1])
    plan = json.loads((record / "plan.json").read_text())
    flags = [f["flag"] for f in plan["bazel_flags"]]
    assert plan["bazel_version"] == "4.2.3", plan["bazel_version_source"]
    assert not any(f.startswith("--disk_cache") for f in flags)
    assert f"--remote_default_exec_properties=container-image=docker://{world.IMAGE}" in flags
    ran = [a for a in reapi.actions(mark) if f"-DTFW_REAPI_RUN={token}" in a.get("argv", [])]
    assert len(ran) >= 20 and {a["image"] for a in ran} == {world.IMAGE}
    result = json.loads((record / "result.json").read_text())
    cache = result["cache"]
    assert cache["remote_executions"] >= len(ran) and cache["ran_here"] == 0, cache
    summary = next(line for line in out.splitlines() if line.startswith("Actions: "))
    assert f"{cache['remote_executions']} ran remotely" in summary, summary
    print(f"remote build: {summary}")
