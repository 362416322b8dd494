"""The pip command of an installation (requirement, index options) and the pip process
whose output lines it streams."""

from __future__ import annotations

import queue
import re
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import InstallFailed, UsageError
from ..i18n import _
from ..streams import STDERR, STDOUT, LineSplitter

#: what an extra may be named ("and-cuda")
_EXTRA = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def _requirement(wheel: Path, extras: Sequence[str]) -> str:
    for extra in extras:
        if not _EXTRA.match(extra):
            raise UsageError(_("extra {extra!r} is not a valid name").format(extra=extra),
                             _("Example: --extras and-cuda"))
    return str(wheel) + (f"[{','.join(extras)}]" if extras else "")


def index_argv(index_url: str = "", trusted_host: str = "", find_links: Sequence[str] = (),
               no_index: bool = False) -> list[str]:
    """pip's options for where packages come from: an index (a mirror), folders, offline."""
    argv = ["--index-url", index_url] if index_url else []
    if trusted_host:
        argv += ["--trusted-host", trusted_host]
    for link in find_links:
        argv += ["--find-links", str(link)]
    return [*argv, "--no-index"] if no_index else argv


def pip_argv(python: Path | str, requirement: str, *, index_url: str = "",
             trusted_host: str = "", find_links: Sequence[str] = (), no_index: bool = False,
             upgrade: bool = False, wheel_only: bool = False) -> list[str]:
    """The pip command line (an argv list; nothing goes through a shell).

    wheel_only: replace the installed TensorFlow with this wheel and touch nothing else
    (`--no-deps --force-reinstall`; the rebuild loop: the venv has the deps).
    """
    argv = [str(python), "-m", "pip", "install", "--disable-pip-version-check",
            "--no-input", "--progress-bar", "off",
            # wheel_only: a local file and nothing else: no index, no links to look at
            *(["--no-index"] if wheel_only else
              index_argv(index_url, trusted_host, find_links, no_index))]
    if upgrade:
        argv.append("--upgrade")
    if wheel_only:
        argv += ["--no-deps", "--force-reinstall"]
    argv.append(requirement)
    return argv


class _PipProcess:
    """pip as a child process whose two pipes are read by two threads into one queue."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], timeout: float) -> None:
        self.argv = list(argv)
        self.env = dict(env)
        self.timeout = timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self.timed_out = False
        self._stopped = threading.Event()

    def lines(self) -> Iterator[tuple[str, str]]:
        """(channel, line) until pip exits; blocking, meant for a worker thread."""
        if self._stopped.is_set():  # stopped before it started: never start it
            return
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         env=self.env, start_new_session=True)
        except OSError as exc:
            raise InstallFailed(_("cannot run {program}: {error}").format(
                program=self.argv[0], error=exc.strerror or exc)) from None
        if self._stopped.is_set():  # stop() ran while the process was being made
            self.stop()
        items: queue.Queue[tuple[str, str] | None] = queue.Queue()
        readers = [threading.Thread(target=self._read, args=(stream, channel, items),
                                    daemon=True)
                   for stream, channel in ((self.proc.stdout, STDOUT),
                                           (self.proc.stderr, STDERR))]
        for r in readers:
            r.start()
        deadline = time.monotonic() + self.timeout
        open_streams = len(readers)
        while open_streams:
            try:
                item = items.get(timeout=0.5)
            except queue.Empty:
                if time.monotonic() > deadline and not self.timed_out:
                    self.timed_out = True
                    self.stop()
                continue
            if item is None:
                open_streams -= 1
            else:
                yield item
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.stop()
            self.proc.wait(timeout=30)

    @staticmethod
    def _read(stream: Any, channel: str, items: queue.Queue[tuple[str, str] | None]) -> None:
        splitter = LineSplitter()
        try:
            while chunk := stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536):
                for line in splitter.feed(chunk):
                    items.put((channel, line))
            for line in splitter.flush():
                items.put((channel, line))
        finally:
            items.put(None)

    def stop(self) -> None:
        """Stop pip (SIGTERM lets it roll back the package it is on), then kill."""
        self._stopped.set()
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode if self.proc is not None else None


