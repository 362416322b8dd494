"""The runtime diagnosis on outputs captured on a real GPU (tests/data/gpu-captures): each
file gives exactly the diagnoses its entry in expected.toml names, root cause first, with a
host profile of that machine and without one (a pasted log)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tfwizard.core.diagnosis.runtime import diagnose_log
from tfwizard.core.diagnosis.unrecognised import root_lines
from tfwizard.core.host import HostProfile

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the 3.10 fallback the package itself uses
    import tomli as tomllib

DATA = Path(__file__).resolve().parents[2] / "data"
CAPTURES = DATA / "gpu-captures"
EXPECTED = tomllib.loads((CAPTURES / "expected.toml").read_text())["capture"]
H200 = HostProfile.load(DATA / "hosts" / "h200-driver580-real.json")


def _diagnose(name: str, host: HostProfile | None):
    with (CAPTURES / "h200-driver580" / f"{name}.log").open("rb") as fh:
        return diagnose_log(fh, host)


def test_every_capture_has_an_entry_and_every_entry_a_capture() -> None:
    files = {p.stem for p in (CAPTURES / "h200-driver580").glob("*.log")}
    assert files == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.parametrize("host", [H200, None], ids=["h200-profile", "pasted"])
def test_capture_gives_its_diagnoses_and_no_other(name: str, host: HostProfile | None) -> None:
    found = _diagnose(name, host)
    assert [d.id for d in found] == EXPECTED[name]["expect"], EXPECTED[name]["what"]
    severity = EXPECTED[name].get("severity", "error")
    assert all(d.severity == severity for d in found)


@pytest.mark.parametrize("name", [n for n in sorted(EXPECTED) if "libs" in EXPECTED[n]])
def test_jaxs_library_check_names_the_library(name: str) -> None:
    """jax's plugin says "Unable to load cuDNN": the cause names libcudnn, not a list of
    six libraries one of which failed."""
    [found] = _diagnose(name, H200)
    assert EXPECTED[name]["libs"] in found.cause
    assert "one of" not in found.cause


def test_the_plugin_failure_alone_is_the_diagnosis_and_never_a_missing_cuda_jaxlib() -> None:
    """Without a line that names the reason, the plugin's failure is the diagnosis: the
    capture with its cause line cut away still says the plugin is installed."""
    lines = (CAPTURES / "h200-driver580" / "jax-visible-none.log").read_text().splitlines()
    cut = [line for line in lines if "CUDA_ERROR_NO_DEVICE" not in line]
    assert [d.id for d in diagnose_log(cut, H200)] == ["jax-cuda-plugin-failed"]
    no_gpu = HostProfile.from_dict({**H200.to_dict(), "nvidia": {"status": "none", "gpus": []}})
    [found] = diagnose_log(cut, no_gpu)
    assert (found.id, found.severity) == ("jax-cuda-plugin-failed", "info")
    assert "xla_cuda13" in found.cause


#: a CUDA plugin of another release than jaxlib fails in its initialize() at jaxlib's API,
#: before any version check (public threads' wordings: google-deepmind/torax#1369,
#: kmheckel/spyx#31, jax-ml/jax#26750)
PLUGIN_OF_ANOTHER_RELEASE = [
    ["Jax plugin configuration error: Exception when calling jax_plugins.xla_cuda12.initialize()",
     "Traceback (most recent call last):",
     '  File "/venv/lib/python3.13/site-packages/jax_plugins/xla_cuda12/__init__.py", line 103,'
     " in initialize",
     "    triton.register_compilation_handler(",
     "AttributeError: module 'jax._src.lib.triton' has no attribute "
     "'register_compilation_handler'"],
    ["Jax plugin configuration error: Exception when calling jax_plugins.xla_cuda12.initialize()",
     '  File "/venv/lib/python3.9/site-packages/jax_plugins/xla_cuda12/__init__.py", line 83,'
     " in initialize",
     "    xla_client.register_custom_call_handler(",
     '  File "/venv/lib/python3.9/site-packages/jaxlib/xla_client.py", line 658, in'
     " register_custom_call_handler",
     "    handler(name, fn, xla_platform_name, api_version, traits)",
     "TypeError: register_custom_call_target(): incompatible function arguments."],
    ["AttributeError: module 'jaxlib.xla_client' has no attribute "
     "'register_custom_type_id_handler'."],
]


@pytest.mark.parametrize("lines", PLUGIN_OF_ANOTHER_RELEASE)
def test_a_plugin_of_another_release_is_version_skew_not_a_plugin_failure(lines) -> None:
    assert [d.id for d in diagnose_log(lines, H200)] == ["jaxlib-version-mismatch"]


def test_jaxs_info_line_for_a_backend_it_lacks_stays_quiet() -> None:
    """jax logs a jaxlib module without an attribute at INFO for every backend it lacks;
    only the registration calls of a plugin's initialize() are version skew."""
    line = ("INFO:jax._src.xla_bridge:Unable to initialize backend 'rocm': module "
            "'jaxlib.xla_extension' has no attribute 'GpuAllocatorConfig'")
    assert diagnose_log([line], H200) == []


#: TensorFlow's words for one try of the same backing-off (cuda_driver.cc), then the BFC
#: allocator's final report when the allocation failed for good (bfc_allocator.cc)
TF_BACKOFF = ("2019-05-02 10:11:12.345678: E tensorflow/stream_executor/cuda/cuda_driver.cc:806]"
              " failed to allocate 10.91G (11715084288 bytes) from device:"
              " CUDA_ERROR_OUT_OF_MEMORY: out of memory")
TF_FAILED = ("2019-05-02 10:11:13.000000: W tensorflow/core/common_runtime/bfc_allocator.cc:"
             "267] Allocator (GPU_0_bfc) ran out of memory trying to allocate 3.00GiB.  Current"
             " allocation summary follows.")


def test_the_allocators_backing_off_alone_is_a_warning_and_its_end_an_error() -> None:
    """Its tries say memory is short; only the allocator's final report says an allocation
    failed, and a long run of tries (one per GPU, 90 % steps) must not hide it."""
    [short] = diagnose_log([TF_BACKOFF] * 12, H200)
    assert (short.id, short.severity) == ("gpu-out-of-memory", "warning")
    [failed] = diagnose_log([TF_BACKOFF] * 80 + [TF_FAILED], H200)
    assert (failed.id, failed.severity, failed.lines) == ("gpu-out-of-memory", "error", [81])
    # the CUDA error in any other words is still the failure
    assert [d.id for d in diagnose_log(
        ["RuntimeError: CUDA_ERROR_OUT_OF_MEMORY: out of memory"], H200)] == ["gpu-out-of-memory"]


@pytest.mark.parametrize("name", [n for n in sorted(EXPECTED) if "fix" in EXPECTED[n]])
def test_no_kernel_for_the_gpu_offers_its_compute_capability(name: str) -> None:
    [found] = _diagnose(name, H200)
    assert EXPECTED[name]["fix"] in str(found.recipe_fix)


@pytest.mark.parametrize("name", [n for n in sorted(EXPECTED) if "fallback" in EXPECTED[n]])
def test_a_kernels_own_bug_gets_the_fallbacks_cuda_line(name: str) -> None:
    with (CAPTURES / "h200-driver580" / f"{name}.log").open("rb") as fh:
        unrecognised = root_lines(fh, "runtime")
    assert unrecognised.lines[0].speaker == EXPECTED[name]["fallback"]
    assert "CUDA" in unrecognised.lines[0].text and unrecognised.query


@pytest.mark.parametrize("name", [n for n in sorted(EXPECTED) if "kernel" in EXPECTED[n]])
def test_a_libcuda_of_another_build_names_the_machines_kernel_driver(name: str) -> None:
    """CUDA's 803 names neither version; the machine's profile (NVML, which still works)
    names the kernel module's, and a pasted log says it does not know."""
    [found] = _diagnose(name, H200)
    assert EXPECTED[name]["kernel"] in found.cause
    [pasted] = _diagnose(name, None)
    assert EXPECTED[name]["kernel"] not in pasted.cause
