"""WarmSecrets.build (issue 17): the secret Bazel flags of `bazel build` and of the `bazel
test` that `tfwizard test` derives from it leave the argv for the exec's rc variable."""

from __future__ import annotations

from tests import world
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.warm.secrets import NAMES_VAR, RC_VAR, SECRET_BUILD, WarmSecrets
from tfwizard.core.recipe import load_recipe
from tfwizard.core.testloop import run as testrun

VALUE = "warm-argv-secret-5Tq1"


def test_build_and_test_argv_carry_the_secret_flag_only_in_the_rc_variable(tmp_path):
    recipe = world.fixture_recipe(
        tmp_path / "r.toml", workspace=tmp_path, prefix="tfwizard-test-wsa", network="host",
        extra='[remote]\ncache = "http://127.0.0.1:9/"\nheaders = ["x-api-key=${TFWA_KEY}"]\n')
    plan = make_plan(load_recipe(recipe), recipe_dir=tmp_path)
    secrets = WarmSecrets(plan, {"TFWA_KEY": VALUE})
    build = list(next(s for s in plan.steps if s.name == "build").argv)
    test = testrun.test_argv(plan, ["//tensorflow/core:reduction_ops_test"], "/record/bep-x.json", [])
    assert test[test.index("test") + 1:].count("test") == 0  # `test` is Bazel's command
    for argv in (build, test):
        assert any("${TFWA_KEY}" in a for a in argv)
        got, extra = secrets.build(argv)
        assert got[:3] == ["sh", "-c", SECRET_BUILD]
        assert not any("TFWA_KEY" in a or VALUE in a for a in got), got
        assert f"--remote_header=x-api-key={VALUE}" in extra[RC_VAR]
        assert extra[NAMES_VAR] == ""  # no environment variable holds a secret here
        # the command index handed to SECRET_BUILD points at Bazel's command
        k = int(got[5])
        assert got[6:][k] in ("build", "test")
    # neither a build nor a test: left as it is
    assert secrets.build(["bazel", "info"]) == (["bazel", "info"], {})
