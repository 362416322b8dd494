"""The warm container's shell (resources/scripts/*.sh): every file passes shellcheck, and
so does each script as the code passes it to `sh -c` (joined, placeholders filled).
Skipped only where shellcheck is missing outside CI (tests/run.sh installs it)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tests import world
from tfwizard.core.building.warm import configure, container
from tfwizard.core.resources import resource_path, shell_script

SCRIPTS = sorted(resource_path("scripts").glob("*.sh"))
#: what the code runs: name -> the text it passes to `sh -c`
AS_RUN = {"IDLE_LOOP": container.IDLE_LOOP, "EXEC_WRAPPER": container.EXEC_WRAPPER,
          "SIGNAL_GROUP": container.SIGNAL_GROUP, "BUILD_SCRIPT": container.BUILD_SCRIPT,
          "CONFIGURE_IF_CHANGED": configure.CONFIGURE_IF_CHANGED}


@pytest.fixture(scope="module")
def shellcheck() -> str:
    found = shutil.which("shellcheck")
    if found is None:
        if world.in_ci():
            pytest.fail("shellcheck is missing (tests/run.sh installs it)")
        pytest.skip("shellcheck is not installed (apt-get install shellcheck)")
    return found


def test_the_scripts_are_there_and_used():
    names = {p.name for p in SCRIPTS}
    assert names == {"warm-idle-loop.sh", "warm-exec.sh", "warm-signal.sh", "warm-ours.sh",
                     "warm-configure.sh", "warm-build.sh"}
    for text in AS_RUN.values():
        assert not re.search(r"__[A-Z]+__", text), text  # every placeholder filled
        assert not text.startswith("#!")  # the header comment stays in the file
    assert configure.IF_CHANGED in container.BUILD_SCRIPT
    assert configure.SKIP_LINE in container.BUILD_SCRIPT
    assert container.BUILD_SCRIPT.startswith(configure.OURS)


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_each_file_passes_shellcheck(shellcheck, path):
    run = subprocess.run([shellcheck, "--shell=sh", str(path)], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("name", sorted(AS_RUN))
def test_each_script_as_run_passes_shellcheck(shellcheck, name):
    run = subprocess.run([shellcheck, "--shell=sh", "-"], input=AS_RUN[name],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr


def test_shellcheck_would_fail_a_bad_script(shellcheck, tmp_path):
    bad = tmp_path / "bad.sh"
    bad.write_text("#!/bin/sh\nrm -rf $1/*\n")
    assert subprocess.run([shellcheck, str(bad)], capture_output=True).returncode != 0


def test_placeholders_are_filled(tmp_path):
    assert shell_script("warm-configure.sh", SKIP="done").count("done") == 1
