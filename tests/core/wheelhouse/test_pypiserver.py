"""The team flow against a real pypiserver on loopback (an htpasswd for uploads): the
build server publishes through the upload API, a machine with a fresh data folder asks
`advise --wheelhouse` and runs `install --wheelhouse`, a wheel whose dist-info was edited
on the server is refused, and the upload password is found in no file the flow wrote."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import zipfile
from types import SimpleNamespace

import pytest

from tests import world
from tests.core.wheelhouse import kit
from tests.core.wheelhouse.test_label import _rewrite
from tests.net.pypiserver import PypiServer
from tfwizard.cli import ExitStatus, capture
from tfwizard.core.wheelhouse.fetch import install_record_of
from tfwizard.core.wheelhouse.index import Wheelhouse
from tfwizard.core.wheelhouse.provenance import PROVENANCE, installed_line

pytestmark = pytest.mark.slow
PASSWORD = "Wh-upload-pw-Zx81q-unique"
H200 = str(kit.HOSTS / "h200-driver580-real.json")
NO_GPU = str(kit.HOSTS / "no-gpu-server.json")


@pytest.fixture(scope="module")
def flow(tmp_path_factory):
    """A pypiserver, and on the "build server" (its own HOME and data folder) two builds:
    a CPU one and a CUDA sm_90 one, each published by `tfwizard publish`."""
    base = tmp_path_factory.mktemp("wheelhouse")
    server = PypiServer(base, users={"builder": PASSWORD})
    server.start()
    build_home = base / "build-home"
    build_home.mkdir()
    builder = {**os.environ, "HOME": str(build_home), "TFWIZARD_DATA_DIR": str(base / "bdata"),
               "TWINE_USERNAME": "builder", "TWINE_PASSWORD": PASSWORD}
    cpu = kit.tf_wheel(base / "out", library=os.urandom(3 << 20))
    cuda = kit.tf_wheel(base / "out", name="tensorflow", build_info=kit.cuda_info(ccs=("sm_90",)))
    records = [kit.build_record(base / "bdata", kit.recipe_file(base / "cpu.toml"), cpu),
               kit.build_record(base / "bdata", kit.recipe_file(
                   base / "cuda.toml", backend="cuda", ccs=("sm_90",)), cuda)]
    outputs = []
    for record in records:
        status, out, err = capture(["publish", record.name, "--to", server.simple], builder,
                                   cwd=base)
        assert status == ExitStatus.OK, out + err
        outputs.append(out)
    yield SimpleNamespace(base=base, server=server, builder=builder, records=records,
                          outputs=outputs, cpu=cpu)
    server.stop()


def test_publish_uploads_through_the_upload_api(flow):
    assert "Uploaded tensorflow_cpu-2.21.0+cpu-cp311-cp311-linux_x86_64.whl" in flow.outputs[0]
    assert f"tfwizard install --wheelhouse {flow.server.simple}" in flow.outputs[0]
    stored = sorted(p.name for p in flow.server.packages.iterdir())
    assert stored == ["tensorflow-2.21.0+cu128.sm90-cp311-cp311-linux_x86_64.whl",
                      "tensorflow_cpu-2.21.0+cpu-cp311-cp311-linux_x86_64.whl"]
    log = flow.server.log_text()
    assert "User 'builder' stored 'tensorflow_cpu-2.21.0+cpu-cp311" in log
    published = json.loads((flow.records[0] / "publish.json").read_text())
    assert published[-1]["status"] == "uploaded"
    assert published[-1]["credentials"] == "user builder (TWINE_USERNAME/TWINE_PASSWORD)"
    # a second publish of the same build: the server has that very file (409), fine
    status, out, _err = capture(["publish", flow.records[0].name, "--to", flow.server.simple],
                                flow.builder, cwd=flow.base)
    assert status == ExitStatus.OK and "already has" in out


def test_a_wrong_password_is_refused_and_the_message_does_not_carry_it(flow):
    env = {**flow.builder, "TWINE_PASSWORD": "not-" + PASSWORD}
    status, out, err = capture(["publish", flow.records[0].name, "--to", flow.server.simple],
                               env, cwd=flow.base)
    assert status == ExitStatus.ERROR
    assert "refused the upload: 403" in err and "user builder" in err
    assert PASSWORD not in out + err


def test_the_provenance_is_read_with_ranges_not_a_whole_download(flow):
    house = Wheelhouse(flow.server.simple)
    before = len(flow.server.log_text())
    f = next(f for f in house.files() if "+cpu" in f.filename)
    prov = house.provenance(f)
    assert prov is not None and prov.build_id == flow.records[0].name
    size = (flow.server.packages / f.filename).stat().st_size
    house.files(["tensorflow-cpu"])  # one more request: the server logs in order, after each
    deadline = time.monotonic() + 10
    while '"GET /simple/tensorflow-cpu/' not in flow.server.log_text()[before:].split(
            "/packages/")[-1] and time.monotonic() < deadline:
        time.sleep(0.1)
    log = flow.server.log_text()[before:]
    assert '" 200 ' not in log.split("/packages/", 1)[-1].split("\n", 1)[0]
    sent = [int(n) for n in re.findall(r'"GET /packages/\S+ HTTP/1.1" 206 (\d+)', log)]
    assert sent and sum(sent) < size / 4, (sent, size)


def test_a_fresh_machine_advises_and_installs_from_the_wheelhouse(flow, tmp_path):
    """An H200 (its real profile) with a fresh data folder: advise names the CUDA sm_90
    wheel and why, ahead of a source build; install puts it in with [and-cuda] (the fixture
    stand-in of NVIDIA's wheels, offline), pip reports the labelled version, and the
    install record keeps the provenance."""
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "TFWIZARD_DATA_DIR": str(tmp_path / "data")}
    env.pop("TWINE_PASSWORD", None)
    status, out, err = capture(["advise", "--wheelhouse", flow.server.simple, "--target", H200,
                                "--host", NO_GPU, "--python", "3.11"], env)
    assert status == ExitStatus.OK, out + err
    assert ("The wheelhouse has a wheel that serves the target machine: "
            "tensorflow-2.21.0+cu128.sm90-cp311-cp311-linux_x86_64.whl") in out
    assert "GPU 0 (NVIDIA H200), CC 9.0: SASS sm_90" in out
    assert "built for cpu; the target machine wants cuda" in out
    status, out, _err = capture(["advise", "--wheelhouse", flow.server.simple, "--target", H200,
                                 "--host", NO_GPU], env)  # the H200's own Python, 3.12
    assert "its Python tag cp311 is not Python 3.12 of the target machine" in out
    assert out.index("Wheelhouse") < out.index("Verdict:")
    links = tmp_path / "links"
    world.build_cuda_stub_wheel(links)
    venv = tmp_path / "venv"
    status, out, err = capture(["install", "--wheelhouse", flow.server.simple, "--venv",
                                str(venv), "--create", "--host", H200, "--find-links",
                                str(links), "--no-index"], env)
    assert status == ExitStatus.OK, out + err
    assert "tensorflow-2.21.0+cu128.sm90-cp311-cp311-linux_x86_64.whl: sha256 as the index " \
           "gives it" in out
    py = venv / "bin" / "python"
    show = subprocess.run([str(py), "-m", "pip", "show", "tensorflow"], capture_output=True,
                          text=True, check=True).stdout
    assert "Version: 2.21.0+cu128.sm90" in show
    freeze = subprocess.run([str(py), "-m", "pip", "freeze"], capture_output=True, text=True,
                            check=True).stdout
    assert "tfwizard-fixture-cuda-stub==1.0" in freeze  # [and-cuda] for a CUDA build
    records = list((tmp_path / "data" / "installs").glob("*.json"))
    assert len(records) == 1
    record = json.loads(records[0].read_text())
    assert record["result"]["status"] == "installed"
    assert record["provenance"]["build_id"] == flow.records[1].name
    assert record["wheel"]["hashes"]["sha256"] == record["sha256"]
    # verify's line: the build in the venv's dist-info, and the install record that put it
    found = install_record_of(str(py), data_dir=tmp_path / "data")
    assert found is not None and found["id"] == record["id"]
    assert install_record_of(str(tmp_path / "other" / "bin" / "python"),
                             data_dir=tmp_path / "data") is None
    line = installed_line({"provenance": record["provenance"]}, found)
    assert line.startswith("2.21.0+cu128.sm90: recipe wh-cuda") and \
        f"installed from {flow.server.simple} on " in line
    replaced = {**found, "provenance": {**found["provenance"], "build_id": "another"}}
    assert "TensorFlow was replaced since" in installed_line(
        {"provenance": record["provenance"]}, replaced)
    installed = list(venv.glob(f"lib/python3*/site-packages/tensorflow-2.21.0+cu128.sm90"
                               f".dist-info/{PROVENANCE}"))
    assert len(installed) == 1  # the provenance travels into the environment
    # the upload password: in none of the files the flow wrote, on either machine
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    status, out, err = capture(["bundle", flow.records[0].name, "--out", str(bundle), "--host",
                                NO_GPU], flow.builder)
    assert status == ExitStatus.OK, out + err
    assert kit.leaks(PASSWORD, flow.base / "bdata", tmp_path, bundle) == []
    assert kit.leaks("builder", flow.records[0] / "publish.json")  # the check can see


def test_a_wheel_whose_dist_info_was_edited_on_the_server_is_refused(flow, tmp_path):
    """Someone with access to the server's folder edits a CUDA sm_86 wheel's provenance to
    claim sm_90 (RECORD rewritten to match): the index's hash is the edited file's, so the
    wheel's own facts must catch it, before a venv is made."""
    wheel = kit.tf_wheel(tmp_path / "w", name="tensorflow",
                         build_info=kit.cuda_info(ccs=("sm_86",)))
    data = tmp_path / "bdata"
    record = kit.build_record(data, kit.recipe_file(tmp_path / "c.toml", backend="cuda",
                                                    ccs=("sm_86",)), wheel)
    from tfwizard.core.wheelhouse.publish import labelled_wheel

    good = labelled_wheel(record, wheel)
    # the edited wheel claims the label and the provenance of an sm_90 build
    claimed = good.name.replace("2.21.0+cu128.sm86", "2.21.0+cu128.sm90.fake")
    assert claimed != good.name
    edited = tmp_path / claimed
    shutil.copy(good, edited)
    old_info = good.name.split("-cp311")[0] + ".dist-info"
    new_info = claimed.split("-cp311")[0] + ".dist-info"
    with zipfile.ZipFile(edited) as zf:
        members = {n.replace(old_info, new_info): zf.read(n) for n in zf.namelist()}
    prov = json.loads(members[f"{new_info}/{PROVENANCE}"])
    prov.update(compute_capabilities=["sm_90"], label="cu128.sm90.fake",
                version="2.21.0+cu128.sm90.fake")
    members[f"{new_info}/{PROVENANCE}"] = json.dumps(prov).encode()
    members[f"{new_info}/METADATA"] = members[f"{new_info}/METADATA"].replace(
        b"Version: 2.21.0+cu128.sm86", b"Version: 2.21.0+cu128.sm90.fake")
    with zipfile.ZipFile(edited, "w") as zf:
        for name, body in members.items():
            zf.writestr(name, body)
    _rewrite(edited, {}, fix_record=True)
    shutil.copy(edited, flow.server.packages / claimed)
    try:
        venv = tmp_path / "venv"
        env = {**os.environ, "HOME": str(tmp_path), "TFWIZARD_DATA_DIR": str(tmp_path / "d")}
        status, out, err = capture(["install", "tensorflow==2.21.0+cu128.sm90.fake",
                                    "--wheelhouse", flow.server.simple, "--venv", str(venv),
                                    "--create", "--host", H200], env)
        assert status == ExitStatus.ERROR, out + err
        assert "refusing tensorflow-2.21.0+cu128.sm90.fake" in err
        assert "its build facts contradict its provenance" in err and "sm_86" in err
        assert not venv.exists()
    finally:
        (flow.server.packages / claimed).unlink()
