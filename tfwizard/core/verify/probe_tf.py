"""TensorFlow verification probe: runs INSIDE the interpreter being verified.

    python probe_tf.py OUT_DIR

It imports nothing from tfwizard (the target interpreter need not have it) and only the
standard library before TensorFlow. It writes OUT_DIR/result.json after every stage (so a
crash leaves the last good state) and points file descriptor 2 at OUT_DIR/stderr.log for
its whole life, because TensorFlow logs from C++ straight to fd 2, not through sys.stderr.
Keep it runnable on old Pythons (3.8): no match, no walrus-heavy or 3.10+ syntax.
"""

from __future__ import annotations  # annotations stay strings on old Pythons

import json
import os
import random
import sys
import time
import traceback
from typing import Any

# Run as a script, sys.path[0] is tfwizard/core, whose module names (errors, events, ...)
# could shadow what TensorFlow imports; the probe needs nothing from there.
if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
    del sys.path[0]

PROBE_VERSION = 1
#: libraries whose load address tells where CUDA/ROCm came from
LIBRARY_NAMES = (
    "libcuda.so", "libcudart", "libcublas", "libcublasLt", "libcudnn", "libcufft",
    "libcusolver", "libcusparse", "libnccl", "libnvrtc", "libnvJitLink", "libamdhip64",
    "libMIOpen", "librocblas",
)
ENV_KEYS = (
    "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "TF_CPP_MIN_LOG_LEVEL", "TF_FORCE_GPU_ALLOW_GROWTH",
    "XLA_FLAGS", "CUDA_HOME", "HIP_VISIBLE_DEVICES", "HSA_OVERRIDE_GFX_VERSION",
)
REDUCE_SHAPE = (256, 384)
MATMUL_N = 512
MATMUL_REPEAT = 3


class Probe:
    """The probe's state: the result written to result.json after every stage."""

    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.result_path = os.path.join(out_dir, "result.json")
        self.log_path = os.path.join(out_dir, "stderr.log")
        self.result: dict[str, Any] = {
            "probe_version": PROBE_VERSION,
            "stage": "start",
            "complete": False,
            "python": {
                "executable": sys.executable,
                "version": "{}.{}.{}".format(*sys.version_info[:3]),
                "prefix": sys.prefix,
            },
            "env": dict((k, os.environ[k]) for k in ENV_KEYS if k in os.environ),
            "tensorflow": None,
            "import_error": None,
            "build_info": None,
            "provenance": None,
            "built_with_cuda": None,
            "built_with_rocm": None,
            "devices": [],
            "gpu_details": [],
            "ops": [],
            "matmul": [],
            "libraries": [],
            "log": {},
            "errors": [],
        }
        self._log_offset = 0

    # -- plumbing ----------------------------------------------------------------------
    def capture_fd2(self):
        """Send fd 2 (C++ and Python stderr alike) to stderr.log until the process ends."""
        sys.stderr.flush()
        fd = os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 2)
        os.close(fd)

    def save(self):
        """Write the result so far (atomically)."""
        tmp = self.result_path + ".tmp"
        with open(tmp, "w") as fh:
            json.dump(self.result, fh, indent=1, default=str)
        os.replace(tmp, self.result_path)

    def stage(self, name):
        """Record that a stage started."""
        self.result["stage"] = name
        self.save()

    def take_log(self, name):
        """Log lines written to fd 2 since the last call, filed under this stage."""
        sys.stderr.flush()
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(self._log_offset)
                data = fh.read()
        except OSError:
            return
        self._log_offset += len(data)
        lines = data.decode("utf-8", "replace").splitlines()
        if lines:
            self.result["log"].setdefault(name, []).extend(lines)

    def error(self, where, exc):
        """Record an exception raised in `where`."""
        self.result["errors"].append({
            "where": where,
            "type": type(exc).__name__,
            "message": str(exc).strip()[:2000],
            "traceback": traceback.format_exc()[-4000:],
        })

    # -- stages --------------------------------------------------------------------------
    def run(self):
        """Every stage in order: import, build info, devices, ops, matmul."""
        self.capture_fd2()
        self.stage("import")
        started = time.time()
        try:
            import tensorflow as tf
        except BaseException as exc:  # ImportError, but also SystemExit from broken inits
            self.result["import_error"] = f"{type(exc).__name__}: {str(exc).strip()}"
            self.error("import", exc)
            self.take_log("import")
            self.stage("done")
            return
        self.result["tensorflow"] = {
            "version": getattr(tf, "__version__", None),
            "path": os.path.dirname(getattr(tf, "__file__", "") or ""),
            "import_s": round(time.time() - started, 3),
        }
        self.take_log("import")

        self.stage("build_info")
        self.build_info(tf)
        self.result["provenance"] = installed_provenance()
        self.take_log("build_info")

        self.stage("devices")
        self.devices(tf)
        self.take_log("devices")

        self.stage("ops")
        self.ops(tf)
        self.take_log("ops")

        self.stage("matmul")
        self.matmul(tf)
        self.take_log("matmul")

        self.stage("libraries")
        self.result["libraries"] = loaded_libraries()
        self.result["complete"] = True
        self.stage("done")

    def build_info(self, tf):
        """What the wheel says it was built with."""
        try:
            info = tf.sysconfig.get_build_info()
            self.result["build_info"] = dict((str(k), jsonable(v)) for k, v in info.items())
        except Exception as exc:
            self.error("build_info", exc)
        for key, name in (("built_with_cuda", "is_built_with_cuda"),
                          ("built_with_rocm", "is_built_with_rocm")):
            try:
                self.result[key] = bool(getattr(tf.test, name)())
            except Exception as exc:
                self.error(name, exc)

    def devices(self, tf):
        """The physical and logical devices TensorFlow sees."""
        try:
            physical = tf.config.list_physical_devices()
        except Exception as exc:
            self.error("list_physical_devices", exc)
            return
        for dev in physical:
            self.result["devices"].append({"name": dev.name, "type": dev.device_type})
        for gpu in [d for d in physical if d.device_type == "GPU"]:
            try:  # take memory as needed, not all of it: other programs share the GPU
                tf.config.experimental.set_memory_growth(gpu, True)
            except Exception as exc:
                self.error("set_memory_growth", exc)
            details = {"name": gpu.name}
            try:
                raw = tf.config.experimental.get_device_details(gpu)
                details["device_name"] = raw.get("device_name")
                cc = raw.get("compute_capability")
                if cc:
                    details["compute_capability"] = f"{cc[0]}.{cc[1]}"
            except Exception as exc:
                self.error("get_device_details", exc)
            self.result["gpu_details"].append(details)

    def _logical(self, tf):
        try:
            return [d.name for d in tf.config.list_logical_devices()
                    if d.device_type in ("CPU", "GPU")]
        except Exception as exc:
            self.error("list_logical_devices", exc)
            return ["/device:CPU:0"]

    def ops(self, tf):
        """A reduction on each device, checked against plain Python."""
        rng = random.Random(20240531)
        rows, cols = REDUCE_SHAPE
        values = [[rng.uniform(-1.0, 1.0) for _ in range(cols)] for _ in range(rows)]
        expected = sum(sum(row) for row in values)  # float64 reference, no numpy needed
        # float32 accumulation error is bounded by a small multiple of eps * sum(|x|)
        tolerance = 1e-5 * sum(sum(abs(v) for v in row) for row in values) + 1e-3
        for name in self._logical(tf):
            entry = {"device": name, "op": "reduce_sum", "shape": [rows, cols],
                     "expected": expected, "ok": False}
            self.result["ops"].append(entry)
            self.save()  # a crash inside the op still names the device
            started = time.time()
            try:
                with tf.device(name):
                    tensor = tf.constant(values, dtype=tf.float32)
                    total = tf.reduce_sum(tensor)
                value = float(total.numpy())
                entry["value"] = value
                entry["placed_on"] = getattr(total, "device", "")
                entry["ok"] = abs(value - expected) <= tolerance
                if not entry["ok"]:
                    entry["error"] = f"wrong result: {value!r}, expected {expected!r}"
            except Exception as exc:
                entry["error"] = f"{type(exc).__name__}: {str(exc).strip()[:1000]}"
            entry["seconds"] = round(time.time() - started, 4)

    def matmul(self, tf):
        """A matrix product on each device, timed."""
        n = MATMUL_N
        for name in self._logical(tf):
            entry = {"device": name, "n": n, "dtype": "float32"}
            self.result["matmul"].append(entry)
            self.save()
            try:
                with tf.device(name):
                    a = tf.random.uniform((n, n), seed=1)
                    b = tf.random.uniform((n, n), seed=2)
                    tf.linalg.matmul(a, b).numpy()  # warm-up: kernels, autotuning
                    times = []
                    for _ in range(MATMUL_REPEAT):
                        started = time.perf_counter()
                        tf.linalg.matmul(a, b).numpy()  # .numpy() waits for the device
                        times.append(time.perf_counter() - started)
                best = min(times)
                entry["ms"] = round(best * 1000.0, 3)
                entry["gflops"] = round(2.0 * n ** 3 / best / 1e9, 2) if best > 0 else None
            except Exception as exc:
                entry["error"] = f"{type(exc).__name__}: {str(exc).strip()[:1000]}"


#: the file a tfwizard wheelhouse wheel keeps in its .dist-info (core/wheelhouse)
PROVENANCE = "tfwizard-provenance.json"


def installed_provenance():
    """The wheelhouse provenance of the installed TensorFlow distribution, None without one."""
    try:
        from importlib import metadata
    except ImportError:  # Python < 3.8
        return None
    for name in ("tensorflow", "tensorflow-cpu", "tensorflow_cpu"):
        try:
            text = metadata.distribution(name).read_text(PROVENANCE)
        except Exception:  # not installed under that name, or unreadable
            continue
        if text:
            try:
                return json.loads(text)
            except ValueError:
                return {"error": "unreadable " + PROVENANCE}
    return None


def jsonable(value):
    """A value made JSON-safe: dicts, lists and tuples walked, anything else not JSON as text."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return dict((str(k), jsonable(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return str(value)


def loaded_libraries(maps_path="/proc/self/maps"):
    """CUDA/ROCm libraries mapped into this process, with where they came from."""
    found: list[dict[str, str]] = []
    seen = set()
    try:
        with open(maps_path) as fh:
            lines = fh.read().splitlines()
    except OSError:
        return found
    for line in lines:
        parts = line.split(None, 5)
        if len(parts) < 6 or not parts[5].startswith("/"):
            continue
        path = parts[5].strip()
        base = os.path.basename(path)
        if path in seen or not any(base.startswith(n) for n in LIBRARY_NAMES):
            continue
        seen.add(path)
        found.append({"name": base, "path": path, "real_path": os.path.realpath(path),
                      "origin": library_origin(path)})
    return found


def library_origin(path):
    """pip (an nvidia-* wheel), wsl (the Windows driver), compat (cuda-compat) or system."""
    if path.startswith("/usr/lib/wsl/"):
        return "wsl"
    if "/compat/" in path:
        return "compat"
    if ("site-packages" in path or "dist-packages" in path) and "/nvidia/" in path:
        return "pip"
    if "site-packages" in path or "dist-packages" in path:
        return "python-package"
    return "system"


def main(argv):
    """`python probe_tf.py OUT_DIR`: run the probe, write OUT_DIR/result.json."""
    if len(argv) != 2:
        sys.stdout.write(__doc__)
        return 2
    out_dir = argv[1]
    probe = Probe(out_dir)
    try:
        probe.run()
    except BaseException as exc:  # the probe reports; it never hides what went wrong
        probe.error(probe.result.get("stage", "?"), exc)
        probe.save()
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
