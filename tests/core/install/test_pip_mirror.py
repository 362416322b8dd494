"""`tfwizard install` with the recipe's pip mirror ([install] index_url / trusted_host)
against a real simple index on loopback (`python -m http.server`, stopped at the end)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests import world
from tests.net.servers import free_port, wait_for_port
from tfwizard.cli import ExitStatus, capture

STUB = "tfwizard-fixture-cuda-stub"


def _probe_wheel(dest: Path) -> Path:
    """A tiny wheel that depends on the stub: pip must fetch the stub from the index."""
    path = dest / "tfw_mirror_probe-1.0-py3-none-any.whl"
    info = "tfw_mirror_probe-1.0.dist-info"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("tfw_mirror_probe/__init__.py", "")
        zf.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: tfw-mirror-probe\n"
                    f"Version: 1.0\nRequires-Dist: {STUB}\n")
        zf.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\n"
                    "Root-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{info}/RECORD", "")
    return path


@pytest.mark.slow
def test_install_uses_the_recipes_index_url(tmp_path):
    root = tmp_path / "index"
    stub = world.build_cuda_stub_wheel(tmp_path / "dist")
    project = root / "simple" / STUB
    project.mkdir(parents=True)
    (project / stub.name).write_bytes(stub.read_bytes())
    (project / "index.html").write_text(f'<a href="{stub.name}">{stub.name}</a>\n')
    port = free_port()
    log = (tmp_path / "http.log").open("wb")
    server = subprocess.Popen(
        ["timeout", "300", sys.executable, "-m", "http.server", "--bind", "127.0.0.1",
         "--directory", str(root), str(port)], stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, proc=server)
        recipe = tmp_path / "r.toml"
        recipe.write_text('schema = 1\nname = "mirror"\n[tensorflow]\nversion = "2.21.0"\n'
                          f'[install]\nindex_url = "http://127.0.0.1:{port}/simple"\n'
                          'trusted_host = "127.0.0.1"\nextras = []\n')
        status, out, err = capture(["install", str(_probe_wheel(tmp_path)), "--venv",
                                    str(tmp_path / "venv"), "--create", "--recipe",
                                    str(recipe)])
    finally:
        server.terminate()
        server.wait(10)
        log.close()
    assert status == ExitStatus.OK, out + err
    requests = (tmp_path / "http.log").read_text()
    assert f"GET /simple/{STUB}/ " in requests
    assert f"GET /simple/{STUB}/{stub.name} " in requests
    freeze = subprocess.run([str(tmp_path / "venv" / "bin" / "python"), "-m", "pip", "freeze"],
                            capture_output=True, text=True, check=True).stdout
    assert f"{STUB}==1.0" in freeze and "tfw-mirror-probe" in freeze
