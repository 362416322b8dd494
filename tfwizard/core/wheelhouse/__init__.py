"""The team's wheelhouse: a PEP 503 package index (a package server or a plain folder)
where the build server publishes the wheels `tfwizard build` made, each with its
provenance inside, and where the machines that run TensorFlow find the one that serves
them.

    provenance.py   the build facts a published wheel carries (.dist-info), its label
    label.py        relabel a built wheel (PEP 440 local label, RECORD, name); check one
    index.py        read a wheelhouse: a URL (HTTP, file://) or a folder; download
    publish.py      upload (the standard upload API), or write into a folder's index
    credentials.py  the upload credentials, found as twine finds them
    choose.py       which wheel serves a machine, and why each other one does not
    fetch.py        `install --wheelhouse`: choose, download, check, install, record

Where the wheelhouse is: `--wheelhouse URL` (publish: `--to`), else the recipe's
`[wheelhouse] url`, else TFWIZARD_WHEELHOUSE (`wheelhouse_url`). Network code is imported
only by the commands that use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import TfWizardError
from ..i18n import _
from ..secrets import redact

#: the environment variable that names the wheelhouse when neither option nor recipe does
ENV = "TFWIZARD_WHEELHOUSE"
#: the projects a wheelhouse holds TensorFlow builds under (what `tfwizard build` names
#: its wheels: tensorflow for GPU and aarch64 builds, tensorflow_cpu for x86 CPU builds)
PROJECTS = ("tensorflow", "tensorflow-cpu")


class WheelhouseError(TfWizardError):
    """The wheelhouse cannot be read, written, or holds nothing usable."""


def wheelhouse_url(option: str | None = None, recipe: Any = None,
                   env: Mapping[str, str] | None = None) -> str:
    """The wheelhouse named by an option, else the recipe's `[wheelhouse] url` (a relative
    folder is relative to the recipe's folder), else TFWIZARD_WHEELHOUSE; "" when none."""
    if option:
        return option
    value = str(getattr(getattr(recipe, "wheelhouse", None), "url", "") or "")
    if value:
        if "://" not in value and recipe is not None and recipe.path is not None:
            path = Path(value).expanduser()
            return str(path if path.is_absolute() else recipe.path.parent.absolute() / path)
        return value
    import os

    return str((os.environ if env is None else env).get(ENV, "") or "")


def shown(url: str) -> str:
    """A wheelhouse URL as it may be printed or recorded: credentials masked."""
    return redact(url)


def publish_hint(build_id: str) -> str:
    """The line a successful build prints when a wheelhouse is configured."""
    return _("Publish it to the team's wheelhouse: `tfwizard publish {build}`").format(
        build=build_id)
