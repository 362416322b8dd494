"""Install: tag checks in the target interpreter, offline installs with an extra, failed
installs that leave the venv as it was, and the never-tfwizard's-own-interpreter rule."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from tfwizard.cli import capture
from tfwizard.core.errors import UsageError, WheelIncompatible
from tfwizard.core.install.job import (
    Installation,
    InstallFinished,
    InstallProgress,
    InstallStarted,
    PipLine,
    PipProgress,
    VenvCreated,
    install_wheel,
    interpreter_tags,
    pip_argv,
    pip_freeze,
    resolve_target,
)

try:  # another engineer's helper; build our own stand-in when it is not there yet
    from tests import world

    build_cuda_stub_wheel = world.build_cuda_stub_wheel
except (ImportError, AttributeError):  # pragma: no cover - depends on the checkout
    build_cuda_stub_wheel = None

PY_TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"
OTHER_PY = "cp39" if PY_TAG != "cp39" else "cp310"


def make_wheel(dest: Path, name: str, version: str = "1.0", tag: str = "py3-none-any", *,
               requires: tuple[str, ...] = (), extras: tuple[str, ...] = (),
               value: int = 42) -> Path:
    """A minimal valid wheel, by hand (zipfile), with one module and optional extras."""
    dest.mkdir(parents=True, exist_ok=True)
    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    meta = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    meta += [f"Provides-Extra: {e}" for e in extras]
    meta += [f"Requires-Dist: {r}" for r in requires]
    files = [
        (f"{dist}/__init__.py", f"VALUE = {value}\n".encode()),
        (f"{info}/METADATA", ("\n".join(meta) + "\n\n").encode()),
        (f"{info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: "
                          f"{'true' if tag.endswith('any') else 'false'}\nTag: {tag}\n".encode()),
    ]
    record = []
    for path, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode()))
    out = dest / f"{dist}-{version}-{tag}.whl"
    with zipfile.ZipFile(out, "w") as zf:
        for path, data in files:
            zf.writestr(path, data)
    return out


def stub_wheel(dest: Path) -> Path:
    if build_cuda_stub_wheel is not None:
        return build_cuda_stub_wheel(dest)
    return make_wheel(dest, "tfwizard-fixture-cuda-stub")


@pytest.fixture(scope="module")
def target_venv(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("target") / "venv"
    venv.EnvBuilder(with_pip=True).create(folder)
    return folder


@pytest.fixture
def wheels(tmp_path) -> Path:
    return tmp_path / "wheels"


# -- refusals ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_wheel_for_another_platform_is_refused_and_the_venv_untouched(target_venv, wheels):
    wheel = make_wheel(wheels, "tinypkg", tag=f"{PY_TAG}-{PY_TAG}-win_amd64")
    target = resolve_target(venv=target_venv)
    before = pip_freeze(target.python)
    with pytest.raises(WheelIncompatible) as info:
        install_wheel(wheel, target, [])
    message = str(info.value)
    assert "refusing to install tinypkg-1.0-" in message
    assert "platform tag win_amd64" in message and "linux" in message
    assert str(target.python) in message
    assert pip_freeze(target.python) == before


@pytest.mark.slow
def test_wheel_for_another_python_is_refused_by_the_cli(target_venv, wheels):
    wheel = make_wheel(wheels, "tinypkg", tag=f"{OTHER_PY}-{OTHER_PY}-linux_x86_64")
    before = pip_freeze(resolve_target(venv=target_venv).python)
    status, out, err = capture(["install", str(wheel), "--venv", str(target_venv)])
    assert status == 2, out + err
    assert f"Python tag {OTHER_PY}-{OTHER_PY}" in err and f"takes {PY_TAG}-{PY_TAG}" in err
    assert pip_freeze(resolve_target(venv=target_venv).python) == before


@pytest.mark.slow
def test_tags_come_from_the_target_interpreter(target_venv):
    tags = interpreter_tags(resolve_target(venv=target_venv).python)
    assert tags.tags[0].startswith(f"{PY_TAG}-{PY_TAG}-")
    assert "py3-none-any" in tags.tags


def test_no_target_and_tfwizards_own_venv_are_refused(tmp_path):
    with pytest.raises(UsageError, match="no install target"):
        resolve_target()
    with pytest.raises(UsageError, match="environment tfwizard itself runs in"):
        resolve_target(venv=sys.prefix)
    with pytest.raises(UsageError, match="--create"):
        resolve_target(venv=tmp_path / "absent")
    # named explicitly, tfwizard's own interpreter is a valid target
    assert resolve_target(python=sys.executable).python == Path(sys.executable)


def test_pip_argv_is_a_list_with_the_mirror_options():
    argv = pip_argv("/v/bin/python", "/w/x.whl[and-cuda]", index_url="https://m/simple",
                    trusted_host="m", find_links=["/links"], no_index=True)
    assert argv[:4] == ["/v/bin/python", "-m", "pip", "install"]
    assert argv[argv.index("--index-url") + 1] == "https://m/simple"
    assert argv[argv.index("--trusted-host") + 1] == "m"
    assert argv[argv.index("--find-links") + 1] == "/links"
    assert "--no-index" in argv and argv[-1] == "/w/x.whl[and-cuda]"


def test_progress_counts_pip_lines():
    progress = PipProgress()
    lines = [
        "Processing /w/fakeflow-1.0-py3-none-any.whl",
        "Collecting nvidia-cublas-cu12 (from fakeflow[and-cuda])",
        "  Downloading nvidia_cublas_cu12-12.3.4.1-py3-none-manylinux1_x86_64.whl (412.6 MB)",
        "Collecting numpy",
        "  Using cached numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.whl (18.3 MB)",
        "Requirement already satisfied: six in ./lib/python3.11/site-packages",
        "Installing collected packages: numpy, nvidia-cublas-cu12, fakeflow",
        "Successfully installed fakeflow-1.0 numpy-1.26.4 nvidia-cublas-cu12-12.3.4.1",
    ]
    snaps = [s for s in (progress.feed(x) for x in lines) if s is not None]
    last = snaps[-1]
    assert (last.collected, last.downloaded, last.cached, last.satisfied, last.to_install) == \
        (3, 1, 1, 1, 3)
    assert last.phase == "done"
    assert progress.installed == ("fakeflow-1.0", "numpy-1.26.4", "nvidia-cublas-cu12-12.3.4.1")
    assert "2 downloaded" not in last.summary() and "1 downloaded" in last.summary()


# -- real pip, offline ---------------------------------------------------------------------------


@pytest.mark.slow
def test_installs_a_wheel_with_its_and_cuda_extra_offline(target_venv, wheels):
    links = wheels / "links"
    stub = stub_wheel(links)
    stub_name = stub.name.split("-")[0].replace("_", "-")
    wheel = make_wheel(wheels, "fakeflow", extras=("and-cuda",),
                       requires=(f'{stub_name}; extra == "and-cuda"',))
    events: list = []
    result = install_wheel(wheel, resolve_target(venv=target_venv), ["and-cuda"],
                           find_links=[str(links)], no_index=True, reporter=events.append)
    assert result.ok, result.message
    assert result.requirement.endswith("fakeflow-1.0-py3-none-any.whl[and-cuda]")
    assert any(x.startswith("fakeflow-1.0") for x in result.installed)
    assert any(x.startswith(stub_name) for x in result.installed)
    kinds = [type(e) for e in events]
    assert kinds[0] is InstallStarted and kinds[-1] is InstallFinished
    assert PipLine in kinds and InstallProgress in kinds
    started = events[0]
    assert "--no-index" in started.argv and str(links) in started.argv
    freeze = pip_freeze(resolve_target(venv=target_venv).python)
    assert any(line.lower().startswith("fakeflow") for line in freeze)
    assert any(line.lower().startswith(stub_name) for line in freeze)
    assert result.progress is not None and result.progress.to_install == 2


@pytest.mark.slow
def test_wheel_only_reinstalls_the_rebuilt_wheel_without_resolving(tmp_path):
    """The rebuild loop (issue 17): the same version rebuilt, into a venv that has the
    and-cuda dependencies; pip is given no index and no links, so any resolution fails."""
    folder = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(folder)
    target = resolve_target(venv=folder)
    links = tmp_path / "links"
    stub = stub_wheel(links)
    stub_name = stub.name.split("-")[0].replace("_", "-")
    requires = (f'{stub_name}; extra == "and-cuda"',)
    first = make_wheel(tmp_path / "a", "fakeflow", extras=("and-cuda",), requires=requires)
    assert install_wheel(first, target, ["and-cuda"], find_links=[str(links)],
                         no_index=True).ok
    rebuilt = make_wheel(tmp_path / "b", "fakeflow", extras=("and-cuda",), requires=requires,
                         value=43)
    events: list = []
    result = install_wheel(rebuilt, target, ["and-cuda"], reporter=events.append,
                           wheel_only=True)
    assert result.ok, result.message
    argv = events[0].argv
    assert "--no-deps" in argv and "--force-reinstall" in argv
    assert argv[-1] == str(rebuilt)  # no [and-cuda]: nothing to resolve
    assert [x for x in result.installed if x.startswith("fakeflow")] == ["fakeflow-1.0"]
    assert not any(x.startswith(stub_name) for x in result.installed)
    site = next(folder.glob("lib/python*/site-packages"))
    assert (site / "fakeflow" / "__init__.py").read_text() == "VALUE = 43\n"
    freeze = pip_freeze(target.python)
    assert any(line.lower().startswith(stub_name) for line in freeze)  # deps untouched


@pytest.mark.slow
def test_a_failed_install_leaves_the_venv_as_it_was(target_venv, wheels):
    wheel = make_wheel(wheels, "brokenflow", requires=("tfwizard-no-such-package-xyz",))
    target = resolve_target(venv=target_venv)
    before = pip_freeze(target.python)
    result = install_wheel(wheel, target, [], find_links=[str(wheels)], no_index=True)
    assert result.status == "failed" and result.exit_code not in (0, None)
    assert result.unchanged is True and result.changes == ()
    assert "pip freeze unchanged" in result.message
    assert pip_freeze(target.python) == before


@pytest.mark.slow
def test_create_makes_the_venv_and_a_failure_removes_it_again(tmp_path, wheels):
    good = make_wheel(wheels, "tinypkg")
    bad = make_wheel(wheels, "brokenflow", requires=("tfwizard-no-such-package-xyz",))
    failed_dir = tmp_path / "failed-venv"
    result = install_wheel(bad, resolve_target(venv=failed_dir, create=True), [],
                           no_index=True, find_links=[str(wheels)])
    assert result.status == "failed" and not failed_dir.exists()
    assert "this run created was removed" in result.message

    new_dir = tmp_path / "new-venv"
    status, out, err = capture(["install", str(good), "--venv", str(new_dir), "--create",
                                "--no-index"])
    assert status == 0, out + err
    assert f"created venv {new_dir}" in out and "Installed" in out
    assert any(x.startswith("tinypkg") for x in pip_freeze(new_dir / "bin" / "python"))


def test_venv_created_event_type_names():
    assert VenvCreated.type == "venv" and InstallFinished.type == "finished"


@pytest.mark.slow
@pytest.mark.parametrize("stop_at", [InstallStarted, PipLine])
def test_a_cancelled_install_is_stopped_and_compared_with_the_freeze(target_venv, wheels,
                                                                     stop_at):
    import asyncio


    wheel = make_wheel(wheels, "cancelflow")
    target = resolve_target(venv=target_venv)
    before = pip_freeze(target.python)

    async def run():
        installation = Installation(wheel, target, [], no_index=True)
        events = installation.events()
        async for event in events:
            if isinstance(event, stop_at):
                break
        await events.aclose()
        return installation.result

    result = asyncio.run(run())
    assert result is not None and result.status == "cancelled"
    after = pip_freeze(target.python)
    # pip may have finished its one tiny package before the stop: the report says which
    assert result.unchanged == (after == before)
    if stop_at is InstallStarted:
        assert result.unchanged is True and after == before


@pytest.mark.slow
def test_cancel_stops_a_pip_that_hangs_on_its_index(target_venv, wheels):
    """cancel() from another thread (the GUI's Cancel button, Ctrl-C) ends a pip that waits
    on an index which never answers, and the result says "cancelled"."""
    import asyncio
    import socket
    import threading
    import time


    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)  # accepts connections, never answers: pip waits on it
    port = server.getsockname()[1]
    wheel = make_wheel(wheels, "hangsonindex", requires=("tfwizard-nowhere-dep",))
    target = resolve_target(venv=target_venv)
    installation = Installation(wheel, target, [], index_url=f"http://127.0.0.1:{port}/simple",
                                check_tags=False)
    times: dict[str, float] = {}

    async def run() -> list:
        seen = []
        async for event in installation.events():
            seen.append(event)
            if isinstance(event, InstallStarted):
                timer = threading.Timer(1.5, installation.cancel)
                timer.start()
                times["cancel"] = time.monotonic() + 1.5
        times["end"] = time.monotonic()
        return seen

    try:
        seen = asyncio.run(run())
    finally:
        server.close()
    result = installation.result
    assert result is not None and result.status == "cancelled", result
    assert isinstance(seen[-1], InstallFinished) and seen[-1].result is result
    elapsed = times["end"] - times["cancel"]
    assert elapsed < 5, elapsed  # pip stops at SIGTERM; then the freeze comparison
    assert result.unchanged is True


def test_tags_are_checked_before_a_venv_is_created(tmp_path, wheels):
    """A wheel for another Python is refused by the interpreter that would create the venv,
    so nothing is made (the venv took about 10 s before it was refused)."""
    wheel = make_wheel(wheels, "tinypkg", tag=f"{OTHER_PY}-{OTHER_PY}-linux_x86_64")
    new_dir = tmp_path / "never-made"
    seen: list[object] = []

    async def run() -> None:
        async for event in Installation(wheel, resolve_target(venv=new_dir, create=True),
                                        []).events():
            seen.append(event)

    with pytest.raises(WheelIncompatible) as info:
        asyncio.run(run())
    assert f"Python tag {OTHER_PY}-{OTHER_PY}" in str(info.value)
    assert seen == [] and not new_dir.exists()
