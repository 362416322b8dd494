"""Which Bazel a build runs, and the flag decisions that depend on it.

Three places say which Bazel a TensorFlow build gets, each read here:

- the image's own answer (`from_image_output`): `bazel --version` run in the build image,
  in the source folder (with Bazelisk as `bazel` the answer follows the folder's
  `.bazelversion`; outside it Bazelisk picks the newest release). Debian's `bazel`
  answers "bazel no_version"; its package version (`dpkg-query -W bazel-bootstrap`, see
  `IMAGE_PROBES`) then names the release;
- the source's `.bazelversion` (`read_bazelversion`): what Bazelisk fetches;
- the release's knowledge (`from_release`, releases.toml `bazel`): what TensorFlow's
  tested build configurations name.

`resolve` puts them in that order (the Bazel that runs wins) and lists where they
disagree. The version-dependent facts live in resources/knowledge/bazel.toml
(`bazelfacts.py`); `remote_flag_facts(version)` turns them into the decisions a plan
needs, choosing the safe side when the version is unknown (no --disk_cache beside an
executor: a build without the disk cache still runs, one with it may not start).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

from .bazelfacts import BazelFacts, load_bazel_facts

#: what preflight runs in the build image (argv lists, one container, no network):
#: Bazel's own answer, then the Debian package's version for a "no_version" build
IMAGE_PROBES = (("bazel", "--version"),
                ("dpkg-query", "-W", "-f=${Version}\\n", "bazel-bootstrap"))

#: keywords Bazelisk accepts in .bazelversion that name no fixed release
_MOVING = re.compile(r"^(latest(-\d+)?|last_green|last_rc|rolling|\d+\.x|\d+\.\d+\.x)$",
                     re.IGNORECASE)
#: a release number as Bazel prints it: 7.4.1, 6.0.0rc3, 8.0.0-pre.20240101.1, 7.4.1-homebrew
_RELEASE = re.compile(r"(\d+)\.(\d+)\.(\d+)(?:(rc\d+)|-pre\.(\d+)(?:\.\d+)?)?")
#: the lines that carry Bazel's version: `bazel --version`, `bazel version`, `bazel info`
_VERSION_LINE = re.compile(r"^\s*(?:bazel|build label:|release)\s+(\S+)", re.IGNORECASE)


@dataclass(frozen=True)
class BazelVersion:
    """One statement of the Bazel version: the text as read and what it names."""

    text: str
    #: the release it names; None when unknown ("no_version", "latest", "7.x", absent)
    version: Version | None
    #: image | image-package | bazelversion | release
    source: str

    @property
    def known(self) -> bool:
        """Whether a version was found."""
        return self.version is not None

    def __str__(self) -> str:
        return str(self.version) if self.version is not None else self.text


def parse_release(text: str) -> Version | None:
    """The release number in one token ("7.4.1", "6.0.0rc3", "8.0.0-pre.20240101.1")."""
    match = _RELEASE.search(text)
    if match is None:
        return None
    major, minor, patch, rc, pre = match.groups()
    if rc:
        return Version(f"{major}.{minor}.{patch}{rc}")
    if pre:  # rolling releases come before the release they lead to
        return Version(f"{major}.{minor}.{patch}.dev{pre}")
    return Version(f"{major}.{minor}.{patch}")


def parse_version_output(output: str) -> Version | None:
    """Bazel's version from what `bazel --version` (or `bazel version`, `bazel info
    release`) printed: "bazel 7.4.1", "Build label: 6.5.0", "release 7.4.1". Other lines
    (Bazelisk's, "Extracting Bazel installation...") are skipped; "bazel no_version" and
    development builds give None."""
    for line in output.splitlines():
        match = _VERSION_LINE.match(line)
        if match is None:
            continue
        token = match.group(1)
        if token.lower() in ("no_version", "development"):
            return None
        found = parse_release(token)
        if found is not None:
            return found
    return None


def parse_package_version(output: str) -> Version | None:
    """A Debian package version ("4.2.3+ds-9", "1:7.4.1-1") as the release it packages."""
    text = output.strip().splitlines()[0] if output.strip() else ""
    text = text.split(":", 1)[-1]  # an epoch
    return parse_release(text.split("+", 1)[0].split("-", 1)[0]) if text else None


def parse_bazelversion(text: str) -> str:
    """The version spec in a .bazelversion file: its first line that is not empty or a
    comment, as Bazelisk reads it ("" when there is none)."""
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            return line
    return ""


def version_from_spec(spec: str) -> Version | None:
    """The release a .bazelversion spec fixes: "7.4.1", "7.4.1rc2", "fork/7.4.1" (a fork's
    build of 7.4.1); None for a moving one ("latest", "last_green", "7.x") or nonsense."""
    name = spec.strip().rsplit("/", 1)[-1]
    if not name or _MOVING.match(name):
        return None
    if not re.fullmatch(r"\d+\.\d+\.\d+(rc\d+|-pre\.\d+(\.\d+)?)?", name):
        return None
    return parse_release(name)


def read_bazelversion(source_dir: Path) -> BazelVersion | None:
    """The source's .bazelversion, or None when the source has none."""
    path = Path(source_dir) / ".bazelversion"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError):
        return None
    spec = parse_bazelversion(text)
    return BazelVersion(spec, version_from_spec(spec), "bazelversion")


def from_release(bazel: str) -> BazelVersion:
    """The Bazel a release's knowledge names (releases.toml `bazel`, e.g. "7.4.1")."""
    try:
        version: Version | None = Version(bazel)
    except InvalidVersion:
        version = None
    return BazelVersion(bazel, version, "release")


def from_image_output(version_output: str, package_output: str = "") -> BazelVersion:
    """What the build image says: `bazel --version`, else the bazel-bootstrap package."""
    version = parse_version_output(version_output)
    text = version_output.strip().splitlines()[-1] if version_output.strip() else ""
    if version is None and package_output.strip():
        packaged = parse_package_version(package_output)
        if packaged is not None:
            return BazelVersion(package_output.strip(), packaged, "image-package")
    return BazelVersion(text, version, "image")


@dataclass(frozen=True)
class BazelVersionReport:
    """Every statement found, the one the flags follow, and where they disagree."""

    #: the first known version in the order image, .bazelversion, release; None if none
    effective: BazelVersion | None
    statements: tuple[BazelVersion, ...]
    #: pairs of known statements that name different releases
    disagreements: tuple[tuple[BazelVersion, BazelVersion], ...]

    @property
    def version(self) -> Version | None:
        """The Bazel version that takes effect, None when unknown."""
        return self.effective.version if self.effective is not None else None


def resolve(*, image: BazelVersion | None = None, bazelversion: BazelVersion | None = None,
            release: BazelVersion | None = None) -> BazelVersionReport:
    """Put the statements in order: the image's Bazel is the one that runs, .bazelversion
    what Bazelisk would fetch, the release's knowledge what TensorFlow was tested with."""
    statements = tuple(s for s in (image, bazelversion, release) if s is not None)
    known = [s for s in statements if s.known]
    disagreements = tuple((a, b) for i, a in enumerate(known) for b in known[i + 1:]
                          if a.version != b.version)
    return BazelVersionReport(known[0] if known else None, statements, disagreements)


@dataclass(frozen=True)
class RemoteFlagFacts:
    """What the plan may write for this Bazel with a remote executor."""

    version: Version | None
    #: --disk_cache beside --remote_executor (unknown version: False, the safe choice)
    disk_cache_with_executor: bool
    #: Bazel downloads only top-level outputs by default (7.0+); None when unknown
    download_toplevel_by_default: bool | None
    #: with --remote_local_fallback a failed capabilities query only warns and the whole
    #: build runs locally: the preflight's capabilities check is what catches it
    fallback_hides_capabilities_failure: bool
    #: the flag that names the actions' platform properties
    exec_properties_flag: str = "--remote_default_exec_properties"


def disk_cache_with_executor_ok(version: Version | None,
                                facts: BazelFacts | None = None) -> bool:
    """Bazel accepts --disk_cache next to --remote_executor (5.0 and later).

    Bazel before 5.0 stops with "Cannot combine gRPC based remote execution with disk
    caching or HTTP-based caching" (bazel.toml `disk_cache_with_remote_executor`). An
    unknown version gives False: a build without the disk cache still runs."""
    facts = facts or load_bazel_facts()
    return bool(facts.holds("disk_cache_with_remote_executor", version))


def remote_flag_facts(version: Version | None,
                      facts: BazelFacts | None = None) -> RemoteFlagFacts:
    """The remote execution decisions for one Bazel version (None: unknown)."""
    facts = facts or load_bazel_facts()
    return RemoteFlagFacts(
        version=version,
        disk_cache_with_executor=disk_cache_with_executor_ok(version, facts),
        download_toplevel_by_default=facts.holds("remote_download_toplevel_default", version),
        fallback_hides_capabilities_failure=facts.holds(
            "capabilities_failure_with_local_fallback", version) is not False,
    )
