"""A built wheel made a wheelhouse wheel, and a wheelhouse wheel checked before install.

    path = relabel(Path("tensorflow-2.21.0-cp312-cp312-linux_x86_64.whl"), prov, out_dir)
    # -> out_dir/tensorflow-2.21.0+cu128.sm120-cp312-cp312-linux_x86_64.whl
    problems = check_wheel_file(path)        # [] when the wheel is what it says it is

`relabel` writes a new wheel (the original is never touched): the version in METADATA,
the .dist-info and .data folder names and the file name carry the label; the provenance
goes into .dist-info/tfwizard-provenance.json; the RECORD is written anew (every file's
sha256, urlsafe base64 without padding, and its size), so pip installs it cleanly. Members
are copied in chunks: a TensorFlow wheel's libraries are hundreds of MB.

`check_wheel_file` is what install holds a downloaded wheel to: every member as its RECORD
says (hash and size), the version the same in the file name, the .dist-info folder and
METADATA, and the provenance's facts the wheel's own (its label, its tags, and the build
facts TensorFlow writes into the wheel: wheelcheck.compare). A wheel whose dist-info facts
were edited after it was built fails here.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import re
import secrets
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from ..i18n import _
from ..install.wheelcheck import Found, compare
from ..install.wheelfacts import WheelFacts, read_wheel_facts
from . import WheelhouseError
from .provenance import PROVENANCE, Provenance

CHUNK = 1 << 20
#: RECORD lines without a hash: the RECORD itself and its signatures (PEP 376, PEP 427)
_UNHASHED = ("RECORD", "RECORD.jws", "RECORD.p7s")


def record_digest(data: bytes) -> str:
    """A RECORD hash: "sha256=" and the urlsafe base64 of the digest, without padding."""
    raw = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def file_sha256(path: Path) -> str:
    """The hex sha256 of a file, read in chunks."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def dist_info_of(names: list[str]) -> str:
    """The wheel's one top-level .dist-info folder ("tensorflow-2.21.0.dist-info")."""
    found = sorted({n.split("/", 1)[0] for n in names
                    if "/" in n and n.split("/", 1)[0].endswith(".dist-info")})
    if len(found) != 1:
        raise WheelhouseError(_("the wheel has {count} .dist-info folders, not one").format(
            count=len(found)))
    return found[0]


def read_provenance(zf: zipfile.ZipFile) -> Provenance | None:
    """The provenance in an open wheel, None when it has none."""
    name = f"{dist_info_of(zf.namelist())}/{PROVENANCE}"
    try:
        data = json.loads(zf.read(name).decode("utf-8"))
    except KeyError:
        return None
    except ValueError as exc:
        raise WheelhouseError(_("{file} is not JSON: {error}").format(file=name, error=exc)) \
            from None
    return Provenance.from_dict(data)


def _with_version(metadata: bytes, version: str) -> bytes:
    """METADATA with its Version header (in the header block, before the body) replaced."""
    text = metadata.decode("utf-8")
    head, sep, body = text.partition("\n\n")
    new, count = re.subn(r"(?m)^Version:[ \t]*\S.*$", f"Version: {version}", head, count=1)
    if count != 1:
        raise WheelhouseError(_("the wheel's METADATA has no Version header"))
    return (new + sep + body).encode("utf-8")


def _renamer(dist_info: str, version: str) -> Callable[[str], str]:
    """A function from a member's name to its name in the relabelled wheel."""
    dist = dist_info[:-len(".dist-info")].rsplit("-", 1)[0]
    old_prefix = dist_info[:-len(".dist-info")]
    new_prefix = f"{dist}-{version}"

    def rename(name: str) -> str:
        top, sep, rest = name.partition("/")
        if top in (f"{old_prefix}.dist-info", f"{old_prefix}.data"):
            return new_prefix + top[len(old_prefix):] + sep + rest
        return name

    return rename


def relabel(wheel: Path, prov: Provenance, dest_dir: Path) -> Path:
    """Write the labelled copy of `wheel` (with `prov` inside) into `dest_dir`; its path.
    Written to a temporary name and renamed, so a crash leaves no half wheel."""
    name, _version, build, _tags = parse_wheel_filename(wheel.name)
    tags = wheel.name[:-len(".whl")].split("-")[-3:]
    build_part = [f"{build[0]}{build[1]}"] if build else []
    dist = wheel.name.split("-", 1)[0]
    filename = "-".join([dist, prov.version, *build_part, *tags]) + ".whl"
    dest_dir.mkdir(parents=True, exist_ok=True)
    out = dest_dir / filename
    tmp = dest_dir / f".{filename}.{secrets.token_hex(4)}.tmp"
    rows: list[tuple[str, str, str]] = []
    try:
        with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tmp, "w") as dst:
            old = dist_info_of(src.namelist())
            rename = _renamer(old, prov.version)
            for info in src.infolist():
                if info.filename in (f"{old}/RECORD", f"{old}/{PROVENANCE}") or info.is_dir():
                    continue
                target = rename(info.filename)
                if info.filename == f"{old}/METADATA":
                    data = _with_version(src.read(info), prov.version)
                    rows.append((target, record_digest(data), str(len(data))))
                    dst.writestr(_info(info, target), data)
                    continue
                rows.append((target, *_copy(src, dst, info, target)))
            new_dist_info = rename(old)
            body = prov.to_json().encode("utf-8")
            rows.append((f"{new_dist_info}/{PROVENANCE}", record_digest(body), str(len(body))))
            dst.writestr(_info(None, f"{new_dist_info}/{PROVENANCE}"), body)
            record = io.StringIO()
            writer = csv.writer(record, lineterminator="\n")
            writer.writerows(rows)
            writer.writerow((f"{new_dist_info}/RECORD", "", ""))
            dst.writestr(_info(None, f"{new_dist_info}/RECORD"), record.getvalue())
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if canonicalize_name(prov.name) != canonicalize_name(str(name)):
        raise WheelhouseError(_("the provenance names {name}, the wheel {wheel}").format(
            name=prov.name, wheel=name))
    return out


def _info(like: zipfile.ZipInfo | None, name: str) -> zipfile.ZipInfo:
    """A member's ZipInfo under a new name, with the original's time and mode."""
    info = zipfile.ZipInfo(name, date_time=like.date_time if like else (2020, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = like.external_attr if like else (0o100644 << 16)
    if like is not None:
        info.file_size = like.file_size  # lets zipfile choose ZIP64 for a huge library
    return info


def _copy(src: zipfile.ZipFile, dst: zipfile.ZipFile, info: zipfile.ZipInfo,
          target: str) -> tuple[str, str]:
    """Copy one member in chunks; its RECORD hash and size."""
    h = hashlib.sha256()
    size = 0
    with src.open(info) as fin, dst.open(_info(info, target), "w") as fout:
        while chunk := fin.read(CHUNK):
            h.update(chunk)
            size += len(chunk)
            fout.write(chunk)
    digest = "sha256=" + base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode("ascii")
    return digest, str(size)


# -- checking a wheel ---------------------------------------------------------------------------


def _record_rows(zf: zipfile.ZipFile, dist_info: str) -> dict[str, tuple[str, str]]:
    try:
        text = zf.read(f"{dist_info}/RECORD").decode("utf-8")
    except KeyError:
        raise WheelhouseError(_("the wheel has no {file}").format(
            file=f"{dist_info}/RECORD")) from None
    return {row[0]: (row[1], row[2]) for row in csv.reader(io.StringIO(text))
            if row and len(row) >= 3}


def _member_digest(zf: zipfile.ZipFile, name: str, algorithm: str) -> tuple[str, int]:
    h = hashlib.new(algorithm)
    size = 0
    with zf.open(name) as fh:
        while chunk := fh.read(CHUNK):
            h.update(chunk)
            size += len(chunk)
    return base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode("ascii"), size


def record_problems(zf: zipfile.ZipFile) -> Iterator[str]:
    """Every member whose bytes are not what RECORD says, and every member RECORD lacks."""
    dist_info = dist_info_of(zf.namelist())
    rows = _record_rows(zf, dist_info)
    for name in (n for n in zf.namelist() if not n.endswith("/")):
        if name.startswith(f"{dist_info}/") and name.rsplit("/", 1)[1] in _UNHASHED:
            continue
        row = rows.get(name)
        if row is None or "=" not in row[0]:
            yield _("{file} is not in the wheel's RECORD").format(file=name)
            continue
        algorithm, _sep, want = row[0].partition("=")
        if algorithm not in ("sha256", "sha384", "sha512"):
            yield _("{file}: RECORD uses {algorithm}, not sha256 or stronger").format(
                file=name, algorithm=algorithm)
            continue
        got, size = _member_digest(zf, name, algorithm)
        if got != want or (row[1] and row[1] != str(size)):
            yield _("{file} is not what RECORD says ({algorithm} or size differ)").format(
                file=name, algorithm=algorithm)


def check_wheel_file(path: Path) -> list[str]:
    """What is wrong with a wheelhouse wheel ([] when nothing): its RECORD, its version in
    every place, and its provenance against the wheel's own facts."""
    try:
        with zipfile.ZipFile(path) as zf:
            problems = list(record_problems(zf))
            dist_info = dist_info_of(zf.namelist())
            prov = read_provenance(zf)
    except (OSError, zipfile.BadZipFile) as exc:
        return [_("not a readable wheel: {error}").format(error=exc)]
    except WheelhouseError as exc:
        return [exc.message]
    facts = read_wheel_facts(path)
    name_version = str(parse_wheel_filename(path.name)[1])
    folder_version = dist_info[:-len(".dist-info")].rsplit("-", 1)[-1]
    if not _same_version(name_version, facts.version, folder_version):
        problems.append(_("its versions differ: file name {name}, METADATA {metadata}, "
                          ".dist-info {folder}").format(name=name_version,
                                                        metadata=facts.version,
                                                        folder=folder_version))
    if prov is None:
        return [*problems, _("it has no tfwizard provenance ({file})").format(file=PROVENANCE)]
    return problems + provenance_problems(prov, facts)


def provenance_problems(prov: Provenance, facts: WheelFacts) -> list[str]:
    """Where the provenance and the wheel's own facts disagree."""
    problems = []
    if not _same_version(prov.version, facts.version):
        problems.append(_("the provenance says version {prov}, METADATA {metadata}").format(
            prov=prov.version, metadata=facts.version))
    local = Version(facts.version).local if _is_version(facts.version) else None
    if (local or "") != prov.label:
        problems.append(_("the version's label {label} is not the provenance's {prov}").format(
            label=local or "-", prov=prov.label))
    if set(prov.tags) != set(facts.tags):
        problems.append(_("the provenance says tags {prov}, WHEEL {wheel}").format(
            prov=", ".join(prov.tags), wheel=", ".join(facts.tags)))
    check = compare(prov.expected(), Found.of_wheel(facts))
    if not check.ok:
        problems.append(_("its build facts contradict its provenance: {difference}").format(
            difference=check.difference()))
    return problems


def _is_version(text: str) -> bool:
    try:
        Version(text)
    except InvalidVersion:
        return False
    return True


def _same_version(*texts: str) -> bool:
    try:
        return len({Version(t) for t in texts}) == 1
    except InvalidVersion:
        return len(set(texts)) == 1
