"""`tfwizard diagnose`: explain a failed build's log (known failure signatures), or with
--runtime a program's output; each diagnosis with the `tfwizard recipe set` command that
applies its fix. A failure no rule knows gets its root-cause lines and a search query,
labelled as not recognised (core/diagnosis/unrecognised.py)."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from ..core.errors import UsageError
from ..core.i18n import _
from .context import Environment, ExitStatus, arg_path
from .render import host_text


def register(sub: Any) -> None:
    """Add `diagnose` to the `tfwizard` parser's subcommands."""
    p = sub.add_parser("diagnose", help=_("explain a failed build's log (known failure "
                                          "signatures), or with --runtime a program's output"))
    p.add_argument("log", metavar="LOGFILE",
                   help=_("a log file, a build record folder, a build id, or - to read "
                          "standard input"))
    p.add_argument("--runtime", action="store_true",
                   help=_("the log is what a program using TensorFlow printed (its runtime "
                          "messages), not a build's"))
    p.add_argument("--target", metavar="PROFILE",
                   help=_("the `tfwizard detect --json` profile of the machine that ran "
                          "the program, for --runtime or a log that turns out to be a "
                          "program's output (default: detect this one)"))
    p.add_argument("--recipe", metavar="RECIPE",
                   help=_("the recipe a fix should change: the `tfwizard recipe set` "
                          "commands printed name it and start from its values"))
    p.add_argument("--source", metavar="DIR",
                   help=_("the TensorFlow checkout the build ran on: the Bazel its "
                          ".bazelversion asks for is set beside the one the log says ran"))
    p.add_argument("--json", action="store_true", help=_("print the diagnoses as JSON"))
    p.set_defaults(handler=cmd_diagnose)


def log_path(env: Environment, text: str) -> Path:
    """A log file or record folder named on the command line, or a build's record by id."""
    from ..core.building.run.record import find_record

    path = arg_path(env, text)
    if path.exists():
        return path
    try:
        return find_record(text, env=env.env, cwd=env.cwd)
    except UsageError:
        raise UsageError(
            _("{text}: no such log file, record folder or build id").format(text=text),
            _("Pass the path of a log (e.g. the record's log.txt).")) from None


def stdin_bytes(env: Environment) -> Any:
    """Standard input as a binary stream (a text stream is encoded as UTF-8)."""
    buffer = getattr(env.stdin, "buffer", None)
    if buffer is not None:
        return buffer
    data = env.stdin.read()
    return io.BytesIO(data.encode("utf-8") if isinstance(data, str) else data)


class FixContext:
    """What a diagnosis' recipe fix is resolved against (core/fixes.py): --recipe, else the
    build record's recipe.toml; the record's plan.json (the command then says RECIPE)."""

    def __init__(self, args: argparse.Namespace, env: Environment, record: Path | None) -> None:
        from ..core.building.run.record import record_stopped_message
        from ..core.fixes import record_context
        from ..core.recipe import load_recipe

        self.arg = "RECIPE"
        self.recipe: Any = None
        self.plan: Any = None
        self.stopped = ""  # a build tfwizard stopped with its own message before Bazel ran
        self.record = record
        if record is not None:
            self.recipe, self.plan = record_context(record)
            self.stopped = record_stopped_message(record)
        if args.recipe:
            self.recipe = load_recipe(arg_path(env, args.recipe))
            self.arg = args.recipe

    def resolve(self, found: list[Any]) -> list[Any]:
        """The diagnoses with their fixes made concrete for this recipe and plan."""
        from ..core.fixes import resolve_diagnoses

        return resolve_diagnoses(found, recipe=self.recipe, plan=self.plan,
                                 record_dir=self.record)

    def command(self, changes: dict[str, Any]) -> str:
        """The `tfwizard recipe set` command making a resolved fix's changes ("" for none)."""
        from ..core.recipe_edit import fix_command

        return fix_command(changes, self.arg, self.recipe)

    def to_dict(self, diagnosis: Any) -> dict[str, Any]:
        """A diagnosis as JSON, with the command that applies its fix."""
        return {**diagnosis.to_dict(), "fix_command": self.command(dict(diagnosis.recipe_fix))}


def cmd_diagnose(args: argparse.Namespace, env: Environment) -> ExitStatus:
    """Diagnose a build log (or, with --runtime, a program's output)."""
    if args.source and args.runtime:
        raise UsageError(_("--source goes with a build log, not --runtime"),
                         _("It names the checkout a build ran on."))
    path = None if args.log == "-" else log_path(env, args.log)
    # a record folder, or its log.txt: fixes resolved against its recipe and plan
    record = (path if path is not None and path.is_dir()
              else path.parent if path is not None and path.name == "log.txt" else None)
    target = None  # the machine that ran the program, loaded before the log is read
    if args.target:
        if record is not None:
            raise UsageError(_("--target goes with a program's output, not a build record"),
                             _("A build log is explained without a host profile."))
        from ..core.host import HostProfile

        target = HostProfile.load(arg_path(env, args.target))
    fixes = FixContext(args, env, record)
    if args.source and fixes.plan is not None:
        raise UsageError(_("{path}: a build record's plan names its source's Bazel "
                           "already").format(path=args.log), _("Leave out --source."))
    shown = "-" if path is None else str(path)
    try:
        with _log_source(env, path, runtime=args.runtime) as source:
            if args.runtime:
                return _diagnose_runtime(args, env, source, fixes, shown, target)
            return _diagnose_build(args, env, source, fixes, shown, target)
    except OSError as exc:
        raise UsageError(_("{path}: cannot read the log: {error}").format(
            path=shown, error=exc.strerror or exc)) from None


@contextlib.contextmanager
def _log_source(env: Environment, path: Path | None, *, runtime: bool) -> Iterator[_Source]:
    """The log to read (twice when nothing is recognised): a file, or standard input kept
    in a temporary file (in memory up to 64 MB)."""
    if path is not None:
        if runtime and path.is_dir():
            raise UsageError(_("{path}: --runtime reads a program's output, not a build "
                               "record").format(path=path))
        yield _Source(path / "log.txt" if path.is_dir() else path, path)
        return
    with tempfile.SpooledTemporaryFile(max_size=64 << 20) as spool:
        shutil.copyfileobj(stdin_bytes(env), spool)
        yield _Source(None, None, spool)


class _Source:
    """A log on disk (`file`, and `given`: the file or record folder named), or standard
    input kept in `spool`; `open()` gives a binary stream from its start each time."""

    def __init__(self, file: Path | None, given: Path | None, spool: Any = None) -> None:
        self.file, self.given, self.spool = file, given, spool

    @contextlib.contextmanager
    def open(self) -> Iterator[BinaryIO]:
        """The log as a binary stream, from its first byte."""
        if self.file is not None:
            with self.file.open("rb") as fh:
                yield fh
            return
        self.spool.seek(0)
        yield self.spool


def _diagnose_build(args: argparse.Namespace, env: Environment, source: _Source,
                    fixes: FixContext, shown: str, target: Any) -> ExitStatus:
    from ..core.diagnosis.build import diagnose_file, diagnose_stream, recognised
    from ..core.diagnosis.text import unrecognised_block
    from ..core.diagnosis.unrecognised import root_lines

    if source.given is not None:
        found = diagnose_file(source.given, recipe=fixes.recipe, plan=fixes.plan)
    else:
        with source.open() as fh:
            found = fixes.resolve(diagnose_stream(fh))
    versions = None
    if args.source:
        found, versions = _with_source_bazel(env, args.source, source, found)
    unknown, tried_runtime = None, False
    if not recognised(found) and not fixes.stopped:
        if not found and fixes.record is None and not args.source:
            # a bare log no build signature explains may be a program's output: what the
            # runtime catalogue finds there is shown, read as --runtime would read it
            host, as_runtime = _runtime_reading(env, source, fixes, target)
            if as_runtime:
                if not args.json:
                    env.out(_("{path}: no build failure signature found; read as a "
                              "program's output (as with --runtime):").format(path=shown))
                return _print_runtime(args, env, host, as_runtime, None, fixes, shown,
                                      read_as_runtime=True)
            tried_runtime = True
        with source.open() as fh:
            unknown = root_lines(fh, "build")
    if args.json:
        env.out(json.dumps({"log": shown, "kind": "build",
                            "diagnoses": [fixes.to_dict(d) for d in found],
                            "stopped": fixes.stopped or None,
                            **({"bazel": versions} if versions is not None else {}),
                            "unrecognised": unknown.to_dict() if unknown else None}, indent=2))
        return ExitStatus.OK
    if versions is not None and versions["ran"] is None:
        env.out(_("{path}: the log does not say which Bazel ran (configure's \"You have "
                  "bazel X installed.\", Bazel's \"Build label: X\"); the source asks for "
                  "{want}.").format(path=shown, want=versions["asked"]))
    if fixes.stopped:  # tfwizard's own message is the explanation; no search needed
        env.out(_("{path}: tfwizard stopped this build before Bazel ran:").format(path=shown))
        env.out(fixes.stopped)
        if not found:
            return ExitStatus.OK
    elif not found:
        env.out(_("{path}: no known failure signature found.").format(path=shown))
    for d in found:
        # a warning's last quote is what the server or tool said
        _print_diagnosis(env, d, fixes, quotes=2 + (d.severity == "warning"))
    if unknown is not None:
        for line in unrecognised_block(unknown):
            env.out(line)
    if tried_runtime:
        env.out(_("Read as a program's output too, it shows no known TensorFlow runtime "
                  "message."))
    return ExitStatus.OK


def _with_source_bazel(env: Environment, arg: str, source: _Source, found: list[Any]
                       ) -> tuple[list[Any], dict[str, str | None]]:
    """The diagnoses with the Bazel the checkout `arg` asks for (its .bazelversion) joined
    to the one the log says ran (bazelskew.join), and the two versions."""
    from ..core.bazelversion import read_bazelversion
    from ..core.diagnosis import bazelskew

    folder = arg_path(env, arg)
    if not folder.is_dir():
        raise UsageError(_("{path}: no such folder").format(path=arg),
                         _("--source names the TensorFlow checkout the build ran on."))
    want = read_bazelversion(folder)
    if want is None or not want.known:
        raise UsageError(
            _("{path}: no .bazelversion naming a Bazel release there").format(
                path=folder / ".bazelversion"),
            _("Name the checkout's top folder (TensorFlow keeps .bazelversion there)."))
    with source.open() as fh:
        ran = bazelskew.ran_in_stream(fh)
    versions = {"asked": str(want), "ran": str(ran) if ran is not None else None}
    return bazelskew.join(found, want, ran), versions


def _runtime_reading(env: Environment, source: _Source, fixes: FixContext,
                     target: Any) -> tuple[Any, list[Any]]:
    """The machine that ran the program (`target`: --target's profile, else this one) and
    the runtime diagnoses of the log for it."""
    from ..core.diagnosis.runtime import diagnose_log

    if target is not None:
        host = target
    else:
        from ..core.detect import detect_host

        host = detect_host(env=env.env)
    ccs = list(fixes.recipe.cuda.compute_capabilities) if fixes.recipe is not None else None
    # a program run here most likely saw this shell's LD_LIBRARY_PATH; elsewhere: unknown
    ld_path = None if target is not None else env.env.get("LD_LIBRARY_PATH", "")
    with source.open() as fh:
        found = fixes.resolve(diagnose_log(fh, host, recipe_ccs=ccs, ld_library_path=ld_path))
    return host, found


def _diagnose_runtime(args: argparse.Namespace, env: Environment, source: _Source,
                      fixes: FixContext, shown: str, target: Any) -> ExitStatus:
    from ..core.diagnosis.unrecognised import root_lines

    host, found = _runtime_reading(env, source, fixes, target)
    unknown = None
    if not found:  # nothing known: the output's own root-cause lines instead
        with source.open() as fh:
            unknown = root_lines(fh, "runtime")
    return _print_runtime(args, env, host, found, unknown, fixes, shown)


def _print_runtime(args: argparse.Namespace, env: Environment, host: Any, found: list[Any],
                   unknown: Any, fixes: FixContext, shown: str, *,
                   read_as_runtime: bool = False) -> ExitStatus:
    """A program's output explained: the machine, then the diagnoses or the lines to read
    (`read_as_runtime`: the log was given as a build's, and no build signature fit)."""
    from ..core.diagnosis.text import unrecognised_block

    if args.json:
        env.out(json.dumps({"log": shown, "kind": "runtime", "host": host_text(host),
                            **({"read_as_runtime": True} if read_as_runtime else {}),
                            "diagnoses": [fixes.to_dict(d) for d in found],
                            "unrecognised": unknown.to_dict() if unknown else None}, indent=2))
        return ExitStatus.OK
    env.out(_("This machine: {host}").format(host=host_text(host)) if not args.target
            else _("The machine that ran it: {host}").format(host=host_text(host)))
    if unknown is not None:
        env.out(_("{path}: no known TensorFlow runtime message found.").format(path=shown))
        for line in unrecognised_block(unknown):
            env.out(line)
        env.out(_("If it is a build's log rather than a program's output: "
                  "`tfwizard diagnose {path}`.").format(path=shown))
        return ExitStatus.OK
    for d in found:
        _print_diagnosis(env, d, fixes, quotes=2)
    return ExitStatus.OK


def _print_diagnosis(env: Environment, d: Any, fixes: FixContext, *, quotes: int) -> None:
    """A diagnosis (core.diagnosis_text's block) and the command that applies its fix, or
    how to get one."""
    from ..core.diagnosis.text import diagnosis_block  # the recipe schema, through fixes

    for line in diagnosis_block(d, quotes=quotes):
        env.out(line)
    if d.recipe_fix:
        env.out("  " + _("apply: {command}").format(command=fixes.command(dict(d.recipe_fix))))
    elif d.fix_problem and fixes.recipe is None:
        env.out("  " + _("(with --recipe RECIPE the fix is resolved against that recipe)"))
