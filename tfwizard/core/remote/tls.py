"""TLS files of the remote services: a CA to trust, a client certificate and its key.

`remote.tls_certificate` (a CA for a service whose certificate no public CA signed),
`remote.tls_client_certificate` and `remote.tls_client_key` (mTLS) name PEM files on this
machine. Each is mounted read-only into the build container under TLS_DIR and handed to
Bazel as --tls_certificate / --tls_client_certificate / --tls_client_key (the same names
in Bazel 4.2.3 and later: bazel-423-help, bazel-authandtls-options); the preflight's
GetCapabilities call (remotecheck.py) reads the same files on this machine.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..recipe import Recipe

if TYPE_CHECKING:  # the REAPI client loads only for a recipe that calls a service
    from .reapi import TlsSettings

#: where the files are in the build container (read-only)
TLS_DIR = "/remote-tls"


class TlsFile(NamedTuple):
    """One TLS file of the recipe: its key, Bazel's flag, the host and container paths."""

    key: str
    flag: str
    host: Path
    target: str


#: recipe key, Bazel flag, file name in TLS_DIR
_FILES = (("remote.tls_certificate", "--tls_certificate", "ca.pem"),
          ("remote.tls_client_certificate", "--tls_client_certificate", "client.pem"),
          ("remote.tls_client_key", "--tls_client_key", "client.key"))


def _uses_remote(recipe: Recipe) -> bool:
    remote = recipe.remote
    return bool(remote.executor or remote.cache or remote.bes_backend)


def tls_files(recipe: Recipe, recipe_dir: Path | None = None) -> list[TlsFile]:
    """The TLS files the recipe names (none without a remote service)."""
    if not _uses_remote(recipe):
        return []
    out = []
    for key, flag, name in _FILES:
        path = recipe.resolve_path(key, base=recipe_dir)
        if path is not None:
            out.append(TlsFile(key, flag, path, f"{TLS_DIR}/{name}"))
    return out


def tls_settings(recipe: Recipe, recipe_dir: Path | None = None) -> TlsSettings:
    """The same files for tfwizard's own calls to the service (host paths)."""
    from .reapi import TlsSettings

    paths = {f.key: str(f.host) for f in tls_files(recipe, recipe_dir)}
    return TlsSettings(ca_file=paths.get("remote.tls_certificate", ""),
                       client_cert=paths.get("remote.tls_client_certificate", ""),
                       client_key=paths.get("remote.tls_client_key", ""))
