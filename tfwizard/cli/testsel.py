"""`tfwizard test`'s selection and summary options: without targets, the tests of
the change (core/testloop/select.py), shown with a size estimate before they run; and
`--summary [FILE|-]`, the pull-request Markdown (core/testloop/summary.py)."""

from __future__ import annotations

import argparse
import shlex
from typing import Any

from ..core.i18n import _, ngettext
from .context import Environment, arg_path

#: the cap on selected tests when --max is not given: core.testloop.select.DEFAULT_MAX,
#: written out so that building the parser imports no build module
#: (tests/cli/test_testsel.py checks they agree)
DEFAULT_MAX = 50

#: $1 the base: its short commit, then git's diffstat of the change against it
DIFFSTAT_SCRIPT = ("git -c safe.directory='*' rev-parse --short \"$1^{commit}\" && "
                   "git -c safe.directory='*' diff --stat --relative \"$1\" --")




def add_selection_options(p: Any) -> None:
    """--base, --max, --filter, --package, --list, --summary on `tfwizard test`."""
    p.add_argument("--base", metavar="REV", default=None,
                   help=_("without targets: the revision the change is measured against "
                          "(default: the recipe's tensorflow.ref, else HEAD)"))
    p.add_argument("--max", type=int, default=DEFAULT_MAX, metavar="N",
                   help=_("without targets: run at most N of the selected tests, small ones "
                          "first (default: {n})").format(n=DEFAULT_MAX))
    p.add_argument("--filter", metavar="REGEX", default=None,
                   help=_("without targets: keep only the selected tests whose label "
                          "matches REGEX"))
    p.add_argument("--package", action="store_true",
                   help=_("without targets: also every test in the packages of the changed "
                          "files"))
    p.add_argument("--list", action="store_true",
                   help=_("show the selected tests and stop (nothing runs)"))
    p.add_argument("--summary", nargs="?", const="-", default=None, metavar="FILE",
                   help=_("write a Markdown summary for a pull request to FILE (- or no "
                          "FILE: standard output)"))


def base_of(args: argparse.Namespace, recipe: Any) -> str:
    """The revision the change is measured against."""
    return args.base or recipe.tensorflow.ref or "HEAD"


def pick(env: Environment, args: argparse.Namespace, box: Any, recipe: Any
         ) -> tuple[list[str], bool]:
    """The tests of the change, narrowed and capped, and whether the container sees a GPU;
    the list and the estimate on stderr."""
    from ..core.paths import data_dir
    from ..core.testloop.run import tag_filters
    from ..core.testloop.select import select_tests

    base = base_of(args, recipe)
    sel = select_tests(box, base=base, filters=tag_filters(), pattern=args.filter,
                       limit=args.max, whole_packages=args.package,
                       cache_dir=data_dir(env.env) / "tests" / "query-cache")
    say = env.err
    how = (_("bazel query: kept answer, the BUILD files are unchanged") if sel.query_cached
           else _("bazel query: {seconds:.1f} s").format(seconds=sel.query_seconds))
    files, found = len(sel.changes.owned) + len(sel.changes.unowned), len(sel.found)
    say(_("{files} against {base}; {tests} ({how})").format(
        files=ngettext("{count} changed file", "{count} changed files", files).format(
            count=files),
        base=base, how=how,
        tests=ngettext("{count} test depends on the change", "{count} tests depend on the change",
                       found).format(count=found)))
    for path in sel.changes.unowned:
        say("  " + _("not in any Bazel package: {path}").format(path=path))
    for cand in sel.by_tags:
        say("  " + _("left out by the tag filters: {label} ({tags})").format(
            label=cand.label, tags=", ".join(cand.tags)))
    if sel.by_filter:
        say("  " + _("{n} left out by --filter").format(n=len(sel.by_filter)))
    if sel.over_cap:
        say("  " + _("{n} left out by --max {max} (raise it, or narrow with --filter)"
                     ).format(n=len(sel.over_cap), max=args.max))
    sizes, worst = sel.estimate()
    say(ngettext("{n} test to run: {sizes}; at most {minutes:.0f} min by its size's timeout",
                 "{n} tests to run: {sizes}; at most {minutes:.0f} min by their sizes' "
                 "timeouts", len(sel.chosen)).format(n=len(sel.chosen), minutes=worst / 60,
                            sizes=", ".join(f"{k} {v}" for k, v in sorted(sizes.items()))
                            or "-"))
    for cand in sel.chosen:
        say(f"  {cand.label}  [{cand.kind.removesuffix(' rule')}, {cand.size}]")
    return sel.labels, sel.changes.gpu


def write_summary(env: Environment, args: argparse.Namespace, box: Any, recipe: Any,
                  run: Any, targets: list[str]) -> None:
    """The PR summary of `run` to args.summary (a file, or "-" for standard output), and
    into the run's record as summary.md."""
    from ..core.paths import atomic_write
    from ..core.testloop.select import NO_GIT, no_git_error, source_git
    from ..core.testloop.summary import markdown_summary

    base = base_of(args, recipe)
    lines: list[str] = []
    code = source_git(box, DIFFSTAT_SCRIPT, [base],
                      lambda c, line: lines.append(line) if c == "stdout" else None)
    commit, diffstat = (lines[0], "\n".join(lines[1:])) if lines else ("", "")
    if code != 0:  # the tests ran: say so, and summarize them all the same
        env.err(_("git could not give the diffstat against {base}").format(base=base)
                if code != NO_GIT else no_git_error(box).message)
        commit, diffstat = "", f"git diff --stat {base}: exit {code}"
    bare = [a for a in run.argv if not a.startswith("--build_event_json_file=")]
    commands = [shlex.join(["tfwizard", "test", args.recipe, *targets]),
                shlex.join(bare)]
    text = markdown_summary(run, recipe_path=args.recipe, recipe=recipe, diffstat=diffstat,
                            ref=f"{base} ({commit})" if commit else base, commands=commands)
    if run.record_dir is not None:
        atomic_write(run.record_dir / "summary.md", text.encode("utf-8"))
    if args.summary == "-":
        env.out(text.rstrip("\n"))
    else:
        arg_path(env, args.summary).write_text(text, "utf-8")
        env.err(_("wrote the pull-request summary to {path}").format(path=args.summary))
