"""This build's BEP and wheel out of the warm container in the build's own exec (every
docker round trip is fixed cost on a rebuild that Bazel does in a fraction of a
second).

    argv = report_argv(mark, build_script_args)   # the build exec's command
    report = BuildReport.parse(lines_after_mark, mark)
    report.bep_lines, report.sha256[path]         # the BEP; sha256 of each .whl it names

After Bazel exits, REPORT_SCRIPT prints a line with a random mark and the exit code on
stdout, then this build's BEP file, then `MARK-sha SHA256 PATH` for each .whl path that the
BEP mentions: the BEP comes with the build's own output, not through another archive call.
A wheel's sha256 is kept in the state volume with its stamp (size, inode, mtime and ctime in
ns) and reused while the stamp is unchanged: a no-op does not hash a TensorFlow wheel of
several hundred MB again (~1 s each time).
Which wheel is this build's is still decided by `bep_wheels` on the BEP (a failed build
names none); the checksums only let `same_file` see that the wheel already in the output
folder has the very bytes of this build's wheel (a no-op rebuild), so it is not copied again.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..run.progress import bep_events, file_uri_path

#: the state folder's file with the stamp and sha256 of the last build's wheels, a line
#: each: size, inode, mtime ns, ctime ns, sha256, path
WHEEL_SUMS = "wheel-sums"
#: what `stat -L -c` prints as a wheel's stamp (GNU coreutils: ns with %.9Y/%.9Z). No tool
#: sets ctime (touch sets mtime only), so a rewrite of the file changes the stamp.
STAMP_FORMAT = "%s %i %.9Y %.9Z"

#: the exec environment variable with the secret values (one a line) the BEP file left in
#: the state volume is masked of: the front end reads it unmasked from the report (and
#: masks its record's copy), nobody needs the secrets at rest on the engine's disk
MASK_VAR = "TFWIZARD_SECRET_MASK"

#: BUILD_SCRIPT's arguments after $1 the mark; runs the build without exec, then reports:
#: one awk prints the BEP and writes the .whl paths it names (once each) to a list beside
#: it; a wheel whose stamp is the one kept in WHEEL_SUMS gets the kept sha256 (and a
#: `MARK-cached PATH` line), any other is hashed and kept. Steady state: two processes
#: (awk, stat), no sha256sum. The same awk writes the BEP masked of MASK_VAR's values
#: beside it, which replaces it.
REPORT_TAIL = r"""
"$@"
rc=$?
echo "$mark $rc"
if [ -f "$bep" ]; then
  list=${bep%.json}.wheels sums=$state/__SUMS__ new= changed=
  : > "$list"
  masked=$bep.masked
  awk -v list="$list" -v masked="$masked" '
    BEGIN { n = split(ENVIRON["__MASK__"], m, "\n") }
    { print; s = $0
    while (match(s, /file:\/\/[^"]*\.whl/)) {
      u = substr(s, RSTART + 7, RLENGTH - 7); s = substr(s, RSTART + RLENGTH)
      if (!(u in seen)) { seen[u] = 1; print u > list } }
    if (n) { r = $0; out = ""
      for (i = 1; i <= n; i++) { t = ""
        while ((k = index(r, m[i])) > 0) {
          t = t substr(r, 1, k - 1) "***"; r = substr(r, k + length(m[i])) }
        r = t r }
      print r > masked } }
    END { print "" }' "$bep"
  if [ -n "${__MASK__-}" ]; then mv -f -- "$masked" "$bep" || rm -f -- "$bep" "$masked"; fi
  while IFS= read -r p; do
    [ -f "$p" ] || continue
    st=$(stat -L -c '__STAMP__' -- "$p" 2>/dev/null) || continue
    sha=
    [ -f "$sums" ] && while IFS=' ' read -r a b c d e q; do
      [ "$a $b $c $d" = "$st" ] && [ "$q" = "$p" ] && [ ${#e} -eq 64 ] && sha=$e
    done < "$sums"
    if [ -n "$sha" ]; then
      echo "$mark-cached $p"
    else
      sha=$(sha256sum -- "$p" 2>/dev/null) || continue
      sha=${sha%% *} changed=1
    fi
    new="$new$st $sha $p
"
    echo "$mark-sha $sha  $p"
  done < "$list"
  [ -z "$changed" ] || printf '%s' "$new" > "$sums"
fi
exit $rc
""".replace("__SUMS__", WHEEL_SUMS).replace("__STAMP__", STAMP_FORMAT).replace(
    "__MASK__", MASK_VAR)


def report_script(build_script: str) -> str:
    """BUILD_SCRIPT (warm.py) with a mark as $1, a tag as $2 (not used by the script: the
    engine keeps the exec's argv, so `tfwizard build --attach` reads the build id and plan
    digest there, see warmattach.py), and the report after the build: SIGINT is trapped
    (not ignored) so the report follows a cancelled build too."""
    if not build_script.rstrip().endswith('exec "$@"'):
        raise ValueError("the build script must end with its build command")
    return ("mark=$1; shift 2\ntrap : INT TERM\n" + build_script.rstrip()[:-len('exec "$@"')]
            + REPORT_TAIL.lstrip("\n"))


def new_mark() -> str:
    """A mark no output of Bazel's can contain by chance."""
    return f"tfwizard-report-{secrets.token_hex(8)}"


@dataclass
class BuildReport:
    """What the build exec printed after its mark: exit code, BEP lines, wheel checksums."""

    exit_code: int | None
    bep_lines: list[str] = field(default_factory=list)
    sha256: dict[str, str] = field(default_factory=dict)
    cached: set[str] = field(default_factory=set)  # wheels whose kept sha256 was used

    @classmethod
    def parse(cls, lines: Sequence[str], mark: str) -> BuildReport:
        """The report from its lines (the first is the mark's own line)."""
        code: int | None = None
        if lines:
            tail = lines[0][lines[0].find(mark) + len(mark):].strip()
            code = int(tail) if tail.lstrip("-").isdigit() else None
        out = cls(code)
        for line in lines[1:]:
            if line.startswith(f"{mark}-sha "):
                digest, _sep, path = line[len(mark) + 5:].strip().partition(" ")
                if len(digest) == 64 and path:
                    out.sha256[path.lstrip(" *")] = digest
            elif line.startswith(f"{mark}-cached "):
                out.cached.add(line[len(mark) + 8:])
            elif line.strip():
                out.bep_lines.append(line)
        return out


def file_sha256(path: Path) -> str | None:
    """sha256 of a local file, or None when it cannot be read."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def same_file(local: Path, want: str | None) -> bool:
    """Whether `local` exists with sha256 `want` (the container's checksum of the wheel)."""
    return bool(want) and local.is_file() and file_sha256(local) == want


def bep_wheels(lines: Iterable[str], target: str) -> list[str]:
    """Container paths of the .whl files the BEP names as outputs of `target`, only when
    the target completed with success in a build that succeeded; else []."""
    sets: dict[str, dict[str, Any]] = {}
    groups: list[str] = []
    success = False
    finished_ok = False
    for event in bep_events(lines):
        ident = event.get("id", {})
        if "namedSet" in ident and "namedSetOfFiles" in event:
            sets[ident["namedSet"].get("id", "")] = event["namedSetOfFiles"]
        done = ident.get("targetCompleted")
        if done and done.get("label") == target and "completed" in event:
            comp = event["completed"]
            success = bool(comp.get("success", False))  # proto3 JSON omits false
            for group in comp.get("outputGroup", []):
                groups += [fs.get("id", "") for fs in group.get("fileSets", [])]
        if "finished" in event:
            fin = event["finished"]
            finished_ok = bool(fin.get("overallSuccess")) or (
                fin.get("exitCode", {}).get("name") == "SUCCESS")
    if not (success and finished_ok):
        return []
    out: list[str] = []
    seen: set[str] = set()

    def walk(set_id: str) -> None:
        if set_id in seen or set_id not in sets:
            return
        seen.add(set_id)
        for f in sets[set_id].get("files", []):
            uri = f.get("uri", "")
            path = file_uri_path(uri) if uri.endswith(".whl") else ""
            if path and path not in out:
                out.append(path)
        for child in sets[set_id].get("fileSets", []):
            walk(child.get("id", ""))

    for set_id in groups:
        walk(set_id)
    return out
