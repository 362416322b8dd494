"""Capture what Bazel prints when the REAPI service refuses or times out during a build
(issue 21): the raw logs in tests/data/reapi/ were made by this script, not written by hand.

    python -m tests.reapi.capture_errors [OUT_DIR]    # default: tests/data/reapi

Each capture runs Bazel 4.2.3 of the test image (world.bazel_build, host network, no
tfwizard preflight in front of it) against the BuildGrid test service (tests/reapi):
- wrong-instance: --remote_instance_name=no-such-instance;
- unregistered-property: a platform property the scheduler has no worker for (gpu=nvidia);
- remote-timeout-slow-action: --remote_timeout=2 and a genrule that sleeps 20 s on the
  worker. Bazel 4.2.3 waits for the Execute call past --remote_timeout and the build succeeds:
  no DEADLINE_EXCEEDED comes from a slow action here (the deadline applies to its cache calls).
The fixture's own paths are the only ones in the logs (/src in the container).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from tests import world
from tests.reapi.service import ReapiService

SMALL_TARGET = "//tensorflow/core:platform"
OUT = Path(__file__).resolve().parents[1] / "data" / "reapi"
CAPTURES = {
    "wrong-instance": dict(instance="no-such-instance"),
    "unregistered-property": dict(properties=("gpu=nvidia",)),
    "remote-timeout-slow-action": dict(extra=("--remote_timeout=2",), target="//slow:slow"),
}
#: a genrule that runs for 20 s on the worker (the remote-timeout-slow-action capture)
SLOW_BUILD = '''genrule(name = "slow", outs = ["slow.txt"], cmd = "sleep 20; echo done > $@")
'''


def flags(svc: ReapiService, *, instance: str | None = None,
          properties: tuple[str, ...] = (), extra: tuple[str, ...] = ()) -> list[str]:
    """Bazel's remote flags for one capture (a fresh action key each run: --copt)."""
    import uuid

    return ["--jobs=4", f"--remote_executor={svc.endpoint}",
            f"--remote_instance_name={instance or svc.instance_name}",
            f"--remote_default_exec_properties={svc.image_property(world.IMAGE)}",
            *(f"--remote_default_exec_properties={p}" for p in properties),
            f"--copt=-DTFW_CAPTURE={uuid.uuid4().hex[:8]}", *extra]


def main(argv: list[str]) -> int:
    """Capture the logs into OUT (argv[0] when given); further arguments: only those names."""
    out = Path(argv[0]) if argv else OUT
    only = set(argv[1:])
    out.mkdir(parents=True, exist_ok=True)
    world.ensure_images()
    with tempfile.TemporaryDirectory(prefix="tfw-capture-") as tmp:
        svc = ReapiService(Path(tmp) / "svc")
        svc.start()
        try:
            for n, (name, how) in enumerate(CAPTURES.items()):
                if only and name not in only:
                    continue
                how = dict(how)
                target = how.pop("target", SMALL_TARGET)
                ws = world.copy_workspace(Path(tmp) / f"ws{n}")
                (ws / "slow").mkdir()
                (ws / "slow" / "BUILD").write_text(SLOW_BUILD)
                conf = world.run_configure(ws)
                assert conf.exit_code == 0, conf.output
                res = world.bazel_build(ws, *flags(svc, **how), target=target,
                                        network="host", timeout=600)
                path = out / f"{name}-bazel-4.2.3.log"
                path.write_text(res.output)
                print(f"{name}: exit {res.exit_code}, {len(res.output)} chars -> {path}")
        finally:
            svc.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
