"""`tfwizard publish`: a built wheel, labelled and with its provenance, into the wheelhouse.

    result = publish("20250102-130405-a1b2c3", to="http://wheels.lab:8080/simple/", env=env)

The source is a build (its id or record folder) or a wheel file a build made (found in the
records by its path), or a wheel already labelled by tfwizard. The labelled copy is written
into the build record (`published/`: nothing is lost, and a second publish sends the same
bytes), checked as install will check it, then:

- to a server, uploaded through the standard upload API (the one twine uses: a multipart
  POST with `:action=file_upload`, `protocol_version=1`, the metadata, the file as
  `content` and its `sha256_digest`, HTTP Basic auth), then read back from the index when
  its simple URL is known: the file must be listed there with the same sha256;
- to a folder, written with its index pages (folder.py).

A server that already has the file (409) is fine when its index gives the same sha256; a
different file of that name is an error: a published wheel is never replaced. The build
record keeps `publish.json` (when, where, which file, its sha256, who uploaded, whence the
credentials): never a password.
"""

from __future__ import annotations

import json
import os
import secrets
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from email.parser import HeaderParser
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..i18n import _
from ..install.wheelfacts import read_wheel_facts
from ..secrets import redact
from . import WheelhouseError
from .credentials import Credentials, PublishTarget, find_credentials, sources_text
from .folder import publish_to_folder
from .index import Wheelhouse
from .label import check_wheel_file, dist_info_of, file_sha256, read_provenance, relabel
from .provenance import Provenance, provenance_of_record

TIMEOUT = 600.0
RECORD_FILE = "publish.json"
PUBLISHED_DIR = "published"


@dataclass(frozen=True)
class PublishResult:
    """What `publish` did."""

    status: str  # uploaded | present (the index had that very file) | published (folder)
    wheel: str  # the labelled wheel on this machine
    filename: str
    sha256: str
    to: str  # where, credentials masked
    wheelhouse: str  # what the machines pass as --wheelhouse
    build_id: str
    credentials: str = ""  # "user alice (TWINE_USERNAME/TWINE_PASSWORD)", never the password
    provenance: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON data."""
        return asdict(self)


# -- the source ---------------------------------------------------------------------------------


def find_source(source: str, env: Mapping[str, str], cwd: Path) -> tuple[Path | None, Path]:
    """(the build record, the wheel) `source` names: a build id or record folder, or a
    wheel file (its record found by the wheel's path; None for a wheel labelled already)."""
    from ..building.run.record import find_record, list_records

    path = Path(source).expanduser()
    path = path if path.is_absolute() else cwd / path
    if source.endswith(".whl"):
        if not path.is_file():
            raise UsageError(_("{path}: no such wheel").format(path=path))
        with zipfile.ZipFile(path) as zf:
            if read_provenance(zf) is not None:
                return None, path
        for rec in reversed(list_records(env=env)):
            wheel = _record_wheel(rec.path)
            if wheel is not None and wheel.is_file() and os.path.samefile(wheel, path):
                return rec.path, path
        raise UsageError(_("{path}: no build record names this wheel").format(path=path),
                         _("Publish a wheel by its build id (`tfwizard publish BUILD_ID`): "
                           "its provenance comes from the build's record."))
    record = find_record(source, env=env, cwd=cwd)
    wheel = _record_wheel(record)
    if wheel is None or not wheel.is_file():
        raise UsageError(_("build {build} has no wheel to publish ({path})").format(
            build=record.name, path=wheel or "-"),
            _("Only a build that succeeded hands out a wheel; was it moved?"))
    return record, wheel


def _record_wheel(record: Path) -> Path | None:
    try:
        wheel = json.loads((record / "result.json").read_text("utf-8")).get("wheel")
    except (OSError, ValueError):
        return None
    return Path(wheel) if wheel else None


def labelled_wheel(record: Path | None, wheel: Path, *, extra_label: str = "") -> Path:
    """The wheelhouse copy of a build's wheel (made in the record's `published/` folder),
    or `wheel` itself when it is labelled already; checked as install checks it."""
    if record is None:
        out = wheel
    else:
        prov = provenance_of_record(record, read_wheel_facts(wheel), file_sha256(wheel),
                                    wheel_name=wheel.name, extra_label=extra_label)
        out = relabel(wheel, prov, record / PUBLISHED_DIR)
    problems = check_wheel_file(out)
    if problems:
        raise WheelhouseError(_("{wheel} is not fit to publish: {problems}").format(
            wheel=out.name, problems="; ".join(problems)))
    return out


# -- uploading ----------------------------------------------------------------------------------


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirected upload must fail, not turn into a GET that answers 200."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _form(path: Path, prov: Provenance, boundary: str) -> tuple[list[bytes], int]:
    """The multipart fields before the file, and the whole body's length."""
    with zipfile.ZipFile(path) as zf:
        meta = HeaderParser().parsestr(zf.read(
            f"{dist_info_of(zf.namelist())}/METADATA").decode("utf-8", "replace"))
    fields = [(":action", "file_upload"), ("protocol_version", "1"),
              ("metadata_version", str(meta.get("Metadata-Version", "2.1"))),
              ("name", str(meta.get("Name", prov.name))),
              ("version", str(meta.get("Version", prov.version))),
              ("filetype", "bdist_wheel"), ("pyversion", prov.tags[0].split("-")[0]
                                            if prov.tags else "py3"),
              ("summary", str(meta.get("Summary", ""))),
              ("sha256_digest", file_sha256(path))]
    head = [f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'
            .encode() for k, v in fields]
    head.append(f'--{boundary}\r\nContent-Disposition: form-data; name="content"; '
                f'filename="{path.name}"\r\nContent-Type: application/octet-stream\r\n\r\n'
                .encode())
    tail = f"\r\n--{boundary}--\r\n".encode()
    return head, sum(map(len, head)) + path.stat().st_size + len(tail)


def _body(head: list[bytes], path: Path, boundary: str) -> Iterator[bytes]:
    yield from head
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            yield chunk
    yield f"\r\n--{boundary}--\r\n".encode()


def upload(path: Path, prov: Provenance, target: PublishTarget, creds: Credentials,
           *, timeout: float = TIMEOUT) -> int:
    """POST the wheel to the upload URL; the HTTP status (200-299, or 409: the caller
    checks what the index has). WheelhouseError for a refusal. The credentials are tried
    first with a request that carries no file: a server refuses a wrong password before
    it reads the body, and a wheel of hundreds of MB is not sent for nothing."""
    import base64

    token = base64.b64encode(f"{creds.username}:{creds.password}".encode()).decode("ascii")
    boundary = "tfwizard" + secrets.token_hex(16)
    probe = [f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'
             .encode() for k, v in ((":action", "file_upload"), ("protocol_version", "1"))]
    code = _post(target, creds, token, boundary, iter([*probe, f"--{boundary}--\r\n".encode()]),
                 sum(map(len, probe)) + len(f"--{boundary}--\r\n"), timeout, probe=True)
    if code in (401, 403):  # _post raised already; kept for clarity
        return code
    head, length = _form(path, prov, boundary)
    return _post(target, creds, token, boundary, _body(head, path, boundary), length, timeout)


def _post(target: PublishTarget, creds: Credentials, token: str, boundary: str, body: Any,
          length: int, timeout: float, *, probe: bool = False) -> int:
    """One multipart POST; its status. A probe's 400 (no file) is its answer, not an error."""
    request = urllib.request.Request(
        target.upload_url, data=body, method="POST",
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}",
                 "Content-Length": str(length), "Authorization": f"Basic {token}"})
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=timeout) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        if exc.code == 409 or (probe and exc.code not in (401, 403) and exc.code < 500
                               and not 300 <= exc.code < 400):
            return exc.code
        detail = redact(_plain(exc.read(4000).decode("utf-8", "replace")), [creds.password])
        raise WheelhouseError(
            _("the wheelhouse refused the upload: {code} {reason}{detail}").format(
                code=exc.code, reason=exc.reason, detail=f" ({detail[:300]})" if detail else ""),
            _refusal_hint(exc.code, creds)) from None
    except (urllib.error.URLError, OSError) as exc:
        raise WheelhouseError(_("cannot upload to {url}: {error}").format(
            url=target.display, error=getattr(exc, "reason", exc)),
            _("Is the package server running, and is this its upload URL?")) from None


def _plain(body: str) -> str:
    """A server's error page as one line of its text (no markup, no style sheet)."""
    import re

    body = re.sub(r"(?is)<(style|script|head)\b.*?</\1>", " ", body)
    return " ".join(re.sub(r"<[^>]+>", " ", body).split())


def _refusal_hint(code: int, creds: Credentials) -> str:
    if code in (401, 403):
        return _("Check the credentials: {credentials}.").format(credentials=creds)
    if 300 <= code < 400:
        return _("The upload URL redirects: give the URL it redirects to.")
    return ""


def _listed_sha256(target: PublishTarget, filename: str) -> str | None:
    """The sha256 the index lists for `filename`, None when it lists none (or no index)."""
    if not target.index_url:
        return None
    try:
        files = Wheelhouse(target.index_url).files([filename.split("-", 1)[0]])
    except WheelhouseError:  # an index that wants credentials to list: not confirmed
        return None
    return next((dict(f.hashes).get("sha256", "") for f in files if f.filename == filename),
                None)


# -- the whole step -----------------------------------------------------------------------------


def publish(source: str, to: str, env: Mapping[str, str], cwd: Path, *, extra_label: str = "",
            credentials: Credentials | None = None) -> PublishResult:
    """Publish the wheel `source` names to the wheelhouse `to` (see the module's text).
    `credentials` stand in for the ones `find_credentials` would find (the GUI asks)."""
    from .credentials import publish_target

    target = publish_target(to, env)
    record, wheel = find_source(source, env, cwd)
    path = labelled_wheel(record, wheel, extra_label=extra_label)
    with zipfile.ZipFile(path) as zf:
        prov = read_provenance(zf)
    assert prov is not None  # labelled_wheel checked it
    sha = file_sha256(path)
    creds_text = ""
    if target.folder is not None:
        status = publish_to_folder(path, target.folder)
    else:
        creds = credentials or find_credentials(target, env)
        if creds is None:
            raise WheelhouseError(_("no credentials for {url}").format(url=target.display),
                                  _("Looked in {sources}.").format(sources=sources_text(env)))
        creds_text = str(creds)
        code = upload(path, prov, target, creds)
        listed = _listed_sha256(target, path.name)
        if code == 409 and listed != sha:
            raise WheelhouseError(
                _("the wheelhouse already has a different {wheel}").format(wheel=path.name),
                _("A published wheel is never replaced: give this build another label "
                  "(wheelhouse.label in the recipe, or --label)."))
        if code != 409 and listed is not None and listed not in ("", sha):
            raise WheelhouseError(_("after the upload the index lists {wheel} with sha256 "
                                    "{listed}, not {sha}").format(wheel=path.name,
                                                                  listed=listed, sha=sha))
        status = "present" if code == 409 else "uploaded"
    result = PublishResult(status, str(path), path.name, sha, target.display,
                           target.wheelhouse, record.name if record else prov.build_id,
                           creds_text, prov.to_dict())
    if record is not None:
        _remember(record, result)
    return result


def _remember(record: Path, result: PublishResult) -> None:
    """Add the publication to the record's publish.json (no password reaches it)."""
    from ..paths import atomic_write

    path = record / RECORD_FILE
    try:
        entries = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        entries = []
    entries = entries if isinstance(entries, list) else []
    entry = {k: v for k, v in result.to_dict().items() if k != "provenance"}
    entries.append({"time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **entry})
    atomic_write(path, json.dumps(entries, indent=2) + "\n")
