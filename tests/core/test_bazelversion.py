"""Which Bazel a build runs (core/bazelversion.py) and the facts about it (bazel.toml).

The version outputs below are as Bazel and Bazelisk print them: the test image's Debian
Bazel ("bazel no_version", package 4.2.3+ds-9, tests/test_world.py), and `bazel version`
through Bazelisk as quoted in public write-ups (Bazelisk's warning and extraction lines
included). tests/docker/test_bazel_version.py runs the image's Bazel for real.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version

from tfwizard.core import bazelversion as bv
from tfwizard.core.bazelfacts import load_bazel_facts, load_bazel_facts_from
from tfwizard.core.errors import KnowledgeError

BAZELISK_5_3_2 = """\
Bazelisk version: v1.13.2
WARNING: Invoking Bazel in batch mode since it is not invoked from within a workspace (below a directory having a WORKSPACE file).
Extracting Bazel installation...
Build label: 5.3.2
Build target: bazel-out/k8-opt/bin/src/main/java/com/google/devtools/build/lib/bazel/BazelServer_deploy.jar
"""


@pytest.mark.parametrize(("output", "version"), [
    ("bazel 7.4.1\n", "7.4.1"),
    ("bazel no_version\n", None),  # Debian's bazel-bootstrap (the test image)
    ("bazel 6.0.0rc3", "6.0.0rc3"),
    ("bazel 8.0.0-pre.20240101.1", "8.0.0.dev20240101"),
    ("bazel 7.4.1-homebrew", "7.4.1"),
    (BAZELISK_5_3_2, "5.3.2"),
    ("release 7.4.1\n", "7.4.1"),  # bazel info release
    ("Extracting Bazel installation...\nbazel 6.5.0\n", "6.5.0"),
    ("bazel development version", None),
    ("", None),
    ("sh: 1: bazel: not found", None),
])
def test_bazel_version_outputs(output, version):
    found = bv.parse_version_output(output)
    assert found == (Version(version) if version else None)


def test_a_rolling_release_comes_before_its_release():
    assert bv.parse_release("8.0.0-pre.20240101.1") < Version("8.0.0")
    assert bv.parse_release("8.0.0-pre.20240101.1") > Version("7.4.1")


@pytest.mark.parametrize(("output", "version"), [
    ("4.2.3+ds-9", "4.2.3"), ("4.2.3+ds-9\n", "4.2.3"), ("1:7.4.1-1", "7.4.1"), ("", None)])
def test_debian_package_versions(output, version):
    assert bv.parse_package_version(output) == (Version(version) if version else None)


def test_the_image_answer_falls_back_to_the_package():
    debian = bv.from_image_output("bazel no_version\n", "4.2.3+ds-9")
    assert (debian.version, debian.source) == (Version("4.2.3"), "image-package")
    plain = bv.from_image_output("bazel 7.4.1\n", "4.2.3+ds-9")
    assert (plain.version, plain.source) == (Version("7.4.1"), "image")
    unknown = bv.from_image_output("bazel no_version\n")
    assert not unknown.known and unknown.text == "bazel no_version"


@pytest.mark.parametrize(("text", "spec", "version"), [
    ("7.4.1\n", "7.4.1", "7.4.1"),
    ("# pinned by CI\n\n6.5.0\n", "6.5.0", "6.5.0"),
    ("  7.4.1rc2  ", "7.4.1rc2", "7.4.1rc2"),
    ("myfork/7.4.1\n", "myfork/7.4.1", "7.4.1"),
    ("latest\n", "latest", None),
    ("latest-1\n", "latest-1", None),
    ("last_green", "last_green", None),
    ("7.x\n", "7.x", None),
    ("", "", None),
    ("not a version", "not a version", None),
])
def test_bazelversion_files(tmp_path, text, spec, version):
    (tmp_path / ".bazelversion").write_text(text)
    found = bv.read_bazelversion(tmp_path)
    assert found is not None and found.source == "bazelversion"
    assert found.text == spec
    assert found.version == (Version(version) if version else None)


def test_a_source_without_bazelversion(tmp_path):
    assert bv.read_bazelversion(tmp_path) is None
    assert bv.read_bazelversion(tmp_path / "absent") is None


def test_resolve_prefers_the_bazel_that_runs_and_lists_disagreements():
    image = bv.from_image_output("bazel 6.5.0")
    pinned = bv.BazelVersion("7.4.1", Version("7.4.1"), "bazelversion")
    release = bv.from_release("7.4.1")
    report = bv.resolve(image=image, bazelversion=pinned, release=release)
    assert report.effective == image and report.version == Version("6.5.0")
    assert report.disagreements == ((image, pinned), (image, release))
    # Debian's "no_version" says nothing: the source's pin decides
    report = bv.resolve(image=bv.from_image_output("bazel no_version"), bazelversion=pinned,
                        release=release)
    assert report.effective == pinned and report.disagreements == ()
    assert bv.resolve().effective is None and bv.resolve().version is None


@pytest.mark.parametrize(("version", "ok"), [
    ("4.2.3", False), ("4.2.1", False), ("5.0.0rc1", False), ("5.0.0", True), ("6.5.0", True),
    ("7.4.1", True), (None, False)])
def test_disk_cache_beside_an_executor(version, ok):
    assert bv.disk_cache_with_executor_ok(Version(version) if version else None) is ok


def test_remote_flag_facts():
    old = bv.remote_flag_facts(Version("4.2.3"))
    assert not old.disk_cache_with_executor and old.download_toplevel_by_default is False
    new = bv.remote_flag_facts(Version("7.4.1"))
    assert new.disk_cache_with_executor and new.download_toplevel_by_default is True
    unknown = bv.remote_flag_facts(None)
    assert not unknown.disk_cache_with_executor and unknown.download_toplevel_by_default is None
    assert unknown.fallback_hides_capabilities_failure
    assert new.exec_properties_flag == "--remote_default_exec_properties"


def test_every_release_in_the_knowledge_base_has_a_bazel_the_facts_can_judge(kb):
    for release in kb.releases:
        stated = bv.from_release(release.bazel)
        assert stated.known, release.version
        # TensorFlow's releases 2.10 and later all need Bazel 5+: the disk cache may stay
        assert bv.disk_cache_with_executor_ok(stated.version), release.version


# --------------------------------------------------------------------------- bazel.toml


#: sources read at a Bazel 7.x-or-later state (each says so in its sources.toml title)
LATER_BAZEL_SOURCES = {"bazel-remote-options-7", "bazel-authandtls-options",
                       "bazel-bes-options"}


def test_bazel_facts_lint(kb):
    facts = load_bazel_facts()
    assert {"disk_cache_with_remote_executor", "remote_local_fallback", "remote_retries",
            "remote_timeout_units", "remote_default_exec_properties"} <= set(facts.facts)
    for fact in facts.facts.values():
        assert fact.flag.startswith("--") and fact.holds and fact.otherwise
        assert fact.sources and all(s in kb.sources for s in fact.sources), fact.name
        # a fact for every version was read in one version only: it says so
        if str(fact.versions) == "":
            assert fact.unverified, fact.name
        # "from 4.2.3 on" rests on 4.2.3's own help and a 7.x-or-later source
        if str(fact.versions) == ">=4.2.3" and fact.name != "jobs_range":
            assert "bazel-423-help" in fact.sources, fact.name
            assert set(fact.sources) & LATER_BAZEL_SOURCES, fact.name
    defaults = facts.remote_defaults
    assert defaults.jobs >= 1 and defaults.timeout_s > 60 and defaults.retries == 5
    assert all(s in kb.sources for s in defaults.sources + facts.tf_rbe.sources)
    assert facts.tf_rbe.executor.startswith("grpcs://") and "rbe_linux_cpu" in facts.tf_rbe.configs
    # the refusal text is what Bazel 4.2.3 printed (tests/docker/test_bazel_version.py)
    assert facts.fact("disk_cache_with_remote_executor").refusal in \
        facts.fact("disk_cache_with_remote_executor").otherwise


def test_the_shipped_knowledge_base_loads_bazel_toml_too(kb):
    assert "bazel" in kb.raw and kb.raw["bazel"]["schema"] == 1


def test_a_broken_bazel_toml_is_a_knowledge_error(tmp_path: Path):
    bad = tmp_path / "bazel.toml"
    bad.write_text('[[fact]]\nname = "x"\nflag = "--x"\nversions = ">=banana"\n'
                   'holds = "h"\notherwise = "o"\nsources = ["s"]\n')
    with pytest.raises(KnowledgeError):
        load_bazel_facts_from(bad)
    bad.write_text("schema = 1\n")
    with pytest.raises(KnowledgeError):
        load_bazel_facts_from(bad)
    with pytest.raises(KnowledgeError):
        load_bazel_facts_from(tmp_path / "absent.toml")
