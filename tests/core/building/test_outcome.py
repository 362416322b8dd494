"""outcome.classify: every way a build can end, without Docker."""

from __future__ import annotations

import pytest

from tfwizard.core.building.run.outcome import classify, from_error, wants_wheels
from tfwizard.core.errors import BuildCancelled, TfWizardError

WHEEL_DIR = "/src/bazel-bin/tensorflow/tools/pip_package/wheel_house"


def test_cancel_wins_over_everything():
    out = classify(cancelled=True, exit_code=0, last_step="build", oom=True,
                   wheel_dir=WHEEL_DIR, wheels=["/w/tf.whl"])
    assert (out.status, out.message, out.wheel) == ("cancelled", "cancelled by the user", None)


@pytest.mark.parametrize(("code", "oom", "needle"), [
    (1, False, "step build exited with 1"),
    (None, False, "step build exited with None"),  # the engine gave no exit code
    (137, False, "most likely out of memory"),
    (137, True, "out of memory (the container's memory limit)"),
    (2, True, "out of memory (the container's memory limit)"),  # the engine's OOM mark rules
])
def test_a_failed_step_says_which_and_why(code, oom, needle):
    out = classify(cancelled=False, exit_code=code, last_step="build", oom=oom,
                   wheel_dir=WHEEL_DIR, wheels=["/w/stale.whl"])
    assert out.status == "failed" and needle in out.message and out.wheel is None
    assert not wants_wheels(cancelled=False, exit_code=code, wheel_dir=WHEEL_DIR)


def test_the_last_wheel_is_the_builds():
    assert wants_wheels(cancelled=False, exit_code=0, wheel_dir=WHEEL_DIR)
    out = classify(cancelled=False, exit_code=0, last_step="build", oom=False,
                   wheel_dir=WHEEL_DIR, wheels=["/w/a.whl", "/w/b.whl"])
    assert (out.status, out.wheel, out.message) == ("succeeded", "/w/b.whl", "wheel: /w/b.whl")


def test_no_wheel_after_passing_steps_is_a_failure():
    out = classify(cancelled=False, exit_code=0, last_step="package", oom=False,
                   wheel_dir=WHEEL_DIR, wheels=[])
    assert out.status == "failed" and WHEEL_DIR in out.message


def test_a_plan_without_a_wheel_succeeds_without_one():
    assert not wants_wheels(cancelled=False, exit_code=0, wheel_dir="")
    out = classify(cancelled=False, exit_code=0, last_step="cache-after", oom=False,
                   wheel_dir="")
    assert out.status == "succeeded" and "no wheel" in out.message and out.wheel is None


def test_errors():
    assert from_error(BuildCancelled("stopped while pulling"), cancelled=False).message \
        == "stopped while pulling"
    assert from_error(TfWizardError("engine gone"), cancelled=True).status == "cancelled"
    out = from_error(TfWizardError("engine gone", "start it"), cancelled=False)
    assert out.status == "error" and out.message.startswith("engine gone")
