"""Shared fixtures. Docker/world helpers live in tests/world.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

import pytest

# Tests assert on English texts whatever the machine's locale; the i18n tests switch
# languages explicitly.
os.environ.setdefault("TFWIZARD_LANG", "en")
# The suite does not write into the data, cache and config folders of the person running it (the build
# history the wizard lists, the kept host profile, parsed TOML): one folder for the session,
# removed at its end, unless the caller chose them.
SESSION_HOME = Path(tempfile.mkdtemp(prefix="tfwizard-tests-"))
os.environ.setdefault("TFWIZARD_DATA_DIR", str(SESSION_HOME / "data"))
os.environ.setdefault("TFWIZARD_CACHE_DIR", str(SESSION_HOME / "cache"))
os.environ.setdefault("TFWIZARD_CONFIG_DIR", str(SESSION_HOME / "config"))


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(SESSION_HOME, ignore_errors=True)


#: a test phase this long is named when it ends, with the session's time so far: a run
#: cut off by CI's time limit still shows where its time went (--durations prints only
#: at the end)
SLOW_PHASE_S = 20.0
_CONFIG: list = []
_STARTED = time.monotonic()


def pytest_configure(config):
    _CONFIG[:] = [config]


def pytest_runtest_logreport(report):
    if report.duration >= SLOW_PHASE_S and _CONFIG:
        reporter = _CONFIG[0].pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            load = os.getloadavg()[0] if hasattr(os, "getloadavg") else -1.0
            reporter.write_line(f"\n[slow {report.duration:.0f}s at "
                                f"{time.monotonic() - _STARTED:.0f}s, load {load:.1f}] "
                                f"{report.when} {report.nodeid}")

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT.parent / "shared" / "reference"
DATA = Path(__file__).resolve().parent / "data"
TF_VENV = ROOT / ".venv-tf"

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# the REAPI test service (BuildGrid + PostgreSQL + a docker-exec worker): tests/reapi/
from tests.reapi.fixture import reapi, reapi_service  # noqa: E402, F401  (fixtures)


@pytest.fixture
def kb():
    from tfwizard.core.knowledge import load_knowledge

    return load_knowledge()


@pytest.fixture
def root() -> Path:
    return ROOT


def _tf_importable(python: Path) -> bool:
    if not python.exists():
        return False
    done = subprocess.run([str(python), "-c", "import tensorflow"], capture_output=True,
                          timeout=300, check=False)
    return done.returncode == 0


@pytest.fixture(scope="session")
def tf_python() -> Path:
    """<repo>/.venv-tf with the real tensorflow-cpu from PyPI (installed once per machine)."""
    python = TF_VENV / "bin" / "python"
    if _tf_importable(python):
        return python
    if not python.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(TF_VENV)
    done = subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check",
                           "--progress-bar", "off", "tensorflow-cpu"],
                          capture_output=True, text=True, timeout=1800, check=False)
    if done.returncode != 0 or not _tf_importable(python):
        pytest.fail(f"cannot install tensorflow-cpu into {TF_VENV}:\n{done.stderr[-3000:]}")
    return python


@pytest.fixture(scope="session")
def tf_cpu_folder(tmp_path_factory) -> Path:
    """An offline folder: tensorflow-cpu and its dependencies for this Python, downloaded
    once (~300 MB); shared by the CLI and the GUI install tests."""
    folder = tmp_path_factory.mktemp("tf-cpu-wheels")
    done = subprocess.run([sys.executable, "-m", "pip", "download", "--progress-bar", "off",
                           "--disable-pip-version-check", "--only-binary", ":all:", "--dest",
                           str(folder), "tensorflow-cpu"],
                          capture_output=True, text=True, timeout=1800, check=False)
    if done.returncode != 0:
        pytest.fail(f"cannot download tensorflow-cpu:\n{done.stderr[-3000:]}")
    return folder


@pytest.fixture
def pseudo_lang():
    """The core's `_()` in the pseudo language (⟦text⟧) for the test, then back.

    `tests/i18n_scan.unmarked(text)` then lists lines with text nobody marked."""
    from tfwizard.core import i18n

    old = i18n.language()
    i18n.set_language(i18n.PSEUDO)
    yield
    i18n.set_language(old)


@pytest.fixture
def zh_cn_lang():
    """The core's `_()` in Simplified Chinese for the test, then back."""
    from tfwizard.core import i18n

    old = i18n.language()
    i18n.set_language("zh_CN")
    yield
    i18n.set_language(old)
