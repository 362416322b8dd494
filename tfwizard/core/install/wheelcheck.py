"""A wheel held against its recipe: what the plan promised, what the wheel says, each fact.

    expected = expected_of(plan, source_version="2.21.0", glibc_floor="2.27")
    check = compare(expected, Found.of_wheel(read_wheel_facts(path)))
    check.ok, check.mismatches(), check.to_dict()   # the record's wheel-check.json

The build runs this on the wheel it made before it reports a success (build/wheelgate.py);
`verify` runs `compare` on what the installed TensorFlow says (its version and
`tf.sysconfig.get_build_info()`) against the expectation the build kept, so both hold the
same facts the same way. A fact the wheel does not record (2.22's build_info lists no CUDA
version or compute capabilities; a plain `linux_x86_64` tag promises no glibc) is "not
recorded", never a mismatch.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from .. import cc as ccmod
from ..i18n import _
from .wheelfacts import BUILD_INFO, WheelFacts


class PlannedWheel(Protocol):
    """What a wheel is held against, as a build plan (building.plan.plan.BuildPlan) says it;
    a protocol so that install does not depend on building."""

    release: str
    backend: str
    python: str
    source_kind: str
    configure_env: dict[str, str]
    wheel_name: str


Verdict = Literal["match", "mismatch", "not recorded"]
#: the record's file with the comparison (and the expectation `verify` holds TF against)
RECORD_FILE = "wheel-check.json"
_MANYLINUX = {"manylinux1": "2.5", "manylinux2010": "2.12", "manylinux2014": "2.17"}


@dataclass(frozen=True)
class Expected:
    """What a plan promises of its wheel ("" where it promises nothing)."""

    name: str
    version: str
    version_source: str  # words: where the version comes from
    python: str  # "3.11"
    glibc: str  # the release's manylinux floor, "" unknown
    backend: str  # cpu | cuda | rocm
    cuda_version: str = ""
    cudnn_version: str = ""
    compute_capabilities: str = ""  # as configure got them: "sm_86,compute_90"

    def to_dict(self) -> dict[str, str]:
        """The expectation as JSON data."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Expected:
        """The expectation a record keeps (unknown keys ignored)."""
        names = cls.__dataclass_fields__
        return cls(**{k: str(v) for k, v in data.items() if k in names})


@dataclass(frozen=True)
class Found:
    """What a wheel, or an installed TensorFlow, says of itself ("" / None: not said)."""

    name: str = ""
    version: str = ""
    tags: tuple[str, ...] = ()
    build_info: dict[str, Any] | None = None

    @classmethod
    def of_wheel(cls, facts: WheelFacts) -> Found:
        """A wheel file's facts."""
        return cls(facts.name, facts.version, facts.tags, facts.build_info)


@dataclass(frozen=True)
class FactCheck:
    """One fact: the plan's value, the wheel's, the verdict, and where the wheel says it."""

    fact: str
    expected: str
    found: str
    verdict: Verdict
    where: str = ""


@dataclass
class WheelCheck:
    """Every fact of one wheel against its plan."""

    wheel: str
    expected: Expected
    rows: list[FactCheck] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No fact differs (facts not recorded do not count)."""
        return not self.mismatches()

    def mismatches(self) -> list[FactCheck]:
        """The facts that differ."""
        return [r for r in self.rows if r.verdict == "mismatch"]

    def difference(self) -> str:
        """The facts that differ, in one line ("" when none)."""
        return "; ".join(_("{fact}: the wheel says {found}, the recipe {expected}").format(
            fact=r.fact, found=r.found or "-", expected=r.expected) for r in self.mismatches())

    def summary(self) -> str:
        """One line for the build's log and report."""
        if not self.ok:
            return _("wheel check FAILED: {difference}").format(difference=self.difference())
        matched = [f"{r.fact} {r.found}" for r in self.rows if r.verdict == "match"]
        unrecorded = [r.fact for r in self.rows if r.verdict == "not recorded"]
        text = _("wheel check passed: {facts}").format(facts=", ".join(matched))
        if unrecorded:
            text += " " + _("(not recorded in the wheel: {facts})").format(
                facts=", ".join(unrecorded))
        return text

    def to_dict(self) -> dict[str, Any]:
        """The comparison as JSON data (wheel-check.json)."""
        return {"wheel": self.wheel, "ok": self.ok, "summary": self.summary(),
                "expected": self.expected.to_dict(), "facts": [asdict(r) for r in self.rows]}

    def write(self, folder: Path) -> Path:
        """Write wheel-check.json into a build record folder; its path."""
        path = folder / RECORD_FILE
        path.write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")
        return path


def recorded_expectation(record: Path) -> Expected | None:
    """The expectation a build record's wheel-check.json keeps (None: none there)."""
    try:
        data = json.loads((record / RECORD_FILE).read_text("utf-8"))
        return Expected.from_dict(data["expected"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def version_from_source(plan: PlannedWheel) -> bool:
    """Whether the wheel's version is the one its source says (a ref, a checkout, master),
    not the release asked for."""
    return not (plan.source_kind == "release" and _is_version(plan.release))


def expected_of(plan: PlannedWheel, *, source_version: str | None = None,
                glibc_floor: str = "") -> Expected:
    """What `plan`'s wheel must say: the release asked for (a ref or a checkout: the
    version its source says, `source_version`), the wheel name and Python, the release's
    glibc floor, and the CUDA answers configure got."""
    if not version_from_source(plan):
        version, source = plan.release, _("the release asked for")
    elif source_version:
        version, source = source_version, _("the version the source says")
    else:
        version, source = "", _("not known (the source says no version)")
    env = plan.configure_env
    return Expected(
        name=plan.wheel_name, version=version, version_source=source, python=plan.python,
        glibc=glibc_floor, backend=plan.backend,
        cuda_version=env.get("HERMETIC_CUDA_VERSION") or env.get("TF_CUDA_VERSION", ""),
        cudnn_version=env.get("HERMETIC_CUDNN_VERSION") or env.get("TF_CUDNN_VERSION", ""),
        compute_capabilities=(env.get("HERMETIC_CUDA_COMPUTE_CAPABILITIES")
                              or env.get("TF_CUDA_COMPUTE_CAPABILITIES", ""))
        if plan.backend == "cuda" else "")


def compare(expected: Expected, found: Found, wheel: str = "") -> WheelCheck:
    """Every fact of `found` held against `expected`."""
    check = WheelCheck(wheel, expected)
    rows = check.rows
    if found.name:
        rows.append(_row("name", expected.name, found.name, "METADATA",
                         canonicalize_name(expected.name) == canonicalize_name(found.name)))
    rows.append(_version_row(expected, found.version))
    if found.tags:
        rows.append(_python_row(expected.python, found.tags))
        rows.append(_glibc_row(expected.glibc, found.tags))
    rows.extend(_build_info_rows(expected, found.build_info))
    return check


def _row(fact: str, expected: str, found: str, where: str, same: bool | None) -> FactCheck:
    verdict: Verdict = "not recorded" if same is None else ("match" if same else "mismatch")
    return FactCheck(fact, expected, found, verdict, where)


def _is_version(text: str) -> bool:
    try:
        Version(text)
    except InvalidVersion:
        return False
    return True


def _version_row(expected: Expected, found: str) -> FactCheck:
    """The release, patch level and pre-release included; a build's local, dev or post
    suffix (TF's wheel version suffixes: `ML_WHEEL_TYPE`) does not make another release."""
    if not expected.version or not found:
        return _row("version", expected.version, found, "METADATA", None)
    try:
        want, got = Version(expected.version), Version(found)
    except InvalidVersion:
        return _row("version", expected.version, found, "METADATA", False)
    same = (want.release + (0,) * 3)[:3] == (got.release + (0,) * 3)[:3] and want.pre == got.pre
    return _row("version", expected.version, found, "METADATA", same)


def _python_row(python: str, tags: tuple[str, ...]) -> FactCheck:
    want = "cp" + python.replace(".", "")
    interpreters = sorted({t.split("-")[0] for t in tags if t.count("-") == 2})
    return _row("python", want, ",".join(interpreters), "WHEEL", want in interpreters)


def _glibc_row(glibc: str, tags: tuple[str, ...]) -> FactCheck:
    """A manylinux tag's glibc must not be newer than the release's wheels need; a plain
    linux_* tag promises none."""
    platforms = sorted({t.split("-")[2] for t in tags if t.count("-") == 2})
    floors = [tag_glibc(p) for p in platforms]
    known = [f for f in floors if f]
    found = ",".join(platforms)
    if not known or not glibc:
        return _row("glibc", glibc, found, "WHEEL", None)
    newest = max(known, key=lambda v: Version(v))
    return _row("glibc", glibc, newest, "WHEEL", Version(newest) <= Version(glibc))


def tag_glibc(platform: str) -> str:
    """The glibc a manylinux platform tag promises ("manylinux_2_27_x86_64" -> "2.27",
    "manylinux2014_x86_64" -> "2.17"); "" for a tag that promises none (linux_x86_64)."""
    m = re.match(r"manylinux_(\d+)_(\d+)_", platform)
    if m:
        return f"{m.group(1)}.{m.group(2)}"
    return next((v for k, v in _MANYLINUX.items() if platform.startswith(k + "_")), "")


def _build_info_rows(expected: Expected, info: dict[str, Any] | None) -> list[FactCheck]:
    """TensorFlow's own build facts (build_info.py): backend flags always, CUDA's where
    the plan builds CUDA; a key the release does not write is not recorded."""
    info = info if info is not None else {}
    rows = [_flag_row("is_cuda_build", expected.backend == "cuda", info),
            _flag_row("is_rocm_build", expected.backend == "rocm", info)]
    if expected.backend != "cuda":
        return rows
    for key, want in (("cuda_version", expected.cuda_version),
                      ("cudnn_version", expected.cudnn_version)):
        got = str(info.get(key) or "")
        rows.append(_row(key, want, got, BUILD_INFO,
                         _same_prefix(want, got) if want and got else None))
    raw = info.get("cuda_compute_capabilities")
    got_ccs = [str(t) for t in (re.split(r"[,\s]+", raw) if isinstance(raw, str) else raw or [])
               if str(t)]
    want_ccs = [t for t in re.split(r"[,\s]+", expected.compute_capabilities) if t]
    rows.append(_row("cuda_compute_capabilities", ",".join(want_ccs), ",".join(got_ccs),
                     BUILD_INFO, _same_ccs(want_ccs, got_ccs) if want_ccs and got_ccs
                     else None))
    return rows


def _flag_row(key: str, want: bool, info: dict[str, Any]) -> FactCheck:
    if key not in info:
        return _row(key, str(want), "", BUILD_INFO, None)
    return _row(key, str(want), str(info[key]), BUILD_INFO, bool(info[key]) == want)


def _same_prefix(want: str, got: str) -> bool:
    """Versions the same as far as both go: cuDNN "9.3.0" and build_info's "9" agree, CUDA
    "12.5.1" and "12.8.0" do not."""
    a, b = want.split("."), got.split(".")
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def _same_ccs(want: list[str], got: list[str]) -> bool:
    """The same compute capabilities: the same architectures, and where both sides say
    sm_ or compute_ for one, the same kinds (a bare "8.6" is whatever TF makes of it)."""
    def kinds(tokens: list[str]) -> dict[tuple[int, int, str], set[str]] | None:
        out: dict[tuple[int, int, str], set[str]] = {}
        for t in tokens:
            target = ccmod.parse_target(t)
            if target is None:
                return None
            kind = t.split("_")[0] if "_" in t else ""
            out.setdefault((target.major, target.minor, target.suffix), set()).add(kind)
        return out

    a, b = kinds(want), kinds(got)
    if a is None or b is None:
        return [t.strip() for t in want] == [t.strip() for t in got]
    if set(a) != set(b):
        return False
    return all("" in a[k] or "" in b[k] or a[k] == b[k] for k in a)
