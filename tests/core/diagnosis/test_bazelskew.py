"""The Bazel that ran against the one the source asks for, joined with a failed build's log
(core/diagnosis/bazelskew.py), and the Starlark API errors a Bazel of another version
gives, in wordings of Bazel's own sources (each a different symbol from the corpus's).

The real build of a source whose .bazelversion the image cannot run is in
tests/docker/test_bazel_skew.py.
"""

from __future__ import annotations

import json

import pytest
from packaging.version import Version

from tfwizard.core.bazelversion import BazelVersion
from tfwizard.core.diagnosis import bazelskew
from tfwizard.core.diagnosis.build import diagnose, diagnose_file

SKEW = bazelskew.SKEW


def bv(text: str, source: str) -> BazelVersion:
    return BazelVersion(text, Version(text), source)


@pytest.mark.parametrize("line", [
    # a builtin gone (Bazel 8 took PyInfo out), at a .bzl's file:line, and as a traceback's end
    "ERROR: /src/external/rules_python/python/private/py_info.bzl:44:9: name 'PyInfo' is "
    "not defined (did you mean 'CcInfo'?)",
    "Error: name 'subrule' is not defined",
    # a rule() parameter an older Bazel lacks
    "Error in rule: rule() got unexpected keyword argument 'initializer'",
    # Bazel 0.x's wording of a parameter it does not know
    "ERROR: /src/tensorflow/tensorflow.bzl:12:3: unexpected keyword 'cfg' in call to "
    "label(default = None, executable = bool, ...)",
    # a module member gone (ctx.new_file left in 0.x), new and old wording
    "Error: 'ctx' value has no field or method 'new_file'",
    "ERROR: /src/third_party/gpus/cuda_configure.bzl:99:5: object of type 'ctx' has no "
    "field 'new_file'",
    # a parameter an --incompatible_ default turned off
    "ERROR: /src/third_party/py/rules.bzl:7:5: parameter 'allow_single_file' is deprecated and "
    "will be removed soon. It may be temporarily re-enabled by setting "
    "--incompatible_disable_deprecated_attr_params=false",
    # native rules gone in Bazel 8, or an attribute a native rule lacks
    "Error: no native function or rule 'java_lite_proto_library'",
    "ERROR: /src/tensorflow/BUILD:30:11: //tensorflow:core: no such attribute "
    "'implementation_deps' in 'cc_library' rule",
    "ERROR: error loading package '': cannot load '@bazel_tools//tools/build_defs/repo:"
    "utils.bzl': no such file",
    "ERROR: Every .bzl file must have a corresponding package, but "
    "'//third_party:repo.bzl' does not have one.",
    "The WORKSPACE file is disabled by default in Bazel 8 (late 2024) and will be removed",
    "2025/03/01 09:12:44 could not download Bazel: HTTP GET https://releases.bazel.build/"
    "8.0.0rc2/release/bazel-8.0.0rc2-linux-x86_64 failed with error 404",
])
def test_starlark_api_errors_are_the_bazel_version(line):
    assert [d.id for d in diagnose([line])][:1] == [SKEW], line


@pytest.mark.parametrize("line", [
    "NameError: name 'numpy' is not defined",  # Python's, in configure.py
    "TypeError: check() got an unexpected keyword argument 'timeout'",
    "Error: 'NoneType' value has no field or method 'split'",  # a repository rule's data
    "Error: 'string' value has no field or method 'format_map'",
    "object of type 'list' has no field 'append_all'",
    "Error: 'struct' value has no field or method 'srcs'",  # a macro's own struct
    # Bazelisk says this when the network fails, not only for a version it cannot find
    "2024/06/10 14:04:08 could not download Bazel: could not resolve the version 'latest' to "
    "an actual version number: unable to determine latest version",
])
def test_data_errors_and_python_are_not(line):
    assert SKEW not in [d.id for d in diagnose([line])], line


def test_the_log_names_the_bazel_that_ran(tmp_path):
    log = tmp_path / "log.txt"
    log.write_text("tfw | step configure: python3 configure.py\n"
                   "out | You have bazel 6.5.0 installed.\n"
                   "err | ERROR: something else\n")
    found = bazelskew.ran_in_log(log)
    assert found is not None and (found.version, found.source) == (Version("6.5.0"), "log")
    log.write_text("out | You have bazel no_version installed.\n")
    assert bazelskew.ran_in_log(log) is None  # Debian's build names no release
    # tfwizard's own line after asking the image comes at the end of a long log
    line = bazelskew.ran_line(bv("4.2.3", "image-package"))
    log.write_text("out | You have bazel no_version installed.\n"
                   + "err | INFO: noise\n" * 200_000 + f"tfw | {line}\n")
    assert log.stat().st_size > bazelskew.HEAD
    found = bazelskew.ran_in_log(log)
    assert found is not None and (found.version, found.source) == (Version("4.2.3"),
                                                                  "image-package")


def _d(sig_id: str):
    return next(d for d in diagnose([{
        "oom-compiler-killed": "gcc: fatal error: Killed signal terminated program cc1plus",
        "bazel-config-undefined": "ERROR: Config value 'cuda_wheel' is not defined in any .rc file",
        SKEW: "Error: 'apple_common' value has no field or method 'multi_arch_split'",
    }[sig_id]]) if d.id == sig_id)


def test_skew_alone_is_the_cause_with_both_versions_first():
    want, ran = bv("7.4.1", "bazelversion"), bv("6.5.0", "image")
    out = bazelskew.join([], want, ran)
    assert [(d.id, d.severity) for d in out] == [(SKEW, "error")]
    assert out[0].excerpt[0] == ("the source's .bazelversion asks for Bazel 7.4.1; Bazel 6.5.0 "
                                 "ran (the image's bazel --version)")
    # a --config no .rc defines is what an old or new Bazel shows too: the version says it
    out = bazelskew.join([_d("bazel-config-undefined")], want, ran)
    assert [d.id for d in out] == [SKEW]


def test_skew_beside_another_cause_follows_it_as_a_warning():
    out = bazelskew.join([_d("oom-compiler-killed")], bv("7.4.1", "bazelversion"),
                         bv("7.1.0", "log"))
    assert [(d.id, d.severity) for d in out] == [("oom-compiler-killed", "error"),
                                                 (SKEW, "warning")]


def test_skew_the_log_found_gets_the_facts():
    old = _d(SKEW)
    out = bazelskew.join([old], bv("6.5.0", "bazelversion"), bv("7.4.1", "image-package"))
    assert [d.id for d in out] == [SKEW]
    assert out[0].excerpt[0].endswith("(the image's bazel-bootstrap package)")
    assert out[0].excerpt[1:] == old.excerpt


def test_the_same_bazel_takes_back_a_version_diagnosis():
    # a Starlark error with the Bazel the source asks for is the source's own (a patch)
    same = (bv("7.4.1", "bazelversion"), bv("7.4.0", "log"))  # a patch release apart
    assert bazelskew.join([_d(SKEW)], *same) == []
    oom = _d("oom-compiler-killed")
    assert bazelskew.join([oom], *same) == [oom]
    # nothing known: the log's words stand
    assert [d.id for d in bazelskew.join([_d(SKEW)], None, same[1])] == [SKEW]


def test_a_record_is_diagnosed_with_its_plan(tmp_path):
    (tmp_path / "log.txt").write_text("out | You have bazel 6.1.0 installed.\n"
                                      "err | ERROR: Analysis of target '//x:y' failed\n")
    (tmp_path / "plan.json").write_text(json.dumps(
        {"bazel_versions": {"bazelversion": "7.4.1", "release": "7.4.1"}}))
    (tmp_path / "result.json").write_text(json.dumps({"status": "failed", "exit_code": 1}))
    found = diagnose_file(tmp_path)
    assert found and found[0].id == SKEW, found
    assert "asks for Bazel 7.4.1; Bazel 6.1.0 ran (the build log)" in found[0].excerpt[0]
    # a build that succeeded is not told about it
    (tmp_path / "result.json").write_text(json.dumps({"status": "succeeded", "exit_code": 0}))
    assert SKEW not in [d.id for d in diagnose_file(tmp_path)]


def test_the_plan_keeps_every_bazel_statement(tmp_path):
    from tests import world
    from tfwizard.core.building.plan.plan import make_plan
    from tfwizard.core.recipe import load_recipe

    ws = world.copy_workspace(tmp_path)
    (ws / ".bazelversion").write_text("7.4.1\n")
    recipe = world.fixture_recipe(tmp_path / "r.toml", workspace=ws, prefix="tfwizard-t")
    plan = make_plan(load_recipe(recipe), recipe_dir=tmp_path)
    assert plan.bazel_versions["bazelversion"] == "7.4.1"
    assert "release" in plan.bazel_versions
    assert bazelskew.plan_facts(json.loads(plan.to_json()))[0].version == Version("7.4.1")
