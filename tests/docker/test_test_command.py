"""`tfwizard test` (issue 23, core/testloop/run.py, cli/test.py) against the real engine and
the fixture workspace's test targets: passing and failing tests in the warm container, TF's
tag filters leaving out a named `manual` and a `gpu` test, the failing test's own log and
every test.xml kept in the record, a rerun served from Bazel's cache.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.docker import kit
from tfwizard.cli import capture

pytestmark = [pytest.mark.docker, pytest.mark.slow]

PASSING = "//tensorflow/core:reduction_ops_test"
FAILING = kit.FAILING_TESTS[0]
MANUAL = "//tensorflow/core:concat_op_test"
GPU = "//tensorflow/core:matmul_op_test_gpu"
TARGETS = [PASSING, FAILING, MANUAL, GPU]


@pytest.fixture(scope="module")
def tw(warm_test_world, tmp_path_factory):
    return kit.data_dir(warm_test_world, tmp_path_factory, "testcmd")


def _test(tw, *args: str) -> tuple[int, str, str]:
    status, out, err = capture(["test", *args, str(tw.recipe), *TARGETS],
                               env_vars={**os.environ, "TFWIZARD_DATA_DIR": str(tw.data)})
    return int(status), out, err


def test_results_filters_and_the_failing_tests_own_log(tw):
    status, out, err = _test(tw, "--json")
    assert status == 1, err[-3000:]
    run = json.loads(out)
    by_label = {t["label"]: t for t in run["tests"]}
    # the named manual test and the gpu test (no GPU in the container) are not run
    assert set(by_label) == {PASSING, FAILING}, (by_label, err[-3000:])
    assert ("--test_tag_filters=-gpu,-tpu,-no_oss,-oss_excluded,-oss_serial,-benchmark-test,"
            "-v1only,-manual") in run["argv"]
    assert run["exit_name"] == "TESTS_FAILED" and run["exit_code"] == 3
    assert by_label[PASSING]["status"] == "PASSED" and by_label[PASSING]["attempts"] == 1
    assert by_label[FAILING]["status"] == "FAILED"
    record = Path(run["record_dir"])
    assert record.parent == tw.data / "tests"
    own_log = (record / "tests/tensorflow/python/kernel_tests/matmul_op_test/test.log"
               ).read_text("utf-8")
    assert "FAIL: test_identity" in own_log and "AssertionError" in own_log
    # Bazel's whole log is not the test's own: it names the other test too
    assert PASSING not in own_log
    assert (record / "tests/tensorflow/core/reduction_ops_test/test.xml").is_file()
    assert not (record / "tests/tensorflow/core/reduction_ops_test/test.log").exists()
    assert not (record / "tests/tensorflow/core/concat_op_test").exists()
    assert json.loads((record / "result.json").read_text("utf-8"))["exit_name"] == \
        "TESTS_FAILED"
    bazel_log = (record / "log.txt").read_text("utf-8")  # Bazel's whole output, tagged
    # (the passing test may be cached: the Docker test world is shared by three modules)
    assert "FAILED in" in bazel_log and re.search(r"Executed [12] out of 2 tests", bazel_log)


def test_the_rerun_is_cached_and_prints_the_failing_log_tail(tw):
    status, out, err = _test(tw)
    assert status == 1, err[-3000:]
    lines = out.splitlines()
    passed = [ln for ln in lines if PASSING in ln and ln.startswith("PASSED")]
    assert passed and "(cached)" in passed[0], out
    assert any(ln.startswith("FAILED") and FAILING in ln for ln in lines), out
    tail = out.split(f"--- {FAILING}", 1)[1]
    assert "AssertionError" in tail
    assert "1 of 2 tests passed; Bazel: TESTS_FAILED" in out
    assert MANUAL not in out and GPU not in out
