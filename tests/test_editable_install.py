"""`pip install -e .` installs a plain path .pth, not setuptools' import finder: the finder
costs every Python start of the venv ~10 ms, which every `tfwizard` command pays (issue 17).
setup.py lists only the code, with a simple layout, for an editable build; the checkout's
resources/ is then found next to the package."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.test_packaging import ROOT, tracked


@pytest.mark.slow
def test_an_editable_install_is_a_plain_path_pth_and_finds_its_data(tmp_path):
    src = tmp_path / "src"
    for name in tracked("tfwizard", "resources", "setup.py", "pyproject.toml", "README.md",
                        "LICENSE"):
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_bytes((ROOT / name).read_bytes())
    prefix = tmp_path / "prefix"
    # --ignore-installed: without it pip uninstalls the running venv's tfwizard first
    out = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps",
                          "--no-build-isolation", "--ignore-installed", "-q",
                          "--prefix", str(prefix), "-e", str(src)],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    site = next(prefix.glob("lib/python*/site-packages"))
    pths = sorted(p.name for p in site.glob("*.pth"))
    assert pths == ["__editable__.tfwizard-0.1.0.pth"]
    assert (site / pths[0]).read_text().split() == [str(src)]  # a path, no `import` line
    assert not list(site.glob("*finder*"))

    code = ("import tfwizard, tfwizard.core.resources as r; print(tfwizard.__file__); "
            "print(r.resources_dir())")
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    # PYTHONPATH does not read .pth files: site.addsitedir does, as the venv's site would
    run = subprocess.run([sys.executable, "-S", "-c",
                          f"import site; site.addsitedir({str(site)!r}); {code}"],
                         env=env, capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert run.returncode == 0, run.stderr
    pkg, res = run.stdout.split()
    assert pkg == str(src / "tfwizard" / "__init__.py")
    assert res == str(src / "resources")
    # the committed .mo: a fresh clone's editable install speaks Chinese with no build step
    zh = ("from tfwizard.core import i18n; print(i18n.catalog('zh_CN')._catalog and "
          "i18n.translate('Welcome to tfwizard', 'zh_CN'))")
    run = subprocess.run([sys.executable, "-S", "-c",
                          f"import site; site.addsitedir({str(site)!r}); {zh}"],
                         env=env, capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert run.returncode == 0 and run.stdout.strip() == "欢迎使用 tfwizard", run.stderr
