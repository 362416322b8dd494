"""Reading a wheelhouse: a PEP 503 simple index over HTTP(S), or a folder (a path or a
file:// URL).

    house = Wheelhouse("http://wheels.lab:8080/simple/")
    files = house.files()                    # the TensorFlow wheels there, with their hashes
    prov = house.provenance(files[0])        # read from the wheel without downloading it
    path = house.download(files[0], dest)    # its bytes checked against the index's hash

An index page is `URL/<project>/` (PEP 503: the normalized project name); each link names
a file, and its fragment (`#sha256=...`) the hash the index gives for it. A folder is read
the same way when it has index pages (`tfwizard publish --to FOLDER` writes them: folder.py)
and is scanned for wheels when it has none (a flat folder, as pip's --find-links takes;
its wheels then have no hash from the index).

A wheel's provenance is read with HTTP Range requests (the zip's central directory and one
member: a few hundred KB of a wheel of hundreds of MB); a server that answers no ranges
gives the whole file only for a small wheel, else the wheel is judged by its label.

Credentials: a URL's `user:password@` part and ~/.netrc, sent as HTTP Basic auth to the
index's own host only; every URL that is shown or recorded has them masked.
"""

from __future__ import annotations

import base64
import hashlib
import html.parser
import io
import netrc
import os
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import Version

from ..i18n import _
from . import PROJECTS, WheelhouseError, shown
from .label import CHUNK, read_provenance
from .provenance import Provenance

TIMEOUT = 60.0
#: hashes an index may give that are good enough to check a download against
HASHES = ("sha256", "sha384", "sha512", "blake2b")
#: a server without ranges: a wheel this small is read whole to find its provenance
WHOLE_LIMIT = 64 << 20
_BLOCK = 256 << 10


class WheelRefused(WheelhouseError):
    """A downloaded wheel is not the one the index names (hash), or not what it says."""


@dataclass(frozen=True)
class IndexFile:
    """One wheel a wheelhouse lists."""

    filename: str
    url: str  # an http(s) URL without credentials, or a local path
    project: str  # normalized: "tensorflow-cpu"
    hashes: tuple[tuple[str, str], ...] = ()  # (algorithm, hex digest) from the index

    @property
    def version(self) -> Version:
        """The wheel's version, its local label included."""
        return parse_wheel_filename(self.filename)[1]

    @property
    def tags(self) -> tuple[str, ...]:
        """Its tags, "cp311-cp311-linux_x86_64"."""
        return tuple(sorted(str(t) for t in parse_wheel_filename(self.filename)[3]))

    def index_hash(self) -> tuple[str, str] | None:
        """The strongest hash the index gives, (algorithm, hex); None when none."""
        given = dict(self.hashes)
        return next(((a, given[a]) for a in HASHES if a in given), None)

    def to_dict(self) -> dict[str, Any]:
        """The file as JSON data (the URL masked)."""
        return {"filename": self.filename, "url": shown(self.url), "project": self.project,
                "hashes": dict(self.hashes)}


class _Links(html.parser.HTMLParser):
    """The <a href> links of a simple index page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []  # (href, text)
        self._href: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._href = dict(attrs).get("href") or ""
            self._text = []

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._href is not None:
            self.links.append((self._href, "".join(self._text).strip()))
            self._href = None


def parse_page(text: str, page_url: str, project: str) -> list[IndexFile]:
    """The wheels of `project` on one index page (hrefs resolved against `page_url`)."""
    parser = _Links()
    parser.feed(text)
    out = []
    for href, _text in parser.links:
        link, _sep, fragment = href.partition("#")
        target = urllib.parse.urljoin(page_url, link) if "://" in page_url else \
            str((Path(page_url) / urllib.parse.unquote(link)).resolve())
        filename = urllib.parse.unquote(link.rstrip("/").rsplit("/", 1)[-1])
        if _project_of(filename) != project:
            continue
        algorithm, _eq, digest = fragment.partition("=")
        hashes = ((algorithm.lower(), digest.lower()),) if digest else ()
        out.append(IndexFile(filename, target, project, hashes))
    return out


def _project_of(filename: str) -> str | None:
    """The normalized project of a wheel file name, None for anything else."""
    if not filename.endswith(".whl"):
        return None
    try:
        return str(parse_wheel_filename(filename)[0])
    except InvalidWheelFilename:
        return None


def local_path(url: str) -> Path | None:
    """The folder a wheelhouse URL names (a path or file://), None for http(s)."""
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme == "file":
        return Path(urllib.parse.unquote(parsed.path))
    if parsed.scheme in ("http", "https"):
        return None
    if "://" in url:
        raise WheelhouseError(_("{url}: a wheelhouse is an http(s):// or file:// URL or a "
                                "folder").format(url=shown(url)))
    return Path(url).expanduser().absolute()


class Wheelhouse:
    """A wheelhouse to read (see the module's text)."""

    def __init__(self, url: str, *, timeout: float = TIMEOUT) -> None:
        if not url:
            raise WheelhouseError(_("no wheelhouse given"),
                                  _("Pass --wheelhouse URL, set [wheelhouse] url in the recipe "
                                    "or TFWIZARD_WHEELHOUSE."))
        self.timeout = timeout
        self.folder = local_path(url)
        self.display = shown(url)
        self._auth: tuple[str, str] | None = None
        if self.folder is None:
            parts = urllib.parse.urlsplit(url)
            if parts.username is not None:
                self._auth = (urllib.parse.unquote(parts.username),
                              urllib.parse.unquote(parts.password or ""))
            host = parts.hostname or ""
            netloc = host + (f":{parts.port}" if parts.port else "")
            self.base = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path.rstrip("/")
                                                 + "/", "", ""))
            self.host = netloc
            if self._auth is None:
                self._auth = _netrc_auth(host)
        else:
            self.base = str(self.folder)
            self.host = ""

    # -- listing -------------------------------------------------------------------------
    def files(self, projects: Iterable[str] = PROJECTS) -> list[IndexFile]:
        """Every wheel of `projects` the wheelhouse lists."""
        out: list[IndexFile] = []
        for project in (str(canonicalize_name(p)) for p in projects):
            out += self._local_files(project) if self.folder is not None else \
                self._remote_files(project)
        return out

    def _local_files(self, project: str) -> list[IndexFile]:
        assert self.folder is not None
        if not self.folder.is_dir():
            raise WheelhouseError(_("{path}: no such wheelhouse folder").format(path=self.folder))
        page = self.folder / project / "index.html"
        if page.is_file():
            return parse_page(page.read_text("utf-8", "replace"), str(page.parent), project)
        found = [p for p in (*self.folder.glob("*.whl"), *self.folder.glob(f"{project}/*.whl"))
                 if _project_of(p.name) == project]
        return [IndexFile(p.name, str(p), project) for p in sorted(found)]

    def _remote_files(self, project: str) -> list[IndexFile]:
        url = f"{self.base}{project}/"
        try:
            with self._open(url, headers={"Accept": "text/html"}) as answer:
                text = answer.read().decode("utf-8", "replace")
                final = answer.geturl()
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return []
            raise self._http_error(url, exc) from None
        return parse_page(text, final, project)

    # -- HTTP --------------------------------------------------------------------------
    def _request(self, url: str, headers: dict[str, str] | None = None) -> urllib.request.Request:
        request = urllib.request.Request(url, headers=headers or {})
        if self._auth is not None and urllib.parse.urlsplit(url).netloc == self.host:
            token = base64.b64encode(":".join(self._auth).encode("utf-8")).decode("ascii")
            request.add_header("Authorization", f"Basic {token}")
        return request

    def _open(self, url: str, headers: dict[str, str] | None = None) -> Any:
        try:
            return urllib.request.urlopen(self._request(url, headers), timeout=self.timeout)
        except urllib.error.HTTPError:
            raise
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise WheelhouseError(
                _("cannot reach the wheelhouse {url}: {error}").format(url=self.display,
                                                                       error=reason),
                _("Is the index running and the URL its simple index (…/simple/ for "
                  "pypiserver, …/+simple/ for devpi)?")) from None

    def _http_error(self, url: str, exc: urllib.error.HTTPError) -> WheelhouseError:
        hint = _("Give the credentials in the URL (user:password@host) or ~/.netrc.") \
            if exc.code in (401, 403) else ""
        return WheelhouseError(_("the wheelhouse answered {code} {reason} for {url}").format(
            code=exc.code, reason=exc.reason, url=shown(url)), hint)

    # -- reading one wheel -------------------------------------------------------------------
    def provenance(self, f: IndexFile) -> Provenance | None:
        """The provenance inside the wheel `f`, read without downloading it whole; None when
        it has none or it cannot be read this way."""
        try:
            source: Any = open(f.url, "rb") if self.folder is not None else \
                _RangeFile.open(self, f.url)
            if source is None:
                return None
            with source, zipfile.ZipFile(source) as zf:
                return read_provenance(zf)
        except (OSError, zipfile.BadZipFile, KeyError, WheelhouseError, EOFError):
            return None

    def download(self, f: IndexFile, dest: Path) -> Path:
        """Fetch `f` into the folder `dest`; WheelRefused when its bytes do not have the
        hash the index gives for it (the partial file is removed)."""
        dest.mkdir(parents=True, exist_ok=True)
        out = dest / f.filename
        part = dest / (f.filename + ".part")
        expected = f.index_hash()
        digest = hashlib.new(expected[0]) if expected else hashlib.sha256()
        try:
            if self.folder is not None:
                source: Any = open(f.url, "rb")
            else:
                try:
                    source = self._open(f.url)
                except urllib.error.HTTPError as exc:
                    raise self._http_error(f.url, exc) from None
            with source, part.open("wb") as fh:
                while chunk := source.read(CHUNK):
                    digest.update(chunk)
                    fh.write(chunk)
        except BaseException:
            part.unlink(missing_ok=True)
            raise
        if expected is not None and digest.hexdigest() != expected[1]:
            part.unlink(missing_ok=True)
            raise WheelRefused(
                _("refusing {wheel}: its {algorithm} is {got}, the wheelhouse's index says "
                  "{want}").format(wheel=f.filename, algorithm=expected[0],
                                   got=digest.hexdigest(), want=expected[1]),
                _("The file was changed after it was published, or the transfer broke. "
                  "Publish it again from its build record."))
        os.replace(part, out)
        return out


def _netrc_auth(host: str) -> tuple[str, str] | None:
    try:
        found = netrc.netrc().authenticators(host)
    except (OSError, netrc.NetrcParseError):
        return None
    return (found[0] or "", found[2] or "") if found else None


class _RangeFile(io.RawIOBase):
    """A remote file read with HTTP Range requests, in blocks (what zipfile needs: seek,
    tell, read)."""

    def __init__(self, house: Wheelhouse, url: str, size: int, tail: bytes) -> None:
        super().__init__()
        self.house, self.url, self.size = house, url, size
        self.pos = 0
        self.blocks: dict[int, bytes] = {}
        self._tail_start = size - len(tail)
        self._tail = tail

    @classmethod
    def open(cls, house: Wheelhouse, url: str) -> Any:
        """The file, or a BytesIO of a small file served whole; None for a big one."""
        with house._open(url, headers={"Range": f"bytes=-{_BLOCK}"}) as answer:
            if answer.status == 206:
                total = answer.headers.get("Content-Range", "").rpartition("/")[2]
                tail = answer.read()
                return cls(house, url, int(total), tail) if total.isdigit() else None
            length = int(answer.headers.get("Content-Length") or 0)
            if 0 < length <= WHOLE_LIMIT:
                return io.BytesIO(answer.read())
        return None

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self.pos, 2: self.size}[whence]
        self.pos = max(0, base + offset)
        return self.pos

    def _block(self, index: int) -> bytes:
        if index not in self.blocks:
            start = index * _BLOCK
            end = min(self.size, start + _BLOCK) - 1
            if start >= self._tail_start:
                data = self._tail[start - self._tail_start:end + 1 - self._tail_start]
            else:
                with self.house._open(self.url,
                                      headers={"Range": f"bytes={start}-{end}"}) as answer:
                    data = answer.read()
                if len(data) != end - start + 1:
                    raise OSError(_("the server sent {got} bytes for a range of {want}").format(
                        got=len(data), want=end - start + 1))
            self.blocks[index] = data
        return self.blocks[index]

    def readinto(self, buffer: Any) -> int:
        want = min(len(buffer), self.size - self.pos)
        got = 0
        while got < want:
            index, offset = divmod(self.pos + got, _BLOCK)
            data = self._block(index)[offset:offset + want - got]
            buffer[got:got + len(data)] = data
            got += len(data)
        self.pos += got
        return got

