"""Helpers of the wheelhouse tests (not a test module): TensorFlow-shaped wheels made by
the fixture workspace's own wheel builder (tests/fixtures/tf_workspace, the script its
Bazel :wheel rule runs), and build records made the way the runner makes them (the plan
from make_plan, the wheel check from wheelcheck.compare), without Docker.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

from tests import world
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.run.record import new_build_id
from tfwizard.core.install.wheelcheck import Found, compare, expected_of
from tfwizard.core.install.wheelfacts import read_wheel_facts
from tfwizard.core.knowledge import load_knowledge
from tfwizard.core.recipe import load_recipe

PIP_PACKAGE = world.FIXTURE_WORKSPACE / "tensorflow" / "tools" / "pip_package"
ROOT = Path(__file__).resolve().parents[3]
HOSTS = ROOT / "tests" / "data" / "hosts"


def _builder() -> Any:
    spec = importlib.util.spec_from_file_location("_tfw_fixture_build_wheel",
                                                  PIP_PACKAGE / "build_wheel.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cuda_info(cuda: str = "12.8.1", cudnn: str = "9", ccs: tuple[str, ...] = ("compute_120",)
              ) -> dict[str, Any]:
    """TensorFlow's build_info of a CUDA build, as the fixture writes it."""
    return {"is_cuda_build": True, "is_rocm_build": False, "is_tensorrt_build": False,
            "cpu_compiler": "/usr/bin/gcc", "cuda_version": cuda, "cudnn_version": cudnn,
            "cuda_compute_capabilities": list(ccs)}


CPU_INFO = {"is_cuda_build": False, "is_rocm_build": False, "is_tensorrt_build": False,
            "cpu_compiler": "/usr/bin/gcc"}


def tf_wheel(dest: Path, *, name: str = "tensorflow_cpu", version: str = "2.21.0",
             tag: str = "cp311-cp311-linux_x86_64",
             build_info: dict[str, Any] | None = None, library: bytes = b"") -> Path:
    """A TensorFlow-shaped wheel (the fixture's Python package, a stand-in library, TF's
    build_info.py), written by the fixture's build_wheel.py; its path. `library`: the
    stand-in library's bytes (random bytes make a wheel as big as a real one is for its
    compressed size)."""
    dest.mkdir(parents=True, exist_ok=True)
    work = dest / f".work-{name}-{version}-{tag}"
    work.mkdir(exist_ok=True)
    lib = work / "libtensorflow_framework.so"
    lib.write_bytes(library or b"\x7fELF tfwizard wheelhouse test stand-in\n")
    info = work / "build_info.json"
    info.write_text(json.dumps(build_info if build_info is not None else CPU_INFO))
    out = dest / f"{name}-{version}-{tag}.whl"
    sources = sorted(str(p) for p in (PIP_PACKAGE / "src").rglob("*.py"))
    _builder().main(["--name", name, "--version", version, "--tag", tag,
                     "--build-info", str(info), "--library", str(lib),
                     "--strip-prefix", "pip_package/src/", "--output", str(out), *sources])
    return out


def recipe_file(path: Path, *, backend: str = "cpu", python: str = "3.11",
                ccs: tuple[str, ...] = ("compute_120",), cuda: str = "12.8.1",
                cudnn: str = "9.10.2", extra: str = "") -> Path:
    """A recipe of TensorFlow 2.21.0 for a backend (the kind a build server builds)."""
    text = f'schema = 1\nname = "wh-{backend}"\n[tensorflow]\nversion = "2.21.0"\n' \
           f'[python]\nversion = "{python}"\n[backend]\nkind = "{backend}"\n'
    if backend == "cuda":
        cc_list = ", ".join(json.dumps(c) for c in ccs)
        text += f'[cuda]\nversion = "{cuda}"\ncudnn = "{cudnn}"\n' \
                f"compute_capabilities = [{cc_list}]\n"
        if any(c.endswith("120") for c in ccs):
            text += '[toolchain]\nclang = "21"\n'
    path.write_text(text + extra, encoding="utf-8")
    return path


def build_record(data: Path, recipe: Path, wheel: Path, *, build_id: str | None = None
                 ) -> Path:
    """A build record of `recipe` that made `wheel`, as the runner writes one: recipe.toml,
    plan.json, the wheel check (wheel-check.json, and in result.json), result.json."""
    plan = make_plan(load_recipe(recipe), recipe_dir=recipe.parent)
    release = load_knowledge().release(plan.release)
    check = compare(expected_of(plan, glibc_floor=release.glibc_floor if release else ""),
                    Found.of_wheel(read_wheel_facts(wheel)), wheel=str(wheel))
    record = data / "builds" / (build_id or new_build_id())
    record.mkdir(parents=True)
    (record / "recipe.toml").write_text(recipe.read_text())
    (record / "plan.json").write_text(plan.to_json())
    check.write(record)
    (record / "result.json").write_text(json.dumps({
        "build_id": record.name, "status": "succeeded", "record_dir": str(record),
        "wheel": str(wheel), "wheel_check": check.to_dict()}))
    return record


def leaks(secret: str, *roots: Path) -> list[Path]:
    """Every file under `roots` whose bytes hold `secret` (archives are searched inside:
    .tar.gz and .zip members too)."""
    import tarfile
    import zipfile

    needle = secret.encode()
    found = []
    for root in roots:
        for path in [root] if root.is_file() else sorted(root.rglob("*")):
            if not path.is_file() or path.is_symlink():
                continue
            data = path.read_bytes()
            if needle in data:
                found.append(path)
            elif path.name.endswith((".tar.gz", ".tgz")):
                with tarfile.open(path) as tf:
                    for m in tf.getmembers():
                        fh = tf.extractfile(m) if m.isfile() else None
                        if fh is not None and needle in fh.read():
                            found.append(path / m.name)
            elif path.suffix in (".zip", ".whl"):
                with zipfile.ZipFile(path) as zf:
                    found += [path / n for n in zf.namelist() if needle in zf.read(n)]
    return found
