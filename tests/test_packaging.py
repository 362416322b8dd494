"""The wheel ships the whole package: every module and data file git tracks under tfwizard/
and resources/ (as tfwizard/resources/), nothing else, and it works installed."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def tracked(*folders: str) -> list[str]:
    """The files git tracks under these folders of the checkout."""
    out = subprocess.run(["git", "ls-files", "-z", *folders], cwd=ROOT, check=True,
                         capture_output=True, timeout=60).stdout.decode()
    return [name for name in out.split("\0") if name and (ROOT / name).is_file()]


def source_files() -> set[str]:
    """What the wheel must hold, as wheel member names."""
    names = set(tracked("tfwizard"))
    names |= {"tfwizard/" + name for name in tracked("resources")}
    # the documents of docs/ (not its screenshots): Help shows the guide offline
    names |= {"tfwizard/resources/" + name for name in tracked("docs")
              if name.count("/") == 1 and name.endswith(".md")}
    return names


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel `pip wheel` builds from a copy of the tracked files (no stale build/)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    for name in tracked("tfwizard", "resources", "docs", "setup.py", "pyproject.toml",
                        "README.md", "LICENSE"):
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, src / name)
    dist = tmp / "dist"
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                          "--no-build-isolation", "-v", "-w", str(dist), str(src)],
                         capture_output=True, text=True, timeout=300, cwd=tmp)
    assert out.returncode == 0, out.stdout + out.stderr
    (tmp / "build.log").write_text(out.stdout + out.stderr)
    wheels = list(dist.glob("tfwizard-*.whl"))
    assert len(wheels) == 1
    return wheels[0]


@pytest.mark.slow
def test_wheel_holds_every_package_and_data_file_of_the_source_tree(wheel):
    names = {n for n in zipfile.ZipFile(wheel).namelist() if not n.endswith("/")
             and ".dist-info/" not in n}
    source = source_files()
    assert "tfwizard/resources/knowledge/releases.toml" in source  # the walk found data
    assert "tfwizard/cli/__init__.py" in source
    assert sorted(source - names) == [], "in the source tree but not in the wheel"
    assert sorted(names - source) == [], "in the wheel but not in the source tree"


@pytest.mark.slow
def test_building_the_wheel_gives_no_setuptools_data_folder_warnings(wheel):
    log = (wheel.parent.parent / "build.log").read_text()
    assert "is absent from the `packages` configuration" not in log
    assert "Package would be ignored" not in log
    assert "as data is deprecated" not in log


@pytest.mark.slow
def test_the_installed_wheel_finds_its_data(wheel, tmp_path):
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
    out = subprocess.run([sys.executable, "-m", "tfwizard", "--help"],
                         env={**env, "TFWIZARD_LANG": "zh_CN"}, capture_output=True, text=True,
                         cwd=tmp_path, timeout=60)
    assert out.returncode == 0 and "显示此帮助信息并退出" in out.stdout, out.stdout + out.stderr


@pytest.mark.slow
def test_the_wheel_ships_the_compiled_catalog(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"tfwizard/resources/locale/zh_CN/LC_MESSAGES/tfwizard.mo",
            "tfwizard/resources/locale/zh_CN/LC_MESSAGES/tfwizard.po"} <= names
    assert not any(n.startswith("tfwizard/resources/i18n/") for n in names)


@pytest.mark.slow
def test_the_wheel_ships_the_user_guide(wheel, tmp_path):
    """Help > User guide reads it offline from the installed wheel."""
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                    str(target), str(wheel)], check=True, timeout=300)
    code = "import tfwizard.core.resources as r; print(r.guide_path())"
    out = subprocess.run([sys.executable, "-c", code], env={"PYTHONPATH": str(target),
                                                            "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert out.stdout.strip() == str(target / "tfwizard/resources/docs/guide.md"), out.stderr
