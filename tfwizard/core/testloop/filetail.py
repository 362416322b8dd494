"""Follow files that grow inside a container (a detached run's output and BEP files) by
reading only what was added since the last look (the test job polls every 0.25 s).

    tail = FileTail(container_runner(box), [out_path, bep_path])
    new = tail.poll()          # per file: the bytes added since the last poll
    tail.bytes_read            # everything read so far (each byte once)

One exec per poll: a POSIX `sh` script that notes each file's size, prints it, then exactly
the bytes between the last offset and that size. The files only grow
(appended by Bazel and by the run's redirect), so those bytes never change afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

#: per file (its path and the offset already read, in pairs): a line with its size ("-1":
#: not there), then exactly its bytes from the offset up to that size
READ_NEW = r"""while [ "$#" -ge 2 ]; do
  f=$1; off=$2; shift 2
  s=$( (wc -c <"$f") 2>/dev/null) || s=-1
  echo "${s:--1}"
  if [ "${s:--1}" -gt "$off" ]; then tail -c +$((off + 1)) "$f" | head -c $((s - off)); fi
done
"""

#: runs an argv (in the container) and returns its stdout
Runner = Callable[[Sequence[str]], bytes]


def container_runner(client: Any, container_id: str, user: str = "") -> Runner:
    """A Runner for one container (an exec of its own: the warm container's `exec` would
    take over the exec that its cancel() stops)."""
    def run(argv: Sequence[str]) -> bytes:
        api = client.api
        exec_id = api.exec_create(container_id, list(argv), stdout=True, stderr=False,
                                  user=user)["Id"]
        return bytes(api.exec_start(exec_id) or b"")
    return run


class FileTail:
    """Files followed by offset: each poll reads only what they gained."""

    def __init__(self, run: Runner, paths: Sequence[str]) -> None:
        """`run`: how to run the reading script where the files are."""
        self.run = run
        self.paths = list(paths)
        self.offsets = [0] * len(self.paths)
        self.bytes_read = 0

    def poll(self) -> list[bytes]:
        """Per file, the bytes added since the last poll (b"" while it is not there)."""
        argv = ["sh", "-c", READ_NEW, "sh"]
        for path, offset in zip(self.paths, self.offsets, strict=True):
            argv += [path, str(offset)]
        raw = self.run(argv)
        self.bytes_read += len(raw)
        out: list[bytes] = []
        at = 0
        for i in range(len(self.paths)):
            end = raw.find(b"\n", at)
            if end < 0:
                out.append(b"")
                continue
            try:
                size = int(raw[at:end])
            except ValueError:
                size = -1
            chunk = raw[end + 1:end + 1 + max(0, size - self.offsets[i])]
            at = end + 1 + len(chunk)
            self.offsets[i] += len(chunk)
            out.append(chunk)
        return out
