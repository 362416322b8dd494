"""A generated, larger TF-shaped Bazel workspace for the rebuild benchmarks (issue 17).

The fixture (tests/fixtures/tf_workspace) shows TensorFlow's interface at a toy size; this
one adds what makes real rebuilds cost: loading and analysis of many packages and targets,
and a large external repository Bazel must verify and extract into each new output base.

    generate(dest)  writes dest/tf_workspace and dest/distdir and returns a BigWorkspace:
    - a copy of the fixture (configure.py, .bazelrc, WORKSPACE, tensorflow/core,
      //tensorflow/tools/pip_package:wheel with its `and-cuda` extra), taken from the
      fixture at generation time;
    - `files` generated C++ kernels in `packages` packages tensorflow/core/kernels/<pkg>/,
      grouped into cc_library targets that depend on earlier ones (a DAG across packages,
      calls included), all linked into libtensorflow_framework.so and so into the wheel;
    - @big_external, an http_archive whose URL cannot resolve (.invalid): the build finds
      its archive (`external_mb` MB extracted, thousands of files, a few dozen compiled
      into the wheel) only in the distdir folder, passed as `--distdir`;
    - one designated kernel file (BigWorkspace.edit_file) whose marker line edit_kernel()
      rewrites: a one-line change of the compiled output (the .so, hence the wheel).
    The output is byte-for-byte the same for a given seed and parameters.

    .venv/bin/python bench/bigws.py DEST [--files N] [--packages N] [--external-mb N]
                                         [--seed N] [--json]

Build it like the fixture, plus the distdir: mount dest/distdir read-only (tfwizard's
recipe key network.distdir does that and adds `--distdir=/cache/distdir`).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import random
import re
import sys
import tarfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

if __package__:  # imported as bench.bigws (tests)
    from ._common import world
else:  # run or imported from bench/ (the benchmark scripts)
    from _common import world

#: the defaults: generation takes about 3 s; the first build (662 actions) took 195 s on
#: 2 cores shared with other builds (load 4-5), where the fixture's took 57 s
DEFAULT_FILES = 600
DEFAULT_PACKAGES = 10
DEFAULT_EXTERNAL_MB = 64.0
DEFAULT_SEED = 17
#: the external repository: name, version, the URL Bazel is given (never resolvable)
EXTERNAL = "big_external"
EXTERNAL_VERSION = "1.0"
EXTERNAL_PREFIX = f"{EXTERNAL}-{EXTERNAL_VERSION}"
EXTERNAL_ARCHIVE = f"{EXTERNAL_PREFIX}.tar.gz"
EXTERNAL_URL = f"https://mirror.tfwizard.invalid/{EXTERNAL}/{EXTERNAL_ARCHIVE}"
#: the C++ sources of @big_external compiled into the wheel
EXTERNAL_SOURCES = 32
#: kernel packages under tensorflow/core/kernels/, in dependency order
PACKAGE_NAMES = ("array", "math", "nn", "linalg", "image", "sparse", "data", "random",
                 "string", "io", "control_flow", "quantization", "signal", "summary")
#: words for library names (any order, any package): only for readable names
WORDS = ("gather", "scatter", "segment", "reduction", "cwise", "conv", "pooling", "resize",
         "pad", "slice", "tile", "reverse", "cumsum", "topk", "where", "bincount", "unique",
         "batch_norm", "lrn", "depthwise", "matrix_inverse", "cholesky", "qr", "svd",
         "crop", "decode", "encode", "shuffle", "sample", "hash", "split", "strided",
         "fused", "quantize", "fft", "histogram", "one_hot", "diag", "einsum", "sort")
#: the share of generated kernels that include the fixture's op_kernel.h (<regex>: ~1 s)
HEAVY_SHARE = 0.05
#: the line edit_kernel() writes or rewrites; the number is the only part that changes
EDIT_MARKER = "// tfwizard bench: edit_kernel() rewrites this line"
EDIT_RE = re.compile(r'^extern "C" int tfw_bench_edit_(\w+)\(void\) \{ return (-?\d+); \}  '
                     + re.escape(EDIT_MARKER) + "$", re.MULTILINE)
#: where generated packages link into the fixture's shared library
_SO_DEPS_ANCHOR = 'deps = [":kernels"],'
#: a fixed time for every archive member (reproducible archive, same sha256 per seed)
_EPOCH = 1577836800  # 2020-01-01


@dataclass(frozen=True)
class BigWorkspace:
    """What generate() wrote, and the figures that describe it."""

    workspace: Path  # the Bazel workspace (mount it at /src)
    distdir: Path  # holds the external archive (mount it, pass --distdir)
    edit_file: str  # the designated kernel file, relative to workspace
    archive_sha256: str
    seed: int
    packages: tuple[str, ...]  # Bazel packages generated (tensorflow/core/kernels/<pkg>)
    libraries: int  # cc_library targets generated (without the per-package umbrellas)
    kernel_sources: int  # generated .cc files in the workspace
    kernel_headers: int
    workspace_files: int  # every file in the workspace, the fixture's included
    workspace_bytes: int
    external_files: int  # files in the external archive
    external_sources: int  # its .cc files, compiled into the wheel
    external_bytes: int  # extracted size
    archive_bytes: int  # the .tar.gz in distdir
    seconds: float  # how long generate() took

    @property
    def archive(self) -> Path:
        return self.distdir / EXTERNAL_ARCHIVE

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["workspace"], data["distdir"] = str(self.workspace), str(self.distdir)
        data["archive"] = str(self.archive)
        data["packages"] = list(self.packages)
        return data


def edit_kernel(path: Path, value: int) -> None:
    """Make a one-line change to a kernel file that changes its compiled code.

    Rewrites the marker line (`extern "C" int tfw_bench_edit_<stem>(void) { return N; }`)
    to return `value`, or appends it when the file has none (the fixture's kernels).
    Calling it with a new value each time makes each rebuild compile, link and package.
    """
    text = path.read_text(encoding="utf-8")
    stem = re.sub(r"\W", "_", path.stem)
    line = f'extern "C" int tfw_bench_edit_{stem}(void) {{ return {value}; }}  {EDIT_MARKER}'
    new, count = EDIT_RE.subn(lambda _match: line, text, count=1)
    if count == 0:
        new = text + ("" if text.endswith("\n") else "\n") + line + "\n"
    path.write_text(new, encoding="utf-8")


def edit_value(path: Path) -> int | None:
    """The number the marker line of `path` returns now (None: no marker line)."""
    match = EDIT_RE.search(path.read_text(encoding="utf-8"))
    return int(match.group(2)) if match else None


@dataclass
class _Library:
    package: str
    name: str
    files: list[str]  # .cc file names in the package folder
    deps: list[_Library]
    external: bool  # also depends on @big_external

    @property
    def label(self) -> str:
        return f"//tensorflow/core/kernels/{self.package}:{self.name}"

    @property
    def header(self) -> str:
        return f"tensorflow/core/kernels/{self.package}/{self.name}.h"

    def function(self, index: int) -> str:
        return f"tfw_{self.package}_{self.name}_{index}"


def _plan_libraries(rng: random.Random, files: int, packages: tuple[str, ...]) -> list[_Library]:
    """Split `files` kernels over the packages and libraries; deps only on earlier libraries."""
    per_package = [files // len(packages) + (1 if i < files % len(packages) else 0)
                   for i in range(len(packages))]
    libraries: list[_Library] = []
    for package, count in zip(packages, per_package, strict=True):
        in_package: list[_Library] = []
        used: set[str] = set()
        while count > 0:
            size = min(count, rng.randint(5, 10))
            count -= size
            word = rng.choice(WORDS)
            name = f"{word}_ops"
            n = 2
            while name in used:
                name, n = f"{word}_ops_{n}", n + 1
            used.add(name)
            deps: list[_Library] = []
            if in_package:  # a chain inside the package, as TF's kernels build on each other
                deps.append(in_package[-1])
            earlier = [lib for lib in libraries if lib not in deps]
            for lib in rng.sample(earlier, min(len(earlier), rng.randint(1, 3))):
                deps.append(lib)
            lib = _Library(package, name, [f"{name}_{k:02d}.cc" for k in range(size)], deps,
                           external=rng.random() < 0.3)
            in_package.append(lib)
            libraries.append(lib)
    return libraries


def _kernel_source(rng: random.Random, lib: _Library, index: int, seed: int, *,
                   edit: bool) -> str:
    """One kernel .cc: a bit of templated arithmetic and a call into a dependency.

    About one in HEAVY_SHARE (and the designated one) also registers itself through the
    fixture's op_kernel.h, whose <regex> makes it take about a second to compile, like
    the fixture's kernels; the others take a fraction of that.
    """
    heavy = edit or rng.random() < HEAVY_SHARE
    includes = ["tensorflow/core/framework/tfw_api.h", lib.header]
    if heavy:
        includes.insert(0, "tensorflow/core/framework/op_kernel.h")
    calls: list[str] = []
    if lib.deps:
        dep = rng.choice(lib.deps)
        includes.append(dep.header)
        calls.append(f"{dep.function(rng.randrange(len(dep.files)))}(acc * 0.5)")
    if lib.external:
        includes.append(f"{EXTERNAL}/{EXTERNAL}.h")
        calls.append(f"big_external_{rng.randrange(EXTERNAL_SOURCES)}(acc)")
    if index > 0:
        calls.append(f"{lib.function(index - 1)}(acc * 0.25)")
    scale = 1 + rng.randrange(1, 64) / 1024
    steps = rng.randint(5, 17)
    body = " + ".join(["acc", *calls])
    lines = [
        f"// Generated by bench/bigws.py (seed {seed}): {lib.label}, kernel {index + 1} of "
        f"{len(lib.files)}.",
        "#include <cmath>",
        "#include <cstddef>",
        "",
        *[f'#include "{h}"' for h in includes],
        "",
        "namespace {",
        f"constexpr double kScale = {scale!r};",
        "",
        "template <typename T>",
        f"T Step{index}(T x, int i) {{",
        f"  return x * static_cast<T>(kScale) + static_cast<T>(i % {steps}) / 3;",
        "}",
        "}  // namespace",
        "",
        f'extern "C" TFW_EXPORT double {lib.function(index)}(double x) {{',
        "  double acc = x;",
        f"  for (int i = 0; i < {steps}; ++i) acc = Step{index}(acc, i);",
        f"  return std::fabs({body});",
        "}",
    ]
    if heavy:
        op = "".join(w.capitalize() for w in f"{lib.name}_{index}".split("_"))
        lines += ["", f"TFW_REGISTER_KERNEL({op}, CPU);"]
    if edit:
        stem = Path(lib.files[index]).stem
        lines.append(f'extern "C" int tfw_bench_edit_{stem}(void) {{ return 0; }}  '
                     f"{EDIT_MARKER}")
    return "\n".join(lines) + "\n"


def _header(lib: _Library) -> str:
    guard = re.sub(r"\W", "_", lib.header).upper() + "_"
    decls = [f"TFW_EXPORT double {lib.function(i)}(double x);" for i in range(len(lib.files))]
    return "\n".join([
        f"// Generated by bench/bigws.py: the C API of {lib.label}.",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        '#include "tensorflow/core/framework/tfw_api.h"',
        "",
        '#ifdef __cplusplus\nextern "C" {\n#endif',
        *decls,
        '#ifdef __cplusplus\n}  // extern "C"\n#endif',
        "",
        f"#endif  // {guard}",
    ]) + "\n"


def _package_build(package: str, libs: list[_Library]) -> str:
    out = [
        f"# Generated by bench/bigws.py: kernels of tensorflow/core/kernels/{package}.",
        'load("@rules_cc//cc:defs.bzl", "cc_library")',
        "",
        'package(default_visibility = ["//visibility:public"])',
        "",
        'licenses(["notice"])',
    ]
    for lib in libs:
        deps = ['"//tensorflow/core:framework"']
        for dep in lib.deps:
            deps.append(f'":{dep.name}"' if dep.package == package else f'"{dep.label}"')
        if lib.external:
            deps.append(f'"@{EXTERNAL}//:{EXTERNAL}"')
        out += [
            "",
            "cc_library(",
            f'    name = "{lib.name}",',
            "    srcs = [" + ", ".join(f'"{f}"' for f in lib.files) + "],",
            f'    hdrs = ["{lib.name}.h"],',
            "    deps = [" + ", ".join(deps) + "],",
            "    alwayslink = 1,",
            ")",
        ]
    out += [
        "",
        "# Everything in this package, for libtensorflow_framework.so.",
        "cc_library(",
        f'    name = "{package}",',
        "    deps = [" + ", ".join(f'":{lib.name}"' for lib in libs) + "],",
        ")",
    ]
    return "\n".join(out) + "\n"


def _external_members(rng: random.Random, external_mb: float, seed: int) -> dict[str, bytes]:
    """The files of @big_external: a compiled library and many data files (tables)."""
    members: dict[str, bytes] = {}
    members["WORKSPACE"] = f'workspace(name = "{EXTERNAL}")\n'.encode()
    members["BUILD.bazel"] = "\n".join([
        "# Generated by bench/bigws.py: a large third-party repository (think LLVM), most",
        "# of it data that only has to be downloaded, verified and extracted.",
        'load("@rules_cc//cc:defs.bzl", "cc_library")',
        "",
        'package(default_visibility = ["//visibility:public"])',
        "",
        "cc_library(",
        f'    name = "{EXTERNAL}",',
        '    srcs = glob(["src/*.cc"]),',
        '    hdrs = glob(["include/**/*.h"]),',
        '    includes = ["include"],',
        "    alwayslink = 1,",
        ")",
        "",
        "filegroup(",
        '    name = "tables",',
        '    srcs = glob(["tables/**"]),',
        ")",
        "",
    ]).encode()
    decls = "\n".join(f"double big_external_{i}(double x);" for i in range(EXTERNAL_SOURCES))
    members[f"include/{EXTERNAL}/{EXTERNAL}.h"] = (
        f"// Generated by bench/bigws.py (seed {seed}).\n#ifndef BIG_EXTERNAL_H_\n"
        f'#define BIG_EXTERNAL_H_\n#ifdef __cplusplus\nextern "C" {{\n#endif\n{decls}\n'
        '#ifdef __cplusplus\n}\n#endif\n#endif  // BIG_EXTERNAL_H_\n').encode()
    for i in range(EXTERNAL_SOURCES):
        members[f"src/big_{i:02d}.cc"] = (
            f'// Generated by bench/bigws.py (seed {seed}).\n#include "{EXTERNAL}/{EXTERNAL}.h"\n'
            f"\nnamespace {{\nconstexpr double kTable[] = {{"
            + ", ".join(f"{rng.random():.6f}" for _ in range(16))
            + f"}};\n}}  // namespace\n\nextern \"C\" double big_external_{i}(double x) {{\n"
            f"  double acc = x;\n  for (double t : kTable) acc = acc * 0.5 + t;\n"
            f"  return acc;\n}}\n").encode()
    members[f"{EXTERNAL}.version"] = f"{EXTERNAL_VERSION}\n".encode()
    # data: generated tables (hex text, like the tables real third-party trees carry), about
    # 10 KiB each, in folders of 100, until the tree holds external_mb MB
    budget = int(external_mb * 1_000_000) - sum(len(v) for v in members.values())
    index = 0
    while budget > 0:
        size = min(budget, rng.randint(2_000, 18_000))
        raw = rng.randbytes(size // 2 + 1).hex()[:size]
        lines = [raw[i:i + 96] for i in range(0, len(raw), 96)]
        members[f"tables/{index // 100:03d}/table_{index:05d}.inc"] = (
            "\n".join(lines) + "\n").encode()
        budget -= size
        index += 1
    return members


def _write_archive(path: Path, members: dict[str, bytes]) -> None:
    """A reproducible .tar.gz: sorted members, fixed times and owners, no gzip name/time."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        dirs: set[str] = set()
        for name in sorted(members):
            parts = name.split("/")[:-1]
            for depth in range(1, len(parts) + 1):
                folder = "/".join(parts[:depth])
                if folder not in dirs:
                    dirs.add(folder)
                    tar.addfile(_tarinfo(f"{EXTERNAL_PREFIX}/{folder}", tarfile.DIRTYPE, 0))
            data = members[name]
            tar.addfile(_tarinfo(f"{EXTERNAL_PREFIX}/{name}", tarfile.REGTYPE, len(data)),
                        io.BytesIO(data))
    with open(path, "wb") as out, gzip.GzipFile(filename="", mode="wb", fileobj=out,
                                                 mtime=0, compresslevel=6) as gz:
        gz.write(raw.getvalue())


def _tarinfo(name: str, kind: bytes, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.mtime = kind, size, _EPOCH
    info.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _link_into_framework(workspace: Path, labels: list[str]) -> None:
    """Add the generated packages to the deps of the fixture's libtensorflow_framework.so."""
    build = workspace / "tensorflow" / "core" / "BUILD"
    text = build.read_text(encoding="utf-8")
    if text.count(_SO_DEPS_ANCHOR) != 1:
        raise RuntimeError(f"the fixture's tensorflow/core/BUILD no longer has exactly one "
                           f"{_SO_DEPS_ANCHOR!r} (the deps of libtensorflow_framework.so); "
                           "update bench/bigws.py")
    deps = "".join(f'\n        "{label}",' for label in labels)
    build.write_text(text.replace(_SO_DEPS_ANCHOR, f'deps = [\n        ":kernels",{deps}\n    ],'),
                     encoding="utf-8")


def _external_stanza(sha256: str) -> str:
    return "\n".join([
        "",
        "# Added by bench/bigws.py: a large external repository. The URL cannot resolve;",
        "# the archive is found by name and checked by sha256 in --distdir.",
        'load("@bazel_tools//tools/build_defs/repo:http.bzl", "http_archive")',
        "",
        "http_archive(",
        f'    name = "{EXTERNAL}",',
        f'    sha256 = "{sha256}",',
        f'    strip_prefix = "{EXTERNAL_PREFIX}",',
        f'    urls = ["{EXTERNAL_URL}"],',
        ")",
        "",
    ])


def generate(dest: Path, *, files: int = DEFAULT_FILES, packages: int = DEFAULT_PACKAGES,
             external_mb: float = DEFAULT_EXTERNAL_MB, seed: int = DEFAULT_SEED
             ) -> BigWorkspace:
    """Write dest/tf_workspace and dest/distdir (dest must not hold them yet)."""
    if files < 1 or not 1 <= packages <= len(PACKAGE_NAMES) or external_mb < 0:
        raise ValueError(f"files >= 1, 1 <= packages <= {len(PACKAGE_NAMES)}, "
                         "external_mb >= 0")
    started = time.perf_counter()
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    workspace = world.copy_workspace(dest)
    distdir = dest / "distdir"
    distdir.mkdir()
    rng = random.Random(seed)
    names = PACKAGE_NAMES[:packages]

    members = _external_members(random.Random(f"{seed}-external"), external_mb, seed)
    archive = distdir / EXTERNAL_ARCHIVE
    _write_archive(archive, members)
    sha256 = hashlib.sha256(archive.read_bytes()).hexdigest()
    with open(workspace / "WORKSPACE", "a", encoding="utf-8") as ws:
        ws.write(_external_stanza(sha256))

    libraries = _plan_libraries(rng, files, names)
    # the designated file: mid-graph (the second package when there is one), so the edit
    # recompiles one kernel and relinks the library and the wheel, as a researcher's does
    middle = [lib for lib in libraries if lib.package == names[min(1, len(names) - 1)]]
    edit_lib = middle[len(middle) // 2]
    for package in names:
        folder = workspace / "tensorflow" / "core" / "kernels" / package
        folder.mkdir(parents=True)
        libs = [lib for lib in libraries if lib.package == package]
        (folder / "BUILD").write_text(_package_build(package, libs), encoding="utf-8")
        for lib in libs:
            (folder / f"{lib.name}.h").write_text(_header(lib), encoding="utf-8")
            for index, name in enumerate(lib.files):
                source = _kernel_source(rng, lib, index, seed,
                                        edit=lib is edit_lib and index == 0)
                (folder / name).write_text(source, encoding="utf-8")
    _link_into_framework(workspace, [f"//tensorflow/core/kernels/{p}:{p}" for p in names])

    all_files = [p for p in workspace.rglob("*") if p.is_file()]
    return BigWorkspace(
        workspace=workspace,
        distdir=distdir,
        edit_file=f"tensorflow/core/kernels/{edit_lib.package}/{edit_lib.files[0]}",
        archive_sha256=sha256,
        seed=seed,
        packages=tuple(f"tensorflow/core/kernels/{p}" for p in names),
        libraries=len(libraries),
        kernel_sources=sum(len(lib.files) for lib in libraries),
        kernel_headers=len(libraries),
        workspace_files=len(all_files),
        workspace_bytes=sum(p.stat().st_size for p in all_files),
        external_files=len(members),
        external_sources=EXTERNAL_SOURCES,
        external_bytes=sum(len(v) for v in members.values()),
        archive_bytes=archive.stat().st_size,
        seconds=round(time.perf_counter() - started, 2),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dest", type=Path, help="folder for tf_workspace/ and distdir/")
    parser.add_argument("--files", type=int, default=DEFAULT_FILES,
                        help="generated kernel .cc files")
    parser.add_argument("--packages", type=int, default=DEFAULT_PACKAGES,
                        help="kernel packages")
    parser.add_argument("--external-mb", type=float, default=DEFAULT_EXTERNAL_MB,
                        help="extracted size of @big_external in MB")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)
    big = generate(args.dest, files=args.files, packages=args.packages,
                   external_mb=args.external_mb, seed=args.seed)
    if args.json:
        print(json.dumps(big.to_dict(), indent=2))
    else:
        print(f"workspace {big.workspace}: {big.workspace_files} files, "
              f"{big.workspace_bytes / 1e6:.1f} MB; {big.kernel_sources} generated kernels in "
              f"{big.libraries} libraries, {len(big.packages)} packages")
        print(f"distdir {big.distdir}: {EXTERNAL_ARCHIVE} {big.archive_bytes / 1e6:.1f} MB "
              f"({big.external_files} files, {big.external_bytes / 1e6:.1f} MB extracted)")
        print(f"edit: {big.edit_file}   generated in {big.seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
