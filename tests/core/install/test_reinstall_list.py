"""reinstall.dist_list: the interpreter's own package list, as pip freeze --all names them."""

from __future__ import annotations

import venv

from tfwizard.core.install.job import pip_freeze, venv_python
from tfwizard.core.install.reinstall import dist_list


def test_dist_list_names_what_pip_freeze_names(tmp_path):
    venv.EnvBuilder(with_pip=True).create(tmp_path / "v")
    python = venv_python(tmp_path / "v")
    listed = dist_list(python)
    assert listed == sorted(pip_freeze(python))  # pip (and setuptools where bundled), pinned
    assert any(line.startswith("pip==") for line in listed)
