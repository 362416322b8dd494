"""Benchmark for issue 17: the warm build exec's own cost, without Bazel and without Docker's
exec round trip.

In a throwaway container of the test image, a loop runs the warm build's exec command as
WarmContainer.build() makes it (EXEC_WRAPPER, the report script around BUILD_SCRIPT, the
configure-if-changed check, configure behind `env -u`) with `true` in Bazel's place, over a real BEP
file that names a wheel of --wheel-mb MB, an older build's BEP left to remove each time,
REPS times; then the same loop with plain `true`. The difference per run is what the exec
itself costs a no-op build. Also counted: the wheel hashed (sha256sum run) per no-op.

    .venv/bin/python bench/exec_script.py [--reps N] [--wheel-mb N] [--bep PATH]

Prints milliseconds per run: script, plain `true`, their difference.
"""

from __future__ import annotations

import argparse
import io
import sys
import tarfile
from pathlib import Path

if __package__:
    from ._common import ROOT
else:
    from _common import ROOT

from tfwizard.core.building.warm import container as warm  # noqa: E402
from tfwizard.core.building.warm.bep import report_script  # noqa: E402

IMAGE = "tfwizard-test/bazel:bookworm"
STATE = "/tmp/state"
WHEEL = "/tmp/out/bin/pkg/tensorflow_cpu-2.18.0-cp311-cp311-linux_x86_64.whl"
BEP = ROOT / "tests" / "data" / "logs" / "fixture-cold.bep.json"

#: the loop; $REPS, the scripts and the wheel size come in the environment
DRIVER = r"""
set -e
mkdir -p "$STATE" "${WHEEL%/*}" /tmp/src
head -c $((MB * 1048576)) /dev/urandom > "$WHEEL"
sed "s#file://[^\"]*\.whl#file://$WHEEL#g" /tmp/bep.json > "$STATE/bep-tok.json"
echo "build:opt --copt=-Wno-sign-compare" > /tmp/src/.tf_configure.bazelrc
cp /tmp/src/.tf_configure.bazelrc "$STATE/configure.bazelrc"
echo want > "$STATE/configure.sha256"
cd /tmp/src
run() {
  sh -c "$WRAP" sh "$STATE" 1800 tok sh -c "$REPORT" sh mark - "$STATE/bep-tok.json" 12 \
    "$IFC" "$STATE/configure.sha256" want /tmp/src/.tf_configure.bazelrc \
    "$STATE/configure.bazelrc" note env -u \
    TFWIZARD_SECRET_BAZELRC CC_OPT_FLAGS=-Wno-sign-compare PYTHON_BIN_PATH=/usr/bin/python3 \
    true true
}
run > /tmp/first.out
grep -c '^mark-sha ' /tmp/first.out > /tmp/wheels
i=0; t0=$(date +%s%N)
while [ $i -lt "$REPS" ]; do : > "$STATE/bep-old$i.json"; run > /dev/null; i=$((i + 1)); done
t1=$(date +%s%N); i=0
while [ $i -lt "$REPS" ]; do : > "$STATE/bep-plain$i.json"; /bin/true > /dev/null; i=$((i + 1)); done
t2=$(date +%s%N)
echo "$(( (t1 - t0) / REPS )) $(( (t2 - t1) / REPS )) $(cat /tmp/wheels)"
"""


def measure(reps: int, wheel_mb: int, bep: Path) -> dict[str, float]:
    """Nanoseconds per run of the exec script and of plain `true`, in one container."""
    import docker

    client = docker.from_env()
    box = client.containers.run(IMAGE, ["sleep", "900"], detach=True, network_mode="none",
                                labels={"io.tfwizard.bench": "exec_script"})
    try:
        data = bep.read_bytes()
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            info = tarfile.TarInfo("bep.json")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        box.put_archive("/tmp", buf.getvalue())
        env = {"REPS": str(reps), "MB": str(wheel_mb), "STATE": STATE, "WHEEL": WHEEL,
               "WRAP": warm.EXEC_WRAPPER, "REPORT": report_script(warm.BUILD_SCRIPT),
               "IFC": warm.IF_CHANGED}
        code, out = box.exec_run(["sh", "-c", DRIVER], environment=env)
        if code != 0:
            raise SystemExit(out.decode("utf-8", "replace"))
        script_ns, plain_ns, wheels = out.decode().split()
    finally:
        box.remove(force=True)
        client.close()
    return {"script_ms": int(script_ns) / 1e6, "true_ms": int(plain_ns) / 1e6,
            "wheel_lines": float(wheels)}


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print milliseconds per run."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--wheel-mb", type=int, default=64)
    ap.add_argument("--bep", type=Path, default=BEP)
    args = ap.parse_args(argv)
    got = measure(args.reps, args.wheel_mb, args.bep)
    print(f"exec script, bazel = true: {got['script_ms']:.2f} ms per run "
          f"(wheel {args.wheel_mb} MB, {args.reps} runs)")
    print(f"plain true:                {got['true_ms']:.2f} ms per run")
    print(f"the script's own cost:     {got['script_ms'] - got['true_ms']:.2f} ms per run")
    print(f"wheel checksum lines in its report: {got['wheel_lines']:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
