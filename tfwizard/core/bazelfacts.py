"""Bazel's version-dependent flag facts: resources/knowledge/bazel.toml as frozen dataclasses.

`load_bazel_facts()` reads the file once per process. Each `BazelFact` holds for the Bazel
releases its `versions` specifier matches; `BazelFacts.holds(name, version)` answers
True/False, or None when the version is unknown. The decisions built on them live in
`bazelversion.py`. Every entry names its sources (keys of sources.toml), and what no
primary source confirmed is in its `unverified` list (tests/core/test_bazelversion.py
lints the file).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from .errors import KnowledgeError
from .i18n import _
from .knowledge import parse_spec, read_toml  # the knowledge base's own readers: same errors
from .resources import resource_path


@dataclass(frozen=True)
class BazelFact:
    """One thing a range of Bazel releases does with a flag."""

    name: str
    flag: str
    versions: SpecifierSet  # empty: every version tfwizard drives
    holds: str
    otherwise: str
    refusal: str  # the words Bazel stops with outside the range, when it does
    sources: tuple[str, ...]
    unverified: tuple[str, ...]

    def holds_for(self, version: Version | None) -> bool | None:
        """True/False for a known Bazel release, None for an unknown one."""
        if version is None:
            return None
        return self.versions.contains(version, prereleases=True)


@dataclass(frozen=True)
class RemoteDefaults:
    """Defaults for the recipe's remote execution keys (remote.jobs, remote.timeout, ...)."""

    jobs: int
    timeout_s: int
    retries: int
    local_fallback: bool
    sources: tuple[str, ...]


@dataclass(frozen=True)
class TfRbe:
    """TensorFlow's own rbe_* configs: Google's endpoint, instance and platform."""

    configs: tuple[str, ...]
    executor: str
    instance_name: str
    platform: str
    jobs: int
    remote_timeout: int
    note: str
    sources: tuple[str, ...]


@dataclass(frozen=True)
class BazelFacts:
    """bazel.toml: Bazel's flag facts by name and the remote-execution defaults."""

    facts: dict[str, BazelFact]
    remote_defaults: RemoteDefaults
    tf_rbe: TfRbe

    def fact(self, name: str) -> BazelFact:
        """The fact named `name`; KnowledgeError when bazel.toml lacks it."""
        try:
            return self.facts[name]
        except KeyError as exc:
            raise KnowledgeError(_("knowledge base is malformed: {error}").format(
                error=repr(exc))) from None

    def holds(self, name: str, version: Version | None) -> bool | None:
        """Whether fact `name` holds for this Bazel (None: the version is unknown)."""
        return self.fact(name).holds_for(version)


def _fact(raw: dict[str, Any]) -> BazelFact:
    where = f"bazel.toml fact {raw.get('name', '?')}"
    return BazelFact(
        name=raw["name"], flag=raw["flag"], versions=parse_spec(raw["versions"], where),
        holds=raw["holds"], otherwise=raw["otherwise"], refusal=raw.get("refusal", ""),
        sources=tuple(raw["sources"]), unverified=tuple(raw.get("unverified", ())))


def load_bazel_facts_from(path: Path) -> BazelFacts:
    """bazel.toml at `path` as BazelFacts (KnowledgeError when it is broken)."""
    raw = read_toml(path)
    try:
        facts = {f.name: f for f in (_fact(entry) for entry in raw["fact"])}
        d = raw["remote_defaults"]
        defaults = RemoteDefaults(int(d["jobs"]), int(d["timeout_s"]), int(d["retries"]),
                                  bool(d["local_fallback"]), tuple(d["sources"]))
        r = raw["tf_rbe"]
        tf_rbe = TfRbe(tuple(r["configs"]), r["executor"], r["instance_name"], r["platform"],
                       int(r["jobs"]), int(r["remote_timeout"]), r["note"], tuple(r["sources"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise KnowledgeError(_("knowledge base is malformed: {error}").format(
            error=repr(exc))) from None
    return BazelFacts(facts, defaults, tf_rbe)


@cache
def load_bazel_facts() -> BazelFacts:
    """The shipped bazel.toml (loaded once per process)."""
    return load_bazel_facts_from(resource_path("knowledge", "bazel.toml"))
