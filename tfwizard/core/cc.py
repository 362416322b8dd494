"""Compute capability tokens and what a list of them covers on a given GPU.

Rules (NVIDIA's binary/PTX compatibility, see gpu-compat-facts.md section 6):
- a cubin for X.y runs on X.z with z >= y (same major only, not Tegra <-> desktop);
- PTX for X.y JIT-compiles for any GPU >= X.y (slow on first run; needs a new driver);
- "a" targets run on that exact CC only; "f" targets on the same major with minor >= y.
TF's token syntax (rules_ml_toolchain's cuda_configure.bzl `_compute_capabilities`, the
rule every hermetic-CUDA release runs): "compute_xy" = cubin + PTX, "sm_xy" = cubin only;
"x.y" = "compute_xy", except that a list of nothing but "x.y" entries gets PTX for its
highest entry only (the others become "sm_xy"), the highest as TF sorts them: as text.
`tf_tokens` applies that rule; `targets` parses its result.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    """One parsed CC token."""

    token: str
    major: int
    minor: int
    suffix: str  # "", "a" or "f"
    cubin: bool
    ptx: bool

    @property
    def sm(self) -> int:
        """The capability as one number: 8.6 -> 86."""
        return self.major * 10 + self.minor

    @property
    def cc(self) -> str:
        """The capability as "8.6"."""
        return f"{self.major}.{self.minor}"

    @property
    def cubin_token(self) -> str:
        """The cubin this target builds, as TF names it: "sm_86" (also for "compute_86")."""
        return f"sm_{self.sm}{self.suffix}"

    def covers_cubin(self, gpu: tuple[int, int]) -> bool:
        """Whether this target's cubin runs on a GPU of capability `gpu` (same major, lower or
        equal minor)."""
        if not self.cubin:
            return False
        major, minor = gpu
        if self.suffix == "a":
            return (major, minor) == (self.major, self.minor)
        return major == self.major and minor >= self.minor

    def covers_ptx(self, gpu: tuple[int, int]) -> bool:
        """Whether this target's PTX can be compiled for a GPU of capability `gpu` at load time."""
        if not self.ptx:
            return False
        if self.suffix == "a":
            return gpu == (self.major, self.minor)
        if self.suffix == "f":
            return gpu[0] == self.major and gpu[1] >= self.minor
        return gpu >= (self.major, self.minor)


def parse_target(token: str) -> Target | None:
    """Parse "8.6", "9.0a", "sm_86", "compute_90", "sm_100f"; None when not a CC token."""
    m = re.fullmatch(r"(\d{1,2})\.(\d)([af]?)", token)
    if m:
        return Target(token, int(m.group(1)), int(m.group(2)), m.group(3), True, True)
    m = re.fullmatch(r"(sm|compute)_(\d{2,3})([af]?)", token)
    if m:
        number = int(m.group(2))
        # compute_XY: TF's rules pass --cuda-gpu-arch=sm_XY and --cuda-include-ptx=sm_XY
        return Target(token, number // 10, number % 10, m.group(3), True,
                      m.group(1) == "compute")
    return None


def normalize(token: str) -> str:
    """A recipe token as tfwizard hands it to configure: "9.0a" -> "sm_90a" (a suffixed
    capability is a cubin target), anything else unchanged."""
    match = re.fullmatch(r"(\d+)\.(\d)([af]?)", token)
    if match and match.group(3):
        return f"sm_{match.group(1)}{match.group(2)}{match.group(3)}"
    return token


def _is_bare(token: str) -> bool:
    """An "x.y" entry (TF's test: the token splits into two parts at a dot)."""
    return len(token.split(".")) == 2


def tf_tokens(tokens: Iterable[str]) -> list[str]:
    """The sm_/compute_ list TF's CUDA rules make of a compute-capability list.

    A list of only "x.y" entries: "sm_xy" for each but the highest, "compute_xy" for the
    highest, where highest means last when the digits are sorted as text (so of 8.9 and
    12.0 it is 8.9); otherwise each "x.y" becomes "compute_xy". Duplicates are dropped.
    """
    items = [t for t in tokens if t]
    if items and all(_is_bare(t) for t in items):
        digits = sorted(t.replace(".", "") for t in items)
        items = [f"sm_{d}" for d in digits[:-1]] + [f"compute_{digits[-1]}"]
    out: list[str] = []
    for item in items:
        if _is_bare(item):
            item = "compute_" + item.replace(".", "")
        if item not in out:
            out.append(item)
    return out


def numeric_tokens(tokens: Iterable[str]) -> list[str]:
    """A bare "x.y" list written as the sm_/compute_ tokens its author meant: a cubin for
    each capability and PTX for the numerically highest (what `tf_tokens` gives when the
    text order and the number order agree)."""
    return cc_tokens([t for t in tokens if parse_cc(t)])


def targets(tokens: Iterable[str]) -> list[Target]:
    """The targets a recipe's compute-capability list builds ("auto" already expanded):
    normalized as configure gets them, then by TF's rules (`tf_tokens`)."""
    effective = tf_tokens(normalize(t) for t in tokens if t != "auto")
    return [t for t in (parse_target(x) for x in effective) if t is not None]


def parse_cc(cc: str) -> tuple[int, int] | None:
    """(major, minor) of a plain "8.6"; None for anything else."""
    m = re.fullmatch(r"(\d{1,2})\.(\d)", cc.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def token(major: int, minor: int, ptx: bool = False) -> str:
    """TF's token for a compute capability: "sm_86" (a cubin), or "compute_86" (PTX)."""
    return f"{'compute' if ptx else 'sm'}_{major}{minor}"


def cc_token(cc: str, ptx: bool = False) -> str:
    """token() of a "8.6" compute capability (a text that is not one loses its dots)."""
    parsed = parse_cc(cc)
    if parsed is None:
        return f"{'compute' if ptx else 'sm'}_{cc.replace('.', '')}"
    return token(*parsed, ptx=ptx)


@dataclass(frozen=True)
class Coverage:
    """How a GPU runs a wheel built for some targets."""

    gpu_cc: str
    cubin: Target | None
    ptx: Target | None

    @property
    def runs(self) -> bool:
        """Whether the wheel runs on the GPU at all (a cubin or PTX)."""
        return self.cubin is not None or self.ptx is not None

    @property
    def needs_jit(self) -> bool:
        """Whether it runs only by compiling PTX at load time (slow first start)."""
        return self.cubin is None and self.ptx is not None


def coverage(targets: list[Target], gpu_cc: str, *, tegra_mismatch: bool = False) -> Coverage:
    """What `targets` give a GPU of capability `gpu_cc`: its best cubin and best PTX."""
    gpu = parse_cc(gpu_cc)
    if gpu is None:
        return Coverage(gpu_cc, None, None)
    cubins = [t for t in targets if t.covers_cubin(gpu)]
    if tegra_mismatch:
        cubins = [t for t in cubins if (t.major, t.minor) == gpu]
    best_cubin = max(cubins, key=lambda t: t.minor, default=None)
    ptxs = [t for t in targets if t.covers_ptx(gpu)]
    best_ptx = max(ptxs, key=lambda t: (t.major, t.minor), default=None)
    return Coverage(gpu_cc, best_cubin, best_ptx)


def cc_tokens(ccs: Iterable[str], *, ptx: bool = True) -> list[str]:
    """A cubin for each compute capability, oldest first; with `ptx` the newest is
    "compute_xy" (its cubin and its PTX), as in TF's own list sm_60,...,sm_89,compute_90."""
    parsed = sorted({p for p in (parse_cc(c) for c in ccs) if p})
    tokens = [token(major, minor) for major, minor in parsed]
    if parsed and ptx:
        tokens[-1] = token(*parsed[-1], ptx=True)
    return tokens


def auto_targets(gpu_ccs: list[str]) -> list[str]:
    """"auto": a cubin for every GPU of the target host, PTX for the newest."""
    return cc_tokens(gpu_ccs)


def expand(tokens: list[str], target_gpu_ccs: list[str]) -> list[str]:
    """Replace "auto" by the target host's GPUs; keep order, drop duplicates."""
    out: list[str] = []
    for text in tokens:
        for item in auto_targets(target_gpu_ccs) if text == "auto" else [text]:
            if item not in out:
                out.append(item)
    return out
