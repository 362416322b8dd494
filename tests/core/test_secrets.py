from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from tfwizard.core.errors import UsageError
from tfwizard.core.secrets import MASK, env_reference, redact, redact_env, resolve


@pytest.mark.parametrize(("text", "secret"), [
    ("HTTPS_PROXY=http://alice:s3cr3t@proxy.corp:3128", "s3cr3t"),
    ("ERROR: fetching https://bob:hunter22@mirror.example/x.tar.gz failed", "hunter22"),
    ("--remote_header=x-buildbuddy-api-key=abcdef123456", "abcdef123456"),
    ("Authorization: Bearer eyJhbGciOi.payload.sig", "eyJhbGciOi.payload.sig"),
    ("api_key=ZZZ999", "ZZZ999"),
    ("git clone https://token123@github.com/tensorflow/tensorflow.git", "token123"),
])
def test_redact_masks_secrets(text, secret):
    out = redact(text)
    assert secret not in out and MASK in out


def test_redact_keeps_ordinary_text():
    line = "[1,234 / 5,678] Compiling tensorflow/core/kernels/matmul_op.cc; 3s local"
    assert redact(line) == line
    assert redact("https://github.com/tensorflow/tensorflow.git") == \
        "https://github.com/tensorflow/tensorflow.git"


def test_redact_extra_secrets_and_env():
    assert "topsecret" not in redact("value topsecret here", ["topsecret"])
    env = redact_env({"HTTPS_PROXY": "http://u:p@h:1", "NO_PROXY": "localhost",
                      "BUILDBUDDY_API_KEY": "k", "PATH": "/usr/bin"})
    assert env["HTTPS_PROXY"] == f"http://{MASK}@h:1" and env["NO_PROXY"] == "localhost"
    assert env["BUILDBUDDY_API_KEY"] == MASK and env["PATH"] == "/usr/bin"


def test_references():
    assert env_reference("${BB_KEY}") == "BB_KEY" and env_reference("plain") is None
    assert resolve("${BB_KEY}", {"BB_KEY": "v"}) == "v"
    with pytest.raises(UsageError):
        resolve("${MISSING}", {})


def test_a_secret_with_a_line_break_is_refused_before_anything_runs(tmp_path):
    """Resolved secrets go into an rc file and an env file of lines (issue 15 item 7): a
    value with a line break could add lines of its own, so the build stops first."""
    import asyncio

    from tfwizard.core.building.plan.plan import make_plan
    from tfwizard.core.building.run.runner import BuildRunner
    from tfwizard.core.recipe import load_recipe

    root = Path(__file__).resolve().parents[2]
    recipe = load_recipe(root / "recipes" / "tf221-cpu-portable.toml").with_changes(
        {"remote.cache": "https://cache.example", "remote.headers": ["x-api-key=${TFWT_KEY}"]})
    runner = BuildRunner(make_plan(recipe), data_root=tmp_path,
                         env={"TFWT_KEY": "k\nbuild --run_under=/bin/evil",
                              "DOCKER_HOST": "tcp://127.0.0.1:9"})

    async def run():
        return [e async for e in runner.events()]

    result = asyncio.run(run())[-1].result
    assert result.status == "error" and "${TFWT_KEY} holds a line break" in result.message
    assert "evil" not in (runner.record.path / "log.txt").read_text()


def test_secrets_written_in_a_recipe_are_masked_in_plan_output_and_the_record(tmp_path):
    """A credential typed into the recipe (check warns: SECRET_IN_RECIPE) stays out of
    `tfwizard plan` in every format and out of the record's recipe.toml and log."""
    import asyncio

    from tfwizard.cli import capture
    from tfwizard.core.building.plan.plan import make_plan
    from tfwizard.core.building.run.runner import BuildRunner
    from tfwizard.core.recipe import load_recipe

    root = Path(__file__).resolve().parents[2]
    recipe = load_recipe(root / "recipes" / "tf221-cpu-portable.toml").with_changes(
        {"remote.cache": "https://cache.example", "remote.headers": ["x-gh=CLEARTOKEN-777"],
         "network.https_proxy": "http://puser:CLEARPW-888@proxy.example:3128",
         "build.network": "bridge"})
    path = tmp_path / "clear.toml"
    path.write_text(recipe.to_toml())
    for fmt in ("command", "json", "env", "bazelrc"):
        status, out, err = capture(["plan", "--format", fmt, str(path)])
        assert int(status) == 0, err
        assert "CLEARTOKEN" not in out and "CLEARPW" not in out, fmt
    status, out, _err = capture(["plan", str(path)])
    assert "--remote_header=x-gh=***" in out
    runner = BuildRunner(make_plan(recipe), data_root=tmp_path, recipe_text=recipe.to_toml(),
                         env={"DOCKER_HOST": "tcp://127.0.0.1:9"})

    async def run():
        return [e async for e in runner.events()]

    asyncio.run(run())
    kept = runner.record.path
    for name in ("recipe.toml", "log.txt", "plan.json", "result.json"):
        text = (kept / name).read_text()
        assert "CLEARTOKEN" not in text and "CLEARPW" not in text, name
    assert "x-gh=***" in (kept / "recipe.toml").read_text()
    plan_json = json.loads((kept / "plan.json").read_text())
    assert plan_json["secrets_withheld"] is True
    assert plan_json["container_env"]["HTTPS_PROXY"] == "http://***@proxy.example:3128"
    # the plan the build runs keeps them (in memory only)
    assert "--remote_header=x-gh=CLEARTOKEN-777" in runner.plan.flag_list
    status, out, err = capture(["bundle", str(kept), "--out", str(tmp_path / "b.tar.gz"),
                                "--host", str(root / "tests" / "data" / "hosts" / "debian13-py313.json")])
    assert int(status) == 0, err
    with tarfile.open(tmp_path / "b.tar.gz") as tar:
        for member in tar.getmembers():
            data = tar.extractfile(member).read() if member.isfile() else b""
            assert b"CLEARTOKEN" not in data and b"CLEARPW" not in data, member.name


def test_attach_refuses_a_plan_whose_written_out_secrets_were_withheld(tmp_path):
    """`build --attach` runs the record's plan.json; one whose credentials were masked
    would send `***` as the proxy password, so it is refused with the fix, and the record
    is left unlocked for the next try."""
    from tfwizard.core.building.plan.plan import make_plan
    from tfwizard.core.building.run.attach import locked_plan, plan_digest
    from tfwizard.core.building.run.record import BuildRecord
    from tfwizard.core.recipe import load_recipe

    root = Path(__file__).resolve().parents[2]
    base = load_recipe(root / "recipes" / "tf221-cpu-portable.toml")
    clear = base.with_changes({"network.https_proxy": "http://puser:CLEARPW-888@px:3128",
                               "build.network": "bridge"})
    record = BuildRecord.create("20260101-000000-aaaaaa", root=tmp_path,
                                files={"plan.json": make_plan(clear).to_json()})
    with pytest.raises(UsageError) as caught:
        locked_plan(record.build_id, record.path, plan_digest)
    assert "credentials written in it" in str(caught.value)
    assert "${VAR}" in caught.value.hint
    assert record.lock()  # not left held by the refusal
    record.unlock()
    # a reference is kept as it is: that plan attaches
    ref = base.with_changes({"network.https_proxy": "${TFWT_PROXY}", "build.network": "bridge"})
    (record.path / "plan.json").write_text(make_plan(ref).to_json())
    _record, plan, _digest = locked_plan(record.build_id, record.path, plan_digest)
    assert plan.container_env["HTTPS_PROXY"] == "${TFWT_PROXY}"
