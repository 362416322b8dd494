"""`auto` GPU targets mean one thing everywhere (issue 15, item 1).

`recipe new --from-host` writes compute_capabilities = ["auto"]; `check` covered the GPU
while `plan` and `build` exported an empty list (configure.py then builds 3.5,7.0, which
CUDA 12 cannot). Here `check --json`, `plan --format json` and `build --dry-run --json`
must give the same list for every recipe in recipes/ and for what `recipe new
--from-host` writes on each host fake, with each host fake as the build host: the target
profile's GPUs, else the build host's; neither with a GPU is an error in all three.
(The GUI's side is tests/gui/test_wizard.py::test_gui_resolves_auto_like_the_cli.)
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import tomlkit

from tfwizard.cli import ExitStatus, capture
from tfwizard.core.defaults import commented_recipe_toml, default_recipe
from tfwizard.core.host import HostProfile

ROOT = Path(__file__).resolve().parents[2]
HOSTS = ROOT / "tests" / "data" / "hosts"
HOST_FILES = sorted(HOSTS.glob("*.json"))


def _gpu_tokens(profile: Path, kind: str) -> list[str]:
    """What "auto" must become for a profile, read from its JSON (not through the code)."""
    data = json.loads(profile.read_text())
    if kind == "cuda":
        ccs = sorted({tuple(int(x) for x in g["compute_capability"].split("."))
                      for g in data["nvidia"]["gpus"] if g.get("compute_capability")})
        # a cubin each, the newest as compute_ (its cubin and PTX: TF's CUDA rules)
        return [f"sm_{a}{b}" for a, b in ccs[:-1]] + [f"compute_{a}{b}" for a, b in ccs[-1:]]
    return sorted({g["gfx_target"] for g in data["amd"]["gpus"] if g.get("gfx_target")})


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> list[tuple[str, Path]]:
    """(label, recipe file): recipes/ (with the profile tf220's recipe names) and
    `recipe new --from-host` on every host fake."""
    base = tmp_path_factory.mktemp("auto-cc")
    out = []
    for path in sorted((ROOT / "recipes").glob("*.toml")):
        shutil.copy(path, base / path.name)
        out.append((path.name, base / path.name))
    shutil.copy(HOSTS / "h100-driver560.json", base / "h100.json")  # tf220's target profile
    for host in HOST_FILES:
        recipe = default_recipe(HostProfile.load(host))
        path = base / f"from-host-{host.stem}.toml"
        path.write_text(commented_recipe_toml(recipe), encoding="utf-8")
        out.append((path.name, path))
    return out


def _expected(recipe_path: Path, build_host: Path) -> tuple[str, list[str] | None]:
    """(backend, the list) from the files alone; None when "auto" finds no GPU."""
    data = tomlkit.parse(recipe_path.read_text()).unwrap()
    kind = data["backend"]["kind"]
    if kind == "cpu":
        return kind, []
    tokens = (data["cuda"]["compute_capabilities"] if kind == "cuda"
              else data["rocm"]["amdgpu_targets"])
    profile_name = data.get("target", {}).get("host_profile", "")
    profile = recipe_path.parent / profile_name if profile_name else build_host
    gpus = _gpu_tokens(profile, kind)
    if "auto" in tokens and not gpus:
        return kind, None
    out: list[str] = []
    for token in tokens:
        for item in gpus if token == "auto" else [token]:
            if item not in out:
                out.append(item)
    return kind, out


def test_every_recipe_and_host_agree_in_check_plan_and_dry_run(cases):
    compared = 0
    for label, recipe in cases:
        for host in HOST_FILES:
            kind, expected = _expected(recipe, host)
            key = "amdgpu_targets" if kind == "rocm" else "compute_capabilities"
            where = f"{label} built on {host.stem}"
            status, out, err = capture(["check", str(recipe), "--host", str(host), "--json"])
            assert status in (ExitStatus.OK, ExitStatus.ERROR), where + err
            checked = json.loads(out)
            status, plan_out, plan_err = capture(["plan", str(recipe), "--host", str(host),
                                                  "--format", "json"])
            status_dry, dry_out, dry_err = capture(["build", str(recipe), "--host", str(host),
                                                    "--dry-run", "--json", "--force"])
            if expected is None:
                # "auto" with no GPU anywhere: an error in all three, never an empty list
                codes = {f["code"] for f in checked["findings"] if f["severity"] == "error"}
                assert checked[key] is None, where
                assert {"CC_AUTO_NO_GPU", "ROCM_AUTO_NO_GPU"} & codes, (where, codes)
                assert status == ExitStatus.USAGE and "no " in plan_err, (where, plan_err)
                assert "auto" in plan_err, where
                assert status_dry == ExitStatus.USAGE, (where, dry_out[-500:])
                continue
            assert checked[key] == expected, (where, checked[key])
            assert status == ExitStatus.OK, (where, plan_err)
            plan = json.loads(plan_out)
            assert plan[key] == expected, (where, plan[key])
            assert status_dry == ExitStatus.OK, (where, dry_err)
            dry = json.loads(dry_out[dry_out.index("{\n"):])  # after the check lines
            assert dry[key] == expected, (where, dry[key])
            if kind == "cuda":
                exported = plan["configure_env"]["HERMETIC_CUDA_COMPUTE_CAPABILITIES"]
                assert exported == ",".join(expected) and exported, where
            compared += 1
    assert compared > 60


def test_recipe_new_from_host_then_plan_builds_this_machines_gpu(cases):
    """The review's reproduction: an RTX 4070 (CC 8.9) build host, no target profile."""
    recipe = dict(cases)["from-host-ada-8.9-driver550.toml"]
    host = HOSTS / "ada-8.9-driver550.json"
    status, out, err = capture(["plan", str(recipe), "--host", str(host), "--format", "env"])
    assert status == ExitStatus.OK, err
    assert "HERMETIC_CUDA_COMPUTE_CAPABILITIES=compute_89\n" in out
    status, out, err = capture(["check", str(recipe), "--host", str(host)])
    assert "sm_89" in out
