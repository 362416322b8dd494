"""Plans for remote caches/execution, mirrors, proxies, offline builds and `tfwizard fetch`;
and the rules about them (issue 9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tfwizard.cli import ExitStatus, capture
from tfwizard.core.building.plan.fetchplan import REPO_CACHE_MARKER, fetch_report, make_fetch_plan
from tfwizard.core.building.plan.plan import DISTDIR, make_plan
from tfwizard.core.building.plan.render import render_commands
from tfwizard.core.recipe import load_recipe
from tfwizard.core.rules import evaluate

ROOT = Path(__file__).resolve().parents[3]
LAPTOP = load_recipe(ROOT / "recipes" / "tf218-cuda-laptop.toml")
CPU = load_recipe(ROOT / "recipes" / "tf221-cpu-portable.toml")
HOST = str(ROOT / "tests/data/hosts/no-gpu-server.json")


def codes(recipe):
    return {f.code: f for f in evaluate(recipe)}


BUILDBUDDY = """
[remote]
cache = "grpcs://remote.buildbuddy.io"
executor = "grpcs://remote.buildbuddy.io"
instance_name = "tf-builds"
bes_backend = "grpcs://remote.buildbuddy.io"
bes_results_url = "https://app.buildbuddy.io/invocation/"
headers = ["x-buildbuddy-api-key=${BUILDBUDDY_API_KEY}"]
upload = true
[network]
https_proxy = "${HTTPS_PROXY}"
no_proxy = "localhost,127.0.0.1,.corp"
"""


@pytest.mark.parametrize("fmt", ["command", "json"])
def test_plan_shows_remote_flags_and_never_resolved_secrets(tmp_path, fmt):
    recipe = tmp_path / "bb.toml"
    recipe.write_text((ROOT / "recipes" / "tf221-cpu-portable.toml").read_text() + BUILDBUDDY)
    env = {"BUILDBUDDY_API_KEY": "bb-s3cret-key", "HTTPS_PROXY": "http://u:pw0rd@proxy:3128",
           "HOME": str(tmp_path)}
    status, out, err = capture(["plan", str(recipe), "--format", fmt, "--host", HOST], env)
    assert status == ExitStatus.OK, err
    for flag in ("--remote_cache=grpcs://remote.buildbuddy.io",
                 "--remote_executor=grpcs://remote.buildbuddy.io",
                 "--remote_instance_name=tf-builds",
                 "--bes_backend=grpcs://remote.buildbuddy.io",
                 "--bes_results_url=https://app.buildbuddy.io/invocation/",
                 "--remote_upload_local_results=true",
                 "--remote_header=x-buildbuddy-api-key=${BUILDBUDDY_API_KEY}"):
        assert flag in out, flag
    assert "HTTPS_PROXY=${HTTPS_PROXY}" in out or '"HTTPS_PROXY": "${HTTPS_PROXY}"' in out
    assert "bb-s3cret-key" not in out and "pw0rd" not in out
    if fmt == "json":
        plan = json.loads(out)
        assert plan["container_env"]["no_proxy"] == "localhost,127.0.0.1,.corp"


def test_distdir_and_repository_cache_for_offline_builds(tmp_path):
    plan = make_plan(CPU.with_changes({"network.distdir": "archives", "build.network": "none",
                                       "tensorflow.source_dir": "/src/tf"}),
                     recipe_dir=tmp_path)
    assert f"--distdir={DISTDIR}" in plan.flag_list
    mount = next(m for m in plan.mounts if m.target == DISTDIR)
    assert mount.source == str(tmp_path / "archives") and mount.read_only
    assert "--repository_cache=/cache/repo" in plan.flag_list
    build = next(s for s in plan.steps if s.name == "build")
    assert f"--distdir={DISTDIR}" in build.argv  # Bazel is given the flag
    assert f"{tmp_path / 'archives'}:{DISTDIR}:ro" in render_commands(plan)


def test_local_cuda_redistributions_are_mounted_where_configure_looks(tmp_path):
    recipe = LAPTOP.with_changes({"cuda.local_cuda_path": "/opt/redist/cuda",
                                  "cuda.local_cudnn_path": "redist/cudnn"})
    plan = make_plan(recipe, recipe_dir=tmp_path)
    assert plan.configure_env["LOCAL_CUDA_PATH"] == "/opt/redist/cuda"
    assert plan.configure_env["LOCAL_CUDNN_PATH"] == str(tmp_path / "redist/cudnn")
    ro = {m.target: m for m in plan.mounts if m.read_only}
    assert ro["/opt/redist/cuda"].source == "/opt/redist/cuda"
    assert str(tmp_path / "redist/cudnn") in ro
    assert 'build:cuda --repo_env LOCAL_CUDA_PATH="/opt/redist/cuda"' in plan.predicted_bazelrc
    assert not any(m.target.startswith("/opt/redist") for m in make_plan(LAPTOP).mounts)


def test_git_mirror_is_cloned_from_a_read_only_mount():
    plan = make_plan(CPU.with_changes({"tensorflow.git_url": "file:///srv/mirror/tf.git"}))
    fetch = next(s for s in plan.steps if s.name == "fetch")
    assert fetch.argv[:5] == ("git", "clone", "--depth", "1", "--branch")
    assert fetch.argv[-2:] == ("file:///srv/mirror/tf.git", "/src")
    mount = next(m for m in plan.mounts if m.target == "/srv/mirror/tf.git")
    assert mount.kind == "bind" and mount.read_only
    https = make_plan(CPU.with_changes({"tensorflow.git_url": "https://mirror.corp/tf.git"}))
    assert https.git_url == "https://mirror.corp/tf.git"
    assert not any(m.read_only for m in https.mounts)


def test_fetch_plan_is_the_build_with_nobuild_and_cache_listings():
    build = make_plan(CPU)
    plan = make_fetch_plan(CPU)
    names = [s.name for s in plan.steps]
    assert names == ["fetch", "configure", "cache-before", "build", "cache-after"]
    nobuild = next(s for s in plan.steps if s.name == "build")
    assert nobuild.argv[:4] == ("bazel", "--output_user_root=/tmp/tfwizard-bazel", "build",
                                "--nobuild")
    # the same flags and target as the real build: the same repositories come down
    assert nobuild.argv[4:] == next(s for s in build.steps if s.name == "build").argv[3:]
    assert plan.wheel_dir == "" and plan.labels["io.tfwizard.fetch"] == "1"
    assert not any(s.name == "package" for s in make_fetch_plan(
        load_recipe(ROOT / "recipes" / "tf218-cuda-laptop.toml")
        .with_changes({"tensorflow.version": "2.16.2"})).steps)
    bare = make_fetch_plan(CPU.with_changes({"cache.repository_cache": False}))
    assert [s.name for s in bare.steps] == ["fetch", "configure", "build"]


def test_fetch_report_from_listing_and_bep():
    logs = ["step cache-before: find ...",
            f"{REPO_CACHE_MARKER}-before 100 content_addressable/sha256/aa/file",
            "INFO: Build completed successfully, 0 total actions",
            f"{REPO_CACHE_MARKER}-after 100 content_addressable/sha256/aa/file",
            f"{REPO_CACHE_MARKER}-after 2048 content_addressable/sha256/bb/file"]
    bep = [json.dumps({"id": {"fetch": {"url": "http://mirror/a.tar.gz"}},
                       "fetch": {"success": True}}),
           json.dumps({"id": {"fetch": {"url": "http://mirror/b.tar.gz"}}, "fetch": {}}),
           "not json", json.dumps({"id": {"started": {}}})]
    report = fetch_report(logs, bep)
    assert report.urls == ["http://mirror/a.tar.gz"]
    assert report.failed_urls == ["http://mirror/b.tar.gz"]
    assert report.new_files == [("content_addressable/sha256/bb/file", 2048)]
    assert (report.cache_files_before, report.cache_files_after) == (1, 2)
    assert report.to_dict()["new_bytes"] == 2048
    assert fetch_report([]).cache_files_after is None


def test_fetch_dry_run_prints_the_nobuild_command(tmp_path):
    status, out, err = capture(["fetch", str(ROOT / "recipes" / "tf221-cpu-portable.toml"),
                                "--dry-run", "--host", HOST], {"HOME": str(tmp_path)})
    assert status == ExitStatus.OK, err
    assert "build \\\n    --nobuild" in out or "build --nobuild" in out


def test_remote_rules():
    found = codes(CPU.with_changes({"remote.executor": "grpc://bb.lan:1985",
                                    "remote.headers": ["x-api-key=${KEY}"]}))
    assert found["REMOTE_HEADERS_CLEARTEXT"].key == "remote.executor"
    assert "REMOTE_SCHEME" not in found
    found = codes(CPU.with_changes({"remote.bes_backend": "https://bes.example"}))
    assert found["REMOTE_SCHEME"].severity == "error"
    found = codes(CPU.with_changes({"remote.executor": "grpcs://x.example",
                                    "tensorflow.source_dir": "/src/tf",
                                    "build.network": "none"}))
    assert found["NETWORK_NONE"].severity == "error" and "remote services" in \
        found["NETWORK_NONE"].message
    assert "REMOTE_UPLOAD_UNUSED" in codes(CPU.with_changes({"remote.upload": True}))
    loop = codes(CPU.with_changes({"network.http_proxy": "http://127.0.0.1:8888"}))
    assert loop["LOOPBACK_NOT_REACHABLE"].fix.changes == {"build.network": "host"}
    assert "LOOPBACK_NOT_REACHABLE" not in codes(CPU.with_changes({
        "network.http_proxy": "http://127.0.0.1:8888", "build.network": "host"}))
    assert not {"REMOTE_SCHEME", "REMOTE_HEADERS_CLEARTEXT", "LOOPBACK_NOT_REACHABLE",
                "HOST_NETWORK_EXPOSES_HOST", "REMOTE_UPLOAD_UNUSED"} & set(codes(CPU))
