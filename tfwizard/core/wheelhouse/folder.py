"""A plain folder as a wheelhouse: the wheel written into it, its PEP 503 pages kept.

    status = publish_to_folder(wheel, Path("/srv/wheelhouse"))   # "published" | "present"

The folder is an index root, as any static web server or pip's file:// index reads it:

    /srv/wheelhouse/index.html                       the projects
    /srv/wheelhouse/tensorflow-cpu/index.html        the files, each link with #sha256=
    /srv/wheelhouse/tensorflow-cpu/tensorflow_cpu-2.18.0+cpu-cp311-cp311-linux_x86_64.whl

so `pip install --index-url file:///srv/wheelhouse/ ...` and `tfwizard install --wheelhouse
/srv/wheelhouse` both work. Every file is written under a temporary name and renamed, the
pages last, so a reader never sees a half wheel or a page naming a wheel not yet there;
publishers take a lock file in the folder (flock) so two at once do not lose a line. A page
keeps the hash each wheel had when it was published: a file changed since is refused by
`install` (index.Wheelhouse.download).
"""

from __future__ import annotations

import html
import os
import secrets
import shutil
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from packaging.utils import canonicalize_name, parse_wheel_filename

from ..i18n import _
from . import WheelhouseError
from .index import parse_page
from .label import file_sha256

LOCK = ".tfwizard-wheelhouse.lock"


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """Hold the folder's lock file (where flock exists) while publishing into it."""
    try:
        import fcntl
    except ImportError:  # Windows: one publisher at a time is the user's business
        yield
        return
    with (folder / LOCK).open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _page(title: str, links: list[tuple[str, str]]) -> str:
    """A PEP 503 page: (href, text) links."""
    body = "\n".join(f'<a href="{html.escape(href)}">{html.escape(text)}</a><br/>'
                     for href, text in links)
    return ("<!DOCTYPE html>\n<html>\n<head>\n"
            '<meta name="pypi:repository-version" content="1.0">\n'
            f"<title>{html.escape(title)}</title>\n</head>\n<body>\n"
            f"<h1>{html.escape(title)}</h1>\n{body}\n</body>\n</html>\n")


def project_page(project: str, hashes: dict[str, str]) -> str:
    """The page of one project: {filename: sha256}."""
    links = [(f"{urllib.parse.quote(name)}#sha256={sha}", name)
             for name, sha in sorted(hashes.items())]
    return _page(f"Links for {project}", links)


def root_page(projects: list[str]) -> str:
    """The index root: one link per project."""
    return _page("Simple index", [(f"{p}/", p) for p in sorted(projects)])


def publish_to_folder(wheel: Path, folder: Path) -> str:
    """Put `wheel` into the folder wheelhouse and update its pages; "published", or
    "present" when that very file is there already. WheelhouseError when a different
    file of the same name is there (a wheelhouse never replaces a published wheel)."""
    project = str(canonicalize_name(parse_wheel_filename(wheel.name)[0]))
    if not folder.is_dir():
        raise WheelhouseError(_("{path}: no such folder").format(path=folder),
                              _("Create the wheelhouse folder first (mkdir), or check the path."))
    sha = file_sha256(wheel)
    with _locked(folder):
        pdir = folder / project
        pdir.mkdir(exist_ok=True)
        target = pdir / wheel.name
        page = pdir / "index.html"
        known = {f.filename: dict(f.hashes).get("sha256", "")
                 for f in (parse_page(page.read_text("utf-8", "replace"), str(pdir), project)
                           if page.is_file() else [])}
        status = "published"
        if target.exists():
            have = known.get(wheel.name) or file_sha256(target)
            if have != sha:
                raise WheelhouseError(
                    _("{folder} already has a different {wheel}").format(folder=folder,
                                                                        wheel=wheel.name),
                    _("A published wheel is never replaced: give this build another label "
                      "(wheelhouse.label in the recipe, or --label)."))
            status = "present"
        else:
            tmp = pdir / f".{wheel.name}.{secrets.token_hex(4)}.part"
            try:
                shutil.copyfile(wheel, tmp)
                os.replace(tmp, target)
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
        known[wheel.name] = sha
        for path in pdir.glob("*.whl"):  # a wheel put there by hand is listed too
            if not known.get(path.name):
                known[path.name] = file_sha256(path)
        _write_atomic(page, project_page(project, {k: v for k, v in known.items()
                                                   if (pdir / k).is_file()}))
        projects = [p.name for p in folder.iterdir() if (p / "index.html").is_file()]
        _write_atomic(folder / "index.html", root_page(projects))
    return status
