"""What a wheelhouse wheel carries about its build, and its PEP 440 local label.

    prov = provenance_of_record(record_folder, wheel)   # from the build record
    prov.label            "cpu", "cu128.sm86.compute120"
    prov.version          "2.21.0+cu128.sm86.compute120"
    prov.to_dict()        what .dist-info/tfwizard-provenance.json holds

The label names the target: the backend, CUDA's major and minor, and every compute
capability as TF's CUDA rules built it (`sm86`: SASS only; `compute120`: SASS and PTX,
cc.py), or the AMD GPU targets; an optional extra segment (the recipe's `[wheelhouse]
label`) tells two builds of one target apart. The same release for different targets then
lives side by side in one index, and pip tells the versions apart.

The provenance holds the recipe's name and sha256, the backend, CUDA/cuDNN, the compute
capabilities, the Python and platform tags and the glibc they need, the CPU features the
compiler flags require, the source (URL, ref, commit), the build id and date, the image,
and the wheel's check against its recipe (wheelcheck). A wheel without it can still be
judged from its label alone (`from_label`), with less.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from packaging.utils import parse_wheel_filename
from packaging.version import InvalidVersion, Version

from ... import __version__
from .. import cc as ccmod
from ..i18n import _
from ..install.wheelcheck import Expected, tag_glibc
from ..install.wheelfacts import WheelFacts
from ..knowledge import load_knowledge
from ..secrets import redact
from . import WheelhouseError

#: the file in the wheel's .dist-info folder
PROVENANCE = "tfwizard-provenance.json"
SCHEMA = 1
_SEGMENT = re.compile(r"^[a-z0-9]{1,32}$")

#: x86-64 microarchitecture levels (the x86-64 psABI; GCC's -march=x86-64-vN) as the CPU
#: feature names a host profile lists (core/detect: /proc/cpuinfo flags)
_X86_LEVELS = {
    "x86-64": (),
    "x86-64-v2": ("sse4_1", "sse4_2"),
    "x86-64-v3": ("sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c"),
    "x86-64-v4": ("sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw",
                  "avx512cd", "avx512dq", "avx512vl"),
}
#: single-feature flags: -mavx2 needs avx2
_FEATURE_FLAGS = {"-mavx": "avx", "-mavx2": "avx2", "-mfma": "fma", "-mf16c": "f16c",
                  "-msse4.1": "sse4_1", "-msse4.2": "sse4_2", "-mavx512f": "avx512f",
                  "-mavx512bw": "avx512bw", "-mavx512cd": "avx512cd",
                  "-mavx512dq": "avx512dq", "-mavx512vl": "avx512vl"}


@dataclass(frozen=True)
class Provenance:
    """The build facts a wheelhouse wheel carries (tfwizard-provenance.json)."""

    name: str  # the distribution, as METADATA says it
    version: str  # with the label: "2.21.0+cu128.sm120"
    base_version: str  # as built: "2.21.0"
    label: str
    backend: str  # cpu | cuda | rocm
    cuda: str = ""  # "12.8.1"
    cudnn: str = ""
    #: what TF's CUDA rules built, in TF's tokens: "sm_86" SASS, "compute_90" SASS + PTX
    compute_capabilities: tuple[str, ...] = ()
    amdgpu_targets: tuple[str, ...] = ()
    python: str = ""  # "3.11"
    tags: tuple[str, ...] = ()  # "cp311-cp311-linux_x86_64"
    glibc: str = ""  # the oldest glibc it runs on ("" unknown)
    glibc_source: str = ""  # words: where `glibc` comes from
    cpu_features: tuple[str, ...] = ()  # what the compiler flags require of the CPU
    cpu_flags: tuple[str, ...] = ()  # those flags, as given
    cpu_native: bool = False  # -march=native / -mcpu=native: the build host's CPU
    recipe_name: str = ""
    recipe_sha256: str = ""
    source: dict[str, str] = field(default_factory=dict)  # kind, url, ref, commit
    build_id: str = ""
    build_date: str = ""
    image: str = ""
    image_id: str = ""
    wheel_check: dict[str, Any] = field(default_factory=dict)
    original_wheel: str = ""
    original_sha256: str = ""
    tfwizard: str = __version__
    schema: int = SCHEMA
    #: True when these facts come from the version label only (no provenance file read)
    from_label_only: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The provenance as JSON data (lists for tuples)."""
        data = asdict(self)
        data.pop("from_label_only")
        return data

    def to_json(self) -> str:
        """The file's text."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Provenance:
        """The provenance of a file's JSON (unknown keys ignored); WheelhouseError when it
        is not one."""
        if not isinstance(data, dict) or not data.get("version") or not data.get("backend"):
            raise WheelhouseError(_("not a tfwizard provenance file (no version or backend)"))
        kw: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in data or f.name == "from_label_only":
                continue
            value = data[f.name]
            kw[f.name] = tuple(str(v) for v in value) if isinstance(value, list) else value
        return cls(**kw)

    def expected(self) -> Expected:
        """What the wheel must say of itself (wheelcheck.compare), from these facts."""
        return Expected(name=self.name, version=self.base_version,
                        version_source=_("the wheel's provenance"), python=self.python,
                        glibc=self.glibc if self.glibc_source == "tag" else "",
                        backend=self.backend, cuda_version=self.cuda,
                        cudnn_version=self.cudnn,
                        compute_capabilities=",".join(self.compute_capabilities))

    def targets(self) -> list[ccmod.Target]:
        """The compute capabilities as cc.Targets."""
        return [t for t in (ccmod.parse_target(x) for x in self.compute_capabilities) if t]

    def describe(self) -> str:
        """One line: the label, the recipe and the build."""
        return _("{version}: recipe {recipe} (sha256 {sha}), build {build} of {date}").format(
            version=self.version, recipe=self.recipe_name or "?",
            sha=self.recipe_sha256[:12] or "?", build=self.build_id or "?",
            date=self.build_date or "?")


# -- the label --------------------------------------------------------------------------------


def label_of(backend: str, *, cuda: str = "", tokens: tuple[str, ...] = (),
             amdgpu_targets: tuple[str, ...] = (), extra: str = "") -> str:
    """The local label of a build for this target: "cpu", "cu128.sm86.compute120",
    "rocm.gfx90a"; `extra` (letters and digits) is appended."""
    if backend == "cuda":
        parts = [_cuda_segment(cuda)] + [t.replace("_", "") for t in tokens]
    elif backend == "rocm":
        parts = ["rocm"] + [re.sub(r"[^a-z0-9]", "", t.lower()) for t in amdgpu_targets]
    else:
        parts = ["cpu"]
    if extra:
        parts.append(extra)
    bad = [p for p in parts if not _SEGMENT.match(p)]
    if bad:
        raise WheelhouseError(
            _("cannot label the wheel: {segment!r} is not a PEP 440 local label segment").format(
                segment=bad[0]),
            _("A segment has 1 to 32 lower-case letters and digits (wheelhouse.label)."))
    return ".".join(parts)


def _cuda_segment(cuda: str) -> str:
    try:
        v = Version(cuda)
    except InvalidVersion:
        return "cu"
    release = v.release + (0,)
    return f"cu{release[0]}{release[1]}"


def labelled_version(version: str, label: str) -> str:
    """`version` with `label` as its local part (joined to a local part it already has)."""
    try:
        v = Version(version)
    except InvalidVersion:
        raise WheelhouseError(_("the wheel's version {version!r} is not a PEP 440 version").format(
            version=version)) from None
    local = f"{v.local}.{label}" if v.local else label
    return str(Version(f"{v.public}+{local}"))


def from_label(filename: str) -> Provenance | None:
    """What a wheel's file name says when its provenance cannot be read: the backend, the
    CUDA minor and the compute capabilities of a tfwizard label; None for any other name."""
    try:
        name, version, _build, tags = parse_wheel_filename(filename)
    except ValueError:
        return None
    local = (version.local or "").split(".")
    backend, cuda = "", ""
    tokens: tuple[str, ...] = ()
    amd: tuple[str, ...] = ()
    m = re.fullmatch(r"cu(\d{2,3})", local[0])
    if local[0] in ("cpu", "rocm"):
        backend = local[0]
        amd = tuple(local[1:]) if backend == "rocm" else ()
    elif m is not None:
        backend, digits = "cuda", m.group(1)
        cuda = f"{digits[:-1]}.{digits[-1]}"
        tokens = tuple(re.sub(r"^(sm|compute)(\d)", r"\1_\2", s) for s in local[1:]
                       if re.fullmatch(r"(sm|compute)\d{2,3}[af]?", s))
    if not backend:
        return None
    return Provenance(name=str(name), version=str(version), base_version=version.public,
                      label=version.local or "", backend=backend, cuda=cuda,
                      compute_capabilities=tokens, amdgpu_targets=amd,
                      tags=tuple(sorted(str(t) for t in tags)), from_label_only=True)


# -- from a build record ----------------------------------------------------------------------


def cpu_requirements(flags: list[str]) -> tuple[tuple[str, ...], bool]:
    """(the CPU features compiler flags require, whether they target the build host's own
    CPU: -march=native / -mcpu=native)."""
    features: list[str] = []
    native = False
    for flag in flags:
        if flag in ("-march=native", "-mcpu=native", "-mtune=native"):
            native = native or not flag.startswith("-mtune")
        elif flag.startswith("-march="):
            features += _X86_LEVELS.get(flag.split("=", 1)[1], ())
        elif flag in _FEATURE_FLAGS:
            features.append(_FEATURE_FLAGS[flag])
    return tuple(sorted(set(features))), native


def _compiler_flags(plan: dict[str, Any]) -> list[str]:
    """configure's CC_OPT_FLAGS and every --copt of the plan's Bazel flags."""
    out = str((plan.get("configure_env") or {}).get("CC_OPT_FLAGS", "")).split()
    for item in plan.get("bazel_flags") or []:
        text = str(item.get("flag", "") if isinstance(item, dict) else item)
        if text.startswith(("--copt=", "--cxxopt=")):
            out.append(text.split("=", 1)[1])
    return out


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise WheelhouseError(_("cannot read {path}: {error}").format(path=path, error=exc),
                              _("Is it the record folder of a build that finished?")) from None
    return data if isinstance(data, dict) else {}


def _glibc(plan: dict[str, Any], tags: tuple[str, ...]) -> tuple[str, str]:
    """The oldest glibc the wheel runs on: its manylinux tag's, else (a plain linux tag)
    the release's manylinux floor when it was built in the release's own image."""
    floors = [g for g in (tag_glibc(t.split("-")[2]) for t in tags if t.count("-") == 2) if g]
    if floors:
        return max(floors, key=Version), "tag"
    release = load_knowledge().release(str(plan.get("release", "")))
    if release is not None and plan.get("image") == release.image_for(str(plan.get("python"))):
        return release.glibc_floor, "image"
    return "", ""


def build_date(build_id: str) -> str:
    """The date in a build id (20250102-130405-a1b2c3 -> 2025-01-02T13:04:05)."""
    try:
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.strptime(build_id[:15], "%Y%m%d-%H%M%S"))
    except ValueError:
        return ""


def provenance_of_record(record: Path, facts: WheelFacts, wheel_sha256: str, *,
                         wheel_name: str, extra_label: str = "") -> Provenance:
    """The provenance of the wheel a build record made (`facts`: read from that wheel).
    WheelhouseError when the build did not succeed or its wheel failed its check."""
    plan = _read_json(record / "plan.json")
    result = _read_json(record / "result.json")
    check = _read_json(record / "wheel-check.json") if (record / "wheel-check.json").is_file() \
        else dict(result.get("wheel_check") or {})
    if result.get("status") != "succeeded" or not check.get("ok"):
        raise WheelhouseError(
            _("build {build} did not hand out a checked wheel ({status}; {check})").format(
                build=record.name, status=result.get("status", "?"),
                check=check.get("summary") or _("no wheel check")),
            _("Only a wheel that passed its check against the recipe is published."))
    expected = Expected.from_dict(dict(check.get("expected") or {}))
    backend = str(plan.get("backend") or expected.backend or "cpu")
    tokens = tuple(ccmod.tf_tokens(ccmod.normalize(t) for t in re.split(
        r"[,\s]+", expected.compute_capabilities) if t)) if backend == "cuda" else ()
    amd = tuple(str(t) for t in plan.get("amdgpu_targets") or ()) if backend == "rocm" else ()
    label = label_of(backend, cuda=expected.cuda_version, tokens=tokens, amdgpu_targets=amd,
                     extra=extra_label)
    glibc, glibc_source = _glibc(plan, facts.tags)
    flags = _compiler_flags(plan)
    features, native = cpu_requirements(flags)
    commit = str((plan.get("source_facts") or {}).get("commit") or "")
    release = load_knowledge().release(str(plan.get("release", "")))
    if not commit and plan.get("source_kind") == "release" and release is not None:
        commit = release.tag_commit  # the tag's commit, as the knowledge base has it
    recipe_path = record / "recipe.toml"
    recipe_sha = hashlib.sha256(recipe_path.read_bytes()).hexdigest() \
        if recipe_path.is_file() else ""
    return Provenance(
        name=facts.name, version=labelled_version(facts.version, label),
        base_version=facts.version, label=label, backend=backend,
        cuda=expected.cuda_version, cudnn=expected.cudnn_version,
        compute_capabilities=tokens, amdgpu_targets=amd,
        python=str(plan.get("python") or expected.python), tags=tuple(sorted(facts.tags)),
        glibc=glibc, glibc_source=glibc_source, cpu_features=features,
        cpu_flags=tuple(flags), cpu_native=native,
        recipe_name=str(plan.get("recipe_name", "")), recipe_sha256=recipe_sha,
        source={"kind": str(plan.get("source_kind", "")),
                "url": redact(str(plan.get("git_url", ""))),
                "ref": str(plan.get("git_ref", "")), "commit": commit},
        build_id=record.name, build_date=build_date(record.name),
        image=str(plan.get("image", "")), image_id=str(plan.get("image_id", "")),
        wheel_check={k: check.get(k) for k in ("ok", "summary", "expected", "facts")},
        original_wheel=wheel_name, original_sha256=wheel_sha256)


# -- what verify shows -------------------------------------------------------------------------


def installed_check(probe: dict[str, Any]) -> tuple[str, str, bool, str] | None:
    """`verify`'s check of a wheelhouse build (a probe result whose TensorFlow carries a
    provenance): which build it is, and its own build facts held against that provenance
    (wheelcheck.compare); None for a TensorFlow that is not from a wheelhouse."""
    from ..install.wheelcheck import Found, compare

    data = probe.get("provenance")
    tf = probe.get("tensorflow")
    if not data or tf is None:
        return None
    name = _("installed from the wheelhouse")
    try:
        prov = Provenance.from_dict(data)
    except WheelhouseError as exc:
        return ("fact:wheelhouse", name, False, exc.message)
    found = Found(version=str(tf.get("version") or ""),
                  build_info=dict(probe.get("build_info") or {}) or None)
    check = compare(prov.expected(), found)
    return ("fact:wheelhouse", name, check.ok, f"{prov.describe()}; {check.summary()}")


def installed_line(probe: dict[str, Any], record: dict[str, Any] | None = None) -> str:
    """The report's line naming the wheelhouse build installed ("" when none); with the
    install record of that interpreter (fetch.install_record_of), whence and when it came,
    or that a different build was installed since."""
    data = probe.get("provenance")
    if not data:
        return ""
    try:
        prov = Provenance.from_dict(data)
    except WheelhouseError as exc:
        return exc.message
    line = prov.describe()
    if record is None:
        return line
    recorded = (record.get("provenance") or {}).get("build_id", "")
    if recorded != prov.build_id:
        return line + "; " + _("the install record {id} names build {build}: TensorFlow was "
                               "replaced since").format(id=record.get("id", "?"),
                                                        build=recorded or "?")
    return line + "; " + _("installed from {url} on {time} (install record {id})").format(
        url=record.get("wheelhouse", "?"), time=record.get("time", "?"),
        id=record.get("id", "?"))
