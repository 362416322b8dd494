"""The wheel ships the whole package: every module and data file of the source tree, and
it works installed (resources/ found inside it)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel `pip wheel` builds from this checkout."""
    tmp = tmp_path_factory.mktemp("wheel")
    dist = tmp / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(dist), str(ROOT)], check=True, timeout=300, cwd=tmp)
    wheels = list(dist.glob("tfwizard-*.whl"))
    assert len(wheels) == 1
    return wheels[0]


def source_files() -> set[str]:
    """Every file git tracks under tfwizard/ (modules and data), as wheel member names."""
    out = subprocess.run(["git", "ls-files", "-z", "tfwizard"], cwd=ROOT, check=True,
                         capture_output=True, timeout=60).stdout.decode()
    return {name for name in out.split("\0") if name and (ROOT / name).is_file()}


@pytest.mark.slow
def test_wheel_holds_every_package_and_data_file_of_the_source_tree(wheel):
    names = {n for n in zipfile.ZipFile(wheel).namelist() if not n.endswith("/")
             and ".dist-info/" not in n}
    source = source_files()
    assert "tfwizard/resources/knowledge/releases.toml" in source  # the walk found data
    assert "tfwizard/core/probe_tf.py" in source  # run as a file in the target interpreter
    assert sorted(source - names) == [], "in the source tree but not in the wheel"
    assert sorted(names - source) == [], "in the wheel but not in the source tree"


@pytest.mark.slow
def test_wheel_works_installed(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                    str(target), str(wheel)], check=True, timeout=300)
    code = ("import tfwizard, tfwizard.core.resources as r; print(tfwizard.__file__); "
            "print(r.resources_dir())")
    env = {"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    pkg, res = out.stdout.split()
    assert pkg.startswith(str(target)) and res.startswith(str(target))
    recipe = ROOT / "recipes" / "tf218-cuda-laptop.toml"
    out = subprocess.run([sys.executable, "-m", "tfwizard", "recipe", "validate", str(recipe)],
                         env=env, capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.slow
def test_building_the_wheel_prints_no_data_folder_warning(tmp_path):
    """setuptools warns about a data folder that is not a listed package ("Installing
    'tfwizard.resources.i18n' as data is deprecated"): with packages.find there is none."""
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps",
                          "--no-build-isolation", "-w", str(tmp_path), str(ROOT)],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    text = out.stdout + out.stderr
    assert "running build_py" in text  # the verbose log was read
    assert "as data is deprecated" not in text
    assert "is absent from the `packages` configuration" not in text
