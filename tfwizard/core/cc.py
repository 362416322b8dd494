"""Compute capability tokens and what a list of them covers on a given GPU.

Rules (NVIDIA's binary/PTX compatibility, see gpu-compat-facts.md section 6):
- a cubin for X.y runs on X.z with z >= y (same major only, not Tegra <-> desktop);
- PTX for X.y JIT-compiles for any GPU >= X.y (slow on first run; needs a new driver);
- "a" targets run on that exact CC only; "f" targets on the same major with minor >= y.
TF's token syntax: "x.y" / "compute_xy" = cubin + PTX, "sm_xy" = cubin only.
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
        kind = m.group(1)
        return Target(token, number // 10, number % 10, m.group(3), kind == "sm",
                      kind == "compute")
    return None


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
    """A cubin for each compute capability, oldest first, and PTX of the newest (`ptx`)."""
    parsed = sorted({p for p in (parse_cc(c) for c in ccs) if p})
    tokens = [token(major, minor) for major, minor in parsed]
    if parsed and ptx:
        tokens.append(token(*parsed[-1], ptx=True))
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
