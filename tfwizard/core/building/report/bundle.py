"""The diagnostics bundle: one archive with what a person needs to help with a build.

`make_bundle(record_dir)` packs, from a build record (see record.py): the recipe, the
resolved plan, a host profile (the record's `host.json` when it keeps one, else this
machine detected now), the last lines of the log, the failing actions' output (Bazel's
`ERROR:` blocks with the compiler output that follows them), the diagnosis, the result
and the install and verify reports when present, and a README.txt that says all this.

Everything that goes in is redacted (secrets.redact) first: credentials in URLs, header
values and tokens, plus every clear-text header value of the recipe and the resolved
values of the recipe's `${ENV_VAR}` references found in the environment now. A bundle is
made to be sent to someone else; nothing here trusts the record to be clean already.
"""

from __future__ import annotations

import io
import json
import os
import re
import secrets as _random
import tarfile
import time
import zipfile
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...diagnosis.text import diagnosis_block, unrecognised_block
from ...errors import UsageError
from ...host import HostProfile
from ...i18n import DEFAULT, N_, _, language, ngettext, translate
from ...secrets import literal_secrets, redact, references
from ...streams import TFWIZARD, untag
from ..run.record import BuildRecord, stopped_message

#: log lines kept at the end of the log
TAIL_LINES = 2000
#: at most this many ERROR blocks, each at most this many lines (a TF build can fail in
#: hundreds of actions at once, each repeating the same compiler error)
MAX_ERROR_BLOCKS = 20
MAX_BLOCK_LINES = 200
BUNDLE_FORMAT = 1

#: a line that ends the output of a failed action: Bazel's own messages and progress
_BLOCK_END = re.compile(
    r"^(ERROR:|INFO:|WARNING:|FAILED:|DEBUG:|Target //|Use --verbose_failures|Loading:|"
    r"Analyzing:|Build did NOT|\[[\d,]+ / [\d,]+\])")


@dataclass(frozen=True)
class ErrorBlock:
    """One `ERROR:` line of the log and the output of the failed action that follows it."""

    line: int  # 1-based number of the ERROR line in log.txt
    lines: tuple[str, ...]
    truncated: int = 0  # lines of this block left out beyond MAX_BLOCK_LINES

    def text(self) -> str:
        """The block as the bundle's errors.txt shows it."""
        more = ("  " + ngettext("... {count} more line", "... {count} more lines",
                                self.truncated).format(count=self.truncated) + "\n"
                if self.truncated else "")
        return ("--- " + _("log line {line}").format(line=self.line) + "\n"
                + "".join(f"{t}\n" for t in self.lines) + more)


@dataclass
class LogScan:
    """One pass over a log: its tail and its ERROR blocks."""

    total: int = 0
    tail: deque[str] = field(default_factory=lambda: deque(maxlen=TAIL_LINES))
    blocks: list[ErrorBlock] = field(default_factory=list)
    blocks_left_out: int = 0


def scan_log(raw_lines: Iterable[str], *, tail_lines: int = TAIL_LINES) -> LogScan:
    """The last `tail_lines` lines (channel tags kept) and the failed actions' output.

    A block starts at a line whose text starts with `ERROR:` and takes the lines that
    follow until the next Bazel message, progress line or tfwizard line: that is where
    Bazel prints the stderr of the failed action (the compiler's `error:` lines).
    """
    scan = LogScan(tail=deque(maxlen=max(tail_lines, 0)))
    current: list[str] | None = None
    start = 0
    extra = 0

    def close() -> None:
        nonlocal current, extra
        if current is not None:
            if len(scan.blocks) < MAX_ERROR_BLOCKS:
                scan.blocks.append(ErrorBlock(start, tuple(current), extra))
            else:
                scan.blocks_left_out += 1
        current, extra = None, 0

    for number, raw in enumerate(raw_lines, start=1):
        raw = raw.rstrip("\n")
        scan.total = number
        scan.tail.append(raw)
        channel, text = untag(raw)
        if text.startswith("ERROR:"):
            close()
            current, start = [text], number
            continue
        if current is None:
            continue
        if channel == TFWIZARD or _BLOCK_END.match(text):
            close()
            continue
        if len(current) < MAX_BLOCK_LINES:
            current.append(text)
        else:
            extra += 1
    close()
    return scan


# -- secrets ---------------------------------------------------------------------------------


def bundle_secrets(recipe_text: str, env: Mapping[str, str]) -> list[str]:
    """Values to mask beyond what `redact` finds by shape.

    The recipe's clear-text header values (whatever the header's name), and the values of
    its `${ENV_VAR}` references as set in `env` now: the build may have resolved them, and
    the bundle must not carry them even if a log line did.
    """
    found: list[str] = []
    for name in references([recipe_text]):
        value = env.get(name, "")
        if value and value not in found:
            found.append(value)
    try:
        from ...recipe import parse_recipe

        recipe = parse_recipe(recipe_text, "recipe.toml")
    except Exception:  # a broken recipe is still bundled; its shapes are still redacted
        return found
    found += [v for v in literal_secrets(recipe) if v not in found]
    return found


def _redact_json(data: Any, extra: list[str]) -> Any:
    if isinstance(data, str):
        return redact(data, extra)
    if isinstance(data, list):
        return [_redact_json(v, extra) for v in data]
    if isinstance(data, dict):
        return {redact(str(k), extra): _redact_json(v, extra) for k, v in data.items()}
    return data


def _json_text(data: Any, extra: list[str]) -> str:
    return json.dumps(_redact_json(data, extra), indent=2) + "\n"


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return None


# -- finding records -------------------------------------------------------------------------


def default_bundle_name(build_id: str) -> str:
    """The archive's file name for a build."""
    return f"tfwizard-diagnostics-{build_id}.tar.gz"


# -- contents --------------------------------------------------------------------------------


def bundle_contents(record_dir: Path, *, host: HostProfile | None = None,
                    detect: Callable[[], HostProfile] | None = None,
                    env: Mapping[str, str] | None = None,
                    tail_lines: int = TAIL_LINES,
                    reports: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Every file of the bundle (name -> text), already redacted. Pure but for `detect`.

    The host profile: `host` when given, else the record's host.json, else `detect()`
    (default: detect this machine now). `reports` ("install.json" / "verify.json" -> data)
    stand in for reports the record lacks (the wizard's Verify page keeps its report in
    memory).
    """
    from .... import __version__

    env = os.environ if env is None else env
    record = BuildRecord(record_dir)
    recipe_path = record_dir / "recipe.toml"
    recipe_text = recipe_path.read_text("utf-8", errors="replace") if recipe_path.is_file() else ""
    extra = bundle_secrets(recipe_text, env)
    files: dict[str, str] = {}
    notes: list[str] = []

    if recipe_text:
        files["recipe.toml"] = "".join(redact(line, extra) + "\n"
                                       for line in recipe_text.splitlines())
    else:
        notes.append(_("recipe.toml: the record has no recipe."))
    plan = _read_json(record_dir / "plan.json")
    if plan is not None:
        files["plan.json"] = _json_text(plan, extra)
    else:
        notes.append(_("plan.json: the record has no (readable) plan."))

    host_source = _host_file(files, record_dir, host, detect, env, extra)

    result = _read_json(record.result_path)
    if result is not None:
        files["result.json"] = _json_text(result, extra)

    scan = _log_files(files, notes, record, result, tail_lines, extra)

    for name in ("target-host.json", "wheel-check.json", "install.json", "verify.json",
                 "publish.json"):
        data = _read_json(record_dir / name)
        if data is None and reports:
            data = reports.get(name)
        if data is not None:
            files[name] = _json_text(data, extra)

    manifest = {
        "bundle_format": BUNDLE_FORMAT,
        "tfwizard_version": __version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "build_id": record.build_id,
        "status": result.get("status") if isinstance(result, dict) else None,
        "log_lines": scan.total,
        "log_tail_lines": len(scan.tail),
        "error_blocks": len(scan.blocks) + scan.blocks_left_out,
        "host_source": host_source,
        "files": sorted([*files, "README.txt", "manifest.json"]),
        "notes": notes,
    }
    files["manifest.json"] = _json_text(manifest, extra)
    files["README.txt"] = _readme(record.build_id, files, scan, host_source, notes,
                                  tail_lines)
    return files


def _host_file(files: dict[str, str], record_dir: Path, host: HostProfile | None,
               detect: Callable[[], HostProfile] | None, env: Mapping[str, str],
               extra: list[str]) -> str:
    """Put host.json into `files` (the record's, else `host`, else detected now); returns
    where the profile came from, in words."""
    host_source = ""
    if host is None and (record_dir / "host.json").is_file():
        data = _read_json(record_dir / "host.json")
        if data is not None:
            files["host.json"] = _json_text(data, extra)
            host_source = _("the build host as the record kept it (host.json)")
    if "host.json" not in files:
        if host is None:
            if detect is None:
                from ...detect import detect_host

                def detect() -> HostProfile:
                    return detect_host(env=env)
            host = detect()
            host_source = _("this machine, detected when the bundle was made (the record "
                            "keeps no host profile)")
        else:
            host_source = _("a host profile given when the bundle was made (`tfwizard bundle "
                            "--host`, or the wizard's build host)")
        files["host.json"] = _json_text(json.loads(host.to_json()), extra)
    return host_source


def _log_files(files: dict[str, str], notes: list[str], record: BuildRecord, result: Any,
               tail_lines: int, extra: list[str]) -> LogScan:
    """Put the log tail, the failed actions and the diagnosis into `files` (a note when the
    record has no log); returns the log's scan."""
    from ...diagnosis.build import diagnose_file, recognised
    from ...diagnosis.unrecognised import root_lines

    scan = LogScan()
    if record.log_path.is_file():
        with record.log_path.open(encoding="utf-8", errors="replace") as fh:
            scan = scan_log(fh, tail_lines=tail_lines)
        first = scan.total - len(scan.tail) + 1
        head = ("# " + (_("tfwizard log {id}: lines {first}-{last} of {total}").format(
                    id=record.build_id, first=first, last=scan.total, total=scan.total)
                          if scan.total else _("the log is empty")) + "\n")
        files["log-tail.txt"] = head + "".join(redact(line, extra) + "\n" for line in scan.tail)
        blocks = "".join(redact(b.text(), extra) for b in scan.blocks)
        if scan.blocks_left_out:
            blocks += ngettext("... and {count} more ERROR block", "... and {count} more ERROR "
                               "blocks", scan.blocks_left_out).format(
                count=scan.blocks_left_out) + "\n"
        files["failed-actions.txt"] = blocks or _("No ERROR: line in the log.") + "\n"
        exit_code = result.get("exit_code") if isinstance(result, dict) else None
        diagnoses = diagnose_file(record.log_path, exit_code=exit_code)
        unknown = None
        stopped = stopped_message(result)  # tfwizard's own message explains it already
        if not recognised(diagnoses) and not stopped and not (
                isinstance(result, dict) and result.get("status") == "succeeded"):
            with record.log_path.open("rb") as raw:
                unknown = root_lines(raw, "build")
            files["unrecognised.json"] = _json_text(unknown.to_dict(), extra)
        files["diagnosis.json"] = _json_text([d.to_dict() for d in diagnoses], extra)
        files["diagnosis.txt"] = redact(_diagnosis_text(diagnoses, unknown, stopped), extra)
        if language() != DEFAULT:  # a copy the people behind a bug tracker can read
            files["diagnosis.en.txt"] = redact(_diagnosis_text(diagnoses, unknown, stopped,
                                                               english=True), extra)
    else:
        notes.append(_("log.txt: the record has no log, so no log tail, failed actions or "
                       "diagnosis."))
    return scan


def _diagnosis_text(diagnoses: list[Any], unknown: Any = None, stopped: str = "", *,
                    english: bool = False) -> str:
    """The diagnoses as text, then the root-cause lines of a failure none of them names
    (`unknown`), in the current language or (english=True) in English."""
    lang = DEFAULT if english else None

    def say(text: str) -> str:
        return translate(text, lang)

    after = "".join(line + "\n" for line in unrecognised_block(unknown, lang=lang)
                    ) if unknown is not None else ""

    if english:  # the catalogue's own words instead of the translated ones
        from ...diagnosis.build import load_failures

        signatures = {s.id: s for s in load_failures()}
        diagnoses = [replace(d, title=signatures[d.id].title, cause=signatures[d.id].cause,
                             next_step=signatures[d.id].next_step)
                     if d.id in signatures else d for d in diagnoses]
    if stopped:  # the build never reached Bazel: tfwizard's message is the explanation
        after = stopped + "\n" + after
        if not diagnoses:
            return say(N_("tfwizard stopped this build before Bazel ran:")) + "\n" + after
    if not diagnoses:
        return say(N_("No known failure signature found in the log.")) + "\n" + after
    return "".join(line + "\n" for d in diagnoses
                   for line in diagnosis_block(d, lang=lang)) + after


def _descriptions() -> dict[str, str]:
    """What each file of a bundle holds, in the current language (README.txt's list)."""
    return {
        "recipe.toml": _("the recipe the build ran, as it was"),
        "plan.json": _("the resolved build plan: image, configure answers, Bazel target and "
                       "flags"),
        "host.json": _("a host profile (as `tfwizard detect --json` writes it); source: "
                       "{host}"),
        "target-host.json": _("the profile of the machine the wheel is for (the recipe's "
                              "target.host_profile), as the build was planned"),
        "result.json": _("how the build ended: status, exit code, message, times"),
        "log-tail.txt": _("the last {tail} lines of the build log (channels: out | stdout, "
                          "err | stderr, tfw | tfwizard)"),
        "failed-actions.txt": _("every `ERROR:` block of the whole log with the failed "
                                "action's output (compiler errors) that follows it"),
        "diagnosis.txt": _("known failure signatures found in the whole log, with cause and "
                           "next step"),
        "diagnosis.en.txt": _("the same diagnosis in English, for readers of a bug report"),
        "diagnosis.json": _("the same diagnosis as JSON (`tfwizard diagnose --json`)"),
        "unrecognised.json": _("when no known cause matched: the log's root-cause lines, "
                               "the tool that printed each, and a search query, or its "
                               "last lines when none looks like an error (not a "
                               "diagnosis)"),
        "wheel-check.json": _("the wheel held against its recipe: every fact, the plan's "
                              "value, the wheel's, the verdict"),
        "install.json": _("the install report (`tfwizard install`)"),
        "verify.json": _("the verify report (`tfwizard verify`): TF build info, devices, ops"),
        "publish.json": _("where the wheel was published (`tfwizard publish`): the wheelhouse, "
                          "the labelled file and its sha256; never a password"),
        "manifest.json": _("what this bundle holds, as JSON"),
        "README.txt": _("this file"),
    }


def _readme(build_id: str, files: Mapping[str, str], scan: LogScan, host_source: str,
            notes: list[str], tail_lines: int) -> str:
    lines = [
        _("tfwizard diagnostics bundle for build {id}").format(id=build_id),
        "",
        *_("Made by `tfwizard bundle` (or the wizard's \"Save diagnostics bundle...\") to be\n"
           "attached to a question or a bug report. Secrets are masked as *** : credentials in\n"
           "URLs, header values and tokens, the recipe's clear-text header values, and the\n"
           "values of its ${ENV_VAR} references. Check the files before sharing them "
           "anyway.").split("\n"),
        "",
        _("Files:"),
    ]
    descriptions = _descriptions()
    names = [n for n in descriptions if n in files or n in ("README.txt", "manifest.json")]
    width = max(len(n) for n in names)
    for name in names:
        text = descriptions[name].format(host=host_source, tail=tail_lines)
        lines.append(f"  {name:<{width}}  {text}")
    if scan.total:
        lines += ["", _("The full log had {total} lines; the tail keeps {tail}. The full log "
                        "stays in the build record.").format(total=scan.total,
                                                             tail=len(scan.tail))]
    if notes:
        lines += ["", _("Missing:")] + [f"  {n}" for n in notes]
    return "\n".join(lines) + "\n"


# -- archive ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bundle:
    """A written diagnostics bundle: where, which build, its files and size."""

    path: Path
    build_id: str
    files: tuple[str, ...]
    size: int


def make_bundle(record_dir: Path, out: Path | None = None, *, host: HostProfile | None = None,
                detect: Callable[[], HostProfile] | None = None,
                env: Mapping[str, str] | None = None, tail_lines: int = TAIL_LINES,
                reports: Mapping[str, Any] | None = None) -> Bundle:
    """Write the bundle of one build record: `.zip` when `out` ends so, else `.tar.gz`.

    `out` defaults to tfwizard-diagnostics-<id>.tar.gz in the current folder; an `out`
    that is a folder gets that name inside it. The archive is written under a temporary
    name and renamed, so a half-written bundle never stands under the real name.
    """
    record_dir = Path(record_dir)
    if not record_dir.is_dir():
        raise UsageError(_("{path}: not a build record folder").format(path=record_dir))
    build_id = record_dir.name
    if out is None:
        out = Path.cwd() / default_bundle_name(build_id)
    elif out.is_dir():
        out = out / default_bundle_name(build_id)
    files = bundle_contents(record_dir, host=host, detect=detect, env=env,
                            tail_lines=tail_lines, reports=reports)
    top = f"tfwizard-diagnostics-{build_id}"
    order = ["README.txt", *sorted(n for n in files if n != "README.txt")]
    tmp = out.parent / f".{out.name}.{_random.token_hex(4)}.tmp"
    try:
        if out.name.endswith(".zip"):
            _write_zip(tmp, top, order, files)
        else:
            _write_tar(tmp, top, order, files)
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return Bundle(out, build_id, tuple(order), out.stat().st_size)


def _write_tar(path: Path, top: str, order: list[str], files: Mapping[str, str]) -> None:
    now = int(time.time())
    with tarfile.open(path, "x:gz") as tar:
        for name in order:
            data = files[name].encode("utf-8")
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size, info.mtime, info.mode = len(data), now, 0o644
            tar.addfile(info, io.BytesIO(data))


def _write_zip(path: Path, top: str, order: list[str], files: Mapping[str, str]) -> None:
    with zipfile.ZipFile(path, "x", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in order:
            zf.writestr(f"{top}/{name}", files[name])


def read_bundle(path: Path) -> dict[str, str]:
    """The files of a bundle (name without the top folder -> text); for tests and tools."""
    out: dict[str, str] = {}
    if path.name.endswith(".zip"):
        with zipfile.ZipFile(path) as zf:
            for name in zf.namelist():
                out[name.split("/", 1)[1]] = zf.read(name).decode("utf-8")
        return out
    with tarfile.open(path, "r:gz") as tar:
        for member in tar.getmembers():
            fh = tar.extractfile(member)
            if fh is not None:
                out[member.name.split("/", 1)[1]] = fh.read().decode("utf-8")
    return out
