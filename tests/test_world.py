"""Tests of the test world itself: images, fixture workspace, fixture wheel, cuda stub.

One Bazel build (about 20 s on 2 cores) is shared by the whole module; the later builds reuse
its disk cache in new containers.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from tfwizard.core.install.wheelfacts import read_wheel_facts

try:
    from tests import world
except ImportError:  # tests/ is not a package: pytest put tests/ itself on sys.path
    import world

CPU_GCC = dict(world.CPU_GCC_ANSWERS)

CPU_GCC_BAZELRC = """\
build --action_env PYTHON_BIN_PATH="/usr/bin/python3"
build --action_env PYTHON_LIB_PATH="/usr/lib/python3/dist-packages"
build --python_path="/usr/bin/python3"
build:opt --copt=-Wno-sign-compare
build:opt --host_copt=-Wno-sign-compare
test --test_size_filters=small,medium
test:v1 --test_tag_filters=-benchmark-test,-no_oss,-oss_excluded,-gpu,-oss_serial
test:v1 --build_tag_filters=-benchmark-test,-no_oss,-oss_excluded,-gpu
test:v2 --test_tag_filters=-benchmark-test,-no_oss,-oss_excluded,-gpu,-oss_serial,-v1only
test:v2 --build_tag_filters=-benchmark-test,-no_oss,-oss_excluded,-gpu,-v1only
"""

CUDA_CLANG = {
    "PYTHON_BIN_PATH": "/usr/bin/python3",
    "USE_DEFAULT_PYTHON_LIB_PATH": "1",
    "TF_SET_ANDROID_WORKSPACE": "0",
    "TF_NEED_ROCM": "0",
    "TF_NEED_CUDA": "1",
    "HERMETIC_CUDA_VERSION": "12.5.1",
    "HERMETIC_CUDNN_VERSION": "9.3.0",
    "HERMETIC_CUDA_COMPUTE_CAPABILITIES": "8.6",
    "LOCAL_CUDA_PATH": "",
    "LOCAL_CUDNN_PATH": "",
    "LOCAL_NCCL_PATH": "",
    "TF_CUDA_CLANG": "1",
    "CLANG_CUDA_COMPILER_PATH": "/usr/lib/llvm-18/bin/clang",  # absent in the image
    "CC_OPT_FLAGS": "-march=native -Wno-sign-compare",
}

CUDA_CLANG_LINES = [
    'build:cuda --repo_env HERMETIC_CUDA_VERSION="12.5.1"',
    'build:cuda --repo_env HERMETIC_CUDNN_VERSION="9.3.0"',
    'build:cuda --repo_env HERMETIC_CUDA_COMPUTE_CAPABILITIES="8.6"',
    "build --config=cuda_clang",
    'build --action_env CLANG_CUDA_COMPILER_PATH="/usr/lib/llvm-18/bin/clang"',
    "build --config=cuda_clang",
    "build:opt --copt=-march=native",
    "build:opt --host_copt=-march=native",
    "build:opt --copt=-Wno-sign-compare",
    "build:opt --host_copt=-Wno-sign-compare",
    "test --test_env=LD_LIBRARY_PATH",
]

PROBE = """\
import json, tensorflow as tf
with tf.device("/GPU:0"):
    x = tf.random.uniform((4, 5), seed=7)
print(json.dumps({
    "version": tf.__version__,
    "build_info": tf.sysconfig.get_build_info(),
    "cuda": tf.test.is_built_with_cuda(),
    "devices": [[d.name, d.device_type] for d in tf.config.list_physical_devices()],
    "gpus": len(tf.config.list_physical_devices("GPU")),
    "sum": tf.reduce_sum([1.0, 2.0, 3.5]).numpy(),
    "matmul": tf.matmul([[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]).numpy(),
    "uniform_shape": list(x.shape),
    "uniform_in_range": all(0.0 <= v < 1.0 for row in x.numpy() for v in row),
}))
"""


def _probe_result(output: str) -> dict:
    import json

    line = [ln for ln in output.splitlines() if ln.startswith("{")][-1]
    return json.loads(line)


def _check_probe(result: dict, *, cuda: bool) -> None:
    assert result["version"] == "2.18.0"
    assert result["devices"] == [["/physical_device:CPU:0", "CPU"]]
    assert result["gpus"] == 0
    assert result["sum"] == pytest.approx(6.5)
    assert result["matmul"] == [[19.0, 22.0], [43.0, 50.0]]
    assert result["uniform_shape"] == [4, 5] and result["uniform_in_range"]
    assert result["cuda"] is cuda
    assert result["build_info"]["is_cuda_build"] is cuda
    assert result["build_info"]["is_rocm_build"] is False


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def images():
    world.ensure_images()


@pytest.fixture(scope="module")
def cache_volume(images):
    name = world.new_volume_name()
    yield name
    world.remove_volume(name)


@pytest.fixture(scope="module")
def built(tmp_path_factory, cache_volume):
    """A configured (CPU, gcc) workspace and its wheel, built with the raw docker SDK."""
    import docker

    ws = world.copy_workspace(tmp_path_factory.mktemp("built"))
    conf = world.run_configure(ws, CPU_GCC)
    assert conf.exit_code == 0, conf.output

    client = docker.from_env(timeout=60)
    script = (
        "bazel build --curses=no --color=no --show_progress_rate_limit=1 "
        "--disk_cache=/cache //tensorflow/tools/pip_package:wheel "
        "--repo_env=WHEEL_NAME=tensorflow_cpu --config=opt "
        "&& mkdir -p dist && cp -L bazel-bin/tensorflow/tools/pip_package/wheel_house/*.whl dist/"
    )
    user = world._default_user()
    env = {"USER": "tfwizard", "HOME": "/tmp/home"} if user else {}
    container = client.containers.run(
        world.IMAGE,
        ["sh", "-c", script],
        detach=True,
        network_mode="none",
        user=user or "",
        environment=env,
        volumes={
            str(ws): {"bind": "/src", "mode": "rw"},
            cache_volume: {"bind": "/cache", "mode": "rw"},
        },
    )
    try:
        status = container.wait(timeout=900)
        log = container.logs().decode("utf-8", "replace")
    finally:
        container.remove(force=True)
        client.close()
    assert status["StatusCode"] == 0, log[-5000:]
    wheels = sorted((ws / "dist").glob("*.whl"))
    assert [w.name for w in wheels] == ["tensorflow_cpu-2.18.0-cp311-cp311-linux_x86_64.whl"]
    return ws, wheels[0], log


@pytest.fixture(scope="module")
def find_links(tmp_path_factory, built):
    d = tmp_path_factory.mktemp("find_links")
    shutil.copy2(built[1], d)
    world.build_cuda_stub_wheel(d)
    return d


# --------------------------------------------------------------------------- images


@pytest.mark.docker
def test_bazel_image_has_bazel_python_gpp(images):
    import docker

    client = docker.from_env()
    try:
        image = client.images.get(world.IMAGE)
        assert image.labels.get(world.CONTENT_LABEL)
        assert image.attrs["Config"]["WorkingDir"] == "/src"
    finally:
        client.close()
    run = world.run_in_image(
        [
            "sh",
            "-c",
            "bazel --version; python3 --version; python --version; g++ --version; "
            "ls /opt/bazel-offline; stat -c %a /tmp /cache",
        ]
    )
    assert run.exit_code == 0, run.output
    assert "bazel no_version" in run.output
    assert "Python 3.11" in run.output
    assert "g++ (Debian" in run.output
    for repo in ("rules_cc", "rules_java", "rules_proto"):
        assert repo in run.output
    assert run.output.count("1777") == 2


@pytest.mark.docker
def test_busybox_image(images):
    run = world.run_in_image(
        ["sh", "-c", "echo hello; seq 3 | wc -l; printf '%s\\n' ok"], image=world.BUSYBOX
    )
    assert run.exit_code == 0, run.output
    assert run.output.split() == ["hello", "3", "ok"]


# --------------------------------------------------------------------------- configure.py


@pytest.mark.docker
def test_configure_cpu_gcc(tmp_path, images):
    ws = world.copy_workspace(tmp_path)
    run = world.run_configure(ws, CPU_GCC)
    assert run.exit_code == 0, run.output
    assert "You have bazel no_version installed." in run.output
    assert (ws / ".tf_configure.bazelrc").read_text() == CPU_GCC_BAZELRC
    assert (ws / "tools" / "python_bin_path.sh").read_text() == (
        'export PYTHON_BIN_PATH="/usr/bin/python3"'
    )


@pytest.mark.docker
def test_configure_cuda_clang_without_clang(tmp_path, images):
    ws = world.copy_workspace(tmp_path)
    run = world.run_configure(ws, CUDA_CLANG)
    assert run.exit_code == 0, run.output
    lines = (ws / ".tf_configure.bazelrc").read_text().splitlines()
    assert lines[:3] == CPU_GCC_BAZELRC.splitlines()[:3]
    body = [ln for ln in lines if not ln.startswith(("test:v1", "test:v2", "test --test_size"))]
    assert body[3:] == CUDA_CLANG_LINES
    assert "-no_gpu" in lines[-1]


@pytest.mark.docker
def test_configure_bad_bool_fails_like_tf(tmp_path, images):
    ws = world.copy_workspace(tmp_path)
    run = world.run_configure(ws, {**CPU_GCC, "TF_NEED_CUDA": "maybe"})
    assert run.exit_code == 1
    assert (
        "UserInputError: Environment variable TF_NEED_CUDA must be set as a boolean indicator."
        in run.output
    )
    assert "Current value is maybe." in run.output
    assert len((ws / ".tf_configure.bazelrc").read_text().splitlines()) == 3


# --------------------------------------------------------------------------- the wheel


@pytest.mark.docker
def test_wheel_is_valid(built):
    _, wheel, log = built
    assert "INFO: Build completed successfully" in log
    with zipfile.ZipFile(wheel) as zf:
        assert zf.testzip() is None
        names = set(zf.namelist())
        dist_info = "tensorflow_cpu-2.18.0.dist-info"
        metadata = zf.read(f"{dist_info}/METADATA").decode()
        assert "Name: tensorflow_cpu\n" in metadata
        assert "Version: 2.18.0\n" in metadata
        assert "Requires-Python: >=3.9\n" in metadata
        assert "Provides-Extra: and-cuda\n" in metadata
        assert 'Requires-Dist: tfwizard-fixture-cuda-stub==1.0 ; extra == "and-cuda"' in metadata
        assert "Tag: cp311-cp311-linux_x86_64\n" in zf.read(f"{dist_info}/WHEEL").decode()
        assert {"tensorflow/__init__.py", "tensorflow/libtensorflow_framework.so",
                "tensorflow/python/platform/build_info.py"} <= names
        # no --copt=-DTFW_FIXTURE_MARK: the library says so
        assert b"tfw-fixture-mark=none" in zf.read("tensorflow/libtensorflow_framework.so")
        rows = list(csv.reader(io.StringIO(zf.read(f"{dist_info}/RECORD").decode())))
        recorded = {r[0] for r in rows}
        assert recorded == names
        for path, digest, size in rows:
            if path.endswith("/RECORD"):
                assert digest == size == ""
                continue
            data = zf.read(path)
            raw = hashlib.sha256(data).digest()
            assert digest == "sha256=" + base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
            assert int(size) == len(data)


@pytest.mark.slow
@pytest.mark.docker
def test_wheel_installs_offline_in_image(tmp_path, built, find_links):
    run = world.run_in_image(
        [
            "sh",
            "-c",
            "python3 -m venv /tmp/venv && /tmp/venv/bin/pip install -q --no-index "
            '--find-links /wheels "/wheels/$WHEEL[and-cuda]" && '
            "/tmp/venv/bin/pip show -q tfwizard-fixture-cuda-stub && cd /tmp && "
            '/tmp/venv/bin/python -c "$PROBE"',
        ],
        environment={"WHEEL": built[1].name, "PROBE": PROBE},
        extra_volumes={str(find_links): {"bind": "/wheels", "mode": "ro"}},
    )
    assert run.exit_code == 0, run.output
    _check_probe(_probe_result(run.output), cuda=False)


@pytest.mark.slow
@pytest.mark.docker
def test_wheel_installs_offline_on_host(tmp_path, built, find_links):
    if sys.version_info[:2] != (3, 11) or sys.platform != "linux":
        pytest.skip("the fixture wheel is cp311-linux_x86_64")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    subprocess.run(
        [
            str(py),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            "--no-index",
            "--find-links",
            str(find_links),
            f"{built[1]}[and-cuda]",
        ],
        check=True,
        timeout=300,
        env=env,
    )
    out = subprocess.run(
        [str(py), "-c", PROBE],
        cwd=tmp_path,
        check=True,
        timeout=120,
        stdout=subprocess.PIPE,
        text=True,
    ).stdout
    _check_probe(_probe_result(out), cuda=False)
    stub = subprocess.run(
        [str(py), "-c", "import tfwizard_fixture_cuda_stub as s; print(s.__version__)"],
        check=True,
        timeout=60,
        stdout=subprocess.PIPE,
        text=True,
    ).stdout
    assert stub.strip() == "1.0"


# --------------------------------------------------------------------------- later builds


@pytest.mark.docker
def test_cached_build_in_new_container_hits_disk_cache(built, cache_volume):
    ws = built[0]
    res = world.bazel_build(
        ws, "--repo_env=WHEEL_NAME=tensorflow_cpu", "--config=opt", cache_volume=cache_volume
    )
    assert res.exit_code == 0, res.output[-5000:]
    assert res.wheel is not None and res.wheel.name == built[1].name
    hits = [ln for ln in res.output.splitlines() if "remote cache hit" in ln]
    assert hits and hits[-1].startswith("INFO: ")
    # all compile/link/genrule actions (28 of 30) come from the cache
    assert int(hits[-1].split("processes: ")[1].split()[0]) >= 25


@pytest.mark.slow
@pytest.mark.docker
def test_cuda_build_reports_cuda_in_build_info(tmp_path_factory, built, cache_volume):
    ws = world.copy_workspace(tmp_path_factory.mktemp("cuda"))
    conf = world.run_configure(ws, {**CUDA_CLANG, "CC_OPT_FLAGS": "-Wno-sign-compare"})
    assert conf.exit_code == 0, conf.output
    res = world.bazel_build(
        ws,
        "--config=opt",
        "--config=cuda_wheel",
        "--repo_env=WHEEL_NAME=tensorflow",
        cache_volume=cache_volume,
    )
    assert res.exit_code == 0, res.output[-5000:]
    assert res.wheel is not None
    assert res.wheel.name == "tensorflow-2.18.0-cp311-cp311-linux_x86_64.whl"
    # where TensorFlow keeps its build facts, in TF's shape (tfwizard's wheel check reads it)
    info = read_wheel_facts(res.wheel).build_info
    assert info is not None
    assert info["is_cuda_build"] is True and info["cuda_version"] == "12.5.1"
    assert info["cudnn_version"] == "9"
    assert info["cuda_compute_capabilities"] == ["sm_86"]


@pytest.mark.slow
@pytest.mark.docker
def test_non_root_user_with_home_and_user(tmp_path_factory, built, cache_volume):
    ws = tmp_path_factory.mktemp("nonroot") / "tf_workspace"
    shutil.copytree(built[0], ws, symlinks=True, ignore=shutil.ignore_patterns("bazel-*", "dist"))
    if os.geteuid() == 0:
        for p in [ws, *ws.rglob("*")]:
            os.lchown(p, 1000, 1000)
    user = "1000:1000" if os.geteuid() == 0 else f"{os.getuid()}:{os.getgid()}"
    res = world.bazel_build(
        ws,
        "--repo_env=WHEEL_NAME=tensorflow_cpu",
        "--config=opt",
        cache_volume=cache_volume,
        user=user,
    )
    assert res.exit_code == 0, res.output[-5000:]
    assert res.wheel is not None
    assert "remote cache hit" in res.output


@pytest.mark.slow
@pytest.mark.docker
def test_break_flag_fails_with_a_compiler_error(built, cache_volume):
    res = world.bazel_build(
        built[0],
        "--repo_env=WHEEL_NAME=tensorflow_cpu",
        "--config=opt",
        "--copt=-DTFW_FIXTURE_BREAK",
        cache_volume=cache_volume,
    )
    assert res.exit_code == 1
    assert "error: 'MatMulKernel' was not declared in this scope" in res.output
    assert "Compiling tensorflow/core/kernels/matmul_op.cc failed" in res.output
    assert "FAILED: Build did NOT complete successfully" in res.output


@pytest.mark.docker
def test_sleep_flag_sleeps_with_a_line_per_second(built, cache_volume):
    res = world.bazel_build(
        built[0],
        "--action_env=TFW_FIXTURE_SLEEP=2",
        target="//tensorflow/tools/pip_package:build_stamp",
        cache_volume=cache_volume,
    )
    assert res.exit_code == 0, res.output[-5000:]
    assert "tfw fixture: sleeping 1/2" in res.output
    assert "tfw fixture: sleeping 2/2" in res.output
    assert "Preparing the wheel (tfw fixture)" in res.output


def test_copy_workspace_leaves_out_build_state(tmp_path):
    ws = world.copy_workspace(tmp_path)
    assert (ws / "WORKSPACE").is_file() and (ws / "configure.py").is_file()
    assert not any(p.name.startswith("bazel-") for p in ws.iterdir())
    assert not (ws / ".tf_configure.bazelrc").exists()


def test_cuda_stub_wheel_is_reproducible(tmp_path):
    a = world.build_cuda_stub_wheel(tmp_path / "a")
    b = world.build_cuda_stub_wheel(tmp_path / "b")
    assert a.name == "tfwizard_fixture_cuda_stub-1.0-py3-none-any.whl"
    assert a.read_bytes() == b.read_bytes()
    with zipfile.ZipFile(a) as zf:
        assert (
            "Name: tfwizard-fixture-cuda-stub"
            in zf.read("tfwizard_fixture_cuda_stub-1.0.dist-info/METADATA").decode()
        )
