"""Remote execution in the plan (issue 21): the recipe keys, flags for the Bazel that runs,
the build image travelling with the actions."""

from __future__ import annotations

from pathlib import Path

import pytest

from tfwizard.core import bazelversion as bv
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.errors import RecipeError
from tfwizard.core.recipe import parse_recipe

ROOT = Path(__file__).resolve().parents[3]
IMAGE = "tfwizard-test/bazel:bookworm"
DIGEST = "sha256:" + "ab" * 32


def recipe(remote: str, *, source_dir: Path | None = None, version: str = "2.21.0"):
    source = f'source_dir = "{source_dir}"' if source_dir else ""
    return parse_recipe(f"""schema = 1
name = "rx"
[tensorflow]
version = "{version}"
{source}
[build]
image = "{IMAGE}"
jobs = 2
[remote]
{remote}
""")


ONLY = 'executor = "grpc://10.0.0.5:50051"\ninstance_name = "main"'


def flags(plan) -> list[str]:
    return plan.flag_list


def test_only_executor_and_instance_give_image_jobs_and_timeout():
    plan = make_plan(recipe(ONLY), image_bazel=bv.BazelVersion("bazel 7.4.1",
                                                               bv.parse_release("7.4.1"),
                                                               "image"))
    got = flags(plan)
    assert f"--remote_default_exec_properties=container-image=docker://{IMAGE}" in got
    assert "--jobs=50" in got and "--jobs=2" not in got  # the service, not build.jobs
    assert "--remote_timeout=600" in got
    assert "--disk_cache=/cache/disk" in got  # Bazel 7 takes both
    assert "--remote_local_fallback" not in got
    assert not any(f.startswith("--remote_retries") for f in got)  # Bazel's own 5
    assert plan.bazel_version == "7.4.1" and plan.bazel_version_source == "image"
    remote = [f for f in plan.bazel_flags if f.group == "remote"]
    assert remote[0].flag == "--remote_executor=grpc://10.0.0.5:50051"


def test_bazel_4_in_the_image_drops_the_disk_cache_and_its_volume():
    image = bv.from_image_output("bazel no_version\n", "4.2.3+ds-9\n")
    plan = make_plan(recipe(ONLY), image_bazel=image)
    assert not any(f.startswith("--disk_cache") for f in flags(plan))
    assert "disk" not in plan.cache_volumes
    assert not any(m.target == "/cache/disk" for m in plan.mounts)
    assert any("no --disk_cache" in n and "4.2.3" in n for n in plan.notes)
    assert plan.bazel_version_source == "image-package"


def test_without_an_executor_the_disk_cache_stays_whatever_the_bazel():
    plan = make_plan(recipe('cache = "grpc://10.0.0.5:9092"'),
                     image_bazel=bv.from_image_output("bazel 4.2.3"))
    assert "--disk_cache=/cache/disk" in flags(plan)
    assert "--jobs=2" in flags(plan)
    assert not any(f.startswith("--remote_timeout") for f in flags(plan))


def test_the_sources_bazelversion_decides_without_the_image(tmp_path):
    (tmp_path / ".bazelversion").write_text("# pinned\n4.2.1\n")
    plan = make_plan(recipe(ONLY, source_dir=tmp_path))
    assert plan.bazel_version == "4.2.1" and plan.bazel_version_source == "bazelversion"
    assert not any(f.startswith("--disk_cache") for f in flags(plan))
    (tmp_path / ".bazelversion").write_text("latest\n")  # a moving spec: the release's
    plan = make_plan(recipe(ONLY, source_dir=tmp_path))
    assert plan.bazel_version_source == "release"


def test_the_image_is_pinned_by_its_repo_digest():
    plan = make_plan(recipe(ONLY), repo_digests=(f"tfwizard-test/bazel@{DIGEST}",
                                                 f"elsewhere/bazel@{'cd' * 32}"))
    assert (f"--remote_default_exec_properties=container-image=docker://"
            f"tfwizard-test/bazel@{DIGEST}") in flags(plan)


def test_exec_properties_off_replaced_or_added_to_in_one_key():
    off = make_plan(recipe(ONLY + "\nexec_properties = []"))
    assert not any("exec_properties" in f for f in flags(off))
    replaced = make_plan(recipe(ONLY + '\nexec_properties = ["OSFamily=Linux", '
                                       '"container-image=docker://reg/tf@' + DIGEST + '"]'))
    props = [f for f in flags(replaced) if f.startswith("--remote_default_exec_properties=")]
    assert props == ["--remote_default_exec_properties=OSFamily=Linux",
                     f"--remote_default_exec_properties=container-image=docker://reg/tf@{DIGEST}"]
    added = make_plan(recipe(ONLY + '\nexec_properties = ["auto", "Pool=big"]'))
    props = [f for f in flags(added) if f.startswith("--remote_default_exec_properties=")]
    assert props[0].endswith(f"docker://{IMAGE}") and props[1].endswith("=Pool=big")


def test_jobs_timeout_retries_and_fallback_from_the_recipe():
    plan = make_plan(recipe(ONLY + "\njobs = 64\ntimeout = 3600\nretries = 0\n"
                                   "local_fallback = true"))
    got = flags(plan)
    assert "--jobs=64" in got and "--remote_timeout=3600" in got
    assert "--remote_retries=0" in got and "--remote_local_fallback" in got


@pytest.mark.parametrize("line, words", [
    ('exec_properties = ["container-image"]', "is not a platform property"),
    ('exec_properties = ["container image=x"]', "is not a platform property"),
    ('exec_properties = "auto"', "must be a list of strings"),
    ('exec_properties = ["x=$(id)"]', "shell syntax"),
    ("jobs = -1", "out of range"),
    ('timeout = "10m"', "must be a whole number"),
    ('local_fallback = "yes"', "must be true or false"),
])
def test_bad_remote_values_are_named_with_their_key(line, words):
    with pytest.raises(RecipeError) as info:
        recipe(ONLY + "\n" + line)
    text = str(info.value)
    assert f"remote.{line.split(' ')[0]}" in text and words in text, text
