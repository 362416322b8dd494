"""core/testloop/run.py without an engine: BEP test events in the shapes recorded from real
Bazel 4.2.3 runs (tests/fixtures/tf_workspace/README.md)."""

from __future__ import annotations

import json

from tfwizard.core.testloop.run import parse_test_events, tag_filters

LOGS = "file:///root/.cache/bazel/x/execroot/org_tensorflow/bazel-out/k8-fastbuild/testlogs"
FLAKY = "//tensorflow/core:random_uniform_op_test"


def _ev(kind: str, label: str, body: dict, **ident: object) -> str:
    return json.dumps({"id": {kind: {"label": label, **ident}}, kind: body})


def test_a_flaky_test_has_two_attempts_and_the_passing_attempts_log():
    folder = f"{LOGS}/tensorflow/core/random_uniform_op_test"
    lines = [
        _ev("testResult", FLAKY, {"status": "FAILED", "testAttemptDurationMillis": "40",
                                  "testActionOutput": [
                                      {"name": "test.log",
                                       "uri": f"{folder}/test_attempts/attempt_1.log"}]},
            attempt=1),
        _ev("testResult", FLAKY, {"status": "PASSED", "testAttemptDurationMillis": "50",
                                  "testActionOutput": [
                                      {"name": "test.log", "uri": f"{folder}/test.log"},
                                      {"name": "test.xml", "uri": f"{folder}/test.xml"}]},
            attempt=2),
        _ev("testSummary", FLAKY, {"overallStatus": "FLAKY", "totalRunCount": 2,
                                   "totalRunDurationMillis": "50"}),
        json.dumps({"id": {"buildFinished": {}}, "finished": {
            "overallSuccess": True, "exitCode": {"name": "SUCCESS"}}}),
    ]
    (test,), exit_name = parse_test_events(lines)
    assert exit_name == "SUCCESS"
    assert (test.status, test.attempts, test.passed, test.cached) == ("FLAKY", 2, True, False)
    assert test.log.endswith("random_uniform_op_test/test.log") and test.duration_s == 0.05
    assert test.folder() == "tensorflow/core/random_uniform_op_test"


def test_a_cached_failure_counts_as_failed_and_cached():
    lines = [_ev("testResult", "//a:t", {"status": "FAILED", "cachedLocally": True}),
             _ev("testSummary", "//a:t", {"overallStatus": "FAILED", "totalNumCached": 1})]
    (test,), exit_name = parse_test_events(["not json", *lines])
    assert (test.status, test.cached, test.passed, exit_name) == ("FAILED", True, False, "")


def test_the_tag_filters_follow_the_gpu():
    f = tag_filters()
    assert f.for_container(False)[0] == "-gpu" and f.for_container(True)[0] == "-no_gpu"
    assert {"-no_oss", "-oss_excluded", "-benchmark-test", "-manual"} <= set(
        f.for_container(False))


# TensorFlow's .bazelrc @ 0071ad1d (sources.toml: tf-bazelrc-test-suites), as written there
TF_CPU_PYCPP = "-no_oss,-oss_excluded,-oss_serial,-gpu,-tpu,-benchmark-test,-v1only"
TF_CUDA_PYCPP = ("-no_oss,-oss_excluded,-oss_serial,-benchmark-test,-v1only,gpu,-no_gpu,"
                 "-no_gpu_presubmit,-no_cuda11")


def test_the_tag_filters_are_tfs_ci_filters():
    f = tag_filters()
    cpu = f.for_container(False)
    assert set(TF_CPU_PYCPP.split(",")) | {"-manual"} == set(cpu) and len(set(cpu)) == len(cpu)
    # the CUDA job's exclusions; its `gpu` (only GPU-tagged tests) is not applied: one run
    # here holds the CPU and the GPU tests
    gpu = f.for_container(True)
    assert {t for t in TF_CUDA_PYCPP.split(",") if t.startswith("-")} | {"-manual"} == set(gpu)
    assert "gpu" not in gpu and "tf-bazelrc-test-suites" in f.sources
