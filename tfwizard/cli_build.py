"""`tfwizard build` and `tfwizard diagnose`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import threading
import time
from pathlib import Path
from typing import Any

from .cli import Environment, ExitStatus, _path
from .core.diagnosis_text import diagnosis_block
from .core.errors import UsageError
from .core.i18n import _
from .core.vocab import build_outcome as build_failed_text
from .core.vocab import eta_text, phase_name, severity_word, status_word
from .core.vocab import install_outcome as install_failed_text


def register(sub: Any) -> None:
    p = sub.add_parser("build", help=_("build the recipe's wheel in Docker, with live progress"))
    p.add_argument("recipe", metavar="RECIPE", nargs="?", help=_("the recipe file (.toml)"))
    p.add_argument("--attach", nargs="?", const="", metavar="BUILD_ID",
                   help=_("follow a build whose `tfwizard build` stopped (killed, crashed, "
                        "detached): replay its log, follow it to the end, copy the wheel out "
                        "(default: the one build running)"))
    p.add_argument("--out", metavar="DIR",
                   help=_("folder for the wheel (default: the recipe's output.dir, else the "
                        "build record folder)"))
    p.add_argument("--dry-run", action="store_true",
                   help=_("print the plan (commands a person could paste) and build nothing"))
    p.add_argument("--json", action="store_true", help=_("one JSON event per line"))
    p.add_argument("--host", metavar="PROFILE",
                   help=_("the build host's `tfwizard detect --json` file (default: detect)"))
    p.add_argument("--target", metavar="PROFILE",
                   help=_("the machine the wheel is for (default: the recipe's, else this one)"))
    p.add_argument("--force", action="store_true",
                   help=_("build even when `tfwizard check` reports errors"))
    p.add_argument("--install", action="store_true",
                   help=_("then install the wheel as the recipe's [install] section says"))
    p.add_argument("--venv", metavar="DIR", help=_("with --install: this venv (created if needed)"))
    p.add_argument("--find-links", action="append", default=[], metavar="DIR",
                   help=_("with --install: also look for dependencies here (repeatable)"))
    p.add_argument("--no-index", action="store_true",
                   help=_("with --install: do not use the package index (offline)"))
    p.add_argument("--verify", action="store_true",
                   help=_("with --install: then verify TensorFlow in that interpreter"))
    p.set_defaults(handler=cmd_build)

    p = sub.add_parser("diagnose", help=_("explain a failed build's log (known failure "
                                          "signatures), or with --runtime a program's output"))
    p.add_argument("log", metavar="LOGFILE",
                   help=_("a log file, a build record folder, a build id, or - to read "
                          "standard input"))
    p.add_argument("--runtime", action="store_true",
                   help=_("the log is what a program using TensorFlow printed (its runtime "
                          "messages), not a build's"))
    p.add_argument("--target", metavar="PROFILE",
                   help=_("with --runtime: the `tfwizard detect --json` profile of the "
                          "machine that ran the program (default: detect this one)"))
    p.add_argument("--recipe", metavar="RECIPE",
                   help=_("the recipe a fix should change: the `tfwizard recipe set` "
                          "commands printed name it and start from its values"))
    p.add_argument("--json", action="store_true", help=_("print the diagnoses as JSON"))
    p.set_defaults(handler=cmd_diagnose)


# -- build -------------------------------------------------------------------------------------


def prepare(args: argparse.Namespace, env: Environment, planner: Any
            ) -> ExitStatus | tuple[Path, Any, Path, Any, Any]:
    """Shared by build and fetch: load the recipe and hosts, stop on check errors, make the
    plan with `planner`, print it for --dry-run, and run the preflight; returns an exit
    status to stop with, or (recipe path, recipe, recipe dir, build host, plan)."""
    from .cli_check import load_hosts, preflight_gate
    from .core.plan import render_commands
    from .core.recipe import load_recipe

    recipe_path = _path(env, args.recipe)
    recipe = load_recipe(recipe_path)
    build_host, target_host = load_hosts(args, env, recipe)
    status = _check(recipe, build_host, target_host, args, env)
    if status is not None:
        return status
    recipe_dir = recipe.path.parent if recipe.path is not None else recipe_path.parent
    plan = planner(recipe, build_host=build_host, target_host=target_host,
                   recipe_dir=recipe_dir)
    if args.dry_run:
        env.out(plan.to_json() if args.json else render_commands(plan).rstrip("\n"))
        return ExitStatus.OK
    if getattr(args, "out", None):
        _check_out(_path(env, args.out))  # a usage error comes before looking at the image
    status = preflight_gate(recipe, args, env, plan)  # proxies, paths, the image
    if status is not None:
        return status
    return recipe_path, recipe, recipe_dir, build_host, plan


def cmd_build(args: argparse.Namespace, env: Environment) -> ExitStatus:
    from .core.plan import make_plan

    if args.attach is not None:
        return _attach(args, env)
    if not args.recipe:
        raise UsageError(_("tfwizard build needs a RECIPE (or --attach [BUILD_ID])"))
    prepared = prepare(args, env, make_plan)
    if isinstance(prepared, ExitStatus):
        return prepared
    recipe_path, recipe, recipe_dir, build_host, plan = prepared
    out_dir = _path(env, args.out) if args.out else recipe.resolve_path("output.dir",
                                                                         base=recipe_dir)
    _check_out(out_dir)
    from .core.runner import BuildRunner

    runner = BuildRunner(plan, out_dir=out_dir, recipe_text=recipe_path.read_text("utf-8"),
                         env=env.env)
    status = _follow(runner, args, env)
    result = runner.result
    if status != ExitStatus.OK or result is None:
        return status
    if args.install and result.wheel:
        return _install_and_verify(args, env, recipe, Path(result.wheel),
                                   Path(result.record_dir), build_host)
    return ExitStatus.OK


def _check_out(out_dir: Path | None) -> None:
    """Refuse an output folder that is a file, not writable or a system folder, now."""
    from .core.safety import check_output_dir

    problem = check_output_dir(out_dir) if out_dir is not None else None
    if problem:
        raise UsageError(_("the output folder {path} {problem}").format(path=out_dir,
                                                                         problem=problem),
                         _("Choose another with --out DIR (or output.dir in the recipe)."))


def _follow(runner: Any, args: argparse.Namespace, env: Environment) -> ExitStatus:
    """Drive the runner with the printer that suits the output; the exit status."""
    if args.json:
        printer: _Printer = _JsonPrinter(env)
    elif env.stdout_isatty:
        printer = _RichPrinter(env)
    else:
        printer = _PlainPrinter(env)
    with printer:
        asyncio.run(_drive(runner, printer))
    result = runner.result
    if result is None or result.status == "cancelled":
        return ExitStatus.CANCELLED
    return ExitStatus.OK if result.ok else ExitStatus.ERROR


def _attach(args: argparse.Namespace, env: Environment) -> ExitStatus:
    """`tfwizard build --attach [BUILD_ID]`: follow a build its front end left."""
    from .core.runner import BuildRunner

    out_dir = _path(env, args.out) if args.out else None
    _check_out(out_dir)
    runner = BuildRunner.attach(args.attach or None, env=env.env, out_dir=out_dir)
    if not args.json and runner.record is not None:
        env.err("tfwizard: " + _("attaching to build {id} (record: {path})").format(
            id=runner.build_id, path=runner.record.path))
    return _follow(runner, args, env)


def _install_and_verify(args: argparse.Namespace, env: Environment, recipe: Any, wheel: Path,
                        record: Path, host: Any) -> ExitStatus:
    """`build --install [--verify]`: chain into install (and verify) with the recipe's
    [install] section; their reports are saved in the build record."""
    import json

    from .core.errors import UsageError
    from .core.install import InstallProgress, install_wheel, resolve_target

    inst = recipe.install
    # --venv is relative to where the command runs; the recipe's paths to the recipe
    venv = _path(env, args.venv) if args.venv else recipe.resolve_path("install.venv")
    python = recipe.resolve_path("install.python")
    if venv is None and python is None:
        raise UsageError(_("--install needs a target: set install.venv (or install.python) in "
                           "the recipe, or pass --venv DIR"))
    target = resolve_target(venv=venv, python=python, create=venv is not None)
    last = [""]

    def report(event: Any) -> None:
        if args.json:
            env.out(json.dumps(event.to_dict()))
        elif isinstance(event, InstallProgress) and event.summary() != last[0]:
            last[0] = event.summary()
            env.out(_("install: {summary}").format(summary=last[0]))

    if not args.json:
        env.out(_("Installing {wheel} into {python} ...").format(wheel=wheel.name,
                                                                 python=target.python))
    installed = install_wheel(wheel, target, list(inst.extras), index_url=inst.index_url,
                              trusted_host=inst.trusted_host,
                              find_links=[str(_path(env, p)) for p in args.find_links],
                              no_index=args.no_index, env=env.env, reporter=report)
    (record / "install.json").write_text(json.dumps(installed.to_dict(), indent=2) + "\n",
                                         encoding="utf-8")
    if not installed.ok:
        env.out(install_failed_text(installed.status, installed.message))
        return ExitStatus.ERROR
    if not args.json:
        env.out(_("Installed {requirement} into {python}.").format(
            requirement=installed.requirement, python=installed.python))
    if not args.verify:
        if not args.json:
            env.out(_("Next: `tfwizard verify --python {python} --build {record}`.").format(
                python=installed.python, record=record))
        return ExitStatus.OK
    from .core.verify import render_report, verify

    checked = verify(str(installed.python), host=host, env=env.env, recipe=recipe)
    (record / "verify.json").write_text(checked.to_json() + "\n", encoding="utf-8")
    env.out(checked.to_json() if args.json else render_report(checked, show_log=False))
    return ExitStatus.OK if checked.ok else ExitStatus.ERROR


def _check(recipe: Any, build_host: Any, target_host: Any, args: argparse.Namespace,
           env: Environment) -> ExitStatus | None:
    """Refuse to build while `tfwizard check` reports an error (unless --force)."""
    from .core.rules import evaluate

    findings = evaluate(recipe, build_host, target_host)
    errors = [f for f in findings if f.severity == "error"]
    shown = errors + [f for f in findings if f.severity == "warning"]
    for f in shown:
        line = f"{severity_word(f.severity)} {f.code}: {f.message}"
        if args.json:
            env.out(json.dumps({"type": "check", "severity": f.severity, "code": f.code,
                                "message": f.message}))
        else:
            env.err(line)
    if errors and not args.force:
        env.err("tfwizard: " + _("{count} error(s) in the recipe; fix them (`tfwizard check "
                                 "{recipe}`) or pass --force to build anyway.")
                .format(count=len(errors), recipe=args.recipe))
        return ExitStatus.ERROR
    return None


async def _drive(runner: Any, printer: _Printer) -> None:
    """Run the build; the first Ctrl-C (or SIGTERM) cancels it cleanly, the second hard."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    presses = 0

    def on_signal() -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            printer.note(_("cancelling the build (Ctrl-C again to stop at once)..."))
            runner.cancel()
        elif task is not None:
            task.cancel()  # the runner's cleanup still removes the containers

    installed = []
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, on_signal)
                installed.append(sig)
    try:
        async for event in runner.events():
            printer.event(event)
    except asyncio.CancelledError:
        printer.note(_("build stopped; containers removed"))
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)


# -- printers ---------------------------------------------------------------------------------


class _Printer:
    def __init__(self, env: Environment) -> None:
        self.env = env

    def __enter__(self) -> _Printer:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def note(self, text: str) -> None:
        self.env.err(f"tfwizard: {text}")

    def event(self, event: Any) -> None:
        raise NotImplementedError

    def finished(self, result: Any, findings: list[Any]) -> None:
        from .core.progress import CacheSummary, cache_summary_text

        env = self.env
        if result.ok:
            env.out(_("Wheel: {path}").format(path=result.wheel))
        else:
            env.out(build_failed_text(result.status, result.message))
        if result.cache:  # every build Bazel ran ends with where its actions came from
            env.out(cache_summary_text(CacheSummary(**result.cache)))
        for f in findings:
            env.out("\n".join("  " + line for line in diagnosis_block(f, quotes=4)))
        env.out(_("Record: {path}  (log: {log})").format(
            path=result.record_dir, log=Path(result.record_dir) / "log.txt"))


class _PlainPrinter(_Printer):
    """Not a terminal: every log line as it comes, progress every few seconds."""

    def __init__(self, env: Environment) -> None:
        super().__init__(env)
        self.findings: list[Any] = []
        self._last_progress = 0.0

    def event(self, event: Any) -> None:
        kind = event.type
        out = self.env.stdout
        if kind == "log":
            prefix = "tfwizard: " if event.channel == "tfwizard" else ""
            out.write("".join(f"{prefix}{line}\n" for line in event.lines))
            out.flush()
        elif kind == "phase":
            self.env.out("tfwizard: " + _("phase {phase}").format(phase=phase_name(event.phase)))
        elif kind == "progress":
            now = time.monotonic()
            if event.total and now - self._last_progress >= 5:
                self._last_progress = now
                self.env.out("tfwizard: " + _progress_text(event))
        elif kind == "finding":
            self.findings.append(event)
        elif kind == "finished":
            self.finished(event.result, self.findings)


class _JsonPrinter(_Printer):
    """One JSON object per line: log events one per log line, progress at most 1/s."""

    def __init__(self, env: Environment) -> None:
        super().__init__(env)
        self._last_progress = 0.0

    def note(self, text: str) -> None:
        self._write({"type": "note", "message": text})

    def _write(self, data: dict[str, Any]) -> None:
        self.env.stdout.write(json.dumps(data) + "\n")
        self.env.stdout.flush()

    def event(self, event: Any) -> None:
        if event.type == "log":
            out = self.env.stdout
            out.write("".join(
                json.dumps({"type": "log", "channel": event.channel, "n": event.first_line + i,
                            "line": line}) + "\n" for i, line in enumerate(event.lines)))
            out.flush()
            return
        if event.type == "progress":
            now = time.monotonic()
            if now - self._last_progress < 1.0:
                return
            self._last_progress = now
        self._write(event.to_dict())


class _RichPrinter(_Printer):
    """A terminal: a progress bar (phase, done/total actions, ETA); tfwizard's own lines,
    Bazel's ERROR lines and the result above it. The full log is in the record."""

    def __init__(self, env: Environment) -> None:
        super().__init__(env)
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
        )

        self.console = Console(file=env.stdout, highlight=False)
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.fields[phase]:<9}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[eta]}"),
            TextColumn("[dim]{task.fields[message]}"),
            console=self.console,
            transient=False,
        )
        self.task = self.progress.add_task("build", total=None, phase="prepare", eta="",
                                           message="")
        self.findings: list[Any] = []

    def __enter__(self) -> _Printer:
        self.progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.stop()

    def note(self, text: str) -> None:
        from rich.markup import escape

        self.console.print(f"[yellow]tfwizard: {escape(text)}")

    def event(self, event: Any) -> None:
        from rich.markup import escape

        kind = event.type
        if kind == "log":
            for line in event.lines:
                if event.channel == "tfwizard":
                    self.console.print(f"[cyan]tfwizard:[/] {escape(line)}", markup=True,
                                       highlight=False, soft_wrap=True)
                elif line.startswith(("ERROR:", "FAILED:")):
                    self.console.print(line, style="red", markup=False, soft_wrap=True)
        elif kind == "phase":
            self.progress.update(self.task, phase=phase_name(event.phase))
        elif kind == "progress":
            fields: dict[str, Any] = {"phase": phase_name(event.phase),
                                      "message": event.message[:60],
                                      "eta": eta_text(event.eta_s)}
            if event.total:
                fields.update(total=event.total, completed=event.done or 0)
            self.progress.update(self.task, **fields)
        elif kind == "finding":
            self.findings.append(event)
        elif kind == "finished":
            self.progress.update(self.task, phase=status_word(event.result.status), eta="",
                                 message="")
            self.progress.stop()
            self.finished(event.result, self.findings)


def _progress_text(event: Any) -> str:
    """"progress compile 10/20 actions, ETA 0:01:05 - Compiling x.cc" for the plain printer."""
    counts = dict(phase=phase_name(event.phase), done=event.done, total=event.total)
    if event.eta_s is not None:
        text = _("progress {phase} {done}/{total} actions, {eta}").format(
            **counts, eta=eta_text(event.eta_s))
    else:
        text = _("progress {phase} {done}/{total} actions").format(**counts)
    return text + (f" - {event.message}" if event.message else "")


# -- diagnose ---------------------------------------------------------------------------------


def _log_path(env: Environment, text: str) -> Path:
    path = _path(env, text)
    if path.exists():
        return path
    from .core.record import data_dir, is_build_id

    if is_build_id(text):
        record = data_dir(env.env) / "builds" / text
        if record.is_dir():
            return record
    raise UsageError(_("{text}: no such log file, record folder or build id").format(text=text),
                     _("Pass the path of a log (e.g. the record's log.txt)."))


def _stdin_bytes(env: Environment) -> Any:
    """Standard input as a binary stream (a text stream is encoded as UTF-8)."""
    import io

    buffer = getattr(env.stdin, "buffer", None)
    if buffer is not None:
        return buffer
    data = env.stdin.read()
    return io.BytesIO(data.encode("utf-8") if isinstance(data, str) else data)


class _FixContext:
    """What a diagnosis' recipe fix is resolved against (core/fixes.py): --recipe, else the
    build record's recipe.toml; the record's plan.json (the command then says RECIPE)."""

    def __init__(self, args: argparse.Namespace, env: Environment, record: Path | None) -> None:
        from .core.fixes import record_context
        from .core.recipe import load_recipe

        self.arg = "RECIPE"
        self.recipe: Any = None
        self.plan: Any = None
        if record is not None:
            self.recipe, self.plan = record_context(record)
        if args.recipe:
            self.recipe = load_recipe(_path(env, args.recipe))
            self.arg = args.recipe

    def resolve(self, found: list[Any]) -> list[Any]:
        from .core.fixes import resolve_diagnoses

        return resolve_diagnoses(found, recipe=self.recipe, plan=self.plan)

    def command(self, changes: dict[str, Any]) -> str:
        """The `tfwizard recipe set` command making a resolved fix's changes ("" for none)."""
        from .core.recipe_edit import fix_command

        return fix_command(changes, self.arg, self.recipe)


def cmd_diagnose(args: argparse.Namespace, env: Environment) -> ExitStatus:
    if args.target and not args.runtime:
        raise UsageError(_("--target goes with --runtime"),
                         _("A build log is explained without a host profile."))
    path = None if args.log == "-" else _log_path(env, args.log)
    # a record folder, or its log.txt: fixes resolved against its recipe and plan
    record = (path if path is not None and path.is_dir()
              else path.parent if path is not None and path.name == "log.txt" else None)
    fixes = _FixContext(args, env, record)
    shown = "-" if path is None else str(path)
    try:
        if args.runtime:
            return _diagnose_runtime(args, env, path, fixes, shown)
        from .core.diagnose import diagnose_file, diagnose_stream

        found = (fixes.resolve(diagnose_stream(_stdin_bytes(env))) if path is None
                 else diagnose_file(path, recipe=fixes.recipe, plan=fixes.plan))
    except OSError as exc:
        raise UsageError(_("{path}: cannot read the log: {error}").format(
            path=shown, error=exc.strerror or exc)) from None
    if args.json:
        env.out(json.dumps({"log": shown, "kind": "build", "diagnoses": [
            {**d.to_dict(), "fix_command": fixes.command(dict(d.recipe_fix))} for d in found]},
            indent=2))
        return ExitStatus.OK
    if not found:
        env.out(_("{path}: no known failure signature found.").format(path=shown))
        if path is not None:
            env.out(_("If it is a program's output rather than a build's: "
                      "`tfwizard diagnose --runtime {path}`.").format(path=args.log))
        return ExitStatus.OK
    for d in found:
        # a warning's last quote is what the server or tool said
        _print_diagnosis(env, d, fixes, quotes=2 + (d.severity == "warning"))
    return ExitStatus.OK


def _diagnose_runtime(args: argparse.Namespace, env: Environment, path: Path | None,
                      fixes: _FixContext, shown: str) -> ExitStatus:
    from .core.host import HostProfile
    from .core.runtime_diagnosis import diagnose_log

    if path is not None and path.is_dir():
        raise UsageError(_("{path}: --runtime reads a program's output, not a build record").format(
            path=path))
    if args.target:
        host = HostProfile.load(_path(env, args.target))
    else:
        from .core.detect import detect_host

        host = detect_host(env=env.env)
    ccs = list(fixes.recipe.cuda.compute_capabilities) if fixes.recipe is not None else None
    # a program run here most likely saw this shell's LD_LIBRARY_PATH; elsewhere: unknown
    ld_path = None if args.target else env.env.get("LD_LIBRARY_PATH", "")
    if path is None:
        found = diagnose_log(_stdin_bytes(env), host, recipe_ccs=ccs, ld_library_path=ld_path)
    else:
        with path.open("rb") as fh:
            found = diagnose_log(fh, host, recipe_ccs=ccs, ld_library_path=ld_path)
    found = fixes.resolve(found)
    if args.json:
        env.out(json.dumps({"log": shown, "kind": "runtime", "host": _host_text(host),
                            "diagnoses": [{**d.to_dict(), "fix_command": fixes.command(
                                d.recipe_fix)} for d in found]}, indent=2))
        return ExitStatus.OK
    env.out(_("This machine: {host}").format(host=_host_text(host)) if not args.target
            else _("The machine that ran it: {host}").format(host=_host_text(host)))
    if not found:
        env.out(_("{path}: no known TensorFlow runtime message found.").format(path=shown))
        return ExitStatus.OK
    for d in found:
        _print_diagnosis(env, d, fixes, quotes=2)
    return ExitStatus.OK


def _host_text(host: Any) -> str:
    """The GPUs and driver of a host profile in one line."""
    nvidia = host.nvidia
    if not nvidia.gpus:
        return nvidia.message or _("no NVIDIA GPU")
    gpus = ", ".join(_("GPU {index} ({name}, CC {cc})").format(
        index=g.index, name=g.name or "?", cc=g.compute_capability or "?") for g in nvidia.gpus)
    text = _("{gpus}; driver {driver} (CUDA {cuda})").format(
        gpus=gpus, driver=nvidia.driver_version or "?", cuda=nvidia.cuda_driver_version or "?")
    return text + (" - WSL2" if host.os.wsl2 else "")


def _print_diagnosis(env: Environment, d: Any, fixes: _FixContext, *, quotes: int) -> None:
    """A diagnosis (its heading, quoted evidence, cause, next step and resolved recipe fix)
    with the command that applies the fix, or why there is none."""
    for line in diagnosis_block(d, quotes=quotes):
        env.out(line)
    if d.recipe_fix:
        env.out("  " + _("apply: {command}").format(command=fixes.command(dict(d.recipe_fix))))
    elif d.fix_problem and fixes.recipe is None:
        env.out("  " + _("(with --recipe RECIPE the fix is resolved against that recipe)"))
