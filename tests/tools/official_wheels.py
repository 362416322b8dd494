"""Read what each official TensorFlow wheel on PyPI needs, without downloading the wheels.

A maintenance tool: it is not shipped with tfwizard and nothing in the package imports it.
It regenerates `resources/knowledge/wheels.toml`; re-run it when a release is added to
`releases.toml`, review the diff, and commit the data:

    python -m tests.tools.official_wheels -o resources/knowledge/wheels.toml
    python -m tests.tools.official_wheels --release 2.21.0 --arch aarch64   # a look only

For every release in releases.toml (master has no wheels and is left out), for x86_64
and aarch64 Linux and for every package in `PACKAGES`, it

- lists the files on PyPI's simple index (PEP 691 JSON): names, sha256, sizes;
- reads from every file, with HTTP Range requests only (the zip's tail for its central
  directory, then the members wanted): `*.dist-info/WHEEL` (tags), `*.dist-info/METADATA`
  (Requires-Python, Requires-Dist, the `and-cuda` extra; PEP 658 metadata when the index
  offers it) and `tensorflow/python/platform/build_info.py` (compute capabilities, CUDA,
  cuDNN), and checks that the files of one release agree;
- disassembles one kernel library of one file (objdump for x86_64, llvm-objdump for
  aarch64) to see which instruction set the compiler targeted: the CPU baseline.

Driver floors come from `cuda.toml` (minor-version compatibility per CUDA major, and the
driver each toolkit shipped with). Facts not read from the wheel go to `unverified`.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import hashlib
import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from email.parser import HeaderParser
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.tags import Tag, parse_tag
from packaging.utils import parse_wheel_filename
from packaging.version import Version

from tfwizard.core.install.wheelfacts import parse_build_info

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
KNOWLEDGE = ROOT / "resources" / "knowledge"
INDEX = "https://pypi.org/simple/"
#: the package names under which official (or officially pointed-to) Linux wheels appear
PACKAGES = ("tensorflow", "tensorflow-cpu", "tensorflow-cpu-aws", "tensorflow-aarch64")
ARCHES = ("x86_64", "aarch64")
BUILD_INFO = "tensorflow/python/platform/build_info.py"
#: libraries built with the release's copts, disassembled for the CPU baseline: the first
#: one a wheel has (the audio frontend: FFT and filterbank code, in every wheel from 2.10)
PROBE_MEMBERS = ("tensorflow/lite/experimental/microfrontend/python/ops/_audio_microfrontend_op.so",
                 "tensorflow/core/kernels/libtfkernel_sobol_op.so")
#: read at least this much per request (small reads of a zip come in runs)
MIN_READ = 64 * 1024
USER_AGENT = "tfwizard-maintenance (official_wheels.py)"

#: legacy manylinux aliases (PEP 513, 571, 599) and their glibc
_LEGACY_MANYLINUX = {"manylinux1": "2.5", "manylinux2010": "2.12", "manylinux2014": "2.17"}


# -- HTTP -------------------------------------------------------------------------------
def http_get(url: str, *, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, **(headers or {})})
    with urllib.request.urlopen(req, timeout=120) as resp:  # noqa: S310 - https only
        return resp.status, resp.read()


class RangeFile(io.RawIOBase):
    """A read-only, seekable view of a remote file that fetches only the bytes read.

    `fetch(start, end)` returns bytes [start, end); spans already fetched are kept, so
    zipfile's many small reads cost one request each run. `fetched` counts the bytes.
    """

    def __init__(self, size: int, fetch: Callable[[int, int], bytes]) -> None:
        super().__init__()
        self.size = size
        self._fetch = fetch
        self._pos = 0
        self._spans: list[tuple[int, bytes]] = []
        self.fetched = 0
        self.requests = 0

    @classmethod
    def over_http(cls, url: str, size: int) -> RangeFile:
        def fetch(start: int, end: int) -> bytes:
            status, data = http_get(url, headers={"Range": f"bytes={start}-{end - 1}"})
            if status != 206 or len(data) != end - start:
                raise OSError(f"{url}: range {start}-{end - 1} answered {status}, "
                              f"{len(data)} bytes")
            return data
        return cls(size, fetch)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self.size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: Any) -> int:
        n = min(len(buffer), self.size - self._pos)
        if n <= 0:
            return 0
        buffer[:n] = self._read(self._pos, n)
        self._pos += n
        return n

    def _read(self, start: int, n: int) -> bytes:
        for begin, data in self._spans:
            if begin <= start and start + n <= begin + len(data):
                return data[start - begin:start - begin + n]
        end = min(self.size, start + max(n, MIN_READ))
        data = self._fetch(start, end)
        self.fetched += len(data)
        self.requests += 1
        self._spans.append((start, data))
        return data[:n]


def read_members(zfile: zipfile.ZipFile, wanted: Callable[[str], bool]) -> dict[str, bytes]:
    return {i.filename: zfile.read(i) for i in zfile.infolist() if wanted(i.filename)}


# -- the index --------------------------------------------------------------------------
@dataclass(frozen=True)
class IndexFile:
    package: str
    filename: str
    url: str
    sha256: str
    size: int
    has_metadata: bool

    @property
    def version(self) -> str:
        return str(parse_wheel_filename(self.filename)[1])

    @property
    def tags(self) -> frozenset[Tag]:
        return parse_wheel_filename(self.filename)[3]


def index_files(package: str) -> list[IndexFile]:
    """Every wheel of `package` on the index (PEP 691 JSON)."""
    _, body = http_get(INDEX + package + "/",
                       headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    out = []
    for f in json.loads(body)["files"]:
        if not f["filename"].endswith(".whl") or f.get("yanked"):
            continue
        meta = f.get("core-metadata") or f.get("data-dist-info-metadata")
        out.append(IndexFile(package, f["filename"], f["url"], f["hashes"]["sha256"],
                             int(f["size"]), bool(meta)))
    return out


# -- what one file says -----------------------------------------------------------------
def python_of(tag: Tag) -> str:
    m = re.fullmatch(r"cp(\d)(\d+)", tag.interpreter)
    if not m:
        raise ValueError(f"not a CPython tag: {tag}")
    return f"{m.group(1)}.{m.group(2)}"


def glibc_of(platform: str) -> str | None:
    """glibc floor of a manylinux platform tag, or None for another platform."""
    for alias, glibc in _LEGACY_MANYLINUX.items():
        if platform.startswith(alias + "_"):
            return glibc
    m = re.match(r"manylinux_(\d+)_(\d+)_", platform)
    return f"{m.group(1)}.{m.group(2)}" if m else None


def manylinux_name(platform: str, arch: str) -> str:
    return platform.removesuffix("_" + arch)


def parse_metadata(text: str) -> dict[str, Any]:
    msg = HeaderParser().parsestr(text)
    return {
        "name": msg["Name"],
        "version": msg["Version"],
        "requires_python": msg["Requires-Python"] or "",
        "requires": [str(r) for r in msg.get_all("Requires-Dist") or []],
    }


def extra_requirements(requires: Iterable[str], extra: str, arch: str,
                       python: str) -> list[str]:
    """Requirements an `extra` adds on Linux/`arch` (name and specifier, marker dropped)."""
    out = []
    for text in requires:
        req = Requirement(text)
        if req.marker is None:
            continue
        env = _environment(arch, python)
        if req.marker.evaluate({**env, "extra": extra}) and not req.marker.evaluate(
                {**env, "extra": ""}):
            out.append(f"{req.name}{_spec(req)}")
    return sorted(out)


def plain_requirements(requires: Iterable[str], arch: str, python: str) -> list[str]:
    """Requirements without an extra that apply on Linux/`arch` for `python`."""
    out = []
    for text in requires:
        req = Requirement(text)
        if req.marker is None or req.marker.evaluate({**_environment(arch, python),
                                                      "extra": ""}):
            out.append(f"{req.name}{_spec(req)}")
    return sorted(out)


def _spec(req: Requirement) -> str:
    return ",".join(sorted(str(s) for s in req.specifier))


def _environment(arch: str, python: str) -> dict[str, str]:
    return {"platform_system": "Linux", "sys_platform": "linux", "os_name": "posix",
            "platform_machine": arch, "python_version": python,
            "python_full_version": python + ".0", "implementation_name": "cpython",
            "platform_python_implementation": "CPython"}


@dataclass
class FileFacts:
    file: IndexFile
    python: str
    platforms: tuple[str, ...]
    wheel_tags: tuple[str, ...]
    metadata: dict[str, Any]
    build_info: dict[str, Any] | None
    members: int
    fetched: int


def read_file_facts(f: IndexFile, arch: str) -> FileFacts:
    rf = RangeFile.over_http(f.url, f.size)
    with zipfile.ZipFile(rf) as zf:
        dist_info = [n for n in zf.namelist() if re.fullmatch(r"[^/]+\.dist-info/WHEEL", n)]
        if len(dist_info) != 1:
            raise ValueError(f"{f.filename}: {len(dist_info)} WHEEL files")
        prefix = dist_info[0].rsplit("/", 1)[0]
        got = read_members(zf, lambda n: n in (dist_info[0], prefix + "/METADATA",
                                               BUILD_INFO))
        members = len(zf.infolist())
    if f.has_metadata:
        _, meta = http_get(f.url + ".metadata")
        if meta != got[prefix + "/METADATA"]:
            raise ValueError(f"{f.filename}: PEP 658 metadata differs from the wheel's")
    wheel = HeaderParser().parsestr(got[dist_info[0]].decode())
    wheel_tags = tuple(sorted(str(t) for line in wheel.get_all("Tag") or []
                              for t in parse_tag(line)))
    file_tags = tuple(sorted(str(t) for t in f.tags))
    if wheel_tags != file_tags:
        raise ValueError(f"{f.filename}: WHEEL tags {wheel_tags} != file name {file_tags}")
    pythons = {python_of(t) for t in f.tags}
    if len(pythons) != 1:
        raise ValueError(f"{f.filename}: several Pythons {pythons}")
    platforms = tuple(sorted({t.platform for t in f.tags}))
    if not all(p.endswith("_" + arch) for p in platforms):
        raise ValueError(f"{f.filename}: not an {arch} wheel")
    info = got.get(BUILD_INFO)
    return FileFacts(
        file=f,
        python=pythons.pop(),
        platforms=platforms,
        wheel_tags=wheel_tags,
        metadata=parse_metadata(got[prefix + "/METADATA"].decode()),
        build_info=parse_build_info(info.decode()) if info is not None else None,
        members=members,
        fetched=rf.fetched,
    )


# -- the CPU baseline, from the machine code ---------------------------------------------
_FMA = re.compile(r"vf(n)?m(add|sub)")
_AVX2_INT_YMM = re.compile(r"vp(?!erm2f128|ermil|test)")
_AVX2_ONLY = {"vpbroadcastb", "vpbroadcastw", "vpbroadcastd", "vpbroadcastq",
              "vbroadcasti128", "vperm2i128", "vpermq", "vpermd", "vpermps", "vpermpd",
              "vinserti128", "vextracti128", "vpblendd", "vpmaskmovd", "vpmaskmovq",
              "vpsllvd", "vpsrlvd", "vpsravd", "vpsllvq", "vpsrlvq", "vpgatherdd",
              "vpgatherdq", "vpgatherqd", "vpgatherqq", "vgatherdps", "vgatherdpd",
              "vgatherqps", "vgatherqpd"}
_PREFIXES = ("rep", "repz", "repnz", "lock", "notrack", "bnd", "data16", "cs", "ds")


def _instructions(disassembly: str) -> Iterable[tuple[str, str, str]]:
    """(function, mnemonic, operands) for each instruction of objdump -d output."""
    function = ""
    for line in disassembly.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            function = m.group(1)
            continue
        m = re.match(r"^\s*[0-9a-f]+:\s+(\S+)\s*(.*)$", line)
        if not m:
            continue
        op, args = m.group(1), m.group(2)
        while op in _PREFIXES and args:
            op, _, args = args.partition(" ")
        yield function, op, args


#: hand-written code named for the instruction set it uses (libjpeg-turbo's jsimd_*_sse2,
#: with its local labels as `name.label`): chosen at run time, not by the compiler
_NAMED_FOR_ISA = re.compile(r"_(mmx|sse\d*|ssse3|sse4_?[12]|avx\d*|avx512\w*)$")
#: NVIDIA's prebuilt static CUDA runtime, linked into GPU wheels, not compiled by TF
_PREBUILT = re.compile(r"^(cuda[A-Z]|cu[A-Z]|_?_cuda|_cudart|libcudart_static)")


def classify_x86(disassembly: str) -> dict[str, int]:
    """Count SIMD instructions by encoding: VEX (AVX) or legacy SSE, and AVX2/FMA/AVX-512.

    A compiler told `-mavx` encodes every SSE operation with VEX; without it, ordinary
    code uses legacy SSE and VEX appears only in hand-dispatched functions. Functions
    named for an instruction set (`isa_named`) and NVIDIA's prebuilt CUDA runtime
    (`prebuilt`) are counted apart."""
    c: collections.Counter[str] = collections.Counter()
    for function, op, args in _instructions(disassembly):
        if not re.search(r"%[xyz]mm\d", args):
            continue
        if _NAMED_FOR_ISA.search(function.split(".")[0]):
            c["isa_named"] += 1
            continue
        if _PREBUILT.match(function):
            c["prebuilt"] += 1
            continue
        c["simd"] += 1
        if "%zmm" in args or re.search(r"%k[0-7]\b", args):
            c["avx512"] += 1
        elif _FMA.match(op):
            c["fma"] += 1
        elif op in _AVX2_ONLY or ("%ymm" in args and _AVX2_INT_YMM.match(op)):
            c["avx2"] += 1
        elif op.startswith("v"):
            c["vex"] += 1
        else:
            c["legacy_sse"] += 1
    keys = ("simd", "vex", "legacy_sse", "avx2", "fma", "avx512", "isa_named", "prebuilt")
    return {k: c[k] for k in keys}


_LSE = re.compile(r"(ld(add|clr|eor|set|smax|smin|umax|umin)|casp?|swp)(a|l|al)?(b|h)?")
#: llvm-objdump decodes these only when told the features exist
_A64_FEATURES = "+v8.5a,+lse,+dotprod,+fullfp16,+rcpc,+sve,+sve2,+i8mm,+bf16,+crc,+crypto"


def classify_aarch64(disassembly: str) -> dict[str, int]:
    """Count instructions newer than ARMv8.0 outside the outline-atomics helpers.

    `-march=armv8-a` code may still carry LSE atomics inside `__aarch64_*` helpers, which
    choose at run time; anything else newer than ARMv8.0 would raise the baseline."""
    c: collections.Counter[str] = collections.Counter()
    for function, op, args in _instructions(disassembly):
        c["instructions"] += 1
        helper = function.startswith("__aarch64_")
        if _LSE.fullmatch(op):
            c["lse_in_helpers" if helper else "lse"] += 1
        elif op in ("sdot", "udot", "usdot", "sudot"):
            c["dotprod"] += 1
        elif re.search(r"\bz\d+\.", args) or op in ("ptrue", "whilelo", "whilelt"):
            c["sve"] += 1
        elif op.startswith("f") and re.search(r"\bh\d+\b", args) and not op.startswith(
                ("fmov", "fcvt")):
            c["fp16"] += 1
        elif op in ("ldapr", "ldaprb", "ldaprh"):
            c["rcpc"] += 1
    keys = ("instructions", "lse", "lse_in_helpers", "dotprod", "sve", "fp16", "rcpc")
    return {k: c[k] for k in keys}


def disassembler(arch: str) -> list[str] | None:
    if arch == "x86_64":
        tool = shutil.which("objdump")
        return [tool, "-d", "--no-show-raw-insn"] if tool else None
    tool = shutil.which("llvm-objdump")
    return [tool, "-d", "--no-show-raw-insn", f"--mattr={_A64_FEATURES}"] if tool else None


def cpu_probe(f: IndexFile, arch: str) -> dict[str, Any] | None:
    """Disassemble the first of PROBE_MEMBERS in `f` and classify its instructions."""
    argv = disassembler(arch)
    if argv is None:
        return None
    rf = RangeFile.over_http(f.url, f.size)
    with zipfile.ZipFile(rf) as zf:
        member = next((m for m in PROBE_MEMBERS if m in zf.namelist()), None)
        if member is None:
            return None
        data = zf.read(member)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "probe.so"
        path.write_bytes(data)
        out = subprocess.run([*argv, str(path)], capture_output=True, text=True, check=True,
                             timeout=600).stdout
    counts = classify_x86(out) if arch == "x86_64" else classify_aarch64(out)
    return {"member": member, "file": f.filename,
            "member_sha256": hashlib.sha256(data).hexdigest(), **counts}


def baseline_from_probe(arch: str, probe: dict[str, Any]) -> str:
    if arch == "x86_64":
        vex_share = probe["vex"] / max(1, probe["vex"] + probe["legacy_sse"])
        if vex_share >= 0.9 and not probe["avx512"]:
            return "avx" if probe["fma"] == 0 else "avx2"
        return "sse2" if vex_share < 0.1 else "unknown"
    newer = sum(probe[k] for k in ("lse", "dotprod", "sve", "fp16", "rcpc"))
    return "armv8-a" if newer == 0 else "unknown"


# -- one entry per (release, arch, package) ---------------------------------------------
@dataclass
class Entry:
    release: str
    arch: str
    package: str
    data: dict[str, Any] = field(default_factory=dict)


def _same(values: Iterable[Any], what: str, where: str) -> Any:
    distinct = {json.dumps(v, sort_keys=True) for v in values}
    if len(distinct) != 1:
        raise ValueError(f"{where}: the files disagree on {what}: {sorted(distinct)}")
    return json.loads(distinct.pop())


def _lower_bound(spec: str) -> str:
    for part in spec.split(","):
        if part.startswith(("==", ">=")):
            return part[2:]
    raise ValueError(f"no lower bound in {spec!r}")


def _pulled(reqs: list[str], prefix: str) -> tuple[str, str] | None:
    """(package, lower bound) of the requirement whose name starts with `prefix`."""
    for r in reqs:
        req = Requirement(r)
        if req.name.startswith(prefix):
            return req.name, _lower_bound(_spec(req))
    return None


def _minor(version: str) -> str:
    v = Version(version)
    return f"{v.major}.{v.minor}"


def _toolkit_driver(cuda: dict[str, Any], version: str) -> tuple[str, bool]:
    """(driver, exact) the toolkit `version` shipped with; X.Y alone reads X.Y.0."""
    table = cuda["toolkit_driver"]
    if version in table:
        return table[version], True
    return table[f"{_minor(version)}.0"], False


@dataclass
class _Facts:
    """What build_entry collects: the fields, which sources back each, and the marks."""

    data: dict[str, Any]
    fact_sources: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    unverified: list[str] = field(default_factory=list)

    def cite(self, source: str, *facts: str) -> None:
        self.fact_sources.update(dict.fromkeys(facts, source))


def build_entry(release: str, arch: str, package: str, facts: list[FileFacts],
                probe: dict[str, Any] | None, cuda: dict[str, Any], today: str) -> Entry:
    where = f"{package} {release} {arch}"
    facts = sorted(facts, key=lambda x: Version(x.python))
    meta = [(x.metadata, x.python) for x in facts]
    installs = _same([[r for r in plain_requirements(m["requires"], arch, py)
                       if r.startswith("tensorflow") and "==" in r and release in r]
                      for m, py in meta], "the tensorflow package it installs", where)
    info = _same([x.build_info for x in facts], "build_info.py", where)
    if info is None:
        kind = "shim" if installs else "unknown"
    else:
        kind = "gpu" if info.get("is_cuda_build") else "cpu"
    f = _Facts({"release": release, "arch": arch, "package": package, "kind": kind})
    if installs:
        f.data["installs"] = installs[0]
        f.notes.append("a shim: its facts are those of the wheel it installs")
        f.cite("pypi-wheel-files", "installs")
    requires_python = _same([m["requires_python"] for m, _ in meta], "Requires-Python", where)
    _platform_facts(f, facts, requires_python, where)
    if kind != "shim":
        _cpu_facts(f, probe)
    if info is not None:
        _build_info_facts(f, info)
    and_cuda = _same([extra_requirements(m["requires"], "and-cuda", arch, py)
                      for m, py in meta], "[and-cuda]", where)
    if and_cuda:
        _and_cuda_facts(f, and_cuda)
    if kind == "gpu":
        _driver_facts(f, cuda, where)
    if package == "tensorflow-aarch64":
        f.unverified.append("publisher: METADATA names Google (copied from TF's setup.py); "
                            "who uploads tensorflow-aarch64 is not stated, and `pip install "
                            "tensorflow` does not install it")
    f.data["read_on"] = today
    f.data["files"] = [{"name": x.file.filename, "sha256": x.file.sha256, "python": x.python}
                       for x in facts]
    f.data["sources"] = sorted({k for v in f.fact_sources.values() for k in v.split()})
    f.data["fact_sources"] = f.fact_sources
    if f.notes:
        f.data["notes"] = f.notes
    f.data["unverified"] = f.unverified
    return Entry(release, arch, package, f.data)


def _platform_facts(f: _Facts, facts: list[FileFacts], requires_python: str,
                    where: str) -> None:
    arch = f.data["arch"]
    platforms = _same([list(x.platforms) for x in facts], "platform tags", where)
    glibcs = {glibc_of(p) for p in platforms}
    if len(glibcs) != 1 or None in glibcs:
        raise ValueError(f"{where}: glibc floors {glibcs}")
    legacy = [p for p in platforms if re.match(r"manylinux(1|2010|2014)_", p)]
    f.data["pythons"] = [x.python for x in facts]
    f.data["requires_python"] = requires_python
    f.data["platform_tags"] = platforms
    f.data["manylinux"] = manylinux_name((legacy or platforms)[0], arch)
    f.data["glibc_floor"] = glibcs.pop()
    f.cite("pypi-wheel-files", "pythons", "glibc_floor")


def _cpu_facts(f: _Facts, probe: dict[str, Any] | None) -> None:
    arch = f.data["arch"]
    if probe is not None:
        f.data["cpu_baseline"] = baseline_from_probe(arch, probe)
        f.data["cpu_probe"] = probe
    else:
        f.data["cpu_baseline"] = "avx" if arch == "x86_64" else "armv8-a"
        f.unverified.append("cpu_baseline: not disassembled (no probe library or no "
                            "disassembler); taken from TF's release .bazelrc")
    f.cite("pypi-wheel-files tf-bazelrc-release", "cpu_baseline")
    if arch == "aarch64":
        f.unverified.append(
            "cpu_baseline: armv8-a is TF's linux_arm64 config (-march=armv8-a "
            "-mtune=generic); the probe library shows no newer instruction, but libraries "
            "that dispatch at run time (oneDNN, ACL, XNNPACK) may use newer ones on CPUs "
            "that have them")
    else:
        f.unverified.append(
            "cpu_baseline: AVX is read from one library's machine code and TF's "
            "release_cpu_linux config (--config=avx_linux: -mavx); AVX2/FMA are not "
            "required (none in the probe), AVX-512 paths are chosen at run time")


#: releases whose GPU wheel's CUDA fatbins were read entry by entry (the SASS and PTX arch
#: of each; tf-wheel-fatbins): the rest follow the same rules, UNVERIFIED
FATBINS_READ = frozenset({"2.20.0", "2.21.0", "2.22.0rc0"})


def cuda_targets(ccs: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(sass, ptx, sass_partial) of build_info's cuda_compute_capabilities.

    TF's CUDA rules compile "compute_XY" to SASS sm_XY *and* PTX (rules_ml_toolchain
    cuda_configure.bzl: --cuda-gpu-arch=sm_XY plus --cuda-include-ptx=sm_XY), "sm_XY" to SASS
    only. TF's MLIR-generated kernels take "compute_XY" as PTX only, so that SASS is the
    hand-written kernels' alone: sass_partial.
    """
    ptx = [c for c in ccs if c.startswith("compute_")]
    partial = ["sm_" + c[len("compute_"):] for c in ptx]
    sass = [c for c in ccs if c.startswith("sm_")]
    return sass + [s for s in partial if s not in sass], ptx, partial


def _sass_marks(f: _Facts) -> None:
    """Where sass and sass_partial come from when a compute_XY adds SASS."""
    partial = f.data["sass_partial"]
    if not partial:
        return
    read = f.data["release"] in FATBINS_READ
    extra = "tf-wheel-fatbins" if read else "tf-cuda-rules"
    f.cite(f"pypi-wheel-files {extra}", "sass", "sass_partial")
    ptx = ", ".join(f.data["ptx"])
    f.unverified.append(
        f"sass: {', '.join(partial)} from build_info's {ptx}: TF's CUDA rules compile "
        "compute_XY to SASS and PTX (tf-cuda-rules)"
        + ("; this wheel's fatbins were read by hand (tf-wheel-fatbins), not by this tool"
           if read else "; this wheel's fatbins were not read"))
    f.unverified.append(
        f"sass_partial: TF's MLIR-generated kernels carry only PTX for {ptx} ("
        + ("read in this wheel's fatbins)" if read else
           "as in the fatbins of the 2.20.0, 2.21.0 and 2.22.0rc0 wheels; this wheel's were "
           "not read)"))


def _build_info_facts(f: _Facts, info: dict[str, Any]) -> None:
    ccs = list(info.get("cuda_compute_capabilities") or [])
    f.data["sass"], f.data["ptx"], f.data["sass_partial"] = cuda_targets(ccs)
    if info.get("is_cuda_build"):
        f.data["build_cuda"] = str(info["cuda_version"])
        f.data["build_cudnn"] = str(info["cudnn_version"])
        f.data["build_tensorrt"] = bool(info.get("is_tensorrt_build"))
    if info.get("cpu_compiler"):
        f.data["cpu_compiler"] = str(info["cpu_compiler"])
    f.cite("pypi-wheel-files", "sass", "ptx", "sass_partial")
    _sass_marks(f)
    if f.data["kind"] == "gpu":
        f.cite("pypi-wheel-files", "build_cuda", "build_cudnn")


def _and_cuda_facts(f: _Facts, and_cuda: list[str]) -> None:
    f.data["and_cuda"] = and_cuda
    for key, prefix in (("and_cuda_cuda", "nvidia-cuda-runtime-cu"),
                        ("and_cuda_cudnn", "nvidia-cudnn-cu"), ("and_cuda_nccl", "nvidia-nccl-cu")):
        pulled = _pulled(and_cuda, prefix)
        if pulled:
            f.data[key] = pulled[1]
    f.cite("pypi-wheel-files", "and_cuda")
    if f.data["kind"] == "cpu":
        f.notes.append("[and-cuda] is declared, but build_info.py says this is not a CUDA "
                       "build: the extra installs CUDA libraries this wheel does not use")
    if any(">=" in r and "<" in r for r in and_cuda):
        f.unverified.append(
            "and_cuda: ranges, not pins; pip installs the newest matching CUDA components, "
            "whose own toolkit driver may be newer than driver_full (minor-version "
            "compatibility still runs them from driver_min)")


def _driver_facts(f: _Facts, cuda: dict[str, Any], where: str) -> None:
    build_cuda = f.data["build_cuda"]
    major = Version(build_cuda).major
    pulled = f.data.get("and_cuda_cuda")
    if pulled and Version(pulled).major != major:
        raise ValueError(f"{where}: [and-cuda] CUDA {pulled} vs build {build_cuda}")
    floors = {floor["cuda_major"]: floor["linux"] for floor in cuda["driver_floor"]}
    f.data["driver_min"] = floors[major]
    full_cuda = _minor(pulled or build_cuda)
    f.data["driver_full"], _ = _toolkit_driver(cuda, f"{full_cuda}.0")
    f.data["driver_ptx"], exact = _toolkit_driver(cuda, build_cuda)
    f.cite("cuda-compat", "driver_min")
    f.cite("cuda-release-notes", "driver_full", "driver_ptx")
    f.unverified.append(
        f"driver_min: not in the wheel; NVIDIA's minor-version compatibility floor for "
        f"CUDA {major} (cuda.toml driver_floor)")
    f.unverified.append(
        f"driver_full: not in the wheel; the driver CUDA {full_cuda}.0 shipped with (cuda.toml "
        "toolkit_driver; later updates of that minor release shipped slightly newer ones)")
    f.unverified.append(
        "driver_ptx: not in the wheel; the driver of the toolkit the wheel was built with"
        + ("" if exact else f" ({build_cuda} read as {build_cuda}.0)")
        + " (cuda.toml toolkit_driver); the device compiler (nvcc or clang) may emit an "
        "older PTX version, so this is an upper bound of what PTX JIT needs")


# -- TOML out -----------------------------------------------------------------------------
def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r}")


def _key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def to_toml(entries: list[Entry], header: str) -> str:
    lines = [header.rstrip(), "schema = 1", ""]
    for e in entries:
        lines.append("[[wheel]]")
        for k, v in e.data.items():
            if isinstance(v, list) and v and (isinstance(v[0], dict) or len(_toml_value(v)) > 90):
                lines.append(f"{k} = [")
                lines.extend(f"  {_toml_value(item)}," for item in v)
                lines.append("]")
            else:
                lines.append(f"{k} = {_toml_value(v)}")
        lines.append("")
    return "\n".join(lines)


HEADER = """\
# What each official TensorFlow Linux wheel needs: one [[wheel]] per (release, arch, package).
# Generated by tests/tools/official_wheels.py from the files on PyPI (read with HTTP Range
# requests: WHEEL, METADATA, build_info.py, and one kernel library disassembled); review the
# diff, do not edit by hand. Every file read is listed with its sha256 and the date read.
#
# kind: gpu (build_info is_cuda_build), cpu, or shim (a small wheel that installs `installs`);
# installed_by: the shim that installs this wheel under the `tensorflow` name;
# same_build_as: another package of the release whose probe library is byte-identical.
# pythons: the cpXY tags of the files; platform_tags/manylinux/glibc_floor: the file names.
# sass/ptx: build_info.py cuda_compute_capabilities as TF's CUDA rules compile them (sm_XX:
#   SASS cubins; compute_XX: SASS cubins and PTX); sass_partial: the SASS of sass that TF's
#   MLIR-generated kernels lack (they carry only the PTX of a compute_XX): a GPU whose cubin is
#   one of these runs the hand-written kernels from it and JIT-compiles the generated ones.
# build_cuda/build_cudnn/build_tensorrt/cpu_compiler: what the wheel was built with
#   (build_info.py).
# and_cuda: Requires-Dist with extra == "and-cuda" on Linux/arch; and_cuda_cuda/_cudnn/_nccl
#   their lower bounds (nvidia-cuda-runtime, nvidia-cudnn, nvidia-nccl).
# driver_min: the Linux driver floor of minor-version compatibility for the CUDA major;
#   driver_full: the driver the CUDA minor release [and-cuda] pulls (else build_cuda) shipped
#   with (full compatibility); driver_ptx: the driver of the toolkit the wheel was built
#   with, needed to JIT its PTX on a GPU without SASS (cuda.toml, NVIDIA's tables).
# cpu_baseline: avx | armv8-a, from cpu_probe (instruction counts of one kernel library)
#   and TF's release .bazelrc.
# fact_sources: which sources.toml keys back which fact; a fact with a source other than
#   pypi-wheel-files was not (only) read from the wheel and has an `unverified` line.
# notes: facts worth knowing that the fields do not say."""


def generate(releases: list[str], arches: Iterable[str], packages: Iterable[str],
             *, probe: bool = True, log: Callable[[str], None] = print) -> list[Entry]:
    with (KNOWLEDGE / "cuda.toml").open("rb") as fh:
        cuda = tomllib.load(fh)
    today = datetime.date.today().isoformat()
    entries = []
    for package in packages:
        files = index_files(package)
        for release in releases:
            for arch in arches:
                mine = [f for f in files if f.version == release
                        and all(t.platform.endswith("_" + arch) and "linux" in t.platform
                                for t in f.tags)]
                if not mine:
                    continue
                facts = [read_file_facts(f, arch) for f in mine]
                for x in facts:
                    log(f"{x.file.filename}: {x.members} members, {x.fetched} bytes read")
                sample = next((x for x in facts if x.build_info is not None), None)
                found = cpu_probe(sample.file, arch) if probe and sample else None
                entries.append(build_entry(release, arch, package, facts, found, cuda,
                                           today))
    link_entries(entries)
    order = {r: i for i, r in enumerate(releases)}
    entries.sort(key=lambda e: (order[e.release], ARCHES.index(e.arch),
                                PACKAGES.index(e.package)))
    return entries


def _insert_after(data: dict[str, Any], after: str, key: str, value: Any) -> dict[str, Any]:
    items = list(data.items())
    at = [k for k, _ in items].index(after) + 1
    return dict([*items[:at], (key, value), *items[at:]])


def link_entries(entries: list[Entry]) -> None:
    """Cross-entry facts: `installed_by` (the shim that installs a wheel) and
    `same_build_as` (another package of the release whose probe library is byte-identical)."""
    probes = {(e.release, e.arch, e.package): e.data["cpu_probe"]["member_sha256"]
              for e in entries if "cpu_probe" in e.data}
    for e in entries:
        mine = probes.get((e.release, e.arch, e.package))
        twins = [p for (r, a, p), h in probes.items()
                 if (r, a) == (e.release, e.arch) and p != e.package and h == mine]
        if mine and twins and e.package == "tensorflow-aarch64":
            e.data = _insert_after(e.data, "kind", "same_build_as", twins[0])
            e.data["fact_sources"]["same_build_as"] = "pypi-wheel-files"
    for shim in entries:
        target = shim.data.get("installs")
        if not target:
            continue
        name = Requirement(target).name
        for e in entries:
            if (e.release, e.arch, e.package) == (shim.release, shim.arch, name):
                e.data = _insert_after(e.data, "kind", "installed_by", shim.package)
                e.data["fact_sources"]["installed_by"] = "pypi-wheel-files"
                if name == "tensorflow-cpu-aws":
                    e.data["fact_sources"]["publisher"] = "tf-pip-md"
                    e.data["sources"] = sorted({*e.data["sources"], "tf-pip-md"})
                    e.data["unverified"].append(
                        "publisher: AWS builds it, per TF's pip docs; METADATA names Google "
                        "(copied from TF's setup.py)")


def knowledge_releases() -> list[str]:
    with (KNOWLEDGE / "releases.toml").open("rb") as fh:
        data = tomllib.load(fh)
    return [r["version"] for r in data["release"] if r["version"] != "master"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--release", action="append", help="only this release (repeatable)")
    ap.add_argument("--arch", action="append", choices=ARCHES)
    ap.add_argument("--package", action="append", choices=PACKAGES)
    ap.add_argument("--no-probe", action="store_true", help="skip the disassembly")
    ap.add_argument("-o", "--output", type=Path, help="write the TOML here (else stdout)")
    args = ap.parse_args(argv)
    entries = generate(args.release or knowledge_releases(), args.arch or ARCHES,
                       args.package or PACKAGES, probe=not args.no_probe,
                       log=lambda s: print(s, file=sys.stderr))
    text = to_toml(entries, HEADER)
    tomllib.loads(text)  # what we write must read back
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
