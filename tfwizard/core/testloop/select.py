"""Tests picked from the change: `tfwizard test RECIPE` without targets.

    sel = select_tests(box, base="HEAD", filters=tag_filters(), limit=50)
    sel.chosen            # the labels to `bazel test`, after tag filters, --filter, the cap
    sel.estimate()        # sizes and the worst-case time (the sizes' default timeouts)

What changed is git's answer in the source folder, where the checkout is: on this machine for
a bind-mounted checkout (the build image needs no git), inside the warm container for the
clone in the workspace's volume (`source_git`): `git diff --name-only
BASE` (committed and uncommitted edits, deletions left out: no target owns a deleted file)
plus the untracked files. BASE is the recipe's `tensorflow.ref` when it names one, else HEAD
(the commit checked out), or `--base REV`. Not "the last successful build": a build record
keeps no source state to diff against, and what a pull request holds is the diff against
the commit it starts from, which the PR summary's diffstat shows too.

Each file goes to the package that owns it (the nearest folder up with a BUILD file), then
one `bazel query` with the build's startup options (the same server, no restart) gives
`kind(".*_test rule", rdeps(//..., set(FILES)))` as XML: each test's tags and size. A
changed BUILD file brings its package's tests; `--package` widens to every test of the
changed files' packages. TensorFlow's tag filters, `--filter REGEX` and the cap (`--max`)
are applied here, so the list shown before the run is the list that runs.

The query's answer is kept (cache_dir) under a key of the workspace, the image, the base's
commit, a digest of the diff of every file that shapes the target graph (BUILD files,
.bzl, WORKSPACE, MODULE.bazel, .bazelrc; untracked ones by content) and the expression: an
edit-and-test loop that changes only sources asks Bazel once. The git listing and the GPU
check share one exec.
"""

from __future__ import annotations

import hashlib
import json
import re
import xml.etree.ElementTree as ET  # noqa: S405 - our own Bazel's query output
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from ..building.plan.plan import SRC, BuildPlan
from ..building.warm.container import OnOutput, WarmContainer
from ..errors import TfWizardError
from ..i18n import _
from ..resources import resource_path
from .run import GPU_DEVICES, TagFilters

BUILD_FILES = ("BUILD", "BUILD.bazel")

#: files that shape Bazel's target graph: when their diff against the base is the same,
#: so is every rdeps answer (the query cache's key)
GRAPH_FILES = (":(glob)**/BUILD", ":(glob)**/BUILD.bazel", ":(glob)**/*.bzl", "WORKSPACE",
               "WORKSPACE.bazel", "MODULE.bazel", ":(glob)**/.bazelrc")

#: $1 the base revision, $2.. the GPU device files, then "--", then GRAPH_FILES. Prints
#: "P<TAB>package<TAB>file" per changed file owned by a package ("." the root package),
#: "N<TAB><TAB>file" for one outside every package, "G" when a GPU device is there, "K<TAB>"
#: the base's commit and a digest of the graph files' changes; exit 5: the base is no
#: commit here, 6: the folder is no git checkout. (One exec: each costs a round trip.)
CHANGED_SCRIPT = r"""
g() { git -c safe.directory='*' "$@"; }
base=$1; shift
while [ "$#" -gt 0 ] && [ "$1" != -- ]; do [ -e "$1" ] && echo G; shift; done; shift
g rev-parse --is-inside-work-tree >/dev/null 2>&1 || exit 6
commit=$(g rev-parse -q --verify "$base^{commit}") || exit 5
graph=$({ g diff --no-renames "$base" -- "$@"
          g ls-files -z --others --exclude-standard -- "$@" | xargs -0 -r sha256sum; } |
        sha256sum)
printf 'K\t%s %s\n' "$commit" "${graph%% *}"
{ g diff --name-only --relative --no-renames --diff-filter=d "$base" -- &&
  g ls-files --others --exclude-standard; } | sort -u | while IFS= read -r f; do
  d=$(dirname "$f")
  while :; do
    if [ -f "$d/BUILD" ] || [ -f "$d/BUILD.bazel" ]; then printf 'P\t%s\t%s\n' "$d" "$f"; break; fi
    if [ "$d" = . ] || [ "$d" = / ]; then printf 'N\t\t%s\n' "$f"; break; fi
    d=$(dirname "$d")
  done
done
"""

#: the cap on selected tests when --max is not given
DEFAULT_MAX = 50


@cache
def size_timeouts() -> dict[str, int]:
    """Bazel's default timeout of each test size (resources/knowledge/testing.toml)."""
    from ..knowledge import read_toml

    raw = read_toml(resource_path("knowledge", "testing.toml"))["size_timeouts"]
    return {k: int(v) for k, v in raw.items() if k != "sources"}


@dataclass(frozen=True)
class Changes:
    """What changed against the base: (package, file) pairs, files outside packages; the
    base's commit and the digest of the target graph's files (the query cache's key);
    whether the container sees a GPU."""

    owned: list[tuple[str, str]]
    unowned: list[str]
    graph_key: str = ""
    gpu: bool = False

    @property
    def packages(self) -> list[str]:
        """The owning packages, each once, in order."""
        return list(dict.fromkeys(pkg for pkg, _f in self.owned))


def parse_changes(lines: Iterable[str]) -> Changes:
    """CHANGED_SCRIPT's output; Bazel's convenience links (bazel-*) are not sources."""
    owned, unowned, key, gpu = [], [], "", False
    for line in lines:
        kind, _t, rest = line.partition("\t")
        pkg, _t, path = rest.partition("\t")
        if kind == "G":
            gpu = True
        elif kind == "K":
            key = rest
        elif not path or path.split("/", 1)[0].startswith("bazel-"):
            continue
        elif kind == "P":
            owned.append(("" if pkg == "." else pkg, path))
        elif kind == "N":
            unowned.append(path)
    return Changes(owned, unowned, key, gpu)


def file_label(pkg: str, path: str) -> str:
    """The label of a source file: //tensorflow/core:kernels/reduce_sum_op.cc."""
    name = path[len(pkg) + 1:] if pkg else path
    return f"//{pkg}:{name}"


def _word(text: str) -> str:
    """A query word: double-quoted (labels may hold characters the query language parses)."""
    if '"' in text:
        raise TfWizardError(_("a changed file's name holds a double quote: {path}").format(
            path=text))
    return f'"{text}"'


def query_expression(changes: Changes, *, whole_packages: bool = False) -> str:
    """The tests that depend on the changed files (and, for a changed BUILD file or with
    whole_packages, every test of their packages); "" when there is nothing to ask."""
    files = [file_label(pkg, path) for pkg, path in changes.owned
             if path.rsplit("/", 1)[-1] not in BUILD_FILES]
    pkgs = [pkg for pkg, path in changes.owned
            if whole_packages or path.rsplit("/", 1)[-1] in BUILD_FILES]
    parts = [f"rdeps(//..., set({' '.join(_word(f) for f in files)}))"] if files else []
    parts += [_word(f"//{pkg}:all") for pkg in dict.fromkeys(pkgs)]
    return f'kind(".*_test rule", {" + ".join(parts)})' if parts else ""


def query_argv(plan: BuildPlan, expression: str) -> list[str]:
    """`bazel query` with the build step's startup options (the same Bazel server)."""
    build = next(step for step in plan.steps if step.name == "build")
    at = list(build.argv).index("build")
    return [*build.argv[:at], "query", "--keep_going", "--output=xml", expression]


@dataclass(frozen=True)
class Candidate:
    """A test target the query found: label, rule kind, size, tags."""

    label: str
    kind: str
    size: str
    tags: tuple[str, ...]


def parse_query_xml(text: str) -> list[Candidate]:
    """The test rules of `bazel query --output=xml` (sizes default to medium)."""
    if not text.strip():
        return []
    out = []
    for rule in ET.fromstring(text).iter("rule"):  # noqa: S314 - our own Bazel's output
        size = "medium"
        tags: tuple[str, ...] = ()
        for attr in rule:
            if attr.tag == "string" and attr.get("name") == "size":
                size = attr.get("value") or size
            elif attr.tag == "list" and attr.get("name") == "tags":
                tags = tuple(s.get("value", "") for s in attr.iter("string"))
        out.append(Candidate(rule.get("name", ""), rule.get("class", ""), size, tags))
    return sorted(out, key=lambda c: c.label)


def passes(tags: Sequence[str], filters: Sequence[str]) -> bool:
    """Bazel's --test_tag_filters: no excluded (-tag) tag, and one of the included tags
    when the filters include any."""
    have = set(tags)
    wanted = {f for f in filters if not f.startswith("-")}
    return not any(f[1:] in have for f in filters if f.startswith("-")) and (
        not wanted or bool(wanted & have))


@dataclass
class Selection:
    """From the change to the tests to run, and what was left out on the way."""

    changes: Changes
    found: list[Candidate] = field(default_factory=list)
    chosen: list[Candidate] = field(default_factory=list)
    by_tags: list[Candidate] = field(default_factory=list)  # left out by the tag filters
    by_filter: list[Candidate] = field(default_factory=list)  # left out by --filter
    over_cap: list[Candidate] = field(default_factory=list)  # left out by --max
    query_seconds: float = 0.0
    query_cached: bool = False  # the answer was kept from an earlier run

    @property
    def labels(self) -> list[str]:
        """The labels to `bazel test`."""
        return [c.label for c in self.chosen]

    def estimate(self) -> tuple[dict[str, int], int]:
        """({size: count} of the chosen tests, the worst case in seconds: the sum of their
        sizes' default timeouts)."""
        sizes = Counter(c.size for c in self.chosen)
        timeouts = size_timeouts()
        return dict(sizes), sum(timeouts.get(s, timeouts["medium"]) * n
                                for s, n in sizes.items())


def narrow(sel: Selection, filters: Sequence[str], pattern: str | None, limit: int) -> None:
    """Apply the tag filters, the --filter regex and the cap (small tests first) to
    sel.found."""
    regex = re.compile(pattern) if pattern else None
    keep = []
    for cand in sel.found:
        if not passes(cand.tags, filters):
            sel.by_tags.append(cand)
        elif regex is not None and not regex.search(cand.label):
            sel.by_filter.append(cand)
        else:
            keep.append(cand)
    order = list(size_timeouts())
    keep.sort(key=lambda c: (order.index(c.size) if c.size in order else len(order), c.label))
    sel.chosen, sel.over_cap = keep[:max(limit, 0)], keep[max(limit, 0):]
    sel.chosen.sort(key=lambda c: c.label)


#: the exit status of a git script run in an image without git (GIT_CHECK)
NO_GIT = 7
#: put before a script that runs in the container: a missing git is said as itself,
#: not as "no git checkout"
GIT_CHECK = f"command -v git >/dev/null 2>&1 || exit {NO_GIT}\n"


def source_git(box: WarmContainer, script: str, args: Sequence[str],
               on_output: OnOutput) -> int:
    """Run a git shell script in the source folder where the checkout is: on this machine
    for a checkout bind-mounted from it (the build image needs no git then), else in the
    warm container (the clone in its volume). Returns the exit status; NO_GIT when git
    is missing where it must run."""
    import shutil
    import subprocess

    step = next(s for s in box.plan.steps if s.name == "build")
    if box.plan.source_dir:
        if shutil.which("git") is None:
            return NO_GIT
        folder = Path(box.plan.source_dir) / Path(step.workdir).relative_to(SRC)
        done = subprocess.run(["sh", "-c", script, "sh", *args], cwd=folder,
                              capture_output=True, text=True, timeout=600, check=False)
        for channel, text in (("stdout", done.stdout), ("stderr", done.stderr)):
            for line in text.splitlines():
                on_output(channel, line)
        return done.returncode
    code = box.exec(["sh", "-c", GIT_CHECK + script, "sh", *args], workdir=step.workdir,
                    on_output=on_output).exit_code
    return -1 if code is None else code  # None: cancelled


def no_git_error(box: WarmContainer) -> TfWizardError:
    """Why git could not run: not on this machine (a local checkout), or not in the build
    image (the clone lives in the container's volume)."""
    if box.plan.source_dir:
        return TfWizardError(_("git is not installed on this machine, where the checkout "
                               "{path} is: tfwizard finds the changed files with git; "
                               "install git, or name the test targets").format(
                                   path=box.plan.source_dir))
    return TfWizardError(_("the build image {image} has no git, and the source was cloned "
                           "into the build container's volume, so git must run there: "
                           "name the test targets, or set build.image to an image with "
                           "git").format(image=box.plan.image))


def changed_files(box: WarmContainer, base: str) -> Changes:
    """What changed in the source folder against `base` (see the module), and whether a
    GPU device is in the container; git runs where the checkout is (source_git)."""
    from .run import has_gpu

    out: list[str] = []
    err: list[str] = []
    on_host = bool(box.plan.source_dir)
    devices = () if on_host else GPU_DEVICES  # this machine's devices are not the box's
    code = source_git(box, CHANGED_SCRIPT, [base, *devices, "--", *GRAPH_FILES],
                      lambda c, line: (out if c == "stdout" else err).append(line))
    if code == NO_GIT:
        raise no_git_error(box)
    if code == 6:
        raise TfWizardError(_("the source folder is no git checkout: tfwizard finds the "
                              "changed files with git; name the test targets instead"))
    if code == 5:
        raise TfWizardError(_("the base {base!r} is no commit of the source folder's git "
                              "checkout (use --base REV)").format(base=base))
    if code != 0:
        raise TfWizardError(_("git could not list the changed files (exit {code}): "
                              "{output}").format(code=code, output=" ".join(err[-5:])))
    changes = parse_changes(out)
    if on_host and has_gpu(box):
        changes = Changes(changes.owned, changes.unowned, changes.graph_key, gpu=True)
    return changes


#: query answers kept in the cache folder (the newest ones)
CACHE_KEEP = 32


def cache_file(cache_dir: Path, box: WarmContainer, changes: Changes, expression: str
               ) -> Path:
    """Where the answer to `expression` is kept: keyed by the workspace, the image, the
    base's commit, the digest of the target graph's files and the expression itself."""
    key = json.dumps([box.workspace.container_name, box.plan.image, changes.graph_key,
                      expression])
    return cache_dir / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".xml")


def _keep(path: Path, text: str) -> None:
    from ..paths import atomic_write, private_dir

    private_dir(path.parent)
    atomic_write(path, text.encode("utf-8"))
    old = sorted(path.parent.glob("*.xml"), key=lambda p: p.stat().st_mtime)[:-CACHE_KEEP]
    for stale in old:
        stale.unlink(missing_ok=True)


def query_tests(box: WarmContainer, changes: Changes, expression: str, *,
                cache_dir: Path | None = None, on_output: OnOutput | None = None
                ) -> tuple[str, float, bool]:
    """`bazel query --output=xml` of `expression` on the build's Bazel server, or the kept
    answer when the target graph's files are as they were: (XML, seconds, from the cache)."""
    kept = cache_file(cache_dir, box, changes, expression) if cache_dir else None
    if kept is not None and changes.graph_key and kept.is_file():
        return kept.read_text("utf-8"), 0.0, True
    step = next(s for s in box.plan.steps if s.name == "build")
    xml: list[str] = []

    def out(channel: str, line: str) -> None:
        if channel == "stdout":
            xml.append(line)
        elif on_output is not None:
            on_output(channel, line)

    result = box.exec(query_argv(box.plan, expression), env=step.env, workdir=step.workdir,
                      on_output=out)
    if result.exit_code not in (0, 3):  # 3: --keep_going left out an undeclared file
        raise TfWizardError(_("bazel query could not map the changed files to tests "
                              "(exit {code})").format(code=result.exit_code))
    text = "\n".join(xml)
    if kept is not None and changes.graph_key and result.exit_code == 0:
        _keep(kept, text)
    return text, result.seconds, False


def select_tests(box: WarmContainer, *, base: str, filters: TagFilters, limit: int,
                 pattern: str | None = None, whole_packages: bool = False,
                 cache_dir: Path | None = None, on_output: OnOutput | None = None
                 ) -> Selection:
    """The tests of the change in the warm container (started by the caller), narrowed by
    the tag filters for a container with or without a GPU, `pattern` and `limit`."""
    sel = Selection(changed_files(box, base))
    expression = query_expression(sel.changes, whole_packages=whole_packages)
    if not expression:
        return sel
    text, sel.query_seconds, sel.query_cached = query_tests(
        box, sel.changes, expression, cache_dir=cache_dir, on_output=on_output)
    sel.found = parse_query_xml(text)
    narrow(sel, filters.for_container(sel.changes.gpu), pattern, limit)
    return sel
