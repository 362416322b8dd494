"""`tfwizard diagnose` on real logs (build and --runtime, files and standard input), the
fix it prints as a command, and `tfwizard recipe set` that the command runs."""

from __future__ import annotations

import io
import json
import os
import shlex
import shutil
from pathlib import Path

from tests.core.diagnosis import real_logs
from tfwizard.cli import Environment, ExitStatus, capture, main
from tfwizard.core.recipe import load_recipe

ROOT = Path(__file__).resolve().parents[2]
HOSTS = ROOT / "tests" / "data" / "hosts"
RUNTIME = real_logs.CORPUS / "runtime"
BUILD = real_logs.CORPUS / "build"
RECIPE = ROOT / "recipes" / "tf218-cuda-laptop.toml"
H100 = ROOT / "recipes" / "tf220-cuda-h100-from-gpuless-server.toml"  # sm_90, compute_90


def run_with_stdin(argv: list[str], data: bytes | str) -> tuple[ExitStatus, str, str]:
    out, err = io.StringIO(), io.StringIO()
    stdin = io.BytesIO(data) if isinstance(data, bytes) else io.StringIO(data)
    env = Environment(stdout=out, stderr=err, env={}, cwd=ROOT, stdin=stdin)
    return main(argv, env), out.getvalue(), err.getvalue()


def test_runtime_output_is_explained_with_the_target_machine():
    log = RUNTIME / "cudnn-840-vs-860-dnn-not-found-tf212.log"
    status, out, err = capture(["diagnose", "--runtime", str(log),
                                "--target", str(HOSTS / "ada-8.9-driver550.json")])
    assert status == ExitStatus.OK, err
    assert "The machine that ran it: GPU 0 (NVIDIA GeForce RTX 4070, CC 8.9)" in out
    # root cause first, its symptom after; each with its evidence, cause and next step
    assert out.index("cudnn-mismatch:") < out.index("dnn-library-not-found:")
    assert "  > " in out and "Loaded runtime CuDNN library: 8.4.0" in out
    assert "cuDNN 8.4.0 was loaded" in out and "next:" in out
    assert "LD_LIBRARY_PATH (now: (not known from a log))" in out  # another machine's run


#: TensorFlow's fatal line when a wheel has no kernel for the GPU (the CUDA runtime's
#: cudaErrorNoKernelImageForDevice words); the corpus's excerpts of it are all held out
#: (bench/diagnosis.py measures with them), so the line is written here
NO_KERNEL = ("2020-09-13 10:35:21.574412: F tensorflow/core/kernels/random_op_gpu.h:246] "
             "Non-OK-status: GpuLaunchKernel(FillPhiloxRandomKernelLaunch<Distribution>, "
             "num_blocks, block_size, 0, d.stream(), gen, data, size, dist) status: Internal: "
             "no kernel image is available for execution on the device\n")


def test_runtime_json_and_the_fix_for_this_gpu(tmp_path):
    log = tmp_path / "no-kernel.log"
    log.write_text(NO_KERNEL)
    host = str(HOSTS / "laptop-rtx3060-550.json")
    status, out, err = capture(["diagnose", "--runtime", str(log), "--target", host, "--json"])
    assert status == ExitStatus.OK, err
    data = json.loads(out)
    assert data["kind"] == "runtime" and "RTX 3060" in data["host"]
    d = data["diagnoses"][0]
    assert d["id"] == "cc-not-in-build" and d["lines"] == [1]
    assert "no kernel image is available" in d["evidence"][0]
    # no recipe to add sm_86 to: no value, no command, and why (core/fixes.py)
    assert d["recipe_fix"] == {} and d["fix_command"] == ""
    assert "adding sm_86 to cuda.compute_capabilities needs the recipe" in d["fix_problem"]
    status, out, _ = capture(["diagnose", "--runtime", str(log), "--target", host])
    assert "no recipe fix: adding sm_86" in out and "with --recipe RECIPE" in out
    # with the recipe: the whole new list, and the command applies it for real
    recipe = tmp_path / "my.toml"
    shutil.copy(H100, recipe)
    status, out, _ = capture(["diagnose", "--runtime", str(log), "--target", host,
                              "--recipe", str(recipe), "--json"])
    command = json.loads(out)["diagnoses"][0]["fix_command"]
    before = load_recipe(recipe).cuda.compute_capabilities
    argv = shlex.split(command)
    assert argv[:4] == ["tfwizard", "recipe", "set", str(recipe)]
    status, out, err = capture(argv[1:])
    assert status == ExitStatus.OK, err
    assert load_recipe(recipe).cuda.compute_capabilities == [*before, "sm_86"]
    assert (tmp_path / "my.toml.bak").is_file()
    # a recipe that builds a kernel for 8.6 already ("8.6") needs no change: that wheel was
    # not built from it
    status, out, _ = capture(["diagnose", "--runtime", str(log), "--target", host,
                              "--recipe", str(RECIPE), "--json"])
    d = json.loads(out)["diagnoses"][0]
    assert d["id"] == "cc-not-in-build" and d["recipe_fix"] == {} and d["fix_command"] == ""


def test_a_cpu_only_machine_may_ignore_a_missing_cuda_runtime():
    log = RUNTIME / "cudart110-dso-loader-stub-ignore.log"
    status, out, _ = capture(["diagnose", "--runtime", str(log), "--target",
                              str(HOSTS / "no-gpu-server.json"), "--json"])
    assert json.loads(out)["diagnoses"][0]["severity"] == "info"
    status, out, _ = capture(["diagnose", "--runtime", str(log), "--target",
                              str(HOSTS / "ada-8.9-driver550.json"), "--json"])
    assert json.loads(out)["diagnoses"][0]["severity"] == "error"


def test_standard_input_for_both_kinds(tmp_path):
    text = (RUNTIME / "libcuda-missing-303-mljar.log").read_bytes()
    status, out, err = run_with_stdin(["diagnose", "--runtime", "-", "--target",
                                       str(HOSTS / "wsl2-rtx4090.json")], text)
    assert status == ExitStatus.OK, err
    assert "libcuda-not-found:" in out and "UNKNOWN ERROR (303)" in out
    assert "/usr/lib/wsl/lib" in out  # the WSL2 words for a WSL2 machine
    build = (BUILD / "ld-terminated-signal9-serving-docker.log").read_text()
    status, out, err = run_with_stdin(["diagnose", "-", "--json"], build)
    data = json.loads(out)
    assert data["log"] == "-" and data["diagnoses"][0]["id"] == "oom-compiler-killed"
    # no plan, no recipe: "halve" has nothing to halve, and says so
    oom = data["diagnoses"][0]
    assert oom["recipe_fix"] == {} and oom["fix_command"] == ""
    assert "set build.jobs to about half" in oom["fix_problem"]
    # with a recipe that sets build.jobs: half of it, as a command
    recipe = tmp_path / "r.toml"
    recipe.write_text(RECIPE.read_text().replace("jobs = 0 ", "jobs = 6 "))
    status, out, err = run_with_stdin(["diagnose", "-", "--recipe", str(recipe), "--json"],
                                      build)
    oom = json.loads(out)["diagnoses"][0]
    assert oom["recipe_fix"] == {"build.jobs": 3}
    assert oom["fix_command"] == f"tfwizard recipe set {recipe} build.jobs=3"


def test_a_build_fix_is_resolved_against_the_recipe(tmp_path):
    recipe = tmp_path / "r.toml"
    shutil.copy(RECIPE, recipe)
    status, _out, _err = capture(["recipe", "set", str(recipe), "build.jobs=8"])
    log = BUILD / "gcc-killed-signal-cc1plus-tf-seal.log"
    status, out, err = capture(["diagnose", str(log), "--recipe", str(recipe)])
    assert status == ExitStatus.OK, err
    assert f"apply: tfwizard recipe set {recipe} build.jobs=4" in out
    log = BUILD / "clang16-builtin-offsetof-upb-bazel.log"
    status, out, _ = capture(["diagnose", str(log), "--recipe", str(recipe)])
    command = (f"tfwizard recipe set {recipe} "
               "build.bazel_flags+=--copt=-Wno-gnu-offsetof-extensions")
    assert f"apply: {command}" in out
    assert capture(shlex.split(command)[1:])[0] == ExitStatus.OK
    status, out, _ = capture(["diagnose", str(log), "--recipe", str(recipe)])
    assert "no recipe fix: build.bazel_flags already holds --copt=-Wno-gnu-offsetof" in out
    assert "apply:" not in out


def test_nothing_found_says_so_for_both_kinds(tmp_path):
    log = tmp_path / "out.txt"
    log.write_text("Epoch 1/10\n")
    no_gpu = str(HOSTS / "no-gpu-server.json")
    status, out, _ = capture(["diagnose", str(log), "--target", no_gpu])
    assert status == ExitStatus.OK and "no known failure signature" in out
    assert "Read as a program's output too, it shows no known TensorFlow runtime" in out
    status, out, _ = capture(["diagnose", "--runtime", str(log), "--target", no_gpu])
    assert "no known TensorFlow runtime message" in out
    assert f"If it is a build's log rather than a program's output: `tfwizard diagnose " \
           f"{log}`" in out
    # a profile that is not there fails first, even where the log alone would do
    known = BUILD / "gcc-killed-signal-cc1plus-tf-seal.log"
    status, _out, err = capture(["diagnose", str(known), "--target", str(tmp_path / "x.json")])
    assert status == ExitStatus.USAGE and "no such host profile" in err


def test_a_program_s_output_given_as_a_build_log_is_read_as_one(tmp_path):
    """No build signature fits a program's output: what --runtime would say is said, with
    the machine, and JSON says how the log was read; a build log stays a build log."""
    log = RUNTIME / "cudnn-840-vs-860-dnn-not-found-tf212.log"
    ada = str(HOSTS / "ada-8.9-driver550.json")
    status, out, err = capture(["diagnose", str(log), "--target", ada])
    assert status == ExitStatus.OK, err
    assert "no build failure signature found; read as a program's output" in out
    assert "The machine that ran it: GPU 0 (NVIDIA GeForce RTX 4070, CC 8.9)" in out
    assert out.index("cudnn-mismatch:") < out.index("dnn-library-not-found:")
    status, out, _ = capture(["diagnose", str(log), "--target", ada, "--json"])
    data = json.loads(out)
    assert data["kind"] == "runtime" and data["read_as_runtime"] is True
    assert data["diagnoses"][0]["id"] == "cudnn-mismatch"
    status, out, _ = run_with_stdin(["diagnose", "-", "--target", ada, "--json"],
                                    log.read_bytes())
    assert json.loads(out)["diagnoses"][0]["id"] == "cudnn-mismatch"
    build = BUILD / "ld-terminated-signal9-serving-docker.log"
    status, out, _ = capture(["diagnose", str(build), "--target", ada, "--json"])
    data = json.loads(out)
    assert data["kind"] == "build" and "read_as_runtime" not in data
    # a build record is a build's log: no host profile goes with it
    record = tmp_path / "rec"
    record.mkdir()
    (record / "log.txt").write_bytes(log.read_bytes())
    status, _out, err = capture(["diagnose", str(record), "--target", ada])
    assert status == ExitStatus.USAGE and "not a build record" in err


#: a failed build of a checkout no tfwizard record describes: the Bazel that ran is in the
#: log, and the one error names no rule set or Bazel at all
SKEWED_LOG = ("You have bazel 7.4.1 installed.\n"
              "ERROR: /src/tensorflow/core/BUILD:812:11: in cc_library rule "
              "//tensorflow/core:lib: frobnication failed\n"
              "FAILED: Build did NOT complete successfully\n")


def test_the_checkout_s_bazelversion_is_set_beside_the_bazel_the_log_names(tmp_path):
    """--source: a researcher's own branch, built by hand; its .bazelversion is the truth."""
    checkout = tmp_path / "tensorflow"
    checkout.mkdir()
    (checkout / ".bazelversion").write_text("# pinned\n6.5.0\n")
    log = tmp_path / "build.log"
    log.write_text(SKEWED_LOG)
    status, out, _ = capture(["diagnose", str(log)])
    assert "bazel-version-mismatch" not in out  # the log alone does not say it
    status, out, err = capture(["diagnose", str(log), "--source", str(checkout)])
    assert status == ExitStatus.OK, err
    assert out.index("bazel-version-mismatch:") < out.index("build-failed:")
    assert "asks for Bazel 6.5.0; Bazel 7.4.1 ran" in out
    status, out, err = capture(["diagnose", str(log), "--source", str(checkout), "--json"])
    data = json.loads(out)
    assert data["bazel"] == {"asked": "6.5.0", "ran": "7.4.1"}
    assert data["diagnoses"][0]["id"] == "bazel-version-mismatch"
    # the same Bazel: a Starlark error is the source's own, not the version's
    log.write_text("You have bazel 6.5.0 installed.\nERROR: /src/third_party/x.bzl:3:5: "
                   "name 'ProtoInfo' is not defined\n")
    assert "bazel-version-mismatch" in capture(["diagnose", str(log)])[1]
    status, out, _ = capture(["diagnose", str(log), "--source", str(checkout)])
    assert "bazel-version-mismatch" not in out
    # a log that names no Bazel says so, standard input too
    status, out, _ = run_with_stdin(["diagnose", "-", "--source", str(checkout)],
                                    "ERROR: something\n")
    assert "the log does not say which Bazel ran" in out and "asks for 6.5.0" in out


def test_source_refuses_what_is_not_a_checkout(tmp_path):
    log = tmp_path / "build.log"
    log.write_text(SKEWED_LOG)
    status, _out, err = capture(["diagnose", str(log), "--source", str(tmp_path / "nope")])
    assert status == ExitStatus.USAGE and "no such folder" in err
    status, _out, err = capture(["diagnose", str(log), "--source", str(tmp_path)])
    assert status == ExitStatus.USAGE and str(tmp_path / ".bazelversion") in err
    (tmp_path / ".bazelversion").write_text("latest\n")
    status, _out, err = capture(["diagnose", str(log), "--source", str(tmp_path)])
    assert status == ExitStatus.USAGE and "naming a Bazel release" in err
    status, _out, err = capture(["diagnose", "--runtime", str(log), "--source", str(tmp_path)])
    assert status == ExitStatus.USAGE and "--source" in err


# -- recipe set --------------------------------------------------------------------------------


def test_recipe_set_keeps_comments_and_validates(tmp_path):
    recipe = tmp_path / "r.toml"
    shutil.copy(RECIPE, recipe)
    before = recipe.read_text()
    status, out, err = capture(["recipe", "set", str(recipe), "build.jobs=4",
                                "build.bazel_flags+=--copt=-Wl,-z,now", "build.xla=false"])
    assert status == ExitStatus.OK, err
    assert "build.jobs = 4 (was 0)" in out
    after = recipe.read_text()
    comments = [line for line in before.splitlines() if line.lstrip().startswith("#")]
    assert comments and all(line in after.splitlines() for line in comments)
    r = load_recipe(recipe)
    assert r.build.jobs == 4 and r.build.xla is False
    assert r.build.bazel_flags[-1] == "--copt=-Wl,-z,now"  # a comma stays in the value
    status, out, _ = capture(["recipe", "set", str(recipe), "build.bazel_flags-=--copt=-Wl,-z,now"])
    assert status == ExitStatus.OK and "--copt=-Wl,-z,now" not in load_recipe(
        recipe).build.bazel_flags
    status, out, _ = capture(["recipe", "set", str(recipe), "build.jobs=4"])
    assert "nothing to change" in out


def test_recipe_set_refuses_bad_input_and_leaves_the_file(tmp_path):
    recipe = tmp_path / "r.toml"
    shutil.copy(RECIPE, recipe)
    before = recipe.read_text()
    for words, message in ((["build.jobz=4"], "unknown recipe key"),
                           (["build.jobs=many"], "not a whole number"),
                           (["build.jobs+=4"], "list keys only"),
                           (["jobs"], "not KEY=VALUE"),
                           (["build.jobs=-3"], "out of range")):
        status, _out, err = capture(["recipe", "set", str(recipe), *words])
        assert status == ExitStatus.USAGE and message in err, (words, err)
    assert recipe.read_text() == before


# -- what no rule knows: the log's own lines, labelled as not recognised --------------------


def test_an_unknown_build_failure_by_its_build_id_shows_the_lines_to_read(tmp_path):
    """`tfwizard diagnose BUILD_ID`: only generic signatures match, so the compiler's and
    Bazel's own first errors follow, with who printed them and a query; never a cause."""
    from tests.core.building.test_bundle import write_record
    from tests.core.diagnosis.test_unrecognised import BUILD_LOG

    write_record(tmp_path / "data", "20261122-080000-000003", log_lines=BUILD_LOG)
    env = {**os.environ, "TFWIZARD_DATA_DIR": str(tmp_path / "data")}
    status, out, err = capture(["diagnose", "20261122-080000-000003"], env)
    assert status == ExitStatus.OK, err
    assert out.index("compile-error:") < out.index("NOT RECOGNISED: no known cause matches "
                                                   "this log (this is not a diagnosis)")
    tail = out[out.index("NOT RECOGNISED"):]
    assert "  line 3, printed by Bazel:" in tail and "  line 4, printed by the compiler:" in tail
    assert "  > tensorflow/core/kernels/foo.cc:87:5: error: 'FrobnicateKernel'" in tail
    assert tail.rstrip().endswith(
        "search for: error FrobnicateKernel was not declared in this scope")
    assert "cause:" not in tail and "apply:" not in tail  # no diagnosis, no fix
    status, out, err = capture(["diagnose", "20261122-080000-000003", "--json"], env)
    data = json.loads(out)
    assert data["unrecognised"]["recognised"] is False
    assert [r["speaker"] for r in data["unrecognised"]["lines"]] == ["bazel", "compiler"]
    assert [d["id"] for d in data["diagnoses"]] == ["compile-error"]


def test_a_known_build_failure_has_no_fallback():
    build = (BUILD / "ld-terminated-signal9-serving-docker.log").read_text()
    status, out, _ = run_with_stdin(["diagnose", "-", "--json"], build)
    assert json.loads(out)["unrecognised"] is None
    status, out, _ = run_with_stdin(["diagnose", "-"], build)
    assert "oom-compiler-killed:" in out and "NOT RECOGNISED" not in out


def test_an_unknown_build_failure_on_standard_input():
    # a real Bazel message no signature knows (a target the package does not declare)
    text = ("ERROR: Skipping '//tensorflow/tools/pip_package:wheel_x': no such target "
            "'//tensorflow/tools/pip_package:wheel_x': target 'wheel_x' not declared in "
            "package 'tensorflow/tools/pip_package'\n")
    status, out, err = run_with_stdin(["diagnose", "-"], text.encode())
    assert status == ExitStatus.OK, err
    lines = out.splitlines()
    # the generic "Bazel reported a failed build" names no cause: the fallback follows it
    assert lines[0] == "ERROR build-failed: Bazel reported a failed build"
    at = lines.index("NOT RECOGNISED: no known cause matches this log (this is not a diagnosis)")
    assert lines[at + 1:at + 4] == [
        "  the lines to read first:",
        "  line 1, printed by Bazel (analysis):",
        "  > " + text.rstrip("\n")]
    query = lines[at + 4]
    assert query.startswith("  search for: ERROR Skipping") and "not declared in package" in query


def test_an_unknown_runtime_failure_shows_the_last_exception(tmp_path):
    from tests.core.diagnosis.test_unrecognised import RUNTIME_LOG

    log = tmp_path / "out.txt"
    log.write_text("\n".join(RUNTIME_LOG) + "\n")
    host = str(HOSTS / "ada-8.9-driver550.json")
    status, out, err = capture(["diagnose", "--runtime", str(log), "--target", host])
    assert status == ExitStatus.OK, err
    assert f"{log}: no known TensorFlow runtime message found." in out
    assert "NOT RECOGNISED: no known cause matches this log" in out
    assert "  line 7, printed by TensorFlow:" in out
    assert "Unable to register cuDNN factory" not in out  # start-up noise is no root cause
    assert "first exception, handled" not in out  # the last exception ended the program
    status, out, err = run_with_stdin(["diagnose", "--runtime", "-", "--target", host,
                                       "--json"], log.read_bytes())
    unknown = json.loads(out)["unrecognised"]
    assert unknown["kind"] == "runtime" and unknown["recognised"] is False
    assert unknown["lines"][0]["speaker"] == "tf-runtime"
    assert "0x7f3a" not in unknown["query"] and "Graph execution error" in unknown["query"]


def test_a_failed_builds_summary_ends_with_the_lines_to_read():
    """`tfwizard build`'s end (cli/render.build_summary): the diagnoses, then a failure no
    signature names as the lines to read, then the record."""
    from tfwizard.cli.render import build_summary
    from tfwizard.core.building.run.events import BuildResult
    from tfwizard.core.diagnosis.types import DiagnosisEvent, UnrecognisedEvent

    result = BuildResult("b1", "failed", "/tmp/rec", message="step build exited with 1")
    lines = build_summary(result, [
        DiagnosisEvent("compile-error", "A C++ file failed to compile", "c", "n", (3,)),
        UnrecognisedEvent("build", ((4, "x.cc:1:2: error: frob", "compiler"),), "error frob")])
    text = "\n".join(lines)
    assert text.index("compile-error:") < text.index("  NOT RECOGNISED") < text.index("Record:")
    assert "    line 4, printed by the compiler:" in lines
    assert "    search for: error frob" in lines
