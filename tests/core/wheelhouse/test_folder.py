"""A plain folder as the wheelhouse: `publish` writes the wheel and its PEP 503 pages, the
index reads them back with their hashes, pip reads them as an index, and a wheel changed
after it was published is refused by its hash."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.core.wheelhouse import kit
from tfwizard.core.wheelhouse import WheelhouseError
from tfwizard.core.wheelhouse.folder import publish_to_folder
from tfwizard.core.wheelhouse.index import Wheelhouse, WheelRefused
from tfwizard.core.wheelhouse.label import file_sha256
from tfwizard.core.wheelhouse.publish import publish


def _cuda_build(tmp_path: Path, ccs: tuple[str, ...], name: str) -> Path:
    wheel = kit.tf_wheel(tmp_path / name, name="tensorflow", tag="cp312-cp312-linux_x86_64",
                         build_info=kit.cuda_info(ccs=ccs))
    recipe = kit.recipe_file(tmp_path / f"{name}.toml", backend="cuda", python="3.12", ccs=ccs)
    return kit.build_record(tmp_path / "data", recipe, wheel)


@pytest.fixture
def house(tmp_path):
    """A folder wheelhouse holding two labels of one version: sm_90 and compute_120."""
    folder = tmp_path / "wheelhouse"
    folder.mkdir()
    env = {"HOME": str(tmp_path), "TFWIZARD_DATA_DIR": str(tmp_path / "data")}
    results = [publish(str(_cuda_build(tmp_path, ccs, name)), str(folder), env, tmp_path)
               for ccs, name in ((("sm_90",), "hopper"), (("compute_120",), "blackwell"))]
    return folder, env, results


def test_publish_writes_the_wheels_and_pages_a_reader_finds_with_their_hashes(house):
    folder, _env, results = house
    assert [r.status for r in results] == ["published", "published"]
    names = sorted(p.name for p in (folder / "tensorflow").glob("*.whl"))
    assert names == ["tensorflow-2.21.0+cu128.compute120-cp312-cp312-linux_x86_64.whl",
                     "tensorflow-2.21.0+cu128.sm90-cp312-cp312-linux_x86_64.whl"]
    assert 'href="tensorflow/"' in (folder / "index.html").read_text()
    page = (folder / "tensorflow" / "index.html").read_text()
    assert "tensorflow-2.21.0%2Bcu128.sm90-cp312-cp312-linux_x86_64.whl#sha256=" in page
    files = {f.filename: f for f in Wheelhouse(str(folder)).files()}
    assert set(files) == set(names)
    for name in names:
        assert files[name].index_hash() == ("sha256", file_sha256(folder / "tensorflow" / name))
    assert not list(folder.rglob("*.tmp")) and not list(folder.rglob("*.part"))
    # the same folder as a file:// URL, and each wheel's provenance read from it
    house = Wheelhouse(folder.as_uri())
    prov = house.provenance(files[names[1]])
    assert prov is not None and prov.compute_capabilities == ("sm_90",)
    records = [Path(r.wheel).parents[1] for r in results]
    assert all((r / "publish.json").is_file() for r in records)


def test_pip_reads_the_folder_as_an_index_and_tells_the_two_labels_apart(house, tmp_path):
    folder, _env, _results = house
    for label in ("cu128.sm90", "cu128.compute120"):
        dest = tmp_path / f"pip-{label}"
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
             "--python-version", "3.12", "--platform", "linux_x86_64", "--index-url",
             folder.as_uri() + "/", "--dest", str(dest), f"tensorflow==2.21.0+{label}",
             "--disable-pip-version-check", "--no-cache-dir"],
            capture_output=True, text=True, timeout=300, env={"PATH": "/usr/bin:/bin",
                                                              "PIP_CONFIG_FILE": "/dev/null"})
        assert done.returncode == 0, done.stdout + done.stderr
        assert [p.name for p in dest.iterdir()] == [
            f"tensorflow-2.21.0+{label}-cp312-cp312-linux_x86_64.whl"]


def test_publishing_again_is_fine_and_a_different_file_of_that_name_is_refused(house, tmp_path):
    folder, env, results = house
    again = publish(results[0].build_id, str(folder), env, tmp_path)
    assert again.status == "present" and again.sha256 == results[0].sha256
    other = tmp_path / "other" / results[0].filename
    other.parent.mkdir()
    other.write_bytes(Path(results[1].wheel).read_bytes())
    with pytest.raises(WheelhouseError, match="already has a different"):
        publish_to_folder(other, folder)


def test_a_wheel_changed_after_it_was_published_is_refused_by_the_index_hash(house, tmp_path):
    folder, _env, results = house
    wheel = folder / "tensorflow" / results[0].filename
    with zipfile.ZipFile(wheel, "a") as zf:  # one more member: the bytes differ
        zf.writestr("tensorflow/extra.py", "x = 1\n")
    house_ = Wheelhouse(str(folder))
    f = next(f for f in house_.files() if f.filename == results[0].filename)
    with pytest.raises(WheelRefused, match="the wheelhouse's index says"):
        house_.download(f, tmp_path / "dl")
    assert not list((tmp_path / "dl").iterdir())


def test_a_flat_folder_of_wheels_is_read_without_hashes(tmp_path):
    wheel = kit.tf_wheel(tmp_path / "flat")
    files = Wheelhouse(str(tmp_path / "flat")).files()
    assert [(f.filename, f.hashes) for f in files] == [(wheel.name, ())]
    with pytest.raises(WheelhouseError, match="no such wheelhouse folder"):
        Wheelhouse(str(tmp_path / "missing")).files()
