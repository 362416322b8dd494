"""`tfwizard install REQUIREMENT`: an official wheel by its name and version (issue 22).

The wheel is downloaded with the target's pip, its tags checked, then installed with its
extras as a built wheel is. The small tests use wheels made here in a --find-links folder
(offline, --no-index); the real one installs the official tensorflow-cpu wheel from PyPI
through an offline folder into a fresh venv and verifies it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.cli.test_i18n_cli import PSEUDO, check_marked
from tests.core.install.test_install import make_wheel
from tfwizard.cli import ExitStatus, capture
from tfwizard.core.errors import UsageError
from tfwizard.core.install.requirement import download_argv, parse_requirement

ROOT = Path(__file__).resolve().parents[2]
NO_GPU = ROOT / "tests" / "data" / "hosts" / "no-gpu-server.json"
EN = {"TFWIZARD_LANG": "en"}


def run(argv: list[str], extra: dict[str, str] | None = None):
    return capture(argv, {**os.environ, **EN, **(extra or {})})


def freeze(python: Path) -> list[str]:
    return subprocess.run([str(python), "-m", "pip", "freeze", "--all"], capture_output=True,
                          text=True, check=True).stdout.split()


def test_a_wheel_file_or_a_requirement():
    assert parse_requirement("dist/tensorflow-2.20.0-cp311-cp311-linux_x86_64.whl") is None
    assert parse_requirement("x.whl") is None
    req = parse_requirement("tensorflow[and-cuda]==2.20.0")
    assert req is not None and req.name == "tensorflow" and req.extras == {"and-cuda"}
    assert str(req.specifier) == "==2.20.0"
    for bad in ("==2.20", "tensorflow @ https://example.org/t.whl",
                "tensorflow-cpu; python_version < '3.12'"):
        with pytest.raises(UsageError):
            parse_requirement(bad)


def test_the_download_is_one_argv_without_extras_or_dependencies(tmp_path):
    argv = download_argv("/v/bin/python", Requirement("tensorflow[and-cuda]==2.20.0"), tmp_path,
                         index_url="https://u:p@mirror.example/simple", find_links=["/w"],
                         no_index=False)
    assert argv[:4] == ["/v/bin/python", "-m", "pip", "download"]
    assert {"--no-deps", ":all:", "--index-url"} <= set(argv)
    assert argv[argv.index("--dest") + 1] == str(tmp_path)
    assert argv[argv.index("--find-links") + 1] == "/w"
    assert argv[-1] == "tensorflow==2.20.0"  # the extras go to the install, not the download


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> Path:
    """An offline folder: tinypkg 1.0 and 2.0 (extra `fast` needs tinydep), tinydep."""
    folder = tmp_path_factory.mktemp("wheels")
    make_wheel(folder, "tinypkg", "1.0")
    make_wheel(folder, "tinypkg", "2.0", requires=('tinydep; extra == "fast"',),
               extras=("fast",))
    make_wheel(folder, "tinydep", "0.5")
    return folder


def test_a_requirement_with_its_extra_from_an_offline_folder(tmp_path, wheels):
    venv = tmp_path / "venv"
    keep = tmp_path / "downloads"
    status, out, err = run(["install", "tinypkg[fast]==2.0", "--venv", str(venv), "--create",
                            "--no-index", "--find-links", str(wheels), "--download-dir",
                            str(keep)])
    assert status == ExitStatus.OK, out + err
    assert "tfwizard: downloaded tinypkg-2.0-py3-none-any.whl" in out
    assert f"Installed tinypkg[fast]==2.0 into {venv / 'bin' / 'python'}." in out
    assert [p.name for p in keep.iterdir()] == ["tinypkg-2.0-py3-none-any.whl"]
    installed = freeze(venv / "bin" / "python")
    assert "tinypkg==2.0" in installed and "tinydep==0.5" in installed  # the extra's too
    # an older version by its requirement, --extras as a flag; JSON names what was asked
    status, out, err = run(["install", "tinypkg==1.0", "--venv", str(venv), "--no-index",
                            "--find-links", str(wheels), "--json"])
    assert status == ExitStatus.OK, out + err
    result = json.loads(out)
    assert result["status"] == "installed" and result["requirement"] == "tinypkg==1.0"
    assert result["wheel"].endswith("tinypkg-1.0-py3-none-any.whl")
    assert not Path(result["wheel"]).exists()  # the temporary download folder is gone
    assert "tinypkg==1.0" in freeze(venv / "bin" / "python")


def test_a_version_the_folder_lacks_stops_before_pip_installs(tmp_path, wheels):
    venv = tmp_path / "venv"
    status, out, err = run(["install", "tinypkg==3.0", "--venv", str(venv), "--create",
                            "--no-index", "--find-links", str(wheels)])
    assert status == ExitStatus.ERROR
    assert "tfwizard: pip could not download tinypkg==3.0 for " in err
    assert "No matching distribution found for tinypkg==3.0" in err
    assert not venv.exists()  # the venv this run created is removed again
    status, out, err = run(["install", "tinypkg==3.0", "--venv", str(venv), "--create",
                            "--no-index", "--find-links", str(wheels)], PSEUDO)
    assert status == ExitStatus.ERROR
    check_marked(out + err, allow=("No matching distribution found for tinypkg==3.0",
                                   "Could not find a version that satisfies the requirement "
                                   "tinypkg==3.0 (from versions: 1.0, 2.0)"))


def test_credentials_in_the_index_url_are_never_printed(tmp_path):
    venv = tmp_path / "venv"
    secret = "s3cret-Passw0rd"
    env = {"PIP_RETRIES": "0", "PIP_TIMEOUT": "2", "PIP_FIND_LINKS": "",
           "PIP_CONFIG_FILE": os.devnull}
    for extra in ([], ["--json"], ["-v"]):
        status, out, err = run(["install", "tinypkg==1.0", "--venv", str(venv), "--create",
                                "--index-url", f"http://user:{secret}@127.0.0.1:9/simple",
                                *extra], env)
        assert status == ExitStatus.ERROR
        assert secret not in out + err
        assert "user" not in out + err or "***@127.0.0.1" in out + err


# -- the real official wheel ------------------------------------------------------------------


@pytest.mark.slow
def test_the_official_tensorflow_cpu_wheel_offline_then_a_real_verification(tmp_path,
                                                                            tf_cpu_folder):
    (official,) = tf_cpu_folder.glob("tensorflow_cpu-*.whl")
    version = official.name.split("-")[1]
    venv = tmp_path / "tf"
    status, out, err = run(["install", f"tensorflow-cpu=={version}", "--venv", str(venv),
                            "--create", "--no-index", "--find-links", str(tf_cpu_folder)],
                           {"PIP_CONFIG_FILE": os.devnull})
    assert status == ExitStatus.OK, out[-3000:] + err[-3000:]
    assert f"tfwizard: downloaded {official.name}" in out
    assert f"tensorflow-cpu-{version}" in out
    status, out, err = run(["verify", "--venv", str(venv), "--expect", "cpu", "--host",
                            str(NO_GPU), "--json", "--quiet-log"])
    report = json.loads(out)
    assert status == ExitStatus.OK and report["ok"] is True, out[-3000:] + err[-2000:]
    assert report["tensorflow"] == version and report["expect"] == "cpu"
