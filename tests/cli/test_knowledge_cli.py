"""`tfwizard knowledge from-source`: a release's entry read from TensorFlow-shaped trees
(tests/fixtures/tf_trees), checked against releases.toml, written into a copy of the
knowledge folder, and read from a git URL at a tag (a local repository: only the files
the facts need are checked out)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tfwizard.cli import capture
from tfwizard.core.knowledge import load_knowledge, load_knowledge_from
from tfwizard.core.resources import resource_path

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "tf_trees"
GIT_ENV = {"PATH": "/usr/bin:/bin", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}


def _knowledge_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "knowledge"
    shutil.copytree(resource_path("knowledge"), dest)
    return dest


def _tree(tmp_path: Path, name: str) -> Path:
    dest = tmp_path / name
    shutil.copytree(TREES / name, dest)
    return dest


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env={**GIT_ENV, "HOME": str(cwd)},
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.mark.parametrize(("tree", "release"), [("2.20", "2.20.0"), ("2.21", "2.21.0"),
                                               ("2.22-rc0", "2.22.0rc0")])
def test_the_entries_agree_with_the_trees(tree, release):
    status, out, err = capture(["knowledge", "from-source", str(TREES / tree), "--release",
                                release, "--check"])
    assert status == 0, out + err
    assert "releases.toml agrees with the files" in out
    assert f'version = "{release}"' in out


def test_check_fails_naming_what_differs(tmp_path):
    tree = _tree(tmp_path, "2.21")
    (tree / ".bazelversion").write_text("7.4.1\n")
    status, out, _err = capture(["knowledge", "from-source", str(tree), "--release", "2.21.0",
                                 "--check", "--json"])
    assert status == 1
    data = json.loads(out)
    assert data["differences"] == [{"fact": "bazel", "table": "7.7.0", "source": "7.4.1",
                                    "file": ".bazelversion"}]
    assert "bazel" in data["read"] and "image" in data["inherited"]


def test_a_tree_of_another_version_is_refused():
    status, _out, err = capture(["knowledge", "from-source", str(TREES / "2.21"), "--release",
                                 "2.22.0"])
    assert status == 2 and "the tree is TensorFlow 2.21.0" in err


def test_writing_the_rc_s_entry_from_its_tree_gives_the_table_s_entry(tmp_path):
    folder = _knowledge_copy(tmp_path)
    status, out, err = capture(["knowledge", "from-source", str(TREES / "2.22-rc0"),
                                "--release", "2.22.0rc0", "--knowledge", str(folder),
                                "--commit", "160ece53b82", "--write"])
    assert status == 0, out + err
    written = load_knowledge_from(folder).release("2.22.0rc0")
    shipped = load_knowledge().release("2.22.0rc0")
    same = {"sources": (), "unverified": ()}
    assert dataclasses.replace(written, **same) == dataclasses.replace(shipped, **same)
    assert "tf-tree-2-22-0rc0" in written.sources


def test_a_new_release_is_written_citing_its_tree_and_commit(tmp_path):
    folder = _knowledge_copy(tmp_path)
    tree = _tree(tmp_path, "2.22-rc0")
    header = tree / "tensorflow/core/public/release_version.h"
    header.write_text(header.read_text().replace('"-rc0"', '""'))
    rc = tree / ".bazelrc"
    rc.write_text(rc.read_text().replace('"9.10.0"', '"9.11.0"'))
    _git(tree, "init", "-q", "-b", "r2.22")
    _git(tree, "add", "-A")
    _git(tree, "commit", "-q", "-m", "2.22.0")
    head = _git(tree, "rev-parse", "HEAD")
    status, out, err = capture(["knowledge", "from-source", str(tree), "--release", "2.22.0",
                                "--knowledge", str(folder), "--write"])
    assert status == 0, out + err
    kb = load_knowledge_from(folder)
    new = kb.release("2.22.0")
    assert (new.git_tag, new.tag_commit, new.hermetic_cudnn_default) == ("v2.22.0", head,
                                                                         "9.11.0")
    versions = kb.release_versions()
    assert versions[-3:] == ["2.22.0rc0", "2.22.0", "master"]
    assert kb.latest_release().version == "2.22.0"
    source = kb.sources["tf-tree-2-22-0"]
    assert head in source.ref and ".bazelrc" in source.ref and ".bazelversion" in source.ref
    [inherited] = [n for n in new.unverified if "not read from 2.22.0's tree" in n]
    keys = inherited.split(":")[0].split(", ")
    assert "image" in keys and "wheel_cuda" in keys  # not in a tree: from 2.22.0rc0's entry
    assert not {"bazel", "pythons", "hermetic_cudnn_default", "cuda_list"} & set(keys)


def test_a_pin_without_a_list_takes_the_redist_file(tmp_path):
    folder = _knowledge_copy(tmp_path)
    tree = _tree(tmp_path, "2.22-rc0")
    pin = tree / "tensorflow" / "workspace0.bzl"
    new_pin = "0123456789abcdef0123456789abcdef01234567"
    pin.write_text(pin.read_text().replace("3cce03c2becb6d2b56b99dece73b9b95b2f926f4", new_pin))
    redist = tmp_path / "cuda_redist_versions.bzl"
    redist.write_text('CUDA_REDIST_JSON_DICT = {\n    "12.5.1": [],\n    "13.4.0": [],\n}\n'
                      'CUDNN_REDIST_JSON_DICT = {\n    "9.10.0": [],\n    "9.23.0": [],\n}\n'
                      'CUDA_NCCL_WHEELS = {\n    "12": A,\n    "13": B,\n}\n')
    status, out, err = capture(["knowledge", "from-source", str(tree), "--release",
                                "2.22.0rc0", "--knowledge", str(folder), "--redist",
                                str(redist), "--write"])
    assert status == 0, out + err
    kb = load_knowledge_from(folder)
    release = kb.release("2.22.0rc0")
    assert release.cuda_list == "rules_ml_toolchain-0123456"
    assert kb.redist[release.cuda_list].cuda == ("12.5.1", "13.4.0")
    assert kb.redist[release.cuda_list].commit == new_pin
    # the --redist file has the CUDA lists, not the LLVM: those stay the entry's, doubted
    assert release.hermetic_llvm_versions == ("18", "19", "20", "21", "22")
    [llvm] = [n for n in release.unverified if n.startswith("hermetic_llvm_*:")]
    assert new_pin in llvm


def test_a_pinned_commit_s_llvm_is_read(tmp_path):
    """2.21's tree pinning 3cce03c: its entry takes that commit's LLVM 18-22 as read."""
    tree = _tree(tmp_path, "2.21")
    pin = tree / "tensorflow" / "workspace0.bzl"
    pin.write_text(pin.read_text().replace("d8cb9c2c168cd64000eaa6eda0781a9615a26ffe",
                                           "3cce03c2becb6d2b56b99dece73b9b95b2f926f4"))
    status, out, _err = capture(["knowledge", "from-source", str(tree), "--release", "2.21.0",
                                 "--check", "--json"])
    assert status == 1
    data = json.loads(out)
    assert {"hermetic_llvm_default", "hermetic_llvm_versions"} <= set(data["read"])
    [llvm] = [d for d in data["differences"] if d["fact"] == "hermetic_llvm_versions"]
    assert llvm["table"] == "18 (18, 19, 20, 21)" and "22" in llvm["source"]


def test_a_git_url_at_the_release_s_tag(tmp_path):
    repo = _tree(tmp_path, "2.22-rc0")
    (repo / "BIG_UNRELATED_FILE").write_text("x" * 10000)
    _git(repo, "init", "-q", "-b", "master")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "rc0")
    _git(repo, "tag", "v2.22.0-rc0")
    head = _git(repo, "rev-parse", "HEAD")
    status, out, err = capture(["knowledge", "from-source", f"file://{repo}", "--release",
                                "2.22.0rc0", "--check", "--json"], env_vars={
                                    **GIT_ENV, "HOME": str(tmp_path)})
    assert status == 0, out + err
    data = json.loads(out)
    assert data["commit"] == head and data["entry"]["tag_commit"] == head
    assert "cuda_list" in data["read"] and data["differences"] == []
    status, _out, err = capture(["knowledge", "from-source", f"file://{repo}", "--release",
                                 "2.22.0rc0", "--ref", "v9.9.9"],
                                env_vars={**GIT_ENV, "HOME": str(tmp_path)})
    assert status == 2 and "v9.9.9" in err
