"""`tfwizard install --wheelhouse URL`: the best wheel there for this machine, installed.

    job = WheelhouseInstallation(url, target, host=profile, kb=kb)
    result = run_installation(job, reporter)        # install.run_installation
    job.record                                      # the install record's path

The steps, as events of the install job (core/install.py's Installation does the rest):
1. the target interpreter's tags (a venv to be made: its base interpreter's);
2. every TensorFlow wheel of the wheelhouse judged for this machine (choose.py); none that
   serves is an error that lists each candidate and why it was rejected;
3. the chosen wheel downloaded and refused unless its bytes have the hash the index gives
   (index.Wheelhouse.download) and it is what it says it is (label.check_wheel_file: its
   RECORD, its version, its provenance against its own build facts);
4. installed with `[and-cuda]` when it is a CUDA build (the Installation: tags, freeze,
   pip, the comparison after a failure);
5. the install record written: `<data dir>/installs/<id>.json` with the result, the
   wheelhouse (credentials masked), the wheel, its hashes, the choice and the provenance.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement

from ..host import HostProfile
from ..i18n import _
from ..install.job import (
    PIP_TIMEOUT,
    Installation,
    InstallEvent,
    InstallFinished,
    InstallStarted,
    InstallTarget,
    base_python,
    interpreter_tags,
    tfwizard_line,
)
from ..knowledge import KnowledgeBase
from ..recipe import AND_CUDA
from ..secrets import redact
from . import PROJECTS, WheelhouseError
from .choose import Choice, Machine, choose
from .index import IndexFile, Wheelhouse, WheelRefused
from .label import check_wheel_file, file_sha256

INSTALLS_DIR = "installs"


def wheelhouse_requirement(text: str | None) -> Requirement | None:
    """The requirement `install` takes from a wheelhouse: none, or tensorflow /
    tensorflow-cpu with a version specifier; None for anything else (a wheel file, another
    package: installed as before)."""
    if not text:
        return Requirement("tensorflow")
    if text.endswith(".whl") or "/" in text:
        return None
    from ..install.requirement import parse_requirement

    req = parse_requirement(text)
    if req is None or req.name.lower().replace("_", "-") not in PROJECTS:
        return None
    return req


class WheelhouseInstallation(Installation):
    """The install job of the wheel a wheelhouse has for the target interpreter's machine."""

    def __init__(self, url: str, target: InstallTarget, *, host: HostProfile,
                 kb: KnowledgeBase, requirement: Requirement | None = None,
                 extras: Sequence[str] = (), download_dir: Path | None = None,
                 data_dir: Path | None = None, index_url: str = "", trusted_host: str = "",
                 find_links: Sequence[str] = (), no_index: bool = False,
                 env: Mapping[str, str] | None = None, timeout: float = PIP_TIMEOUT) -> None:
        super().__init__(Path("tensorflow.whl"), target, extras, index_url=index_url,
                         trusted_host=trusted_host, find_links=find_links, no_index=no_index,
                         env=env, timeout=timeout)
        self.house = Wheelhouse(url)
        self.host, self.kb = host, kb
        self.requirement = requirement or Requirement("tensorflow")
        self.download_dir = download_dir
        self.data_dir = data_dir
        self.choice: Choice | None = None
        self.chosen: IndexFile | None = None
        self.sha256 = ""
        self.argv: tuple[str, ...] = ()
        #: the install record written at the end (None until then)
        self.record: Path | None = None

    def _choose(self, python: Path) -> Choice:
        """The wheelhouse's answer for the machine this interpreter runs on (blocking)."""
        tags = interpreter_tags(python, self.env)
        machine = Machine.of_profile(self.host, where=_("this machine"), interpreter=tags)
        projects = [p for p in PROJECTS
                    if self.requirement.name.lower().replace("_", "-") in ("tensorflow", p)]
        return choose(self.house.files(projects), self.house.provenance, machine, self.kb,
                      wheelhouse=self.house.display, specifier=str(self.requirement.specifier))

    def _fetch(self, f: IndexFile, dest: Path) -> Path:
        """Download and check the chosen wheel (blocking); WheelRefused when it is not the
        wheel the index names or not what it says it is."""
        path = self.house.download(f, dest)
        problems = check_wheel_file(path)
        if problems:
            path.unlink(missing_ok=True)
            raise WheelRefused(_("refusing {wheel}: {problems}").format(
                wheel=f.filename, problems="; ".join(problems)),
                _("Its dist-info facts were changed after it was built. Publish it again "
                  "from its build record."))
        self.sha256 = file_sha256(path)
        return path

    async def events(self) -> AsyncIterator[InstallEvent]:
        """Choose, fetch and check, then the Installation's events (see the module's text)."""
        loop = asyncio.get_running_loop()
        target = self.target
        to_create = target.create and target.venv is not None and not target.python.exists()
        yield tfwizard_line(_("looking in the wheelhouse {url}").format(url=self.house.display))
        self.choice = await loop.run_in_executor(
            None, self._choose, base_python(target) if to_create else target.python)
        for line in self.choice.lines():
            yield tfwizard_line(line)
        best = self.choice.best
        if best is None:
            raise WheelhouseError(self.choice.summary(), _(
                "Build a wheel for this machine and publish it (`tfwizard publish`), or "
                "install the official wheel (`tfwizard advise` says whether one serves)."))
        self.chosen = best.file
        temp = None if self.download_dir else Path(tempfile.mkdtemp(prefix="tfwizard-wh-"))
        dest = self.download_dir or temp
        assert dest is not None
        try:
            self.wheel = await loop.run_in_executor(None, self._fetch, best.file, dest)
            algorithm = (best.file.index_hash() or ("", ""))[0]
            yield tfwizard_line(
                _("{wheel}: {algorithm} as the index gives it, RECORD and provenance "
                  "checked").format(wheel=best.file.filename, algorithm=algorithm)
                if algorithm else
                _("{wheel}: the index gives no hash for it; RECORD and provenance "
                  "checked").format(wheel=best.file.filename))
            if best.provenance is not None and best.provenance.backend == "cuda":
                self.extras = (AND_CUDA, *[e for e in self.extras if e != AND_CUDA])
            async for event in super().events():
                if isinstance(event, InstallStarted):
                    self.argv = tuple(redact(a) for a in event.argv)
                if isinstance(event, InstallFinished):
                    self.record = await loop.run_in_executor(None, self._write_record)
                yield event
        finally:
            if temp is not None:
                shutil.rmtree(temp, ignore_errors=True)

    def _write_record(self) -> Path:
        """The install record (see the module's text); its path."""
        from ..paths import atomic_write, data_dir

        folder = (self.data_dir or data_dir(self.env)) / INSTALLS_DIR
        folder.mkdir(parents=True, exist_ok=True)
        install_id = time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)
        best = self.choice.best if self.choice else None
        data: dict[str, Any] = {
            "id": install_id, "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "wheelhouse": self.house.display,
            "requirement": str(self.requirement),
            "wheel": self.chosen.to_dict() if self.chosen else None,
            "sha256": self.sha256, "argv": list(self.argv),
            "result": self.result.to_dict() if self.result else None,
            "provenance": best.provenance.to_dict() if best and best.provenance else None,
            "choice": self.choice.to_dict() if self.choice else None}
        path = folder / f"{install_id}.json"
        atomic_write(path, redact(json.dumps(data, indent=2, default=str)) + "\n")
        return path



def install_record_of(python: str, env: Mapping[str, str] | None = None,
                      data_dir: Path | None = None) -> dict[str, Any] | None:
    """The newest install record of a wheelhouse install into the interpreter `python`
    (the path as given: a venv's python is a link to its base, and another venv's too),
    None without one."""
    from ..paths import data_dir as default_dir

    folder = (data_dir or default_dir(env)) / INSTALLS_DIR
    want = os.path.abspath(python)
    for path in sorted(folder.glob("*.json"), reverse=True):  # ids start with the time
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        result = data.get("result") or {}
        if result.get("status") == "installed" and result.get("python") and \
                os.path.abspath(str(result["python"])) == want:
            return dict(data)
    return None
