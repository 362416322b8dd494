"""The remote services' TLS files in the plan: flags, read-only mounts, the preflight's
settings (issue 21, TLS beyond the scheme). tests/docker/test_remote_tls.py builds with
them against a service that wants a client certificate."""

from __future__ import annotations

from pathlib import Path

from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.run.preflight import preflight
from tfwizard.core.recipe import load_recipe
from tfwizard.core.remote.check import target_of
from tfwizard.core.remote.tls import TLS_DIR

ROOT = Path(__file__).resolve().parents[3]
CPU = load_recipe(ROOT / "recipes" / "tf221-cpu-portable.toml")
TLS = {"remote.executor": "grpcs://rbe.example.com", "remote.instance_name": "main",
       "remote.tls_certificate": "pki/ca.pem", "remote.tls_client_certificate": "pki/me.pem",
       "remote.tls_client_key": "/keys/me.key"}


def test_tls_files_become_flags_and_read_only_mounts(tmp_path):
    plan = make_plan(CPU.with_changes(TLS), recipe_dir=tmp_path)
    flags = [f.flag for f in plan.bazel_flags]
    assert f"--tls_certificate={TLS_DIR}/ca.pem" in flags
    assert f"--tls_client_certificate={TLS_DIR}/client.pem" in flags
    assert f"--tls_client_key={TLS_DIR}/client.key" in flags
    mounts = {m.target: m for m in plan.mounts if m.target.startswith(TLS_DIR)}
    assert {t: (m.source, m.kind, m.read_only) for t, m in mounts.items()} == {
        f"{TLS_DIR}/ca.pem": (str(tmp_path / "pki/ca.pem"), "bind", True),
        f"{TLS_DIR}/client.pem": (str(tmp_path / "pki/me.pem"), "bind", True),
        f"{TLS_DIR}/client.key": ("/keys/me.key", "bind", True)}


def test_no_remote_service_no_tls_flags_or_mounts():
    plan = make_plan(CPU.with_changes({"remote.tls_certificate": "/pki/ca.pem"}))
    assert not any(f.flag.startswith("--tls_") for f in plan.bazel_flags)
    assert not any(m.target.startswith(TLS_DIR) for m in plan.mounts)


def test_the_preflight_reads_the_same_files_on_this_machine(tmp_path):
    recipe_file = tmp_path / "r.toml"
    recipe_file.write_text((ROOT / "recipes" / "tf221-cpu-portable.toml").read_text())
    recipe = load_recipe(recipe_file).with_changes(TLS)
    tls = target_of(recipe, {}).tls
    assert (tls.ca_file, tls.client_cert, tls.client_key) == (
        str(tmp_path / "pki/ca.pem"), str(tmp_path / "pki/me.pem"), "/keys/me.key")


def test_a_missing_tls_file_is_a_preflight_error(tmp_path):
    (tmp_path / "pki").mkdir()
    (tmp_path / "pki" / "ca.pem").write_text("not checked here\n")
    recipe = CPU.with_changes({k: v for k, v in TLS.items() if k != "remote.tls_client_key"})
    found = preflight(recipe, {}, recipe_dir=tmp_path)
    missing = {f.key for f in found if f.code == "PATH_MISSING"}
    assert missing == {"remote.tls_client_certificate"}, [f.message for f in found]


def test_the_build_refuses_a_tls_path_that_is_not_a_regular_file(tmp_path):
    import pytest

    from tfwizard.core.building.run.volumes import check_paths
    from tfwizard.core.errors import UsageError

    (tmp_path / "pki").mkdir()
    for name in ("ca.pem", "me.pem"):
        (tmp_path / "pki" / name).write_text("-----BEGIN CERTIFICATE-----\n")
    good = make_plan(CPU.with_changes({**TLS, "remote.tls_client_key": "pki/me.pem"}),
                     recipe_dir=tmp_path)
    check_paths(good, None)  # files are fine (a folder would not be)
    folder = make_plan(CPU.with_changes({**TLS, "remote.tls_client_key": "pki"}),
                       recipe_dir=tmp_path)
    with pytest.raises(UsageError, match="is not a regular file"):
        check_paths(folder, None)
