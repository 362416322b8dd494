"""resources/ ships inside the wheel: install the built wheel and use it from there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_contains_resources_and_works_installed(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(dist), str(ROOT)], check=True, timeout=300,
                   cwd=tmp_path)
    wheels = list(dist.glob("tfwizard-*.whl"))
    assert len(wheels) == 1
    import zipfile

    names = zipfile.ZipFile(wheels[0]).namelist()
    assert "tfwizard/resources/knowledge/releases.toml" in names
    assert "tfwizard/resources/knowledge/sources.toml" in names
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                    str(target), str(wheels[0])], check=True, timeout=300)
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
