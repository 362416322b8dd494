"""The fixture workspace's test targets under bare Bazel (no tfwizard code): the facts that
`tfwizard test` (issue 23) builds on, proven on the real engine in the offline test image.

One long-lived container (the way a warm workspace keeps its Bazel server) runs every
command of the module: a cold `bazel test` with TensorFlow's tag filters, a warm rerun, the
failing and flaky tests, `bazel query` from edited files to tests, `bazel coverage` with the
image's @remote_coverage_tools stand-in, and a rerun after a one-file edit. The timings are
printed (run with -s to see them); tests/fixtures/tf_workspace/README.md records them.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import world

pytestmark = [pytest.mark.docker, pytest.mark.slow]

#: TensorFlow's CI tag filters for a CPU container (issue 23).
TAG_FILTERS = "--test_tag_filters=-gpu,-no_oss,-oss_excluded,-benchmark-test,-manual"
BEP_IN_CONTAINER = f"{world.CONTAINER_WORKSPACE}/bep"

#: What `bazel test --build_tests_only TAG_FILTERS //...` runs once configure.py has written
#: `test --test_size_filters=small,medium` (allocator_test is large; concat_op_test is manual).
FILTERED_SUITE = {
    "//tensorflow/core:reduction_ops_test": "PASSED",
    "//tensorflow/core:matmul_op_test": "PASSED",
    "//tensorflow/core:tensor_shape_test": "PASSED",
    "//tensorflow/core:random_uniform_op_test": "FLAKY",
    "//tensorflow/python/kernel_tests:reduction_ops_test": "PASSED",
    "//tensorflow/python/kernel_tests:matmul_op_test": "PASSED",
}
ALL_TESTS = {
    *FILTERED_SUITE,
    "//tensorflow/core:reduction_ops_benchmark_test",
    "//tensorflow/core:matmul_op_test_gpu",
    "//tensorflow/core:cast_op_test",
    "//tensorflow/core:argmax_op_test",
    "//tensorflow/core:concat_op_test",
    "//tensorflow/core:allocator_test",
}
CC_TESTS = {t for t in ALL_TESTS if t.startswith("//tensorflow/core:")}
PY_TESTS = ALL_TESTS - CC_TESTS

#: edited file -> kind(".*_test rule", rdeps(//..., FILE)): no tag or size filter applied.
EDIT_TO_TESTS = {
    "tensorflow/core/kernels/reduce_sum_op.cc": {
        "//tensorflow/core:reduction_ops_test",
        "//tensorflow/core:reduction_ops_benchmark_test",
        "//tensorflow/python/kernel_tests:reduction_ops_test",
    },
    "tensorflow/core/kernels/matmul_op.cc": {
        "//tensorflow/core:matmul_op_test",
        "//tensorflow/core:matmul_op_test_gpu",
        "//tensorflow/python/kernel_tests:matmul_op_test",
    },
    "tensorflow/core/kernels/cast_op.cc": {"//tensorflow/core:cast_op_test"},
    "tensorflow/core/kernels/concat_op.cc": {"//tensorflow/core:concat_op_test"},
    "tensorflow/core/kernels/random_uniform_op.cc": {
        "//tensorflow/core:random_uniform_op_test"},
    "tensorflow/core/kernels/add_op.cc": set(),
    "tensorflow/core/kernels/reduction_ops_test.cc": {"//tensorflow/core:reduction_ops_test"},
    "tensorflow/core/framework/tensor_shape.cc": ALL_TESTS,
    "tensorflow/core/framework/op_kernel.h": ALL_TESTS,
    "tensorflow/core/platform/test.h": CC_TESTS,
    "tensorflow/python/kernel_tests/kernel_test_util.py": PY_TESTS,
    "tensorflow/tools/pip_package/build_wheel.py": set(),
}
EDITED = "tensorflow/core/kernels/reduce_sum_op.cc"


def _events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _payloads(events: list[dict], kind: str) -> list[tuple[dict, dict]]:
    """(id, payload) of each BEP event of that kind (testResult, testSummary, ...)."""
    return [(e["id"][kind], e[kind]) for e in events if kind in e["id"] and kind in e]


def _summaries(events: list[dict]) -> dict[str, dict]:
    return {i["label"]: p for i, p in _payloads(events, "testSummary")}


class Lab(SimpleNamespace):
    """The module's workspace, its long-lived container and what was measured."""

    def bazel(self, *args: str, name: str = "") -> SimpleNamespace:
        """`bazel <command> <UI flags> [--build_event_json_file] <args>`; name keeps the BEP."""
        command, *rest = args
        flags = [*world.BAZEL_UI_FLAGS]
        if name:
            flags.append(f"--build_event_json_file={BEP_IN_CONTAINER}/{name}.json")
        start = time.monotonic()
        run = self.box.exec(["bazel", command, *flags, *rest])
        seconds = time.monotonic() - start
        if name:
            self.seconds[name] = seconds
        events = _events(self.ws / "bep" / f"{name}.json") if name else []
        return SimpleNamespace(code=run.exit_code, out=run.output, seconds=seconds,
                               events=events)

    def cat(self, path: str) -> str:
        run = self.box.exec(["cat", path])
        assert run.exit_code == 0, run.output
        return run.output


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    world.require_docker()
    world.ensure_images()
    base = tmp_path_factory.mktemp("fixture_tests")
    ws = world.copy_workspace(base)
    configured = world.run_configure(ws)
    assert configured.exit_code == 0, configured.output
    (ws / "bep").mkdir()
    with world.long_lived(ws) as box:
        lab = Lab(ws=ws, box=box, seconds={})
        yield lab
        print("\nfixture test timings (s): " + ", ".join(
            f"{k} {v:.1f}" for k, v in lab.seconds.items()))


@pytest.fixture(scope="module")
def cold(lab):
    """The first `bazel test` of the container: server start, analysis, compiles, tests."""
    return lab.bazel("test", "--build_tests_only", TAG_FILTERS, "//...", name="cold")


def test_tag_filters_run_the_expected_suite_and_it_passes(cold):
    assert cold.code == 0, cold.out[-5000:]
    summaries = _summaries(cold.events)
    assert {label: s["overallStatus"] for label, s in summaries.items()} == FILTERED_SUITE
    assert "Executed 6 out of 6 tests: 6 tests pass." in cold.out


def test_bep_test_events_have_the_recorded_shape(cold):
    """The fields tests/fixtures/tf_workspace/README.md documents for the product code."""
    results = _payloads(cold.events, "testResult")
    ident, first = next((i, p) for i, p in results
                        if i["label"] == "//tensorflow/core:reduction_ops_test")
    assert set(ident) == {"label", "run", "shard", "attempt", "configuration"}
    assert (ident["run"], ident["shard"], ident["attempt"]) == (1, 1, 1)
    assert first["status"] == "PASSED"
    assert int(first["testAttemptDurationMillis"]) >= 0
    assert int(first["testAttemptStartMillisEpoch"]) > 1_600_000_000_000
    assert first["executionInfo"]["strategy"] == "processwrapper-sandbox"
    assert "cachedLocally" not in first
    outputs = {o["name"]: o["uri"] for o in first["testActionOutput"]}
    assert set(outputs) == {"test.log", "test.xml"}
    assert outputs["test.log"].startswith("file:///root/.cache/bazel/")
    assert outputs["test.log"].endswith(
        "/bazel-out/k8-fastbuild/testlogs/tensorflow/core/reduction_ops_test/test.log")

    summary = _summaries(cold.events)["//tensorflow/core:reduction_ops_test"]
    assert summary["overallStatus"] == "PASSED"
    assert (summary["totalRunCount"], summary["runCount"]) == (1, 1)
    assert [p["uri"] for p in summary["passed"]] == [outputs["test.log"]]
    assert "failed" not in summary and "totalNumCached" not in summary
    assert int(summary["totalRunDurationMillis"]) == int(first["testAttemptDurationMillis"])
    assert int(summary["lastStopTimeMillis"]) >= int(summary["firstStartTimeMillis"])

    # a testSummary and each testResult are announced as children of the targetCompleted event
    completed = next(e for e in cold.events if "targetCompleted" in e["id"]
                     and e["id"]["targetCompleted"]["label"] == ident["label"])
    assert {"testResult": ident} in completed["children"]
    assert completed["completed"]["success"] is True
    assert completed["completed"]["testTimeoutSeconds"] == "60"  # size small


def test_flaky_test_fails_its_first_attempt_and_reports_flaky(lab, cold):
    label = "//tensorflow/core:random_uniform_op_test"
    attempts = {i["attempt"]: p for i, p in _payloads(cold.events, "testResult")
                if i["label"] == label}
    assert {n: p["status"] for n, p in attempts.items()} == {1: "FAILED", 2: "PASSED"}
    assert {o["name"]: o["uri"] for o in attempts[1]["testActionOutput"]}["test.log"].endswith(
        "/random_uniform_op_test/test_attempts/attempt_1.log")
    summary = _summaries(cold.events)[label]
    assert summary["overallStatus"] == "FLAKY"
    assert (summary["totalRunCount"], summary["runCount"]) == (2, 1)
    assert [p["uri"] for p in summary["failed"]][0].endswith("test_attempts/attempt_1.log")
    assert "FLAKY, failed in 1 out of 2" in cold.out
    first = lab.cat("bazel-testlogs/tensorflow/core/random_uniform_op_test/"
                    "test_attempts/attempt_1.log")
    assert "first attempt fails on purpose" in first
    assert "retry: /tmp/tfw_fixture_flaky_random_uniform_op_test was there" in lab.cat(
        "bazel-testlogs/tensorflow/core/random_uniform_op_test/test.log")


def test_second_run_in_the_same_container_is_cached(lab, cold):
    assert cold.code == 0
    warm = lab.bazel("test", "--build_tests_only", TAG_FILTERS, "//...", name="warm")
    assert warm.code == 0, warm.out[-3000:]
    assert warm.out.count("(cached) PASSED") == 5
    assert "(1/2 cached) FLAKY, failed in 1 out of 2" in warm.out
    assert "Executed 0 out of 6 tests: 6 tests pass." in warm.out
    results = _payloads(warm.events, "testResult")
    assert {i["label"] for i, p in results if p.get("cachedLocally")} == set(FILTERED_SUITE)
    # a cached FLAKY result keeps its status; its summary counts the cached run
    flaky = _summaries(warm.events)["//tensorflow/core:random_uniform_op_test"]
    assert flaky["overallStatus"] == "FLAKY" and flaky["totalNumCached"] == 1
    assert all(s.get("totalNumCached") == 1 for s in _summaries(warm.events).values())


def test_tf_configs_own_filters_select_the_same_suite(lab, cold):
    """configure.py's `test:v2` lines are TensorFlow's own tag filters for this build."""
    assert cold.code == 0
    v2 = lab.bazel("test", "--build_tests_only", "--config=v2", "//...", name="config_v2")
    assert v2.code == 0, v2.out[-3000:]
    assert set(_summaries(v2.events)) == set(FILTERED_SUITE)


def test_failing_test_has_its_own_log_and_xml(lab, cold):
    assert cold.code == 0
    cc, py = "//tensorflow/core:reduction_ops_test", "//tensorflow/python/kernel_tests:matmul_op_test"
    run = lab.bazel("test", f"--test_env=TFW_FIXTURE_FAIL={cc},{py}", cc, py,
                    "//tensorflow/core:tensor_shape_test", name="failing")
    assert run.code == 3, run.out[-3000:]  # Bazel's exit code for failed tests
    status = {label: s["overallStatus"] for label, s in _summaries(run.events).items()}
    assert status == {cc: "FAILED", py: "FAILED", "//tensorflow/core:tensor_shape_test": "PASSED"}
    result = next(p for i, p in _payloads(run.events, "testResult") if i["label"] == cc)
    assert result["status"] == "FAILED"

    log = lab.cat("bazel-testlogs/tensorflow/core/reduction_ops_test/test.log")
    assert "Executing tests from //tensorflow/core:reduction_ops_test" in log
    assert "tensorflow/core/kernels/reduction_ops_test.cc:11: Failure" in log
    assert "[  FAILED  ] ReductionOpsTest.Sum" in log
    assert "matmul" not in log.lower()  # its own output only
    xml = lab.cat("bazel-testlogs/tensorflow/core/reduction_ops_test/test.xml")
    assert '<testsuites tests="4" failures="4"' in xml  # written by the test (gtest-shaped)
    assert '<testcase name="Sum" status="run"' in xml and "<failure message=" in xml

    pylog = lab.cat("bazel-testlogs/tensorflow/python/kernel_tests/matmul_op_test/test.log")
    assert "FAIL: test_identity (__main__.MatMulOpTest.test_identity)" in pylog
    assert "AssertionError: Lists differ" in pylog
    pyxml = lab.cat("bazel-testlogs/tensorflow/python/kernel_tests/matmul_op_test/test.xml")
    # no XML from a plain unittest: Bazel's generate-xml.sh wraps test.log into one
    assert '<testsuite name="tensorflow/python/kernel_tests/matmul_op_test" tests="1" ' \
           'failures="0" errors="1">' in pyxml
    assert "Generated test.log" in pyxml


def test_gpu_test_fails_without_a_gpu_when_not_filtered(lab, cold):
    assert cold.code == 0
    run = lab.bazel("test", "//tensorflow/core:matmul_op_test_gpu", name="gpu")
    assert run.code == 3
    log = lab.cat("bazel-testlogs/tensorflow/core/matmul_op_test_gpu/test.log")
    assert "no CUDA device: /dev/nvidiactl is missing" in log


def test_filters_apply_to_named_targets_too(lab, cold):
    """A manual test runs when named, unless -manual; a run left with no test exits 4."""
    assert cold.code == 0
    named = lab.bazel("test", TAG_FILTERS, "//tensorflow/core:concat_op_test",
                      "//tensorflow/core:reduction_ops_test", name="named")
    assert named.code == 0, named.out[-3000:]
    assert set(_summaries(named.events)) == {"//tensorflow/core:reduction_ops_test"}
    manual = lab.bazel("test", "//tensorflow/core:concat_op_test", name="manual")
    assert manual.code == 0 and set(_summaries(manual.events)) == {
        "//tensorflow/core:concat_op_test"}
    none_left = lab.bazel("test", TAG_FILTERS, "//tensorflow/core:cast_op_test", name="none")
    assert none_left.code == 4
    assert "ERROR: No test targets were found, yet testing was requested" in none_left.out


def test_query_maps_each_edited_file_to_exactly_its_tests(lab, cold):
    assert cold.code == 0  # the server is up and the packages are loaded
    for path, expected in EDIT_TO_TESTS.items():
        label = lab.box.exec(["bazel", "query", "--noshow_progress", path])
        assert label.exit_code == 0, label.output
        [target] = [ln for ln in label.output.splitlines() if ln.startswith("//")]
        package, _, name = target[2:].partition(":")
        assert f"{package}/{name}" == path  # the file's label: its package, then the rest
        query = f'kind(".*_test rule", rdeps(//..., {target}))'
        run = lab.box.exec(["bazel", "query", "--noshow_progress", query])
        assert run.exit_code == 0, run.output
        found = {ln for ln in run.output.splitlines() if ln.startswith("//")}
        assert found == expected, (path, sorted(found))
    outside = lab.box.exec(["bazel", "query", "--noshow_progress", "README.md"])
    assert outside.exit_code == 7  # a file no BUILD file owns
    assert "couldn't determine target from filename 'README.md'" in outside.output


def test_coverage_runs_offline_with_the_stand_in(lab, cold):
    assert cold.code == 0
    run = lab.bazel("coverage", "--combined_report=lcov", "//tensorflow/core:reduction_ops_test",
                    name="coverage")
    assert run.code == 0, run.out[-3000:]
    assert "INFO: LCOV coverage report is located at" in run.out
    kinds = lab.box.exec(["bazel", "query", "--noshow_progress", "--output=label_kind",
                          "@remote_coverage_tools//:all"])
    assert kinds.exit_code == 0, kinds.output
    assert {ln for ln in kinds.output.splitlines() if " rule @" in ln} == {
        "alias rule @remote_coverage_tools//:coverage_report_generator",
        "alias rule @remote_coverage_tools//:lcov_merger",
        "sh_binary rule @remote_coverage_tools//:Main",
    }


def test_one_file_edit_reruns_exactly_the_tests_that_depend_on_it(lab, cold):
    """Last: it edits the workspace. The object code must change (see the README)."""
    assert cold.code == 0
    warm_again = lab.bazel("test", "--build_tests_only", TAG_FILTERS, "//...")
    assert warm_again.code == 0
    source = lab.ws / EDITED
    source.write_text(source.read_text() + "\nextern \"C\" int tfw_fixture_edit(void) { return 1; }\n")
    run = lab.bazel("test", "--build_tests_only", TAG_FILTERS, "//...", name="edit")
    assert run.code == 0, run.out[-3000:]
    executed = {i["label"] for i, p in _payloads(run.events, "testResult")
                if not p.get("cachedLocally")}
    assert executed == EDIT_TO_TESTS[EDITED] & set(FILTERED_SUITE)
    assert "Executed 2 out of 6 tests: 6 tests pass." in run.out
