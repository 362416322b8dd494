"""Where a wheel is published to, and the credentials for it, found as twine finds them.

    target = publish_target("http://wheels.lab:8080/simple/", env)   # or a folder, or a
                                                                     # ~/.pypirc section name
    creds = find_credentials(target, env)

A wheelhouse URL is the index's simple page (what pip and `advise`/`install` read); the
upload goes to the server's upload endpoint, the same URL without its last `simple/` (or
devpi's `+simple/`) part. Any other http(s) URL is taken as the upload endpoint itself, as
twine's --repository-url is.

Credentials, the first that gives a password:
1. TWINE_USERNAME and TWINE_PASSWORD (twine's variables; the user name defaults to the
   ~/.pypirc one, else `__token__`, an API token's user name);
2. the URL's own `user:password@`;
3. ~/.pypirc: the section named by `--to NAME`, or the one whose `repository` is the
   upload URL (its username and password; PYPIRC names another file);
4. keyring, when it is installed: the password stored for the upload URL and user name.
The password lives only in memory: `Credentials` never prints it, and nothing that is
shown or written carries it.
"""

from __future__ import annotations

import configparser
import os
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..i18n import _
from . import WheelhouseError, shown
from .index import local_path


@dataclass(frozen=True)
class Credentials:
    """A user name and password for an upload, and where they came from (words)."""

    username: str
    password: str = field(repr=False)
    source: str = ""

    def __str__(self) -> str:
        return _("user {user} ({source})").format(user=self.username, source=self.source)


@dataclass(frozen=True)
class PublishTarget:
    """Where `publish` puts a wheel."""

    kind: str  # folder | http
    folder: Path | None = None
    upload_url: str = ""  # without credentials
    index_url: str = ""  # the simple index the machines read ("" when not known)
    section: str = ""  # the ~/.pypirc section it came from
    url_credentials: Credentials | None = field(default=None, repr=False)

    @property
    def display(self) -> str:
        """The target as it may be shown."""
        return str(self.folder) if self.folder is not None else shown(self.upload_url)

    @property
    def wheelhouse(self) -> str:
        """What the machines pass as --wheelhouse (the upload URL when the index is not
        known)."""
        return str(self.folder) if self.folder is not None else \
            shown(self.index_url or self.upload_url)


def pypirc_path(env: Mapping[str, str]) -> Path:
    """~/.pypirc (HOME from `env`), or the file PYPIRC names."""
    if env.get("PYPIRC"):
        return Path(env["PYPIRC"]).expanduser()
    home = env.get("HOME")
    return (Path(home) if home else Path.home()) / ".pypirc"


def _pypirc(env: Mapping[str, str]) -> configparser.RawConfigParser:
    parser = configparser.RawConfigParser()
    path = pypirc_path(env)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError) as exc:
        raise WheelhouseError(_("cannot read {path}: {error}").format(path=path, error=exc)) \
            from None
    return parser


def _same_url(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


def publish_target(to: str, env: Mapping[str, str]) -> PublishTarget:
    """The target `to` names: a folder (a path or file://), an http(s) URL, or the name of
    a ~/.pypirc section (its `repository`)."""
    if not to:
        raise WheelhouseError(_("no wheelhouse to publish to"),
                              _("Pass --to URL, or set [wheelhouse] url in the recipe, or "
                                "TFWIZARD_WHEELHOUSE."))
    section = ""
    if "://" not in to and "/" not in to and os.sep not in to:
        config = _pypirc(env)
        if config.has_section(to):
            section = to
            to = config.get(to, "repository", fallback="")
            if not to:
                raise WheelhouseError(_("{path}: section [{name}] has no repository URL").format(
                    path=pypirc_path(env), name=section))
    folder = local_path(to)
    if folder is not None:
        return PublishTarget("folder", folder=folder)
    parts = urllib.parse.urlsplit(to)
    creds = None
    if parts.password is not None:
        creds = Credentials(urllib.parse.unquote(parts.username or ""),
                            urllib.parse.unquote(parts.password), _("the URL"))
    netloc = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
    clean = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    head, _sep, last = clean.rstrip("/").rpartition("/")
    if last in ("simple", "+simple"):
        return PublishTarget("http", upload_url=head + "/", index_url=clean.rstrip("/") + "/",
                             section=section, url_credentials=creds)
    return PublishTarget("http", upload_url=clean, section=section, url_credentials=creds)


def find_credentials(target: PublishTarget, env: Mapping[str, str]) -> Credentials | None:
    """The credentials for an upload to `target` (see the module's text), None when none."""
    config = _pypirc(env)
    section = target.section or next(
        (s for s in config.sections()
         if _same_url(config.get(s, "repository", fallback=""), target.upload_url)), "")
    rc_user = config.get(section, "username", fallback="") if section else ""
    rc_password = config.get(section, "password", fallback="") if section else ""
    if env.get("TWINE_PASSWORD"):
        return Credentials(env.get("TWINE_USERNAME") or rc_user or "__token__",
                           env["TWINE_PASSWORD"], "TWINE_USERNAME/TWINE_PASSWORD")
    if target.url_credentials is not None:
        return target.url_credentials
    if rc_password:
        return Credentials(env.get("TWINE_USERNAME") or rc_user or "__token__", rc_password,
                           f"{pypirc_path(env)} [{section}]")
    return _keyring(target.upload_url, env.get("TWINE_USERNAME") or rc_user)


def _keyring(url: str, username: str) -> Credentials | None:
    """The password keyring keeps for `url` (and `username`), when keyring is installed."""
    try:
        import keyring
    except ImportError:
        return None
    try:
        if username:
            password = keyring.get_password(url, username)
            return Credentials(username, password, "keyring") if password else None
        found = keyring.get_credential(url, None)
    except Exception:  # any backend's failure means "no credentials from keyring"
        return None
    if found is None or not found.password:
        return None
    return Credentials(found.username or "__token__", found.password, "keyring")


def sources_text(env: Mapping[str, str]) -> str:
    """Where credentials are looked for, for a message."""
    return _("TWINE_USERNAME/TWINE_PASSWORD, the URL's user:password@, {pypirc} (a section "
             "whose repository is the upload URL), or keyring").format(
        pypirc=pypirc_path(env))
