"""Warm builds (issue 17, core/warm.py) against the real engine and the TF-shaped fixture.

One workspace for the module, built once cold (about a minute); the other tests reuse its
warm container and Bazel server, as a researcher's edit-rebuild loop does.
"""

from __future__ import annotations

import hashlib
import threading
import time
import uuid
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from bench import bigws
from tests import world
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.warm import container as warm
from tfwizard.core.docker.leftovers import find_leftovers, remove_leftovers
from tfwizard.core.paths import LABEL
from tfwizard.core.recipe import load_recipe

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _plan(recipe: Path, **kw):
    return make_plan(load_recipe(recipe), recipe_dir=recipe.parent, **kw)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    world.require_docker()
    world.ensure_images()
    import docker

    base = tmp_path_factory.mktemp("warm")
    prefix = f"tfwizard-test-{uuid.uuid4().hex[:8]}"
    workspace = world.copy_workspace(base)
    recipe = world.fixture_recipe(base / "r.toml", workspace=workspace, prefix=prefix)
    client = docker.from_env(timeout=300)
    plan = _plan(recipe)
    space = warm.workspace_for(plan, str(recipe))
    ns = SimpleNamespace(base=base, workspace=workspace, recipe=recipe, client=client,
                         plan=plan, space=space, prefix=prefix)
    yield ns
    world.remove_workspace(client, space)
    for vol in client.volumes.list(filters={"label": LABEL}):
        if vol.name.startswith(prefix):
            vol.remove(force=True)
    client.close()


def _warm(ns, plan=None, **kw) -> warm.WarmContainer:
    return warm.WarmContainer(ns.client, plan or ns.plan, ns.space, **kw)


def test_first_build_then_reuse_skips_configure_and_noop_keeps_the_wheel(ws):
    first = _warm(ws)
    assert first.ensure() is False  # made, with its volumes
    conf = first.configure()
    assert conf.exit_code == 0 and not conf.skipped, conf.output[-20:]
    built = first.build()
    assert built.exit_code == 0, built.output[-30:]
    wheel = first.copy_wheel(built, ws.base / "out1")
    assert wheel is not None and wheel.name.startswith("tensorflow_cpu-")
    with zipfile.ZipFile(wheel) as zf:  # a wheel, not the tar it came in
        assert any(n.endswith(".dist-info/METADATA") for n in zf.namelist())
    ws.first_sha = _sha(wheel)

    # the next build finds the same container (and so the same Bazel server) running
    again = _warm(ws)
    assert again.ensure() is True
    assert again.container.id == first.container.id
    conf = again.configure()
    assert conf.exit_code == 0 and conf.skipped, conf.output
    noop = again.build()
    assert noop.exit_code == 0
    # the server was warm: nothing was loaded or analysed again, nothing ran
    text = "\n".join(noop.output)
    assert "0 packages loaded, 0 targets configured" in text, text[-2000:]
    wheel2 = again.copy_wheel(noop, ws.base / "out2")
    assert wheel2 is not None and _sha(wheel2) == ws.first_sha
    labels = again.container.labels
    assert labels[LABEL] == "1" and labels[warm.WORKSPACE_LABEL] == ws.space.key


def test_changed_configure_key_runs_configure_again(ws):
    text = ws.recipe.read_text().replace("jobs = 2", 'jobs = 2\nopt_flags = ["-O1"]')
    changed = ws.base / "r-changed.toml"
    changed.write_text(text)
    plan = _plan(changed)
    assert plan.configure_env["CC_OPT_FLAGS"] == "-O1"
    w = _warm(ws, plan)
    assert w.ensure() is True  # the container does not depend on configure's inputs
    run = w.configure()
    assert run.exit_code == 0 and not run.skipped, run.output
    # back to the recipe's own values: configure runs once more, then is skipped again
    w0 = _warm(ws)
    w0.ensure()
    assert not w0.configure().skipped
    assert w0.configure().skipped


def test_edit_rebuilds_and_the_new_wheel_differs(ws):
    w = _warm(ws)
    assert w.ensure() is True
    edit = ws.workspace / "tensorflow/core/kernels/add_op.cc"
    bigws.edit_kernel(edit, 1)
    built = w.build()
    assert built.exit_code == 0, built.output[-30:]
    wheel = w.copy_wheel(built, ws.base / "out3")
    assert wheel is not None and _sha(wheel) != ws.first_sha
    ws.edited_sha = _sha(wheel)


def test_failed_rebuild_yields_no_wheel_though_bazel_bin_has_one(ws):
    w = _warm(ws)
    w.ensure()
    edit = ws.workspace / "tensorflow/core/kernels/add_op.cc"
    good = edit.read_text()
    try:
        edit.write_text(good + "\nthis is not C++;\n")
        failed = w.build()
        assert failed.exit_code != 0
        assert failed.bep_lines, "the failed build wrote its own BEP file"
        # the previous wheel is still in bazel-bin ...
        listing = w.exec(["sh", "-c", 'ls "$1"', "sh", ws.plan.wheel_dir])
        assert any(line.endswith(".whl") for line in listing.output), listing.output
        # ... and never comes out of this build
        out = ws.base / "out-failed"
        assert w.copy_wheel(failed, out) is None
        assert not out.exists() or not list(out.iterdir())
        assert warm.bep_wheels(failed.bep_lines, ws.plan.bazel_target) == []
    finally:
        edit.write_text(good)


def test_cancel_stops_bazel_in_the_exec_and_the_server_stays(ws):
    plan = _plan(world.fixture_recipe(ws.base / "sleep.toml", workspace=ws.workspace,
                                      prefix=ws.prefix,
                                      bazel_flags=("--action_env=TFW_FIXTURE_SLEEP=120",)))
    w = _warm(ws, plan, cancel_grace_s=8.0)
    w.ensure()
    sleeping = threading.Event()

    def seen(_channel: str, line: str) -> None:
        if "tfw fixture: sleeping 2/" in line:
            sleeping.set()

    box: dict[str, warm.ExecResult] = {}
    worker = threading.Thread(target=lambda: box.setdefault("r", w.build(seen)))
    worker.start()
    world.wait_for_sleeper(ws.client, ws.space.container_name)  # the action runs now
    assert not sleeping.is_set()  # Bazel shows its output only when it ends
    t0 = time.monotonic()
    w.cancel()
    worker.join(30)
    assert not worker.is_alive()
    stopped_in = time.monotonic() - t0
    result = box["r"]
    assert result.cancelled and result.exit_code != 0
    assert stopped_in < 15, stopped_in
    # a cancelled WarmContainer runs nothing more; the next build's one does
    assert w.exec(["true"]).cancelled
    w = _warm(ws)
    assert w.ensure() is True
    # nothing of that build runs on: no `sleep 1` of the action, no bazel client
    procs = w.exec(["sh", "-c", 'for p in /proc/[0-9]*; do tr "\\0" " " < "$p/cmdline"; '
                    'echo; done'], workdir="/")
    assert procs.exit_code == 0 and any("sh -c" in line for line in procs.output)
    assert not any(line.startswith("sleep 1") for line in procs.output), procs.output
    assert not any("bazel" in line and " build " in line and "A-server" not in line
                   and "server" not in line for line in procs.output), procs.output
    # the server is still there (warm): `bazel info` answers without starting one
    info = w.exec(["bazel", *ws.plan.bazel_startup_flags, "info", "server_pid"])
    assert info.exit_code == 0
    assert not any("Starting local Bazel server" in line for line in info.output), info.output


def test_shell_runs_a_command_with_the_builds_user_env_and_server(ws):
    from tfwizard.cli import ExitStatus, capture

    w = _warm(ws)
    w.ensure()
    server = w.exec(["bazel", *ws.plan.bazel_startup_flags, "info", "server_pid"])
    assert server.exit_code == 0
    status, out, err = capture(["shell", str(ws.recipe), "--", "bazel", "info", "server_pid"])
    assert status == ExitStatus.OK, err
    # a plain `bazel` in the shell talks to the builds' server (same output root)
    pid = [line.strip() for line in server.output if line.strip().isdigit()]
    assert pid and pid[0] in out.split(), (server.output, out, err)
    status, out, err = capture(["shell", str(ws.recipe), "--", "sh", "-c",
                                'echo "$(id -u):$(id -g) $HOME $PWD"'])
    assert status == ExitStatus.OK
    assert out.strip() == f"{ws.plan.user} {ws.plan.container_env['HOME']} /src"
    status, _out, _err = capture(["shell", str(ws.recipe), "--", "false"])
    assert status == ExitStatus.ERROR
    # not a terminal and no command: refused, nothing runs
    status, _out, err = capture(["shell", str(ws.recipe)])
    assert status != ExitStatus.OK and "not a terminal" in err


def test_leftovers_list_the_workspace_and_clean_removes_it_only_when_asked(ws):
    w = _warm(ws)
    w.ensure()
    items = [i for i in find_leftovers(ws.client) if ws.space.key in i.name]
    kinds = {(i.kind, i.what) for i in items}
    assert ("container", "warm") in kinds
    assert ("volume", "workspace-out") in kinds and ("volume", "workspace-state") in kinds
    # by default the volumes stay (like the caches); the idle warm container goes
    assert all(i.skipped for i in items if i.kind == "volume")
    assert not [i for i in items if i.kind == "container"][0].skipped
    items = [i for i in find_leftovers(ws.client, workspaces=True) if ws.space.key in i.name]
    assert not any(i.skipped for i in items)
    assert remove_leftovers(ws.client, items) == []
    assert w.find() is None
    assert not ws.client.volumes.list(filters={"label": f"{warm.WORKSPACE_LABEL}="
                                                         f"{ws.space.key}"})


def test_idle_timeout_stops_the_container_but_not_while_busy(tmp_path):
    world.require_docker()
    world.ensure_images()
    import docker

    recipe = world.fixture_recipe(tmp_path / "idle.toml", workspace=world.copy_workspace(
        tmp_path), prefix=f"tfwizard-test-{uuid.uuid4().hex[:8]}", name="idle")
    client = docker.from_env(timeout=120)
    plan = _plan(recipe)
    space = warm.workspace_for(plan, str(recipe))
    w = warm.WarmContainer(client, plan, space, idle_s=3)
    try:
        w.ensure()
        t0 = time.monotonic()
        busy = w.exec(["sleep", "7"], workdir="/")  # longer than the idle timeout
        assert busy.exit_code == 0 and time.monotonic() - t0 >= 7
        w.container.reload()
        assert w.container.status == "running"  # the busy exec held it up
        deadline = time.monotonic() + 3 + 2 * warm.IDLE_POLL_S + 10
        while time.monotonic() < deadline:
            w.container.reload()
            if w.container.status != "running":
                break
            time.sleep(0.5)
        assert w.container.status == "exited"
        # the next build makes a new container on the same volumes
        w2 = warm.WarmContainer(client, plan, space, idle_s=3)
        assert w2.ensure() is False and w2.container.status in ("created", "running")
    finally:
        world.remove_workspace(client, space)
        for vol in plan.cache_volumes.values():
            with __import__("contextlib").suppress(Exception):
                client.volumes.get(vol).remove(force=True)
        client.close()

