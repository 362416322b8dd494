from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tfwizard.cli import ExitStatus, capture
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.plan.render import render_commands
from tfwizard.core.host import HostProfile
from tfwizard.core.recipe import Recipe, load_recipe

ROOT = Path(__file__).resolve().parents[3]
HOSTS = ROOT / "tests" / "data" / "hosts"
LAPTOP = load_recipe(ROOT / "recipes" / "tf218-cuda-laptop.toml")


def flags(plan):
    return plan.flag_list


def test_218_cuda_wheel_target_and_flag_order():
    plan = make_plan(LAPTOP, uid=1000, gid=1000)
    f = flags(plan)
    assert plan.bazel_target == "//tensorflow/tools/pip_package:wheel"
    for needed in ("--repo_env=WHEEL_NAME=tensorflow", "--config=cuda", "--config=cuda_wheel",
                   "--config=opt", "--curses=no", "--color=no", "--show_progress_rate_limit=1"):
        assert needed in f
    assert any(x.startswith("--build_event_json_file=") for x in f)
    assert "--copt=-Wno-gnu-offsetof-extensions" in f  # clang 18, configure.py won't add it
    assert plan.user == "1000:1000" and plan.gpu_passthrough is None
    build = next(s for s in plan.steps if s.name == "build")
    assert build.argv[-1] == plan.bazel_target and "build" in build.argv
    assert all(isinstance(a, str) for s in plan.steps for a in s.argv)


def test_recipe_bazel_flags_come_last():
    recipe = LAPTOP.with_changes({"build.bazel_flags": ["--jobs=3", "--verbose_failures"]})
    f = flags(make_plan(recipe))
    assert f[-2:] == ["--jobs=3", "--verbose_failures"]


@pytest.mark.parametrize(("version", "target", "cuda_wheel", "pywrap"), [
    ("2.16.1", "//tensorflow/tools/pip_package:build_pip_package", False, False),
    ("2.17.0", "//tensorflow/tools/pip_package:wheel", False, False),
    ("2.18.0", "//tensorflow/tools/pip_package:wheel", True, False),
    ("2.20.0", "//tensorflow/tools/pip_package:wheel", True, True),
])
def test_wheel_target_per_release(version, target, cuda_wheel, pywrap):
    recipe = LAPTOP.with_changes({"tensorflow.version": version, "cuda.version": "12.3",
                                  "cuda.cudnn": "8.9"} if version < "2.18" else
                                 {"tensorflow.version": version})
    plan = make_plan(recipe)
    assert plan.bazel_target == target
    assert ("--config=cuda_wheel" in flags(plan)) is cuda_wheel
    assert ("--repo_env=USE_PYWRAP_RULES=1" in flags(plan)) is pywrap
    if version == "2.16.1":
        assert plan.steps[-1].name == "package" and plan.steps[-1].argv[0].endswith(
            "build_pip_package")


def test_cpu_wheel_name_and_no_cuda_flags():
    recipe = load_recipe(ROOT / "recipes" / "tf221-cpu-portable.toml")
    f = flags(make_plan(recipe))
    assert "--repo_env=WHEEL_NAME=tensorflow_cpu" in f and "--config=cuda" not in f


def test_resources_from_build_host_ram():
    small = HostProfile.load(HOSTS / "small-laptop.json")
    f = flags(make_plan(LAPTOP, build_host=small))
    jobs = [x for x in f if x.startswith("--jobs=")]
    assert jobs == ["--jobs=3"]
    assert any(x.startswith("--local_ram_resources=") for x in f)


def test_auto_cc_resolved_from_target_with_ptx_for_newest():
    recipe = LAPTOP.with_changes({"cuda.compute_capabilities": ["auto"]})
    target = HostProfile.load(HOSTS / "ada-8.9-driver550.json")
    plan = make_plan(recipe, target_host=target)
    # compute_89 is the cubin and the PTX (TF's CUDA rules: --cuda-gpu-arch and
    # --cuda-include-ptx), as TF's own list ends with compute_90
    assert plan.compute_capabilities == ["compute_89"]
    assert plan.configure_env["HERMETIC_CUDA_COMPUTE_CAPABILITIES"] == "compute_89"


def test_source_dir_is_bind_mounted_and_no_clone(tmp_path):
    recipe = LAPTOP.with_changes({"tensorflow.source_dir": str(tmp_path)})
    plan = make_plan(recipe)
    assert plan.mounts[0].kind == "bind" and plan.mounts[0].source == str(tmp_path)
    assert [s.name for s in plan.steps] == ["configure", "build"]
    plan = make_plan(LAPTOP)
    assert plan.steps[0].argv[:5] == ("git", "clone", "--depth", "1", "--branch")
    assert "v2.18.0" in plan.steps[0].argv


def test_caches_are_named_volumes():
    plan = make_plan(LAPTOP)
    assert {m.kind for m in plan.mounts} == {"volume"}
    assert set(plan.cache_volumes) == {"disk", "repo"}
    off = make_plan(LAPTOP.with_changes({"cache.disk_cache": False}))
    assert not any(x.startswith("--disk_cache") for x in flags(off))


def test_render_commands_is_pasteable():
    text = render_commands(make_plan(LAPTOP))
    assert "docker run" in text and "./configure" in text and "bazel" in text
    assert "export HERMETIC_CUDA_VERSION=12.5.1" in text
    # valid shell, and nothing is lost with the --rm container: the record folder (the
    # BEP file Bazel is told to write) is a folder of this machine, the wheel copied there
    assert subprocess.run(["bash", "-n"], input=text, text=True).returncode == 0
    run = next(line for line in text.splitlines() if line.startswith("docker run"))
    assert '-v "$PWD/tfwizard-out":/record ' in run and "--rm" in run
    assert "--build_event_json_file=/record/" in text
    lines = text.splitlines()
    assert lines.index("mkdir -p tfwizard-out") < lines.index(run)
    copy = next(line for line in lines if line.startswith("cp "))
    assert copy.endswith(" /record/") and "/*.whl" in copy
    assert lines.index(copy) > max(i for i, line in enumerate(lines) if line.startswith("bazel "))


def test_cli_plan_formats(tmp_path):
    recipe = str(ROOT / "recipes" / "tf218-cuda-laptop.toml")
    host = str(HOSTS / "no-gpu-server.json")
    status, out, err = capture(["plan", recipe, "--host", host, "--format", "env"])
    assert status == ExitStatus.OK, err
    assert "HERMETIC_CUDA_COMPUTE_CAPABILITIES=8.6" in out
    status, out, _ = capture(["plan", recipe, "--host", host, "--format", "bazelrc"])
    assert 'build:cuda --repo_env HERMETIC_CUDA_VERSION="12.5.1"' in out
    status, out, _ = capture(["plan", recipe, "--host", host, "--format", "json"])
    data = json.loads(out)
    assert data["bazel_target"].endswith(":wheel") and data["steps"]
    status, out, _ = capture(["plan", recipe, "--host", host, "--format", "command"])
    assert status == ExitStatus.OK and "bazel" in out


def test_cli_check_exit_codes_and_listing(tmp_path):
    recipe = ROOT / "recipes" / "tf218-cuda-laptop.toml"
    host = str(HOSTS / "no-gpu-server.json")
    status, out, _ = capture(["check", str(recipe), "--host", host, "--target",
                              str(HOSTS / "ada-8.9-driver550.json")])
    assert status == ExitStatus.OK and "0 errors, " in out and "runs the sm_86 cubin" in out
    status, out, _ = capture(["check", str(recipe), "--host", host, "--target",
                              str(HOSTS / "ada-8.9-driver520.json")])
    assert status == ExitStatus.ERROR and "DRIVER_TOO_OLD" in out and "fix:" in out
    bad = tmp_path / "bad.toml"
    bad.write_text(recipe.read_text().replace('"3.11"', '"3.13"').replace('["8.6"]', '["3.5", "7.0"]')
                   .replace('"9.3.0"', '"9.9.9"'))
    status, out, _ = capture(["check", str(bad), "--host", host, "--json"])
    data = json.loads(out)
    assert status == ExitStatus.ERROR and data["errors"] >= 3
    sev = [f["severity"] for f in data["findings"]]
    assert sev == sorted(sev, key=["error", "warning", "info"].index)
    codes = {f["code"] for f in data["findings"]}
    assert {"PYTHON_RANGE", "CC_TF_DEFAULT", "CUDNN_NOT_SUPPORTED"} <= codes
    status, _, err = capture(["check", str(tmp_path / "none.toml")])
    assert status == ExitStatus.USAGE
    status, _, err = capture(["check", str(recipe), "--target", str(tmp_path / "none.json")])
    assert status == ExitStatus.USAGE and "detect --json" in err


def test_check_unknown_recipe_keys_is_usage(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("schema = 1\nname='x'\n[tensorflow]\nversion='2.18.0'\n[cuda]\nverison='1'\n")
    status, out, err = capture(["check", str(bad)])
    assert status == ExitStatus.USAGE and "did you mean" in err


def test_plan_rejects_unsafe_values():
    from tfwizard.core.errors import UnsafeValue

    with pytest.raises(UnsafeValue):
        make_plan(Recipe().with_changes({"tensorflow.version": "2.18.0",
                                         "build.opt_flags": ["-O2\nbuild --config=evil"]}))


def test_remote_cache_proxy_and_secret_references(tmp_path):
    from tfwizard.core.building.run.containers import resolve_secrets, secret_references

    recipe = LAPTOP.with_changes({
        "remote.cache": "https://cache.example:8443", "remote.upload": True,
        "remote.headers": ["x-api-key=${CACHE_KEY}"],
        "network.https_proxy": "${HTTPS_PROXY}", "network.no_proxy": "localhost",
        "network.distdir": str(tmp_path)})
    plan = make_plan(recipe)
    f = flags(plan)
    assert "--remote_cache=https://cache.example:8443" in f
    assert "--remote_upload_local_results=true" in f
    assert "--remote_header=x-api-key=${CACHE_KEY}" in f
    assert "--distdir=/cache/distdir" in f
    assert plan.container_env["HTTPS_PROXY"] == "${HTTPS_PROXY}"
    assert plan.container_env["https_proxy"] == "${HTTPS_PROXY}"
    assert any(m.target == "/cache/distdir" and m.read_only for m in plan.mounts)
    assert secret_references(plan) == ["CACHE_KEY", "HTTPS_PROXY"]
    resolved_flags, resolved_env = resolve_secrets(
        plan, {"CACHE_KEY": "k3y", "HTTPS_PROXY": "http://u:p@proxy:3128"})
    assert "--remote_header=x-api-key=k3y" in resolved_flags
    assert resolved_env["HTTPS_PROXY"] == "http://u:p@proxy:3128"
    assert "k3y" not in plan.to_json() and "u:p@" not in render_commands(plan)
    from tfwizard.core.errors import UsageError

    with pytest.raises(UsageError):
        resolve_secrets(plan, {})
    read_only = make_plan(LAPTOP.with_changes({"remote.cache": "grpc://10.0.0.2:9092"}))
    assert "--remote_upload_local_results=false" in flags(read_only)


def test_a_commit_ref_is_fetched_not_cloned_by_branch():
    """`git clone --branch` takes branches and tags only: a full commit hash is fetched
    into a new repository and checked out, each command an argv of its own."""
    from tfwizard.core.building.plan.plan import SRC

    sha = "0123456789abcdef0123456789abcdef01234567"
    recipe = Recipe().with_changes({"tensorflow.version": "2.21.0", "tensorflow.ref": sha,
                                    "backend.kind": "cpu"})
    plan = make_plan(recipe)
    fetch = [s for s in plan.steps if s.phase == "fetch"]
    assert [s.argv[:4] for s in fetch] == [
        ("git", "init", "-q", SRC),
        ("git", "-C", SRC, "fetch"),
        ("git", "-c", "advice.detachedHead=false", "-C"),
    ]
    assert fetch[1].argv[-2:] == ("https://github.com/tensorflow/tensorflow.git", sha)
    assert fetch[2].argv[-1] == "FETCH_HEAD"
    assert [s.needs_network for s in fetch] == [False, True, False]
    tag = make_plan(recipe.with_changes({"tensorflow.ref": "v2.21.0"}))
    assert tag.steps[0].argv[:6] == ("git", "clone", "--depth", "1", "--branch", "v2.21.0")


def test_an_abbreviated_commit_ref_is_a_warning(kb):
    from tfwizard.core.rules import evaluate

    recipe = Recipe().with_changes({"tensorflow.version": "2.21.0", "tensorflow.ref": "1a2b3c4",
                                    "backend.kind": "cpu"})
    codes = {f.code: f for f in evaluate(recipe, kb=kb)}
    assert codes["REF_ABBREVIATED_COMMIT"].severity == "warning"
    assert "git rev-parse 1a2b3c4" in codes["REF_ABBREVIATED_COMMIT"].message
    full = recipe.with_changes({"tensorflow.ref": "0123456789abcdef0123456789abcdef01234567"})
    assert "REF_ABBREVIATED_COMMIT" not in {f.code for f in evaluate(full, kb=kb)}
    named = recipe.with_changes({"tensorflow.ref": "r2.21"})
    assert "REF_ABBREVIATED_COMMIT" not in {f.code for f in evaluate(named, kb=kb)}


def test_resource_flags_take_the_form_of_the_releases_bazel(kb):
    """Issue 15 item 8: --local_ram_resources is deprecated from Bazel 7.1 (TF 2.20+ build
    with 7.4.1); those releases get --local_resources=memory=/cpu=, older ones the old flag."""
    small = HostProfile.load(HOSTS / "small-laptop.json")
    seen = set()
    for version in kb.release_versions():
        release = kb.release(version)
        recipe = LAPTOP.with_changes({"tensorflow.version": version, "backend.kind": "cpu"})
        f = flags(make_plan(recipe, build_host=small))
        memory = [x for x in f if x.startswith(("--local_resources=memory=",
                                                "--local_ram_resources="))]
        assert len(memory) == 1, (version, f)
        ram_mb = int(memory[0].rsplit("=", 1)[1])
        assert 6000 < ram_mb < 7000  # 80% of the 8 GiB laptop
        new_bazel = int(release.bazel.split(".")[0]) >= 7
        if new_bazel:
            assert memory[0].startswith("--local_resources=memory="), version
            assert "--local_resources=cpu=4" in f and "--local_ram_resources" not in " ".join(f)
        else:
            assert memory[0].startswith("--local_ram_resources="), version
            assert not any(x.startswith("--local_resources") for x in f)
        seen.add(new_bazel)
    assert seen == {True, False}
    assert "--local_resources=memory=" in " ".join(
        flags(make_plan(LAPTOP.with_changes({"tensorflow.version": "2.20.0"}), build_host=small)))


def test_a_warm_container_without_the_values_of_its_plans_secrets_names_them(tmp_path):
    """The warm path passes ${ENV} values per exec (warmsecrets.py); a WarmContainer made
    for a plan with references but no values refuses at once, naming them (no engine is
    touched: the client is never used)."""
    from tfwizard.core.building.warm import container as warm
    from tfwizard.core.errors import UsageError

    plan = make_plan(LAPTOP.with_changes({"network.https_proxy": "${TFWT_PX}",
                                          "remote.cache": "https://cache.example",
                                          "remote.headers": ["x-api-key=${TFWT_KEY}"]}))
    space = warm.workspace_for(plan, str(tmp_path / "r.toml"))
    with pytest.raises(UsageError) as err:
        warm.WarmContainer(None, plan, space)
    assert "TFWT_KEY, TFWT_PX" in str(err.value) and "yet" not in str(err.value)
    assert warm.WarmContainer(None, plan, space, secrets={}).plan is plan
